"""A plugin that imports where Snakemake parses the workflow but fails in every job (tests only;
issue 29.3), as one whose dependency is missing from the jobs' environment (``--use-conda``)."""

import sys

if ".snakemake/scripts" in sys.argv[0]:  # a job script (Snakemake copies it there to run it)
    raise ImportError("No module named 'fancy_dependency' (not installed where the jobs run)")

from ldprepro.mechanisms import register_mechanism  # noqa: E402
from ldprepro.mechanisms.basic import Laplace  # noqa: E402

register_mechanism("needs_fancy_dependency", Laplace, source="tests/plugins")
