"""The benchmark's (k, ε)-plane claims: declared in config.yaml (``benchmark.frequency.claims``) in
the claim language (docs/claims.md) and decided by the claim engine on the oracles' closed-form
variances (ldprepro.benchmark.theory), every point exact. The shipped declarations' verdicts and
their refutations, the oracles run (an excluded oracle appears in no claim), one domain size (a
k-dependence is not testable), the names checked at load time, and the plane's figure with one k."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ldprepro.benchmark import declared, naming, plots, runs, tables, theory
from ldprepro.domain.frequency import EPS_ORACLES

REPO = Path(__file__).resolve().parents[1]
DECLARED = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["benchmark"]["frequency"]["claims"]
GRR_FIRST = "Wang et al. 2017 (Sec. 4, which protocol to use): GRR has a smaller variance than OLH when k < 3e^ε + 2"
OLH_FIRST = "Wang et al. 2017 (Sec. 4, which protocol to use): OLH has a smaller variance than GRR when k > 3e^ε + 2"
FLAT = "Wang et al. 2017 (Sec. 4, optimal local hashing): OLH's variance does not depend on the domain size k"
SAME = "Wang et al. 2017 (Sec. 4): OUE and OLH have the same variance"
SS = "(ours, after Ye & Barg 2018's optimality of the d-subset mechanism) SS at its optimal d has a variance no larger than every other oracle's"
K, EPS = [2, 4, 16, 64, 256], [0.1, 1.0, 4.0]


def decided(k=K, eps=EPS, oracles=EPS_ORACLES, declared=DECLARED) -> pd.DataFrame:
    return theory.theory_claims(declared, k, eps, oracles).set_index("claim")


def declaration(text: str) -> dict:
    return dict(next(d for d in DECLARED if d["claim"].startswith(text)))


def test_the_shipped_declarations_hold_exactly_on_the_plane():
    c = decided()
    assert list(c.index) == [GRR_FIRST, OLH_FIRST, FLAT, SAME, SS + " (GRR, SUE, OUE, OLH, BLH, HR)"]
    assert (c["verdict"] == "holds").all() and (c["verdict_strict"] == "holds").all()
    assert c["p_value"].isna().all() and (c["kind"] == "closed-form").all()
    # the `where` conditions split the 15 (k, ε) points by the crossover, counted here independently
    below = sum(k < 3 * math.exp(e) + 2 for k in K for e in EPS)
    assert (c.loc[GRR_FIRST, "n_points"], c.loc[OLH_FIRST, "n_points"]) == (below, 15 - below) == (8, 7)
    assert c.loc[GRR_FIRST, "evidence"] == f"exact computation agrees at every point ({below})"
    assert list(c[["n_points"]].iloc[2:, 0]) == [3, 15, 15 * 6]  # per ε; per (k, ε); per (k, ε) × other oracle
    assert c.loc[FLAT, "scope"].startswith("k ∈ {2, 4, 16, 64, 256} × ε ∈ {0.1, 1, 4}")  # {grid} filled in
    # Wang et al.'s closed forms at g = e^ε + 1: GRR (k − 2 + e^ε)/(e^ε − 1)², OLH 4e^ε/(e^ε − 1)²
    e = 3.0
    assert theory.oracle_variance("grr", 16, math.log(e)) == pytest.approx((16 - 2 + e) / (e - 1) ** 2)
    assert theory.oracle_variance("olh", 16, math.log(e)) == pytest.approx(4 * e / (e - 1) ** 2)


def test_each_declared_claim_is_refuted_exactly_where_it_is_false(monkeypatch):
    from ldprepro.domain.frequency import subset

    swapped = {**declaration(GRR_FIRST), "claim": "GRR beats OLH when k > 3e^ε + 2", "where": "k > 3*exp(eps) + 2"}
    tight = {**declaration(SAME), "claim": "OUE and OLH within ×1.001", "margin": 1.001}
    c = decided(declared=[swapped, tight])
    assert c.loc["GRR beats OLH when k > 3e^ε + 2", "verdict"] == "does not hold"
    assert "refuted by exact computation" in c.loc["GRR beats OLH when k > 3e^ε + 2", "evidence"]
    assert c.loc["OUE and OLH within ×1.001", "verdict"] == "does not hold"  # OUE/OLH = 0.9907 at ε = 0.5
    # planted: SS with half the domain as its subset instead of the optimal size loses to OUE at large k
    monkeypatch.setattr(subset, "optimal_subset_size", lambda k, eps: max(1, k // 2))
    planted = decided()
    assert planted.loc[SS + " (GRR, SUE, OUE, OLH, BLH, HR)", "verdict"] == "does not hold"
    # planted: an OLH whose variance grows with k
    real = theory.oracle_variance
    monkeypatch.setattr(theory, "oracle_variance", lambda o, k, e: real(o, k, e) * (1 + (o == "olh") * k * 1e-6))
    assert decided().loc[FLAT, "verdict"] == "does not hold"


def test_an_excluded_oracle_appears_in_no_claim_and_no_exact_winner():
    without = ["grr", "oue", "olh", "ss"]  # SUE, BLH and HR left out
    c = decided(oracles=without)
    table = theory.theory_claims(DECLARED, K, EPS, without)
    points = pd.DataFrame(list(table.attrs["points"]))
    assert c.index[-1] == SS + " (GRR, OUE, OLH)"  # {against}: the oracles that ran
    for name in ("SUE", "BLH", "HR"):
        for text in [*c.index, *c["scope"], *c["evidence"], *points["point"]]:
            assert name not in str(text), (name, text)
    no_ss = decided(oracles=["grr", "oue", "olh"])
    assert len(no_ss) == 4 and not any("SS" in t for t in no_ss.index)  # the SS claim is not made
    assert list(decided(oracles=["grr", "olh"]).index) == [GRR_FIRST, OLH_FIRST, FLAT]
    win = theory.exact_winners(theory.exact_plane(K, EPS, without))
    assert set(",".join(win["winners"]).split(",")) | set(win["runner_up"].dropna()) <= set(without)


def test_one_domain_size_cannot_show_a_k_dependence():
    c = decided(k=[64])
    assert c.loc[FLAT, "verdict"] == "not testable"
    assert (
        c.loc[FLAT, "evidence"] == "the plane has one domain size (oracle_k [64]): a dependence on k needs two or more"
    )
    # the claims about a point are still decided there: at k = 64, GRR wins at ε = 4 only (3e^4 + 2 = 165.8)
    assert c.loc[GRR_FIRST, ["verdict", "n_points"]].tolist() == ["holds", 1]
    assert c.loc[OLH_FIRST, ["verdict", "n_points"]].tolist() == ["holds", 2]


def test_a_claim_naming_no_frequency_oracle_is_refused_naming_the_file_and_key():
    assert declared.claim_oracle_problems(DECLARED, "config.yaml benchmark.frequency.claims") == []
    bad = [{**declaration(SAME), "b": "olhh"}, {**declaration(SS), "against": ["grr", "pm"]}]
    assert declared.claim_oracle_problems(bad, "mine.yaml benchmark.frequency.claims") == [
        f"mine.yaml benchmark.frequency.claims[0] ({SAME!r}): b 'olhh' is not a frequency oracle; "
        "the plane compares grr, sue, oue, olh, blh, ss, hr",
        f"mine.yaml benchmark.frequency.claims[1] ({declaration(SS)['claim']!r}): against 'pm' is not a frequency "
        "oracle; the plane compares grr, sue, oue, olh, blh, ss, hr",
    ]


def test_the_plane_page_shows_the_claims_config_text_as_text():
    odd = {**declaration(SAME), "claim": "OUE | OLH <b>same</b>"}
    exact_win = theory.exact_winners(theory.exact_plane(K, EPS))
    md = tables.plane_markdown(
        pd.DataFrame(columns=["task", "dataset"]), exact_win, theory.theory_claims([odd], K, EPS)
    )
    row = next(line for line in md if line.startswith("| OUE"))
    assert "<b>" not in row and "&lt;b&gt;" in row and r"\|" in row


def test_with_one_k_the_exact_expectation_is_drawn_and_the_legend_shows_it_as_drawn(monkeypatch):
    """A line through one point draws nothing: with one k the exact expectation is a tick, and the
    legend's sample is that tick (before: a dashed line in the legend, nothing in the panels)."""
    entry = {"eps": [1.0], "reps": 3, "oracle_k": [64], "plane": {"distributions": ["zipf"], "users": 500}}
    frames = [
        pd.DataFrame(runs.frequency_job({**entry, "oracles": ["grr", "olh"]}, p, None, 1))
        for p in naming.plane_panels(entry)
    ]
    figures = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, *a, **k: figures.append(fig))
    plots.plot_plane_theory(tables.combine(frames), "unused.png")
    (fig,) = figures

    def drawn(line) -> bool:
        return line.get_marker() not in ("None", None, "") or (
            line.get_linestyle() not in ("None", "none", "") and len(line.get_xdata()) > 1
        )

    lines = [line for ax in fig.axes for line in ax.get_lines()]
    assert len(lines) == 4 and all(drawn(line) for line in lines)  # 2 oracles × (measured, exact)
    (legend,) = fig.legends
    sample = dict(zip([t.get_text() for t in legend.get_texts()], legend.legend_handles))["exact expectation"]
    assert sample.get_marker() == "_" and sample.get_linestyle() == "None"


def test_the_workflow_refuses_a_plane_claim_naming_no_oracle_naming_the_user_s_configfile(tmp_path):
    """`snakemake -n --configfile mine.yaml` with a claim about 'olhh' stops at load time naming
    mine.yaml, the key and the oracles known (the claims reach the workflow, not only the tests)."""
    import subprocess

    from test_pipeline_smoke import _mirror_env, smoke_config
    from workflow_cmd import snakemake_cmd

    mine = {"benchmark": {"frequency": {"claims": [{**declaration(SAME), "b": "olhh"}]}}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(mine, allow_unicode=True), encoding="utf-8")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(smoke_config(), allow_unicode=True), encoding="utf-8")
    proc = subprocess.run(
        snakemake_cmd("-n", "--configfile", "mine.yaml"),
        capture_output=True,
        text=True,
        env=_mirror_env(),
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert (
        f"mine.yaml benchmark.frequency.claims[0] ({SAME!r}): b 'olhh' is not a frequency oracle"
        in proc.stdout + proc.stderr
    )
