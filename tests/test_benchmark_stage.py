"""The cross-paper benchmark (issue 18): the winner rule, privacy, common random numbers, and a
mechanism added to the registry joining it (and, when it is not LDP, never winning)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ldprepro.benchmark import naming, plots, privacy, runs, tables, winners
from ldprepro.claims.verdicts import holm
from ldprepro.domain import mechanisms as M
from ldprepro.domain.mechanisms.basic import Laplace


def errors(rng, scale, n=400):
    """Per-repetition squared errors of a mean: scale · χ²₁."""
    return scale * rng.standard_normal(n) ** 2


def test_clear_winner_is_best_and_the_others_worse():
    rng = np.random.default_rng(1)
    e = {"a": errors(rng, 1.0), "b": errors(rng, 3.0), "c": errors(rng, 5.0)}
    t = winners.cell_table(e, {m: True for m in e}).set_index("mechanism")
    assert t.loc["a", "status"] == "best" and t.loc["a", "ratio_to_best"] == 1.0
    assert list(t.loc[["b", "c"], "status"]) == ["worse", "worse"]
    assert t.loc["b", "ci_low"] > 1.0 and t.loc["b", "p_holm"] < 0.05


def test_indistinguishable_mechanisms_are_tied_not_ranked():
    rng = np.random.default_rng(2)
    same = errors(rng, 1.0)
    e = {"a": same, "b": same.copy(), "c": errors(rng, 1.0)}
    t = winners.cell_table(e, {m: True for m in e}).set_index("mechanism")
    assert (t["status"] == "best").sum() == 1
    assert set(t["status"]) <= {"best", "tied"}  # identical errors and an independent copy of the law


def test_a_mechanism_that_is_not_ldp_is_never_best_even_with_the_lowest_error():
    rng = np.random.default_rng(3)
    e = {"leaky": errors(rng, 0.01), "a": errors(rng, 1.0), "b": errors(rng, 4.0)}
    t = winners.cell_table(e, {"leaky": False, "a": True, "b": True}).set_index("mechanism")
    assert t.loc["leaky", "status"] == "not LDP" and t.loc["a", "status"] == "best"
    assert np.isnan(t.loc["leaky", "p_holm"])  # not among the compared
    ranked = t.reset_index().assign(task="mean", dataset="d", eps=1.0)
    w = winners.winners(ranked)
    assert w.loc[0, "best"] == "a" and w.loc[0, "not_ldp_below_best"] == "leaky"


def test_status_follows_the_holm_adjusted_p_over_the_cell():
    rng = np.random.default_rng(4)
    e = {m: errors(rng, s, n=60) for m, s in zip("abcdef", [1.0, 1.3, 1.35, 1.4, 1.5, 2.5])}
    t = winners.cell_table(e, {m: True for m in e})
    rivals = t[t["status"] != "best"]
    np.testing.assert_allclose(rivals["p_holm"], holm(rivals["p_value"].to_numpy()))
    assert ((rivals["status"] == "worse") == ((rivals["p_holm"] < 0.05) & (rivals["ratio_to_best"] > 1))).all()
    assert (rivals["p_holm"] >= rivals["p_value"]).all()


def test_no_ldp_mechanism_in_a_cell_means_no_best():
    e = {"x": np.ones(5), "y": np.ones(5) * 2}
    t = winners.cell_table(e, {"x": False, "y": False})
    assert list(t["status"]) == ["not LDP", "not LDP"]


def test_privacy_from_the_law_dct_is_not_ldp_oracles_are_exact():
    cells = pd.DataFrame(
        [("mean", "pm", 1.0, 0), ("mean", "dct", 1.0, 0), ("frequency", "grr", 1.0, 16), ("frequency", "oue", 2.0, 16)],
        columns=["task", "mechanism", "eps", "k"],
    )
    audit = pd.DataFrame({"subject": ["grr(k=16)", "pm"], "eps_claimed": [1.0, 1.0], "eps_empirical": [0.98, 0.97]})
    p = privacy.privacy_table(cells, audit).set_index(["task", "mechanism"])
    assert p.loc[("mean", "pm"), "ldp"] and not p.loc[("mean", "dct"), "ldp"]
    assert p.loc[("frequency", "grr"), "exact_loss"] == pytest.approx(1.0)
    assert p.loc[("frequency", "grr"), "eps_empirical"] == 0.98 and p.loc[("mean", "pm"), "eps_empirical"] == 0.97
    assert np.isnan(p.loc[("frequency", "oue"), "eps_empirical"])  # the audit did not run ε = 2


class HalfNoiseLaplace(Laplace):
    """Claims ε but adds Laplace noise of scale 1/ε (half of the 2/ε that ε-LDP on [−1, 1] needs):
    its exact loss is 2ε."""

    def __init__(self, eps):
        super().__init__(2.0 * eps)
        self.eps = float(eps)


@pytest.fixture
def registry(monkeypatch):
    reg = dict(M.MECHANISMS)
    reg["laplace_copy"] = Laplace
    reg["half_noise_laplace"] = HalfNoiseLaplace
    monkeypatch.setattr(M, "MECHANISMS", reg)
    monkeypatch.setattr(runs, "MECHANISMS", reg)
    return reg


def toy_data(n=3000):
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.uniform(0, 10, n)})
    card = {"columns": [{"name": "x", "type": "numeric", "domain": [0.0, 10.0]}]}
    return df, card


def test_a_registered_mechanism_joins_the_benchmark_and_crn_pairs_the_repetitions(registry):
    df, card = toy_data()
    entry = {"eps": [1.0], "reps": 6, "mechanisms": "all"}
    rows = pd.DataFrame(runs.mean_job(entry, {"dataset": "toy", "column": "x"}, df, card, seed=7))
    assert set(rows["mechanism"]) == set(registry)
    err = rows[rows["metric"] == "sq_error"].pivot(index="rep", columns="mechanism", values="value")
    # common random numbers: the same law with the same seed gives the same errors, repetition by repetition
    np.testing.assert_array_equal(err["laplace"], err["laplace_copy"])
    again = pd.DataFrame(runs.mean_job(entry, {"dataset": "toy", "column": "x"}, df, card, seed=7))
    pd.testing.assert_frame_equal(rows, again)


def test_a_leaky_registered_mechanism_is_excluded_from_best(registry):
    df, card = toy_data()
    entry = {"eps": [0.5, 2.0], "reps": 200, "mechanisms": ["laplace", "pm", "half_noise_laplace"]}
    res = tables.combine([pd.DataFrame(runs.mean_job(entry, {"dataset": "toy", "column": "x"}, df, card, seed=8))])
    priv, ranked, win = tables.analyse(res, None)
    leaky = priv[priv["mechanism"] == "half_noise_laplace"]
    assert not leaky["ldp"].any() and np.allclose(leaky["exact_loss"], 2 * leaky["eps"])
    assert "half_noise_laplace" not in ",".join(win["winner_set"])
    assert (ranked.loc[ranked["mechanism"] == "half_noise_laplace", "status"] == "not LDP").all()


def test_frequency_job_uses_every_user_and_is_unbiased_on_average():
    rng = np.random.default_rng(9)
    df = pd.DataFrame({"c": rng.choice(["a", "b", "c", "d"], size=5000, p=[0.4, 0.3, 0.2, 0.1])})
    rows = pd.DataFrame(runs.frequency_job({"eps": [1.0], "reps": 400}, {"dataset": "toy", "column": "c"}, df, seed=1))
    assert set(rows["mechanism"]) == {"grr", "sue", "oue", "olh", "blh", "ss", "hr"} and (rows["n_users"] == 5000).all()
    for _, g in rows.groupby("mechanism"):
        mse = g.loc[g["metric"] == "sq_error", "value"]
        theory = g.loc[g["metric"] == "sq_error_theory", "value"].iloc[0]
        # mean of 400 χ²-like squared errors: within 5 standard errors of the exact variance
        assert abs(mse.mean() - theory) < 5 * mse.std(ddof=1) / np.sqrt(len(mse))


def test_bad_column_is_named():
    with pytest.raises(KeyError, match="dataset 'toy' has no column 'nope'"):
        runs.category_codes(pd.DataFrame({"c": ["a", "b"]}), "nope", "toy")
    with pytest.raises(ValueError, match="unknown mechanism"):
        runs.mechanisms_for({"mechanisms": ["no_such_mechanism"]})


def test_panel_ids_are_file_safe_and_labels_readable():
    p = {"dataset": "adult", "columns": ["age", "hours_per_week"]}
    assert naming.panel_id(p) == "adult__age-hours_per_week"
    assert naming.panel_label(p) == "adult: age + hours_per_week"
    assert naming.panel_id({"dataset": "vehicle", "column_regex": "[as][0-9][0-9]"}) == "vehicle__all"


def test_every_registered_mechanism_has_a_distinct_colour_in_the_benchmark():
    from test_plotting import MIN_COLOUR_DISTANCE, cielab

    cols = {m: plots.bench_style(m)["color"] for m in M.MECHANISMS}
    close = [
        (a, b)
        for i, a in enumerate(cols)
        for b in list(cols)[i + 1 :]
        if np.linalg.norm(cielab(cols[a]) - cielab(cols[b])) < MIN_COLOUR_DISTANCE
    ]
    assert not close, close


def test_markdown_and_figures_from_a_small_run(registry, tmp_path):
    df, card = toy_data()
    entry = {"eps": [0.5, 4.0], "reps": 30, "mechanisms": ["laplace", "pm", "dct", "half_noise_laplace"]}
    res = tables.combine([pd.DataFrame(runs.mean_job(entry, {"dataset": "toy", "column": "x"}, df, card, seed=3))])
    _, ranked, win = tables.analyse(res, None)
    md = tables.markdown(win, ranked, {"ipums_us": "no extract"}, "smoke", 3)
    assert "| toy: x | 0.5 |" in md and "## Not LDP (never best)" in md and "- ipums_us: no extract" in md
    assert "| mean | dct | 0.5 | ∞ |" in md
    plots.plot_winner_map(win, "mean", tmp_path / "w.png")
    plots.plot_ratio_to_best(ranked, "mean", tmp_path / "r.png")
    assert (tmp_path / "w.png").stat().st_size > 5000 and (tmp_path / "r.png").stat().st_size > 5000


def test_sgd_task_pairs_the_folds_across_mechanisms(registry):
    rng = np.random.default_rng(6)
    n = 1200
    x1, x2 = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    label = np.where(x1 + 0.5 * x2 + rng.normal(0, 0.2, n) > 0.8, "yes", "no")
    df = pd.DataFrame({"x1": x1, "x2": x2, "y": pd.Categorical(label)})
    card = {
        "columns": [
            {"name": "x1", "type": "numeric", "domain": [0.0, 1.0]},
            {"name": "x2", "type": "numeric", "domain": [0.0, 1.0]},
            {"name": "y", "type": "categorical", "categories": ["no", "yes"]},
        ]
    }
    entry = {
        "eps": [1.0, 8.0],
        "mechanisms": ["laplace", "laplace_copy", "pm"],
        "model": "logistic",
        "lambda": 1e-4,
        "learning_rate": "constant_inv_sqrt_T",
        "folds": 2,
        "cv_repetitions": 2,
        "metric": "misclassification_rate",
    }
    panel = {"dataset": "toy", "target": "y", "target_kind": "label", "positive": "yes", "intercept": True}
    rows = pd.DataFrame(runs.sgd_job(entry, panel, df, card, seed=4))
    assert set(rows["task"]) == {"sgd"} and set(rows["metric"]) == {"misclassification_rate"}
    assert set(rows["rep"]) == {0, 1, 2, 3}
    res = tables.combine([rows])
    _, ranked, win = tables.analyse(res, None)
    assert len(win) == 2 and set(ranked["mechanism"]) == {"laplace", "laplace_copy", "pm"}


# ------------------------------------------------------------------------------------------------
# frequency oracles: every oracle, the (k, ε) plane and its theory claims (issue 28)
# ------------------------------------------------------------------------------------------------


def test_every_oracle_joins_the_frequency_task_unbiased_with_its_exact_variance():
    from ldprepro.domain.frequency import EPS_ORACLES

    rng = np.random.default_rng(9)
    df = pd.DataFrame({"c": rng.choice(["a", "b", "c", "d", "e"], size=3000, p=[0.4, 0.3, 0.2, 0.07, 0.03])})
    rows = pd.DataFrame(runs.frequency_job({"eps": [0.5, 2.0], "reps": 300}, {"dataset": "toy", "column": "c"}, df, 1))
    assert set(rows["mechanism"]) == set(EPS_ORACLES)
    for (mech, eps), g in rows.groupby(["mechanism", "eps"]):
        mse = g.loc[g["metric"] == "sq_error", "value"]
        theory = g.loc[g["metric"] == "sq_error_theory", "value"].iloc[0]
        assert len(mse) == 300
        assert abs(mse.mean() - theory) < 5 * mse.std(ddof=1) / np.sqrt(len(mse)), (mech, eps)
    with pytest.raises(ValueError, match="unknown oracle 'cms'"):
        runs.frequency_job({"eps": [1.0], "reps": 2, "oracles": ["cms"]}, {"dataset": "toy", "column": "c"}, df, 1)


def test_synthetic_counts_are_exact_and_the_plane_panels_named():
    u = runs.synthetic_counts("uniform", 7, 100)
    assert u.sum() == 100 and u.max() - u.min() == 1
    z = runs.synthetic_counts("zipf", 5, 1000, 1.1)
    assert z.sum() == 1000 and (np.diff(z) <= 0).all()
    np.testing.assert_allclose(z / 1000, np.arange(1, 6) ** -1.1 / (np.arange(1, 6) ** -1.1).sum(), atol=1e-3)
    with pytest.raises(ValueError, match="unknown distribution 'normal'"):
        runs.synthetic_counts("normal", 5, 10)
    entry = {"oracle_k": [2, 64], "plane": {"distributions": ["zipf", "uniform"], "users": 500, "reps": 7}}
    panels = naming.plane_panels(entry)
    assert [naming.panel_id(p) for p in panels] == [
        "plane__zipf__k2",
        "plane__zipf__k64",
        "plane__uniform__k2",
        "plane__uniform__k64",
    ]
    assert naming.panel_label(panels[1]) == "zipf(1.1), k = 64" and naming.plane_panels({"oracle_k": [2]}) == []
    # one job per task × dataset (every panel on it), one per plane distribution (every k)
    more = {
        naming.panel_id(p): p for p in [{"dataset": "adult", "column": "sex"}, {"dataset": "adult", "column": "race"}]
    }
    jobs = naming.job_panels({**more, **{naming.panel_id(p): p for p in panels}})
    assert {j: list(ps) for j, ps in jobs.items()} == {
        "adult": ["adult__sex", "adult__race"],
        "plane__zipf": ["plane__zipf__k2", "plane__zipf__k64"],
        "plane__uniform": ["plane__uniform__k2", "plane__uniform__k64"],
    }
    assert all(naming.job_of_panel_id(pid) == job for job, ps in jobs.items() for pid in ps)
    rows = pd.DataFrame(runs.frequency_job({"eps": [1.0], "reps": 3, "oracles": ["olh", "ss"]}, panels[1], None, 2))
    assert (rows["n_attributes"] == 64).all() and (rows["n_users"] == 500).all()
    assert rows.loc[rows["metric"] == "sq_error", "rep"].max() == 6  # the plane's own repetitions


def test_plane_figures_and_page_from_a_small_run(tmp_path):
    from ldprepro.benchmark import theory

    entry = {"eps": [0.5, 4.0], "reps": 20, "oracle_k": [2, 16], "plane": {"distributions": ["zipf"], "users": 2000}}
    frames = [pd.DataFrame(runs.frequency_job(entry, p, None, 5)) for p in naming.plane_panels(entry)]
    res = tables.combine(frames)
    _, ranked, win = tables.analyse(res, None)
    exact_win = theory.exact_winners(theory.exact_plane([2, 16], [0.5, 4.0]))
    config = Path(__file__).resolve().parents[1] / "config.yaml"
    declared = yaml.safe_load(config.read_text(encoding="utf-8"))["benchmark"]["frequency"]["claims"]
    claims = theory.theory_claims(declared, [2, 16], [0.5, 4.0])
    md = tables.markdown(win, ranked, {}, "smoke", 5, exact_win, claims)
    assert "## Frequency oracles on the (k, ε) plane" in md and "| 16 | ss | grr, ss |" in md
    assert "## Peer libraries" in md and "xxhash ≥ 4" in md
    plots.plot_plane(win, exact_win, tmp_path / "plane.png")
    plots.plot_plane_theory(res, tmp_path / "theory.png")
    assert (tmp_path / "plane.png").stat().st_size > 10_000 and (tmp_path / "theory.png").stat().st_size > 10_000
