"""Issue 27.2: a job's fixed cost is its interpreter and its imports, paid once per job. Compute jobs
import no plotting and no claim engine; rendering jobs import no compiled samplers (numba); no job
imports what only another kind of job needs (scikit-learn, scipy's optimisers). Each script's import
set (everything it imports before ``ready()``) is imported in a fresh interpreter and the modules it
loaded are compared with what the job kind may load."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "workflow" / "scripts"

#: modules no job's start-up may load: each is ~0.5–1 s of CPU per process
EVERY_JOB = ("sklearn", "numba")
#: the most numerous compute jobs (90, 27, 18 and 8 at paper scale): no plotting, no claim engine,
#: no report, no scipy (the claim engine's scipy.stats alone is ~1 s of CPU)
COMPUTE = ("experiment_job.py", "benchmark_job.py")
NOT_IN_COMPUTE = ("matplotlib", "ldprepro.claims", "ldprepro.report", "scipy")
#: rendering jobs (one per figure): no compiled samplers
RENDER = ("experiment_figure.py",)


def startup_imports(script: Path) -> list[str]:
    """The import statements a job script runs before ``ready()`` (top level, and in top-level
    ``if`` blocks: experiment_job imports its kind's modules there)."""
    lines = []
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        call = getattr(node, "value", None)
        if isinstance(node, ast.Expr) and isinstance(call, ast.Call) and getattr(call.func, "id", "") == "ready":
            return lines
        lines += [ast.unparse(sub) for sub in ast.walk(node) if isinstance(sub, (ast.Import, ast.ImportFrom))]
    raise AssertionError(f"{script.name}: no ready() call after its imports (ldprepro.pipeline.jobsetup.ready)")


def loaded_modules(script: Path) -> set[str]:
    code = "\n".join([*startup_imports(script), "import json, sys", "print(json.dumps(sorted(sys.modules)))"])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    return set(json.loads(out.stdout))


def _hits(modules: set[str], forbidden) -> list[str]:
    return sorted(f for f in forbidden if f in modules)


def test_every_job_script_marks_the_end_of_its_start_up():
    for script in sorted(SCRIPTS.glob("*.py")):
        startup_imports(script)  # raises naming the script without a ready() call


def _ends_with_done(body: list, functions: dict) -> bool:
    """Whether the last statement of ``body`` calls ``done``, itself or through a function of the
    script whose own last statement does."""
    names = {n.id for n in ast.walk(body[-1]) if isinstance(n, ast.Name)}
    return "done" in names or any(f in functions and _ends_with_done(functions[f].body, functions) for f in names)


def test_every_job_script_ends_with_done():
    """``jobsetup.done()`` ends a job's process (skipping the interpreter's teardown), so a script's
    code after it would never run: it must be the script's last statement (or its main function's)."""
    for script in sorted(SCRIPTS.glob("*.py")):
        body = ast.parse(script.read_text(encoding="utf-8")).body
        functions = {n.name: n for n in body if isinstance(n, ast.FunctionDef)}
        assert _ends_with_done(body, functions), f"{script.name}: its last statement does not call done()"


@pytest.mark.parametrize("name", COMPUTE)
def test_compute_jobs_load_no_plotting_claims_or_unneeded_libraries(name):
    modules = loaded_modules(SCRIPTS / name)
    assert _hits(modules, EVERY_JOB + NOT_IN_COMPUTE) == []


def test_a_paper_kind_s_compute_job_loads_no_plotting_or_claims(tmp_path):
    """ldpfl Fig. 1's job runs experiment_job.py with its kind's module loaded by name before ready()
    (ldprepro.experiments.kinds.PAPER_KINDS, shape mechanisms): the same rule as a compute script's."""
    from ldprepro.experiments.kinds import PAPER_KINDS

    for spec in PAPER_KINDS.values():
        if spec.shape != "mechanisms":
            continue
        probe = tmp_path / f"{spec.name}_job.py"
        probe.write_text(f"import {spec.module}\nready()\n", encoding="utf-8")
        assert _hits(loaded_modules(probe), EVERY_JOB + NOT_IN_COMPUTE) == [], spec.name


@pytest.mark.parametrize("name", RENDER)
def test_rendering_jobs_load_no_compiled_samplers(name):
    """Nor scipy.stats (about 1 s): the claim engine takes the t and normal laws from scipy.special and
    imports scipy.stats only for the location tests that need it (Shapiro–Wilk, Wilcoxon)."""
    modules = loaded_modules(SCRIPTS / name)
    assert (
        _hits(modules, EVERY_JOB + ("ldprepro.domain.mechanisms._jit", "ldprepro.domain._sgd_jit", "scipy.stats")) == []
    )


def test_the_check_sees_a_forbidden_import(tmp_path):
    """The check can fail: a module a script imports before ready() is seen, one after it is not."""
    probe = tmp_path / "probe_job.py"
    probe.write_text("import csv\nif True:\n    import wave\nready()\nimport sqlite3\n", encoding="utf-8")
    assert _hits(loaded_modules(probe), ("csv", "wave", "sqlite3")) == ["csv", "wave"]


def test_download_jobs_load_no_table_libraries():
    """A download job (one per raw file: 11 at paper scale) only copies and verifies bytes: it loads
    neither the readers nor pandas, numpy or pyarrow (``ldprepro.data.obtain``, not ``.build``)."""
    modules = loaded_modules(SCRIPTS / "data_fetch.py")
    assert _hits(modules, EVERY_JOB + NOT_IN_COMPUTE + ("pandas", "numpy", "pyarrow", "ldprepro.data.readers")) == []
