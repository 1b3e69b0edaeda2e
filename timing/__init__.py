"""Benchmarks and measurements of the pipeline (not tests; timing/README.md): a package, so that its
tools import each other and the tests import them (``timing.figure_times``) without loading files by
path. Run a tool from the repository root as ``python -m timing.<tool>``."""
