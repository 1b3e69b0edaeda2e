"""Parse-time helpers of the workflow (ldprepro.pipeline.parse, ldprepro.data.availability): light imports,
the recorded availability decision, compute-only parameters, code fingerprints, lock and summary
messages, and the file modes of atomic writes."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ldprepro.data import availability as av
from ldprepro.pipeline import jobsetup
from ldprepro.pipeline import mechanism_names as names
from ldprepro.pipeline import parse as pipeline
from ldprepro.pipeline.io import atomic_write_bytes, atomic_write_text

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "ldprepro"


def test_parse_helpers_import_neither_numpy_nor_pandas_nor_scipy():
    code = (
        "import sys, ldprepro.pipeline.parse, ldprepro.data.availability, ldprepro.data.workflow, "
        "ldprepro.data.entries, ldprepro.pipeline.jobsetup, ldprepro.pipeline.integrity, "
        "ldprepro.pipeline.scheduler_wakeups, "
        "ldprepro.pipeline.mechanism_names as mn; "
        "assert mn.registered_mechanisms([]) == list(mn.BUILTIN_MECHANISMS); "
        "print(sorted(m for m in ('numpy', 'pandas', 'scipy', 'requests') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert out.stdout.strip() == "[]"


def test_the_light_mechanism_names_are_the_registrys():
    """The parse knows the built-in names without importing numpy: they must be exactly those the
    registry holds before any plugin (a fresh interpreter), and the experiments' own estimators."""
    code = "import ldprepro.domain.mechanisms as m; print(','.join(m.MECHANISMS))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert tuple(out.stdout.strip().split(",")) == names.BUILTIN_MECHANISMS
    from ldprepro.domain.graded_sgd import GRADED_SGD_MECHANISMS
    from ldprepro.experiments.mean import ESTIMATORS

    assert tuple(ESTIMATORS) == names.MEAN_ESTIMATORS
    assert tuple(GRADED_SGD_MECHANISMS) == names.GRADED_SGD


def _config_with(paper: str, fig: str, entry: dict) -> dict:
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg[paper][fig] = entry
    return cfg


MEAN_ENTRY = {
    "kind": "mean",
    "panels": [{"dataset": "synth_uniform"}],
    "mechanisms": ["binary_rr", "pm"],
    "eps": [1.0],
    "reps": 3,
    "metric": "sq_error",
}


def test_the_schema_leaves_mechanism_names_to_the_registry():
    """A plugin's name passes the schema (it used to stop at "'binary_rr' is not one of [...]")."""
    from snakemake.utils import validate

    validate(_config_with("dct", "fig9", MEAN_ENTRY), str(REPO / "workflow/schemas/config.schema.yaml"))


def test_mechanism_names_are_checked_against_the_registry():
    shipped = yaml.safe_load((REPO / "config.yaml").read_text())
    assert names.mechanism_problems(shipped, names.BUILTIN_MECHANISMS) == []
    cfg = _config_with("dct", "fig9", MEAN_ENTRY)
    assert names.mechanism_problems(cfg, [*names.BUILTIN_MECHANISMS, "binary_rr"]) == []  # registered by a plugin
    problems = names.mechanism_problems(cfg, names.BUILTIN_MECHANISMS)
    assert problems == [
        "config.yaml: unknown mechanism 'binary_rr' in dct.fig9.mechanisms: register it under mechanism_plugins "
        "(known: laplace, duchi, harmony, pm, hm, three_outputs, pm_opt, pm_sub, hm_tp, dct, hiera, graded_laplace, "
        "harmony_at_level, pm_at_level)"
    ]
    with pytest.raises(ValueError, match=r"unknown mechanism 'binary_rr' in dct\.fig9\.mechanisms: register it"):
        names.check_config_mechanisms(cfg, names.BUILTIN_MECHANISMS)


def test_experiments_and_added_papers_are_checked_too():
    """Experiment figures under `experiments` (a user's own) and under `papers.<key>` are checked like
    the papers' own, naming their key."""
    cfg = {"experiments": {"fig1": MEAN_ENTRY}, "papers": {"toy": {"fig2": {**MEAN_ENTRY, "mechanisms": ["pmm"]}}}}
    problems = names.mechanism_problems(cfg, names.BUILTIN_MECHANISMS)
    assert [p.split(":")[1] for p in problems] == [
        " unknown mechanism 'binary_rr' in experiments.fig1.mechanisms",
        " unknown mechanism 'pmm' in papers.toy.fig2.mechanisms",
    ]


@pytest.mark.parametrize(
    "mutate,key,needle",
    [
        (lambda c: c["ldpfl"]["fig1"]["mechanisms"].append("pm_typo"), "ldpfl.fig1.mechanisms", "unknown mechanism"),
        (lambda c: c["benchmark"].update(mechanisms=["pm", "nope"]), "benchmark.mechanisms", "unknown mechanism"),
        (
            lambda c: c["dct"]["fig2"].update(discretize_mechanisms=["hiera"]),
            "dct.fig2.discretize_mechanisms",
            "unknown",
        ),
        (lambda c: c["dct"]["fig1"].update(sweep_mechanisms=["dtc"]), "dct.fig1.sweep_mechanisms", "unknown"),
        # an SGD figure: the graded collector runs only its own methods, the multidim one the registry's
        (
            lambda c: c["hiera"]["fig3"].update(mechanisms=["hiera", "duchi"]),
            "hiera.fig3.mechanisms",
            "graded collector",
        ),
        (lambda c: c["ldpfl"]["fig10"].update(mechanisms=["hiera"]), "ldpfl.fig10.mechanisms", "collector: graded"),
        (lambda c: c["ldpfl"]["fig10"].update(mechanisms=["pm", "my_mech"]), "ldpfl.fig10.mechanisms", "non_private)"),
    ],
)
def test_every_key_naming_mechanisms_is_checked(mutate, key, needle):
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    mutate(cfg)
    problems = names.mechanism_problems(cfg, names.BUILTIN_MECHANISMS)
    assert len(problems) == 1 and f" in {key}" in problems[0] and needle in problems[0], problems


def test_compute_params_drop_presentation_only():
    entry = {
        "title": "T",
        "ylabel": "y",
        "eps": [1, 2],
        "reps": 3,
        "panels": [{"dataset": "adult", "title": "Adult", "columns": ["age"], "yscale": "log"}],
    }
    assert pipeline.compute_params(entry) == {
        "eps": [1, 2],
        "reps": 3,
        "panels": [{"dataset": "adult", "columns": ["age"]}],
    }


def _package_copy(tmp_path) -> Path:
    dest = tmp_path / "src"
    shutil.copytree(REPO / "src" / "ldprepro", dest / "ldprepro", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _hashes(src: Path, scripts: list[str], kind: str | None = None) -> dict:
    """code_hash of each script in the package copy ``src``; with ``kind``, each script's as the
    experiment template fingerprints it (common.smk kind_code: plus parse.module_hash of the kind's
    module, which the script loads by name)."""
    module = f"ldprepro.experiments.kinds.{kind}" if kind else None
    code = (
        "import json, sys; from ldprepro.pipeline.parse import code_hash, module_hash; "
        f"m = {module!r}; "
        f"print(json.dumps({{s: code_hash(s) + (module_hash(m) if m else '') for s in {scripts!r}}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(src)},
    )
    return json.loads(out.stdout)


def test_code_hash_follows_the_modules_a_script_imports(tmp_path):
    """A job's fingerprint is its script's imports plus, for a kind's job, its kind's module and
    what that imports (the script loads the kind by name: kind_code in common.smk)."""
    scripts = [
        str(REPO / "workflow/scripts" / s) for s in ("experiment_job.py", "data_synthetic.py", "experiment_figure.py")
    ]
    files = {s: {p.name for p in pipeline.code_files(s)} for s in scripts}
    kind_files = {p.name for p in pipeline.code_files(REPO / "src/ldprepro/experiments/kinds/mean.py")}
    assert {"piecewise.py", "mean_figures.py", "seeding.py"} <= kind_files
    assert {"jobsetup.py", "results.py"} <= files[scripts[0]]
    assert "piecewise.py" not in files[scripts[1]]
    src = _package_copy(tmp_path)
    before, synthetic = _hashes(src, scripts[:1], kind="mean"), _hashes(src, scripts[1:2])
    with open(src / "ldprepro/domain/mechanisms/piecewise.py", "a") as fh:
        fh.write("\n# an edit\n")
    assert _hashes(src, scripts[:1], kind="mean") != before  # the mean jobs run PM
    assert _hashes(src, scripts[1:2]) == synthetic  # synthetic data does not


def test_an_edit_of_the_job_harness_reruns_no_job(tmp_path):
    """pipeline/jobsetup.py (threads, log, plugin loading, time limit) changes no output: editing it
    changes no job's code fingerprint, so it reruns no download (issue 29.3)."""
    scripts = [str(REPO / "workflow/scripts" / s) for s in ("data_fetch.py", "data_synthetic.py", "experiment_job.py")]
    assert all("jobsetup.py" in {p.name for p in pipeline.code_files(s)} for s in scripts)
    src = _package_copy(tmp_path)
    before = _hashes(src, scripts)
    with open(src / "ldprepro/pipeline/jobsetup.py", "a") as fh:
        fh.write("\n# an edit of the harness\n")
    assert _hashes(src, scripts) == before


def test_availability_is_decided_once_and_recorded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IPUMS_API_KEY", raising=False)
    calls = []
    real = av.availability
    monkeypatch.setattr(av, "availability", lambda *a: calls.append(a[0]) or real(*a))
    datasets = {"s": {"kind": "synthetic"}, "ipums_br": {"kind": "ipums", "options": {}}}
    first = av.decide(datasets)
    assert set(first) == {"ipums_br"} and "IPUMS" in first["ipums_br"]
    record = json.loads((tmp_path / "results/availability.json").read_text())
    assert record["datasets"]["s"]["available"] and not record["datasets"]["ipums_br"]["available"]
    assert sorted(calls) == ["ipums_br", "s"]
    calls.clear()
    assert av.decide(datasets) == first and calls == []  # read back, not decided again
    assert av.decide(datasets, write=False) == first and calls == []
    av.decide(datasets, refresh=True)
    assert sorted(calls) == ["ipums_br", "s"]
    calls.clear()
    av.decide({**datasets, "new": {"kind": "synthetic"}})
    assert calls == ["new"]  # only the dataset the record lacks


def test_an_ipums_key_alone_does_not_change_availability_offline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPUMS_API_KEY", "dummy-secret-key-123")
    monkeypatch.setattr(av, "host_resolves", lambda host, timeout=3.0: False)
    reason = av.decide({"ipums_br": {"kind": "ipums", "options": {}}})["ipums_br"]
    assert "cannot be reached" in reason
    assert "dummy-secret-key-123" not in (tmp_path / "results/availability.json").read_text()


def test_a_job_time_unavailable_record_overrides_the_decision(tmp_path, monkeypatch):
    from ldprepro.pipeline.status import record_unavailable

    monkeypatch.chdir(tmp_path)
    datasets = {"s": {"kind": "synthetic"}}
    assert av.decide(datasets) == {}
    rec = record_unavailable("s", "the API refused the extract")
    os.utime(rec, (rec.stat().st_mtime + 5, rec.stat().st_mtime + 5))
    assert "refused" in av.decide(datasets)["s"]
    assert "refused" in av.decide(datasets)["s"]  # recorded for later parses
    os.utime(rec, (rec.stat().st_mtime - 100, rec.stat().st_mtime - 100))  # the record predates the refresh
    assert av.decide(datasets, refresh=True) == {}  # a refresh decides again


def test_lock_hint_says_exactly_what_to_run(tmp_path):
    assert pipeline.lock_hint(tmp_path) is None
    (tmp_path / ".snakemake/locks").mkdir(parents=True)
    (tmp_path / ".snakemake/locks/0.input.lock").write_text("x")
    assert "`snakemake --unlock`" in pipeline.lock_hint(tmp_path)


def test_summary_lines_name_every_unavailable_dataset():
    figs = [
        {"paper": "dct", "figure": "fig4", "status": "not reproducible here"},
        {"paper": "ldpfl", "figure": "fig6", "status": "partial"},
        {"paper": "dct", "figure": "fig1", "status": "built"},
    ]
    text = "\n".join(pipeline.summary_lines({"wisdm": "no network", "ipums_br": "no key"}, figs))
    assert "  - wisdm: no network" in text and "  - ipums_br: no key" in text
    assert "ldpfl/fig6" in text and "dct/fig4" in text and "dct/fig1" not in text
    assert "everything" in pipeline.summary_lines({}, figs)[0]


def _figure(paper, figure, status, unavailable=None):
    return {"paper": paper, "figure": figure, "status": status, "unavailable": unavailable or {}}


def test_summary_lines_name_only_what_the_requested_targets_use():
    unavailable = {"wisdm": "no network", "ipums_br": "no key", "ipums_mx": "no key", "salary_nyc": "no network"}
    figs = [
        _figure("ldpfl", "fig6", "partial", {"wisdm": "no network", "ipums_br": "no key", "ipums_mx": "no key"}),
        _figure("dct", "fig2", "partial", {"ipums_br": "no key"}),
        _figure("dct", "fig3", "built"),
    ]
    needs = [("results/benchmark/winners.parquet", {"salary_nyc": "no network"})]
    # a run of DCT Fig. 2 (its jobs and the synthetic data they read)
    products = {"figures/dct/fig2.png", "figures/dct/fig2.svg", "results/dct/fig2/synth_uniform__pm.parquet"}
    text = "\n".join(pipeline.summary_lines(unavailable, figs, products, needs))
    assert "  - ipums_br: no key" in text and "dct/fig2" in text
    for other in ("wisdm", "ipums_mx", "salary_nyc", "ldpfl/fig6"):
        assert other not in text
    # a run of synthetic data only: nothing to report
    lines = pipeline.summary_lines(unavailable, figs, {"data/processed/synth_uniform.parquet"}, needs)
    assert lines == ["ldprepro: built the requested targets (every dataset they use could be obtained)."]
    # the benchmark is not a registered figure: its own needs
    text = "\n".join(pipeline.summary_lines(unavailable, figs, {"results/benchmark/winners.parquet"}, needs))
    assert "  - salary_nyc: no network" in text and "ipums_br" not in text
    # rule all (products None): every unavailable dataset, as before
    text = "\n".join(pipeline.summary_lines(unavailable, figs, None, needs))
    assert all(f"  - {k}: {v}" in text for k, v in unavailable.items())


def test_run_products_reads_the_dag_and_falls_back_to_everything():
    from types import SimpleNamespace as NS

    def job(rule, *out):
        return NS(rule=NS(name=rule), output=list(out))

    fig = job("figure_dct_fig2", "figures/dct/fig2.png", "figures/dct/fig2.svg")
    data = job("data_synthetic", "data/processed/synth_uniform.parquet")
    dag = NS(targetjobs=[fig], jobs=[fig, data])
    assert pipeline.run_products(dag) == {
        "figures/dct/fig2.png",
        "figures/dct/fig2.svg",
        "data/processed/synth_uniform.parquet",
    }
    everything = job("all")
    assert pipeline.run_products(NS(targetjobs=[everything], jobs=[everything, fig, data])) is None
    assert pipeline.run_products(None) is None  # no DAG to read: report everything


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_atomic_writes_follow_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "a.txt", "x")
        atomic_write_bytes(tmp_path / "b.bin", b"x")
        plain = tmp_path / "plain"
        plain.write_text("x")
    finally:
        os.umask(old)
    want = stat.S_IMODE(plain.stat().st_mode)
    assert want == 0o666 & ~umask
    for name in ("a.txt", "b.bin"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == want


def test_job_setup_logs_prints_warnings_and_pins_threads(tmp_path):
    code = """
import os, sys, warnings
from types import SimpleNamespace
from ldprepro.pipeline import jobsetup
smk = SimpleNamespace(threads=3, rule="figure_job", wildcards={"dataset": "adult"}, log=[sys.argv[1]])
jobsetup.start(smk)
import numpy  # after start: the pools are sized from the environment
print("a verdict line")
warnings.warn("a warning")
jobsetup.progress("eps = %g done", 0.5)
print(os.environ["OMP_NUM_THREADS"], os.environ["OPENBLAS_NUM_THREADS"])
raise SystemExit(0)
"""
    log = tmp_path / "logs" / "job.log"
    out = subprocess.run(
        [sys.executable, "-c", code, str(log)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert out.stdout.splitlines()[-1] == "3 3"
    text = log.read_text()
    for needle in (
        "figure_job[dataset=adult]: started (threads=3)",
        "a verdict line",
        "UserWarning: a warning",
        "eps = 0.5 done",
    ):
        assert needle in text


_FINISHING_JOB = """
import atexit, sys, threading, time
from types import SimpleNamespace
from ldprepro.pipeline import jobsetup
smk = SimpleNamespace(threads=1, rule="figure_job", wildcards={}, log=[sys.argv[1]])
jobsetup.start(smk)
jobsetup.ready()
atexit.register(lambda: print("library exit handler ran", flush=True))
if sys.argv[2] == "thread":
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread finished", flush=True))).start()
print("unflushed output", end="")
jobsetup.done("finished")
print("after done")
"""


@pytest.mark.parametrize("thread", ["none", "thread"])
def test_done_ends_a_job_script_without_teardown_but_with_its_exit_work(tmp_path, thread):
    """``done()`` as a script's last statement ends the process with exit code 0 after every exit
    handler (the resources line, the log closed, a library's own) and the streams flushed; code after
    it does not run. A job with a non-daemon thread still running exits normally, after the thread."""
    log = tmp_path / "job.log"
    out = subprocess.run(
        [sys.executable, "-c", _FINISHING_JOB, str(log), thread],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert out.returncode == 0, out.stderr
    assert "library exit handler ran" in out.stdout
    assert "unflushed output" in out.stdout
    assert ("after done" in out.stdout) == (thread == "thread")
    assert ("thread finished" in out.stdout) == (thread == "thread")
    text = log.read_text()
    assert "figure_job: finished in" in text
    assert jobsetup.logged_resources(text)["rule"] == "figure_job"


def test_done_called_from_imported_code_does_not_end_the_process():
    jobsetup.done("still here")  # a test (not a job's __main__) calling done(): the process goes on


def _fingerprinted_copy(tmp_path, monkeypatch):
    """A copy of the package that ``parse`` fingerprints instead of the checkout's, caches cleared."""
    from ldprepro.pipeline import parse

    root = tmp_path / "ldprepro"
    shutil.copytree(parse._package_root(), root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(parse, "_package_root", lambda: root)
    _clear_fingerprints()
    return root


def _clear_fingerprints():
    from ldprepro.pipeline import parse

    for cached in (parse.declarations_hash, parse._paper_declarations, parse.code_hash, parse._imports):
        cached.cache_clear()


def _items(node):
    """Every (key, value) pair of a parsed YAML tree, depth first."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from _items(v)
    elif isinstance(node, list):
        for v in node:
            yield from _items(v)


#: every figure a paper folder declares claims for (the figure rules' ``declarations`` params)
DECLARED_FIGURES = [
    (paper, fig)
    for paper in ("hiera", "bshp", "ldpfl", "dct", "lremh")
    for fig in yaml.safe_load((SRC / "papers" / paper / "claims.yaml").read_text(encoding="utf-8"))
    if fig.startswith("fig")
]


def test_editing_a_claim_declaration_reruns_the_claim_steps_only(tmp_path, monkeypatch):
    """claims.yaml is read at run time by the dispatcher, not imported: its hash (and that of the
    modules its function entries name) is a param of the figure rules, never of the compute jobs."""
    from ldprepro.pipeline import parse

    root = _fingerprinted_copy(tmp_path, monkeypatch)
    script = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "experiment_job.py"
    before, job_before = parse.declarations_hash("dct", "fig2"), parse.code_hash(script)
    decl = root / "papers" / "dct" / "claims.yaml"
    decl.write_text(decl.read_text(encoding="utf-8").replace("margin: 1.25", "margin: 1.3", 1), encoding="utf-8")
    _clear_fingerprints()
    assert parse.declarations_hash("dct", "fig2") != before
    assert parse.code_hash(script) == job_before
    exact = root / "papers" / "dct" / "exact.py"  # named by a function: entry of fig1 and fig2
    edited = {fig: parse.declarations_hash("dct", fig) for fig in ("fig1", "fig2", "fig3")}
    exact.write_text(exact.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    _clear_fingerprints()
    assert parse.declarations_hash("dct", "fig1") != edited["fig1"]
    assert parse.declarations_hash("dct", "fig2") != edited["fig2"]
    _clear_fingerprints()


def test_a_claim_edit_changes_only_its_figures_param(tmp_path, monkeypatch):
    """Issue 51.8: one claim's words edited in ``papers/<paper>/claims.yaml`` change the
    ``declarations`` param of exactly the figures that declare that claim (a YAML alias shares it
    between figures), so Snakemake reruns those renders and the tables that collect claims, not
    the 22 figures of the five papers. Comments and layout change no param. Each figure's first
    claim is edited in turn."""
    from ldprepro.pipeline import parse

    root = _fingerprinted_copy(tmp_path, monkeypatch)
    before = {f: parse.declarations_hash(*f) for f in DECLARED_FIGURES}
    for paper, fig in DECLARED_FIGURES:
        decl = root / "papers" / paper / "claims.yaml"
        text = decl.read_text(encoding="utf-8")
        old = yaml.safe_load(text)
        words = next(v for k, v in _items(old[fig]) if k == "claim")
        decl.write_text(text.replace(f"{words}", f"{words} (edited)", 1) + "\n# a comment\n", encoding="utf-8")
        new = yaml.safe_load(decl.read_text(encoding="utf-8"))
        edited = {(paper, f) for f in old if f.startswith("fig") and old[f] != new[f]}  # aliases share an edit
        parse.declarations_hash.cache_clear()
        parse._paper_declarations.cache_clear()
        changed = {f for f in DECLARED_FIGURES if parse.declarations_hash(*f) != before[f]}
        assert (paper, fig) in changed and changed == edited, (paper, fig, changed)
        assert len(changed) <= 3 < len(DECLARED_FIGURES)
        if (paper, fig) == ("dct", "fig2"):  # the measurement: one figure's render and the tables
            assert changed == {("dct", "fig2")}
        decl.write_text(text, encoding="utf-8")
        parse.declarations_hash.cache_clear()
        parse._paper_declarations.cache_clear()
    _clear_fingerprints()


@pytest.mark.parametrize(
    "where",
    [
        ("dct", "fig3", "eps"),
        ("dct", "fig3", "sizes"),
        ("dct", "fig3", "smoke", "sizes"),
        ("ldpfl", "fig1", "mc_eps"),
        ("bshp", "fig4", "eps"),
    ],
)
def test_duplicate_eps_or_sizes_are_refused_when_the_config_loads(where):
    """Issue 29.5: a repeated ε or size used to pass the schema, run every job, then fail at drawing."""
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    entry = cfg
    for key in where[:-1]:
        entry = entry[key]
    entry[where[-1]] = [*entry[where[-1]], entry[where[-1]][0]]
    with pytest.raises(WorkflowError, match="non-unique elements"):
        validate(cfg, str(REPO / "workflow/schemas/config.schema.yaml"))


def test_command_line_booleans_are_read_before_validation():
    schema = REPO / "workflow/schemas/config.schema.yaml"
    for word, value in [("true", True), ("True", True), ("false", False), ("no", False)]:
        assert pipeline.command_line_booleans({"refresh_availability": word}, schema) == {"refresh_availability": value}
    # another string is left for the schema to refuse, naming the key
    assert pipeline.command_line_booleans({"refresh_availability": "maybe"}, schema) == {
        "refresh_availability": "maybe"
    }
    assert pipeline.command_line_booleans({"scale": "true"}, schema) == {"scale": "true"}  # not a boolean key


def test_the_printed_refresh_advice_works_exactly_as_printed(tmp_path):
    """The closing summary's advice `snakemake --cores N --config refresh_availability=true` used to
    stop at "'true' is not of type 'boolean'". Run it as printed (N = 1, as a dry run: -n appended)
    on a recorded decision: every dataset is decided again."""
    import re

    from workflow_cmd import snakemake_cmd

    line = " ".join(pipeline.summary_lines({"wisdm": "no network"}, [], None, []))
    printed = re.search(r"`(snakemake [^`]+)`", line).group(1)
    assert printed == "snakemake --cores N --config refresh_availability=true"
    args = printed.replace(" N ", " 1 ").split()[1:]
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["scale"] = "smoke"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    mirror = os.environ.get("LDPREPRO_DATA_MIRROR", "")
    old = {
        name: {"available": True, "reason": "", "fingerprint": av.fingerprint(entry, mirror, ""), "decided_at": 1.0}
        for name, entry in cfg["datasets"].items()
    }
    (tmp_path / "results").mkdir()
    (tmp_path / "results/availability.json").write_text(json.dumps({"datasets": old}))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(snakemake_cmd(*args, "-n", workdir=tmp_path), capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    new = json.loads((tmp_path / "results/availability.json").read_text())["datasets"]
    assert sorted(new) == sorted(old) and all(rec["decided_at"] > 1.0 for rec in new.values())  # decided again


def test_the_import_scan_finds_every_import_ast_walk_finds():
    """The code fingerprint reads a module's imports from its statements only (``parse._statements``):
    an import nested in any block (function, class, if/else, for, while, with, try/except/else/finally,
    match) is found, exactly the imports ``ast.walk`` finds."""
    import ast
    import textwrap

    from ldprepro.pipeline import parse

    source = textwrap.dedent(
        """
        import a0
        def f():
            import a1
            class C:
                from a2 import x
        if x:
            import a3
        else:
            import a4
        for i in y:
            import a5
        else:
            import a6
        while z:
            import a7
        with w:
            import a8
        try:
            import a9
        except E:
            import a10
        else:
            import a11
        finally:
            import a12
        match v:
            case 1:
                import a13
        lambda: (yield)
        async def g():
            async with w:
                import a14
            async for i in y:
                import a15
        """
    )
    tree = ast.parse(source)
    walked = [ast.dump(n) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    scanned = [ast.dump(n) for n in parse._statements(tree.body) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert len(walked) == 16 and sorted(scanned) == sorted(walked)
