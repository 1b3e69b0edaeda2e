"""Jobs two figures share (ldprepro.pipeline.shared_jobs): which ones, and the workflow's wiring."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from workflow_cmd import snakemake_cmd

from ldprepro.pipeline.shared_jobs import job_identity, shared_sources, split_sources

REPO = Path(__file__).resolve().parents[1]

FIG8 = {
    "kind": "sgd",
    "title": "Fig. 8",
    "panels": [{"dataset": "ipums_br", "target": "INCTOT", "title": "BR"}],
    "mechanisms": ["laplace", "duchi", "pm", "non_private"],
    "eps": [0.5, 8],
    "model": "logistic",
    "lambda": 0.0001,
    "folds": 10,
    "cv_repetitions": 5,
}


def test_a_figure_repeating_another_with_pm_discretised_shares_every_other_mechanism():
    fig12 = {**FIG8, "title": "Fig. 12", "discretize": 10, "discretize_mechanisms": ["pm", "hm"]}
    shared = shared_sources({("p", "fig8"): FIG8, ("p", "fig12"): fig12})
    assert shared == {("p", "fig12", "ipums_br", m): ("p", "fig8") for m in ("laplace", "duchi", "non_private")}


def test_any_compute_difference_keeps_the_jobs_apart():
    for change in (
        {"lambda": 0.001},
        {"eps": [0.5, 4]},
        {"cv_repetitions": 4},
        {"panels": [{"dataset": "ipums_br", "target": "INCWAGE"}]},
        {"test_reps": 500},
    ):
        assert shared_sources({("p", "fig8"): FIG8, ("p", "other"): {**FIG8, **change}}) == {}, change
    # Duchi's own parameters keep only Duchi's jobs apart
    other = {**FIG8, "mechanism_params": {"duchi": {"ties": "wang"}}}
    shared = shared_sources({("p", "fig8"): FIG8, ("p", "other"): other})
    assert {key[3] for key in shared} == {"laplace", "pm", "non_private"}


def test_presentation_claims_and_other_mechanisms_do_not_matter_and_the_first_figure_is_the_source():
    other = {
        **FIG8,
        "title": "another title",
        "ylabel": "y",
        "claims": [{"claim": "x"}],
        "mechanisms": ["duchi"],
        "mechanism_params": {"pm": {"anything": 1}},
    }
    third = dict(other)
    shared = shared_sources({("p", "fig8"): FIG8, ("p", "b"): other, ("q", "c"): third})
    assert shared == {("p", "b", "ipums_br", "duchi"): ("p", "fig8"), ("q", "c", "ipums_br", "duchi"): ("p", "fig8")}
    assert job_identity(FIG8, FIG8["panels"][0], "duchi") != job_identity(FIG8, FIG8["panels"][0], "pm")


def test_the_shipped_config_shares_exactly_the_repeated_curves_of_figs_11_to_13():
    cfg = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    figures = {
        (paper, fig): {k: v for k, v in entry.items() if k != "smoke"}
        for paper in ("hiera", "ldpfl", "dct")
        for fig, entry in cfg[paper].items()
        if isinstance(entry, dict) and entry.get("kind") in ("mean", "sgd")
    }
    by_figure: dict = {}
    for (paper, fig, _dataset, mechanism), source in shared_sources(figures).items():
        by_figure.setdefault((paper, fig, source), set()).add(mechanism)
    assert by_figure == {
        ("ldpfl", "fig11", ("ldpfl", "fig6")): {"laplace", "duchi", "three_outputs"},
        ("ldpfl", "fig12", ("ldpfl", "fig8")): {"laplace", "duchi", "three_outputs", "non_private"},
        ("ldpfl", "fig13", ("ldpfl", "fig9")): {"duchi", "three_outputs", "non_private"},
    }


def test_the_workflow_feeds_a_shared_job_the_source_rows_and_runs_its_own_jobs(tmp_path):
    """Dry run: Fig. 12's Duchi job on BR takes Fig. 8's result file as input, asks for little
    memory; its PM job (discretised) computes and takes no other figure's file."""
    cmd = snakemake_cmd(
        "-n", "--forceall", "--cores", "2", "--configfile", str(REPO / "config.yaml"), "--",
        "results/ldpfl/fig12/ipums_br__duchi.parquet", "results/ldpfl/fig12/ipums_br__pm.parquet",
        workdir=tmp_path,
    )  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    blocks = {b.split("output: ")[1].split("\n")[0].strip(): b for b in proc.stdout.split("rule ") if "output: " in b}
    duchi = blocks["results/ldpfl/fig12/ipums_br__duchi.parquet"]
    assert "results/ldpfl/fig8/ipums_br__duchi.parquet" in duchi.split("output: ")[0]
    pm = blocks["results/ldpfl/fig12/ipums_br__pm.parquet"]
    assert "results/ldpfl/fig8" not in pm.split("output: ")[0]
    assert "results/ldpfl/fig8/ipums_br__duchi.parquet" in blocks  # the source job itself runs


def test_sgd_panels_with_the_same_splits_use_the_first_figures_and_others_their_own():
    fig12 = {**FIG8, "discretize": 10, "discretize_mechanisms": ["pm"]}
    fig15 = {**FIG8, "model": "linear", "lambda": 0.01}  # other fits, the same splits
    other = {**FIG8, "folds": 5}
    mean = {"kind": "mean", "panels": FIG8["panels"], "eps": [1], "reps": 10, "mechanisms": ["pm"]}
    splits = split_sources(
        {("p", "fig8"): FIG8, ("p", "fig12"): fig12, ("p", "fig15"): fig15, ("p", "o"): other, ("p", "m"): mean}
    )
    assert splits == {
        ("p", "fig8", "ipums_br"): ("p", "fig8"),
        ("p", "fig12", "ipums_br"): ("p", "fig8"),
        ("p", "fig15", "ipums_br"): ("p", "fig8"),
        ("p", "o", "ipums_br"): ("p", "o"),
    }
