"""The calibration page docs/calibration.md (`snakemake --cores 1 calibration`): the claim engine's
false "holds"/"does not hold" rates on A/A comparisons at every n the paper figures use, and the
coverage of its intervals (ldprepro.claims.calibration). Same config and seed ⇒ the same page."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821

from ldprepro.claims import calibration as cal  # noqa: E402
from ldprepro.claims.calibration_laws import run_laws  # noqa: E402
from ldprepro.claims.calibration_page import markdown  # noqa: E402
from ldprepro.pipeline.io import atomic_write_text  # noqa: E402

ready()

sm = snakemake  # noqa: F821
params = dict(sm.params.settings)
ns = params.pop("ns", None) or cal.figure_reps(sm.config)
coverage_ns = [n for n in cal.COVERAGE_N if n <= max(ns)] if "ns" in sm.params.settings else cal.COVERAGE_N
settings = cal.Settings(**params, seed=int(sm.config["seed"]))
aa, cov = cal.run(ns, settings, coverage_ns, progress=progress)
users = cal.synthetic_users(settings.users, settings.seed)
laws = run_laws(users, settings.law_replications, settings.heavy_replications, settings.seed, progress=progress)
atomic_write_text(sm.output[0], markdown(aa, cov, settings, ns, laws=laws))
done()
