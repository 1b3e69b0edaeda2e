"""The experiment-kind contract (ldprepro.experiments.kinds) and the kinds a paper is added with by
config alone (docs/extending.md, "Adding a paper"): the registry agrees with the schema, every
example of the docs is valid as printed, the frequency and variance acceptance figures decide their
claims exactly (in-process, cheap), and one end-to-end run builds the examples with `--configfile`
and no edit under src/ or workflow/."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ldprepro.claims.declarations import validate as validate_claims
from ldprepro.experiments import kinds
from ldprepro.papers import decide_figure
from ldprepro.pipeline.config_origin import ConfigOrigin, check_schema
from ldprepro.pipeline.mechanism_names import BUILTIN_MECHANISMS, FREQUENCY_ORACLES, mechanism_problems
from ldprepro.pipeline.parse import load_yaml
from ldprepro.pipeline.results import tidy_frame
from ldprepro.pipeline.verify import grid_problems

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
KINDS_SHOWN = ("mean", "sgd", "frequency", "variance", "histogram")


def docs_example(kind: str) -> dict:
    """The YAML block after ``<!-- example: paper-<kind> -->`` in docs/extending.md, as printed."""
    text = (REPO / "docs/extending.md").read_text(encoding="utf-8")
    block = re.search(rf"<!-- example: paper-{kind} -->\s*```yaml\n(.*?)```", text, re.S)
    assert block, f"docs/extending.md lost its paper-{kind} example"
    return yaml.safe_load(block.group(1))


def base_config() -> dict:
    cfg = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    cfg["scale"] = "smoke"
    return cfg


def only_entry(example: dict) -> tuple[str, str, dict]:
    ((paper, figs),) = example["papers"].items()
    ((fig, entry),) = figs.items()
    return paper, fig, entry


# ------------------------------------------------------------------------------------ the registry
def test_the_schema_knows_every_registered_kind_and_nothing_else():
    schema = load_yaml(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$defs"]["experiment_figure"]["properties"]["kind"]["enum"] == list(kinds.kind_names())
    for name, spec in kinds.KINDS.items():
        entry = schema["$defs"][spec.schema]
        assert entry["properties"]["kind"] == {"const": name}, name
        module = kinds.load(name)
        assert all(callable(getattr(module, f, None)) for f in ("run_job", "grid", "plot")), name


def test_every_kind_rule_s_code_fingerprint_names_its_kind_s_module():
    """The scripts load a kind's module by name, which the code fingerprint of a script
    (parse.code_hash) cannot follow: every rule of the template that runs a kind adds the kind's
    module's fingerprint (kind_code, parse.module_hash), which changes with the module or what it
    imports, and differs between kinds (editing one kind reruns its figures only)."""
    from ldprepro.pipeline.parse import code_files, module_hash

    template = (REPO / "workflow/rules/experiments.smk").read_text()
    codes = re.findall(r"^\s*code=(.*\n.*)", template, re.M)  # the value and its next line
    assert len(codes) >= 9 and all("kind_code(" in c for c in codes), codes
    hashes = {name: module_hash(spec.module) for name, spec in {**kinds.KINDS, **kinds.PAPER_KINDS}.items()}
    assert len(set(hashes.values())) == len(hashes)
    mean = REPO / "src/ldprepro/experiments/kinds/mean.py"
    assert REPO / "src/ldprepro/experiments/mean_figures.py" in code_files(mean)  # and what a kind imports


#: what a paper kind's module runs, by its job shape (ldprepro.experiments.kinds.SHAPES)
SHAPE_FUNCTIONS = {
    "mechanisms": ("run_job", "grid", "render"),
    "in_render": ("render",),
    "experiment": ("run_experiment", "render"),
}


def test_every_paper_kind_is_bound_to_its_config_with_its_shape_and_rule_names():
    """ldpfl Figs. 1 and 4 and paper 004 are kinds bound to their paper's config (their rules come from
    the shared template, experiments.smk): each names a shape, its config key's schema, the functions
    its shape runs, and rule names that format to the names the workflow has always used."""
    schema = load_yaml(SCHEMA.read_text(encoding="utf-8"))
    assert set(kinds.PAPER_KINDS).isdisjoint(kinds.kind_names())  # a figure entry cannot name them
    for name, spec in kinds.PAPER_KINDS.items():
        assert kinds.get_kind(name) is spec and spec.shape in kinds.SHAPES, name
        node = schema
        for part in spec.schema.split("/"):
            node = node[part]
        assert node["type"] == "object", name
        module = kinds.load(name)
        assert all(callable(getattr(module, f, None)) for f in SHAPE_FUNCTIONS[spec.shape]), name
    named = {name: (spec.job_rule, spec.render_rule) for name, spec in kinds.PAPER_KINDS.items()}
    fmt = lambda rule, **names: rule and rule.format(**names)  # noqa: E731
    assert [fmt(r, paper="ldpfl", figure="fig1") for r in named["variance_curve"]] == [
        "ldpfl_fig1_mechanism",
        "ldpfl_fig1",
    ]
    assert [fmt(r, paper="ldpfl", figure="fig4") for r in named["output_density"]] == [None, "ldpfl_fig4"]
    assert [fmt(r, paper="lremh", figure="fig2", experiment="adult") for r in named["joint_distribution"]] == [
        "lremh_job_adult",
        "lremh_figure_fig2",
    ]


def test_a_paper_kind_s_module_is_in_its_rules_code_fingerprint():
    """The scripts load a paper kind's module by name; its rules' ``code`` param adds the module's own
    fingerprint (parse.module_hash), which changes with the module or what it imports."""
    from ldprepro.pipeline.parse import code_files, module_hash

    for spec in kinds.PAPER_KINDS.values():
        path = REPO / "src" / (spec.module.replace(".", "/") + ".py")
        assert path.is_file() and len(module_hash(spec.module)) == 16, spec.name
    assert REPO / "src/ldprepro/papers/ldpfl/mechanism_figures.py" in code_files(
        REPO / "src/ldprepro/papers/ldpfl/variance_curve.py"
    )
    assert module_hash("ldprepro.papers.ldpfl.variance_curve") != module_hash("ldprepro.papers.ldpfl.output_density")
    with pytest.raises(ValueError, match="ldprepro.papers.nowhere"):
        module_hash("ldprepro.papers.nowhere")


def test_the_variance_curve_job_covers_its_grid_and_a_short_one_is_named():
    """ldpfl Fig. 1's job rows (kind variance_curve) cover the grid its render checks: the closed form on
    every ε of eps_grid, mc_reps Monte-Carlo rows at each mc_eps; a missing repetition is named."""
    module = kinds.load("variance_curve")
    fig = {"eps_grid": {"start": 0.5, "stop": 1.5, "step": 0.25}, "mc_eps": [1.0], "mc_users": 50, "mc_reps": 3}
    rows = tidy_frame(module.run_job(fig, {}, "pm", None, None, 7, "ldpfl", "fig1", lambda *a: None))
    assert sorted(rows.loc[rows["dataset"] == "analytic", "eps"]) == [0.5, 0.75, 1.0, 1.25, 1.5]
    assert grid_problems(rows, Path("pm.parquet"), module.grid(fig)) == []
    short = rows[~((rows["dataset"] == "monte_carlo") & (rows["rep"] == 2))]
    assert grid_problems(short, Path("pm.parquet"), module.grid(fig)) != []


def test_the_parse_time_oracle_list_is_the_domain_s():
    from ldprepro.domain.frequency import EPS_ORACLES

    assert FREQUENCY_ORACLES == EPS_ORACLES


@pytest.mark.parametrize("kind", KINDS_SHOWN)
def test_every_docs_example_is_a_valid_paper_as_printed(kind):
    example = docs_example(kind)
    paper, fig, entry = only_entry(example)
    assert entry["kind"] == kind
    cfg = base_config()
    cfg.update(example)
    check_schema(cfg, SCHEMA, ConfigOrigin([("config.yaml", cfg)]))  # raises naming the key
    assert mechanism_problems(cfg, BUILTIN_MECHANISMS) == []
    validate_claims(entry["claims"], f"papers.{paper}.{fig}.claims")
    # the mean example is the toy paper that tests/test_extension_examples.py builds end to end
    if kind == "mean":
        toy = yaml.safe_load((REPO / "tests/toy_paper/config.yaml").read_text(encoding="utf-8"))
        assert toy == example


def test_an_entry_its_kind_cannot_draw_is_refused_at_load_time_naming_the_key():
    for kind in KINDS_SHOWN:
        _, _, entry = only_entry(docs_example(kind))
        assert kinds.entry_problems(entry, "k") == []
    _, _, freq = only_entry(docs_example("frequency"))
    assert kinds.entry_problems({**freq, "k": [16, 64]}, "papers.wang17.fig1") == [
        "papers.wang17.fig1: x: eps draws one k, and k is [16, 64]: draw x: k (a curve per oracle and ε)"
    ]
    no_k = {k: v for k, v in freq.items() if k != "k"}
    assert "needs the figure's domain sizes" in kinds.entry_problems(no_k, "f")[0]
    column = {**freq, "x": "k", "panels": [{"dataset": "adult", "column": "education"}]}
    assert "x: k needs synthetic panels" in kinds.entry_problems(column, "f")[0]
    _, _, var = only_entry(docs_example("variance"))
    no_users = {k: v for k, v in var.items() if k != "users"}
    assert kinds.entry_problems(no_users, "v") == [
        "v: a worst-case variance panel needs the Monte-Carlo users per repetition, users: 1000 say"
    ]


# --------------------------------------------------------------------------- the acceptance figures
def run_in_process(example: dict) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Every job of the example's one figure in this process, its grid checked, its claims decided."""
    paper, fig, entry = only_entry(example)
    entry = {**entry, **entry.get("smoke", {})}
    kind = kinds.load(entry["kind"])
    frames = []
    for panel in entry["panels"]:
        assert not kinds.needs_data(entry, panel)  # the acceptance figures are data-free
        for m in entry["mechanisms"]:
            rows = tidy_frame(kind.run_job(entry, panel, m, None, None, 7, paper, fig, lambda *a: None))
            assert grid_problems(rows, Path(f"{panel['dataset']}__{m}.parquet"), kind.grid(entry)) == []
            frames.append(rows)
    raw = pd.concat(frames, ignore_index=True)
    return raw, decide_figure(paper, fig, raw, entry, {}), entry


def test_the_frequency_figure_decides_both_of_wang17_s_claims_exactly():
    raw, claims, _ = run_in_process(docs_example("frequency"))
    c = claims.set_index("claim")
    olh = c.loc["OLH has a smaller variance than GRR when k > 3e^ε + 2"]
    same = c.loc["OUE and OLH have the same variance"]
    assert (olh["verdict"], same["verdict"]) == ("holds", "holds")
    # exact: ε ≤ 3 of the grid satisfy 64 > 3e^ε + 2 (3e^3 + 2 = 62.3), and nothing is left to chance
    assert olh["evidence"] == "exact computation agrees at every point (6)"
    assert same["evidence"] == "exact computation agrees at every point (10)"
    # the exact rows: one per (oracle, ε), marked exact
    theory = raw[raw["metric"] == "variance_theory"]
    assert theory["theory_exact"].eq(True).all() and len(theory) == 3 * 10


def test_the_frequency_claim_is_refuted_exactly_where_the_condition_is_dropped():
    example = docs_example("frequency")
    claim = example["papers"]["wang17"]["fig1"]["claims"][0]
    del claim["where"]
    claim["claim"] = "OLH has a smaller variance than GRR at every ε"
    _, claims, _ = run_in_process(example)
    row = claims.set_index("claim").loc["OLH has a smaller variance than GRR at every ε"]
    assert row["verdict"] == "does not hold"  # GRR wins from ε = 3.5 on at k = 64


def test_the_same_variance_claim_is_refuted_exactly_under_a_tighter_margin():
    example = docs_example("frequency")
    claim = example["papers"]["wang17"]["fig1"]["claims"][1]
    claim["margin"], claim["claim"] = 1.001, "OUE and OLH have the same variance within ×1.001"
    _, claims, _ = run_in_process(example)
    row = claims.set_index("claim").loc["OUE and OLH have the same variance within ×1.001"]
    # the exact OUE/OLH variance ratio on this Zipf is 0.990 at ε = 0.5: outside ×1.001, refuted without a p-value
    assert row["verdict"] == "does not hold" and row["evidence"].startswith("refuted by exact computation")


def test_the_variance_figure_decides_pm_against_duchi_exactly():
    raw, claims, _ = run_in_process(docs_example("variance"))
    c = claims.set_index("claim")
    pm = c.loc["PM's worst-case variance is smaller than Duchi et al.'s for ε > 1.29"]
    assert pm["verdict"] == "holds"
    assert pm["evidence"] == "exact computation agrees at every point (6)"  # ε = 1.5 … 4
    hm = c.loc["HM's worst-case variance is no larger than PM's and Duchi et al.'s"]
    assert hm["verdict"] == "holds"  # at ε = 0.5 HM is Duchi's mechanism: a tie, which "no worse" admits
    assert c.loc["The Monte-Carlo variance agrees with the closed form", "verdict"] == "holds"
    # the closed form the rows carry: Duchi et al.'s worst case ((e^ε + 1)/(e^ε − 1))², at t* = 0
    duchi = raw[(raw["mechanism"] == "duchi") & (raw["metric"] == "variance_theory")]
    e = np.exp(duchi["eps"].to_numpy())
    assert np.allclose(duchi["value"].to_numpy(), ((e + 1) / (e - 1)) ** 2, rtol=1e-12)
    assert (duchi["t_input"] == 0).all()


def test_pm_beats_duchi_is_refuted_below_the_crossing():
    example = docs_example("variance")
    claim = example["papers"]["wang19"]["fig2"]["claims"][0]
    claim["where"] = "eps >= 1"
    claim["claim"] = "PM beats Duchi for ε ≥ 1"
    _, claims, _ = run_in_process(example)
    # at ε = 1 PM's worst-case variance is 1.12 times Duchi et al.'s (they cross at ε ≈ 1.29)
    assert claims.set_index("claim").loc["PM beats Duchi for ε ≥ 1", "verdict"] == "does not hold"


@pytest.mark.slow
def test_the_examples_build_with_configfile_and_no_code(tmp_path):
    from test_pipeline_smoke import _mirror_env, smoke_config
    from workflow_cmd import snakemake_cmd

    mine = {"papers": {}}
    for kind in ("sgd", "frequency", "variance", "histogram"):
        mine["papers"].update(docs_example(kind)["papers"])
    user = tmp_path / "papers.yaml"
    user.write_text(yaml.safe_dump(mine, allow_unicode=True), encoding="utf-8")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(smoke_config(), allow_unicode=True))
    targets = ["figures/wang17/fig1.png", "figures/wang19/fig2.png", "figures/toysgd/fig1.png"]
    targets.append("figures/salaries/fig1.png")  # the histogram figure on the mirrored San Francisco salaries
    cmd = snakemake_cmd("--cores", "2", "--configfile", str(user), "--", *targets)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_mirror_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wang17 = pd.read_parquet(tmp_path / "results/wang17/fig1/claims.parquet")
    wang19 = pd.read_parquet(tmp_path / "results/wang19/fig2/claims.parquet").set_index("claim")
    assert wang17["verdict"].tolist() == ["holds", "holds"]
    assert wang19.loc["PM's worst-case variance is smaller than Duchi et al.'s for ε > 1.29", "verdict"] == "holds"
    assert (wang17["data_role"] == "paper").all()
    assert pd.read_parquet(tmp_path / "results/toysgd/fig1/claims.parquet")["verdict"].notna().all()
    salaries = pd.read_parquet(tmp_path / "results/salaries/fig1/claims.parquet")
    assert salaries["verdict"].tolist() == ["holds", "holds"]  # BSHP beats the baseline exactly; MC agrees
    for t in targets:
        assert (tmp_path / t).stat().st_size > 1000


def salary_data(n: int = 20_000, seed: int = 3) -> tuple[pd.DataFrame, dict]:
    """A constructed salary column (log-normal, skewed as payrolls are) and its data card."""
    x = np.random.default_rng(seed).lognormal(11.0, 0.5, n)
    card = {"dataset": "salary_sf", "columns": [{"name": "salary", "type": "numeric", "domain": [x.min(), x.max()]}]}
    return pd.DataFrame({"salary": x}), card


def test_the_histogram_figure_decides_bshp_against_the_split_baseline_exactly(tmp_path):
    """The printed histogram example, in this process on a constructed salary column: the exact
    rows follow the contract (mse_theory, rep 0, theory_exact), the comparison is decided exactly
    and holds at ε ≤ 8, and is refuted exactly at ε = 16, where bit sampling's halved per-bit
    budget costs more than answering each consumer separately (paper 001, Fig. 4's crossing)."""
    from ldprepro.pipeline.results import aggregate

    paper, fig, entry = only_entry(docs_example("histogram"))
    kind = kinds.load("histogram")
    df, card = salary_data()

    def decide(e):
        frames = []
        for m in e["mechanisms"]:
            rows = kind.run_job(e, e["panels"][0], m, df, card, 7, paper, fig, lambda *a: None)
            frame = tidy_frame(rows, extra_order=kind.COLUMN_ORDER)
            assert grid_problems(frame, Path(f"salary_sf__{m}.parquet"), kind.grid(e)) == []
            frames.append(frame)
        raw = pd.concat(frames, ignore_index=True)
        return raw, decide_figure(paper, fig, raw, e, {}, kind.claim_rows(raw, e)).set_index("claim")

    raw, claims = decide(entry)
    beats = claims.loc["BSHP's MSE is smaller than the split baseline's at every ε"]
    assert (beats["verdict"], beats["evidence"]) == ("holds", "exact computation agrees at every point (4)")
    assert claims.loc["The simulated MSE agrees with the exact expected MSE", "verdict"] == "holds"
    theory = raw[raw["metric"] == "mse_theory"]
    assert (theory["rep"] == 0).all() and theory["theory_exact"].eq(True).all()
    assert len(theory) == 2 * 4 * 3  # (baseline, bshp) × ε × (every consumer, 4 bins, 10 bins)
    _, high = decide({**entry, "eps": [16]})
    assert high.loc["BSHP's MSE is smaller than the split baseline's at every ε", "verdict"] == "does not hold"
    kind.plot(aggregate(kind.drawn_rows(raw, entry)), entry, {}, "t", tmp_path / "h.png", tmp_path / "h.svg")
    assert (tmp_path / "h.png").stat().st_size > 1000


def test_a_histogram_entry_its_plot_cannot_draw_is_refused_naming_the_key():
    _, _, entry = only_entry(docs_example("histogram"))
    two = {**entry, "plot": "values", "panels": entry["panels"] * 2}
    assert kinds.entry_problems(two, "h") == [
        "h: plot: values draws one panel's histograms, got 2 panels: one per figure"
    ]
    assert "one sampling ratio" in kinds.entry_problems({**entry, "ratios": [0.8, 0.4]}, "h")[0]
    no_column = {k: v for k, v in entry.items() if k != "column"}
    assert "name the numeric column" in kinds.entry_problems(no_column, "h")[0]
    cfg = base_config()
    cfg["papers"] = {"p": {"fig1": {**entry, "mechanisms": ["split_baseline", "grr"]}}}
    (problem,) = mechanism_problems(cfg, BUILTIN_MECHANISMS)
    assert "unknown histogram collector 'grr' in papers.p.fig1.mechanisms" in problem


def test_a_section_names_its_histogram_panels_and_options_once():
    section = {
        "protocol": {"column": "salary", "folds": [3, 5, 7], "estimator": "horvitz_thompson"},
        "cities": {"sf": {"dataset": "salary_sf", "data_role": "paper"}},
    }
    entry = {"kind": "histogram", "cities": ["sf"], "folds": [4], "mechanisms": ["bshp"]}
    out = kinds.section_entry(section, entry, "bshp.fig9")
    assert out["panels"] == [{"city": "sf", "dataset": "salary_sf", "data_role": "paper"}]
    assert (out["column"], out["folds"], out["estimator"]) == ("salary", [4], "horvitz_thompson")  # the entry wins
    with pytest.raises(ValueError, match=r"bshp\.fig9\.cities names \['la'\], which are not under bshp\.cities"):
        kinds.section_entry(section, {**entry, "cities": ["la"]}, "bshp.fig9")
    assert kinds.section_entry(section, {"kind": "mean", "cities": ["sf"]}, "x.fig1") == {
        "kind": "mean",
        "cities": ["sf"],
    }


# ------------------------------------------------------------------------- the kinds' other panels
def test_a_frequency_figure_against_k_decides_the_condition_at_every_k(tmp_path):
    from ldprepro.pipeline.results import aggregate

    entry = {
        "kind": "frequency",
        "panels": [{"dataset": "uniform", "synthetic": "uniform", "users": 2000}],
        "mechanisms": ["grr", "olh"],
        "k": [4, 16, 256],
        "eps": [1.0, 2.0],
        "reps": 4,
        "metric": "mse",
        "x": "k",
        "claims": [
            {
                "claim": "OLH beats GRR when k > 3e^ε + 2",
                "scope": "s",
                "test": "outperform",
                "mechanism": "olh",
                "against": ["grr"],
                "where": "k > 3*exp(eps) + 2",
            },
            {"claim": "OLH beats GRR", "scope": "s", "test": "outperform", "mechanism": "olh", "against": ["grr"]},
        ],
    }
    raw, claims, _ = run_in_process({"papers": {"p": {"fig1": entry}}})
    c = claims.set_index("claim")
    # in scope: k = 16 at ε = 1 (3e + 2 = 10.2) and k = 256 at both ε (3e² + 2 = 24.2)
    assert c.loc["OLH beats GRR when k > 3e^ε + 2", "verdict"] == "holds"
    assert c.loc["OLH beats GRR when k > 3e^ε + 2", "evidence"] == "exact computation agrees at every point (3)"
    assert c.loc["OLH beats GRR", "verdict"] == "does not hold"  # GRR wins at k = 4
    assert sorted(raw["k"].unique()) == [4, 16, 256]
    kinds.load("frequency").plot(aggregate(raw), entry, {}, "t", tmp_path / "f.png", tmp_path / "f.svg")
    assert (tmp_path / "f.png").stat().st_size > 1000


def test_a_frequency_panel_on_a_dataset_column_and_a_data_dependent_variance():
    df = pd.DataFrame({"colour": ["red", "blue", "blue", "green"] * 250, "age": np.linspace(20, 80, 1000)})
    card = {"columns": [{"name": "age", "type": "numeric", "domain": [0, 100]}]}
    panel = {"dataset": "toy", "column": "colour"}
    freq = kinds.load("frequency")
    fig = {"kind": "frequency", "panels": [panel], "mechanisms": ["oue"], "eps": [1.0], "reps": 3, "metric": "variance"}
    rows = pd.DataFrame(freq.run_job(fig, panel, "oue", df, None, 1, "p", "f", lambda *a: None))
    assert (rows["k"] == 3).all() and (rows["n_users"] == 1000).all()
    var = kinds.load("variance")
    vpanel = {"dataset": "toy", "columns": ["age"]}
    vfig = {"kind": "variance", "panels": [vpanel], "mechanisms": ["pm"], "eps": [1.0], "reps": 3, "metric": "variance"}
    rows = pd.DataFrame(var.run_job(vfig, vpanel, "pm", df, card, 1, "p", "f", lambda *a: None))
    theory = rows.loc[rows["metric"] == "variance_theory", "value"].iloc[0]
    from ldprepro.domain.mechanisms import get_mechanism

    t = df["age"].to_numpy() / 50 - 1  # the card's domain [0, 100] mapped to [−1, 1]
    assert theory == pytest.approx(float(np.mean(get_mechanism("pm", 1.0).variance(t))), rel=1e-12)
    assert "t_input" not in rows  # a data panel has no single worst-case input
    assert kinds.needs_data(vfig, vpanel) and not kinds.needs_data(vfig, {"dataset": "w", "input": "worst_case"})
