"""Run a figure-rendering script (``params.script``: figure_panels.py, histogram_figure.py,
joint_figure.py, ldpfl_fig1_figure.py) with the job's log, warnings and threads set up.

The rule passes ``params.code`` = the fingerprint of the rendering script and the package code it
imports, so editing either reruns the rendering (Snakemake itself watches only this file)."""

from ldprepro.pipeline.jobsetup import done, start

start(snakemake)  # noqa: F821

import runpy  # noqa: E402
from pathlib import Path  # noqa: E402

script = Path(snakemake.scriptdir) / snakemake.params.script  # noqa: F821
runpy.run_path(str(script), init_globals={"snakemake": snakemake}, run_name="__main__")  # noqa: F821
done(f"{snakemake.params.script}: {', '.join(map(str, snakemake.output))}")  # noqa: F821
