"""Every measured job fits what its rule declares (issue 30).

The calibration file timing/resources.json (written by timing/resources_fit.py from the job logs of a
paper-scale run, a smoke run and the IPUMS-sized runs on SYNTHETIC data) is committed, so this test
needs no run: for each measured job it rebuilds the job's data card and config entry, evaluates the
resource callables the rules use (ldprepro.pipeline.resources.callables, as common.smk's ``res()``
builds them) and asserts declared mem_mb ≥ measured peak RSS × SAFETY_MEM and declared runtime ≥
measured wall × SAFETY_TIME.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from ldprepro.experiments.kinds import PAPER_KINDS
from ldprepro.pipeline import resources as R

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION = ROOT / "timing" / "resources.json"
DATA = json.loads(CALIBRATION.read_text())
MODEL = R.load_model(CALIBRATION)
MEASURED = [j for j in DATA["jobs"] if j["scale"] == "paper" or j["source"].startswith("ipums:")]


def _card(tmp_path: Path, name: str, rows: int, width: int) -> str:
    """A data card with ``rows`` rows and one-hot width ``width`` (one categorical column)."""
    path = tmp_path / f"{name}.json"
    cols = [{"name": "c", "type": "categorical", "n_categories": width}]
    path.write_text(json.dumps({"rows_after_cleaning": rows, "columns": cols}))
    return str(path)


def _declared(job: dict, tmp_path: Path, attempt: int = 1) -> tuple[int, int]:
    """(mem_mb, runtime) the rule's callables declare for a measured job."""
    run = "ipums" if job["source"].startswith("ipums:") else job["source"]
    entry = DATA["inputs"][run]["entries"].get(job["entry"]) if job["entry"] else None
    card = None
    files = SimpleNamespace(size_mb=job["input_mb"])
    if job["rows"] is not None:
        card = "card"
        files.card = _card(tmp_path, job["dataset"], job["rows"], job["width"])
    fns = R.callables(MODEL, job["family"], entry, card, sized_by_input=job["family"] == "data_normalise")
    wildcards = SimpleNamespace()
    return fns["mem_mb"](wildcards, files, 1, attempt), fns["runtime"](wildcards, files, 1, attempt)


def test_the_workflow_s_model_is_the_calibration_s():
    """The model the workflow reads at every parse (the package's 2 KB resource_model.json) is the
    'model' part of timing/resources.json, both written by timing/resources_fit.py."""
    assert json.loads(R.MODEL_FILE.read_text())["model"] == DATA["model"]
    assert R.MODEL_FILE.stat().st_size < 5000
    assert R.load_model(R.MODEL_FILE).lines == MODEL.lines


def test_calibration_covers_paper_and_ipums_sizes():
    sources = {j["source"] for j in MEASURED}
    assert any(s.startswith("ipums:") for s in sources), "no IPUMS-sized job in timing/resources.json"
    assert any(not s.startswith("ipums:") for s in sources), "no paper-scale run in timing/resources.json"
    assert len(MEASURED) >= 100


@pytest.mark.parametrize("job", MEASURED, ids=lambda j: f"{j['source'].split('/')[-1]}:{j['job']}")
def test_every_measured_job_fits_its_declaration(job, tmp_path):
    mem_mb, runtime = _declared(job, tmp_path)
    assert mem_mb >= job["max_rss_mb"] * R.SAFETY_MEM, (job["job"], mem_mb, job["max_rss_mb"])
    assert runtime * 60 >= job["wall_s"] * R.SAFETY_TIME, (job["job"], runtime, job["wall_s"])
    # the file's own record of the declaration is what the model declares now
    assert (mem_mb, runtime) == (job["declared_mem_mb"], job["declared_runtime_min"])


def test_a_retry_asks_for_more(tmp_path):
    job = max(MEASURED, key=lambda j: j["max_rss_mb"])
    first, second = _declared(job, tmp_path, 1), _declared(job, tmp_path, 2)
    assert second[0] >= 2 * first[0] - 100 and second[1] >= 2 * first[1] - 1


def test_missing_card_is_to_be_determined_by_snakemake(tmp_path):
    """Before its data job ran, a compute job's card is missing: the callable raises the
    FileNotFoundError Snakemake turns into <TBD> (its filename is the input as given)."""
    from snakemake.exceptions import is_file_not_found_error

    missing = "data/processed/not_made_yet.json"
    fns = R.callables(MODEL, "figure_job.sgd", {"eps": [1]}, "card")
    with pytest.raises(FileNotFoundError) as err:
        fns["mem_mb"](SimpleNamespace(), SimpleNamespace(card=missing, size_mb=0), 1, 1)
    assert is_file_not_found_error(err.value, [missing])


def test_a_job_without_a_card_is_sized_from_its_entry():
    """A synthetic benchmark panel has no data card among its inputs (an empty input list): it is
    sized from its config entry, not refused."""
    fns = R.callables(MODEL, "benchmark_job.frequency", {"eps": [1, 2], "reps": 10}, "card")
    files = SimpleNamespace(card=[], size_mb=0)  # Snakemake's empty Namedlist for a missing named input
    assert fns["mem_mb"](SimpleNamespace(), files, 1, 1) > 0 and fns["runtime"](SimpleNamespace(), files, 1, 1) > 0


@pytest.mark.parametrize(
    "card, key",
    [({"columns": []}, "rows_after_cleaning"), ({"rows_after_cleaning": 5, "columns": "x"}, "columns")],
)
def test_bad_card_names_file_and_key(tmp_path, card, key):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(card))
    with pytest.raises(R.ResourceInputError, match=rf"bad\.json.*'{key}'"):
        R.card_size(path)


def test_bad_calibration_names_key(tmp_path):
    path = tmp_path / "resources.json"
    path.write_text(json.dumps({"model": {"lines": {"x": {"mem": [1, -2], "time": [0, 0]}}, "snakemake_rss_mb": 1}}))
    with pytest.raises(R.ResourceInputError, match=r"model\.lines\.x\.mem"):
        R.load_model(path)


def test_envelope_is_above_every_point():
    pts = [(0, 200), (10, 260), (100, 300), (1000, 2500), (900, 2600), (50, 500)]
    a, b = R.fit_envelope(pts)
    assert a >= 0 and b >= 0
    assert all(a + b * x >= y - 1e-9 for x, y in pts)


def test_rules_size_compute_jobs_by_their_card():
    """The compute rules pass their data card to the model (so resources follow the data)."""
    rules = {p.stem: p.read_text() for p in (ROOT / "workflow" / "rules").glob("*.smk")}
    # the experiment rules size a job by its kind's family (ldprepro.experiments.kinds: kind_family)
    # (paper 001's histogram jobs too: kind histogram's family is bshp_job, test_kinds.py)
    for smk, family in [("experiments", "kind_family"), ("benchmark", "benchmark_job")]:
        assert re.search(r"res\([^)]*" + family + r'[\s\S]*?card="card"', rules[smk]), smk
    # paper 004's experiment jobs (kinds.PAPER_KINDS["joint_distribution"]): its family, sized by the card
    assert 'res(_spec.resource_family, entry=_exp, card="card")' in rules["experiments"]
    assert PAPER_KINDS["joint_distribution"].resource_family == "lremh_job"
    assert "sized_by_input=True" in rules["data"]


@pytest.mark.parametrize(
    "family,entry",
    [
        ("figure_job.mean", {"eps": [0.5, 1.0], "reps": 10, "mechanisms": ["pm", "hm", "duchi"]}),
        ("figure_job.sgd", {"eps": [1.0], "folds": 5, "mechanisms": ["pm", "hm"]}),
        ("bshp_job", {"eps": [1.0, 2.0], "reps": 5, "mechanisms": ["bshp", "wshp", "split_baseline"]}),
        ("ldpfl_fig1_mechanism", {"mc_users": 1000, "mc_reps": 5, "mc_eps": [1.0], "mechanisms": ["pm", "hm"]}),
    ],
)
def test_a_job_running_several_mechanisms_does_their_work_summed(family, entry):
    """A panel job (every mechanism of a figure on one dataset), a BSHP city job or ldpfl Fig. 1's
    job declares the work of its mechanisms added up, and the memory of one."""
    names = entry["mechanisms"]
    one = R.job_sizes(family, entry, (5000, 7))
    grouped = R.job_sizes(family, {**entry, "job_mechanisms": names}, (5000, 7))
    assert one[1] > 0 and grouped == (one[0], one[1] * len(names))


@pytest.mark.parametrize("task", ["mean", "frequency", "sgd"])
def test_a_benchmark_job_does_the_work_of_its_panels_summed(task):
    """One benchmark job runs every panel of its task on one dataset (``job_panels``, benchmark.smk):
    it declares their work added up, and the memory of one."""
    entry = {"eps": [0.5, 1.0], "reps": 10, "folds": 5}
    one = R.job_sizes(f"benchmark_job.{task}", entry, (5000, 7))
    grouped = R.job_sizes(f"benchmark_job.{task}", {**entry, "job_panels": 5}, (5000, 7))
    assert one[1] > 0 and grouped == (one[0], one[1] * 5)


def test_the_audit_job_does_the_work_of_its_families_summed():
    """One job audits every family (audit.smk, ``job_families``): their work added up."""
    entry = {"trials": 20000, "eps": [0.5, 1.0, 4.0]}
    one = R.job_sizes("audit_family", entry)
    assert one[1] > 0 and R.job_sizes("audit_family", {**entry, "job_families": 5}) == (one[0], one[1] * 5)


def test_the_repetitions_are_declared():
    """Issue 54 item 4, as reported: reps: 10,000,000 declared mem_mb = 1100 and runtime = 3, as reps:
    20 did (the calibrated lines are flat in the repetitions), and the job died in numpy's
    ArrayMemoryError. Each repetition at each ε of each mechanism now adds its measured bytes and time."""
    fns = R.callables(MODEL, "figure_job.mean", entry=lambda w: w.entry)
    inp = SimpleNamespace(size_mb=0.0)

    def declared(reps: int) -> tuple[int, int]:
        w = SimpleNamespace(entry={"kind": "mean", "reps": reps, "eps": [0.5, 2], "job_mechanisms": ["a", "b", "c"]})
        return fns["mem_mb"](w, inp, 1, 1), fns["runtime"](w, inp, 1, 1)

    small, huge = declared(20), declared(10_000_000)
    held = 10_000_000 * 2 * 3
    assert huge[0] >= R.SAFETY_MEM * held * R.REP_BYTES / 1e6 and huge[1] >= R.SAFETY_TIME * held * R.REP_SECONDS / 60
    assert small[0] < 2000 and huge[0] > 100 * small[0]
    assert R.repetitions_held("figure_job.sgd", {"kind": "sgd", "reps": 10}) == 0  # calibrated lines only


def test_an_out_of_memory_job_names_the_resource_and_how_to_raise_it():
    from ldprepro.pipeline.jobsetup import memory_hint

    smk = SimpleNamespace(resources=SimpleNamespace(mem_mb=1100), rule="panel_job_experiments_x1")
    msg = memory_hint(smk, "panel_job_experiments_x1[dataset=synth_uniform]", MemoryError("Unable to allocate 9 GiB"))
    assert "mem_mb resource is 1100 MB" in msg and "--set-resources panel_job_experiments_x1:mem_mb=" in msg
    assert "profiles/slurm/config.yaml" in msg and "Unable to allocate 9 GiB" in msg


def _rules_and_their_families():
    """(file, rule name or the prefix of the rules a loop names, res(...)'s first argument or None) of
    every rule of workflow/rules/*.smk, read from the rule files' text."""
    out = []
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text()
        starts = [(m.start(), m.group(1)) for m in re.finditer(r"^\s*rule(?: (\w+))?:\s*$", text, re.M)]
        for (pos, name), (end, _) in zip(starts, [*starts[1:], (len(text), None)]):
            block = text[pos:end]
            computed = re.search(r'name:\s*(?:_spec|KINDS\[_entry\["kind"\]\])\.(job_rule|render_rule)\.format', block)
            # a kind's rules are named by its spec (KindSpec.job_rule / render_rule)
            name = name or (f"<{computed.group(1)}>" if computed else re.search(r'name:\s*f"(\w+?_)\{', block).group(1))
            call = re.search(r"\*\*res\(", block)
            if call is None:
                out.append((smk.name, name, None))
                continue
            rest = "\n".join(line.split("#")[0] for line in block[call.end() :].splitlines())
            first = re.split(r"\s(?:entry|card|sized_by_input)=|\)\s*,?\s*\n", rest, maxsplit=1)[0]
            out.append((smk.name, name, first.strip().rstrip(",").strip()))
    return out


def _a_figure_of(spec, config) -> tuple[str, str]:
    """(paper, figure) of a config entry of the kind ``spec`` (its config key for a paper kind), else
    an invented one."""
    if spec.config_key:
        paper, _, figure = spec.config_key.partition(".")
        return paper, figure or "fig1"
    for paper, section in config.items():
        for fig, entry in (section or {}).items() if isinstance(section, dict) else ():
            if isinstance(entry, dict) and entry.get("kind") == spec.name:
                return paper, fig
    return "p", "fig1"


def test_every_rule_is_sized_as_the_one_rule_to_family_table_says():
    """Which family a rule's jobs are sized as lives in one place (resources.RULE_FAMILIES, and for the
    shared experiment rules the kind's KindSpec.resource_family), which timing/ imports: each rule's
    res(...) names that family, a rule without resources has none there, and the table names no rule
    the workflow does not have."""
    from ldprepro.experiments.kinds import KINDS, PAPER_KINDS

    rules = _rules_and_their_families()
    assert len(rules) > 20
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    tasks = config["benchmark"]
    for smk, name, arg in rules:
        sample = name + "x" if name.endswith("_") else name
        if name.startswith("<"):  # the template's blocks: each kind's rule is sized as its spec says
            attr = name[1:-1]
            specs = [s for s in [*KINDS.values(), *PAPER_KINDS.values()] if getattr(s, attr)]
            assert specs and (arg in ("_spec.resource_family", '"render"') or arg.startswith("kind_family(")), (
                smk,
                arg,
            )
            for spec in specs:
                paper, figure = _a_figure_of(spec, config)
                rule = getattr(spec, attr).format(paper=paper, figure=figure, experiment="x")
                # a render that computes (shape in_render, ldpfl Fig. 4) is sized as its kind's family
                want = spec.resource_family if attr == "job_rule" or spec.shape == "in_render" else "render"
                assert R.rule_family(rule, spec.resource_family if R.runs_a_kind(rule) else None) == want, rule
            continue
        if arg is None:
            assert R.rule_family(sample) is None and not R.runs_a_kind(sample), (smk, name)
        elif "kind_family" in arg:
            assert R.runs_a_kind(sample), (smk, name)
            assert {R.rule_family(sample, spec.resource_family) for spec in KINDS.values()} <= set(R.SIZES)
        elif arg == 'f"benchmark_job.{_task}"':
            for task in ("mean", "frequency", "sgd"):
                assert task in tasks and R.rule_family(f"{name}{task}_adult") == f"benchmark_job.{task}"
        else:
            assert arg == f'"{R.rule_family(sample)}"', (smk, name, arg)
    named = {name for _, name, _ in rules}
    for spec in [*KINDS.values(), *PAPER_KINDS.values()]:  # the rules the kinds' specs name
        paper, figure = _a_figure_of(spec, config)
        figure = figure if "." in (spec.config_key or "") else ""  # else the prefix of a rule per figure
        patterns = [p for p in (spec.job_rule, spec.render_rule) if p]
        named |= {p.format(paper=paper, figure=figure, experiment="") for p in patterns}
        named |= {p.split("{")[0] for p in patterns if not p.startswith("{")}  # panel_job_, figure_
    assert set(R.RULE_FAMILIES) | set(R.KIND_RULES) <= named, "a table entry names no rule of the workflow"


def test_every_family_is_sized_and_calibrated():
    """Every family a rule or a kind names has its size/work predictors (resources.SIZES) and a
    calibrated line (or a fallback's); an unknown family is refused by name."""
    from ldprepro.experiments.kinds import KINDS

    named = {f.replace(".*", ".mean") for f in R.RULE_FAMILIES.values()} | {k.resource_family for k in KINDS.values()}
    assert named <= set(R.SIZES)
    assert all(MODEL.line(family) is not None for family in R.SIZES)
    with pytest.raises(ValueError, match="unknown resource family 'figure_job.nope'"):
        R.job_sizes("figure_job.nope", {})


@pytest.mark.parametrize(
    "rule, kind_family, family",
    [
        ("data_fetch", None, "data_fetch"),
        ("audit_families", None, "audit_family"),
        ("audit", None, "render"),
        ("ldpfl_fig1", None, "render"),
        ("ldpfl_fig1_mechanism", None, "ldpfl_fig1_mechanism"),
        ("figure_dct_fig2", None, "render"),
        ("bshp_figure_fig4", None, "render"),
        ("bshp_job_fig4", None, "bshp_job"),
        ("benchmark_job_frequency_plane__zipf", None, "benchmark_job.frequency"),
        ("benchmark_tables", None, "render"),
        ("figure_job", "figure_job.sgd", "figure_job.sgd"),
        ("panel_job_dct_fig2", "figure_job.mean", "figure_job.mean"),
        ("figures_mean", None, None),
        ("all", None, None),
    ],
)
def test_a_rule_s_family_by_its_name(rule, kind_family, family):
    assert R.rule_family(rule, kind_family) == family


def test_a_kind_rule_s_family_needs_its_kind():
    with pytest.raises(ValueError, match="'panel_job_dct_fig2' runs an experiment kind"):
        R.rule_family("panel_job_dct_fig2")
