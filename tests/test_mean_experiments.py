"""The mean-estimation runner, its theory rows, panel handling, claims and availability."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ldprepro.data.availability import availability
from ldprepro.experiments.mean import mean_error_rows
from ldprepro.experiments.mean_figures import budget_fraction, panel_columns, panel_values, run_job
from ldprepro.pipeline.results import aggregate, tidy_frame
from ldprepro.pipeline.seeding import rng_for

BASE = {"paper": "t", "figure": "fig0", "dataset": "d"}


@pytest.mark.parametrize("mechanism", ["pm", "duchi", "dct", "hm_tp", "laplace"])
def test_squared_error_matches_var_over_n(mechanism):
    """E(m̂ − m)² = Σ Var_i / n²: the mean of 400 repetitions lies within 5 SE of the theory."""
    x = rng_for(1, "values").uniform(-1, 1, 2000)
    df = tidy_frame(mean_error_rows(x, mechanism, [0.5, 2.0], 400, 7, {"m": mechanism}, BASE))
    for eps, g in df.groupby("eps"):
        sq = g[g.metric == "sq_error"]["value"].to_numpy()
        theory = g[g.metric == "sq_error_theory"]["value"].item()
        # (m̂ − m)/σ is close to normal, so (m̂ − m)² ≈ σ²χ²₁: its sd is √2·σ².
        assert abs(sq.mean() - theory) <= 5 * math.sqrt(2) * theory / math.sqrt(len(sq)), (mechanism, eps)
        ab = g[g.metric == "abs_error"]["value"].to_numpy()
        ab_theory = g[g.metric == "abs_error_theory"]["value"].item()
        assert abs(ab.mean() - ab_theory) <= 5 * math.sqrt(theory * (1 - 2 / math.pi)) / math.sqrt(len(ab))


def test_multidimensional_rows_and_budget_fraction():
    x = rng_for(2, "md").uniform(-1, 1, (3000, 6))
    rows = mean_error_rows(x, "pm_sub", [4.0], 5, 3, {"k": 1}, BASE, budget_fraction=6 / 10)
    df = tidy_frame(rows)
    assert set(df["n_attributes"]) == {6}
    assert df["eps_numeric"].unique().tolist() == pytest.approx([2.4])
    assert set(df["metric"]) == {"abs_error", "sq_error", "abs_error_theory", "sq_error_theory"}
    assert df.groupby("metric")["rep"].nunique().to_dict() == {
        "abs_error": 5,
        "sq_error": 5,
        "abs_error_theory": 1,
        "sq_error_theory": 1,
    }


def test_rows_are_reproducible_and_keyed():
    x = np.linspace(-1, 1, 500)
    a = mean_error_rows(x, "pm", [1.0], 3, 5, {"job": 1}, BASE)
    b = mean_error_rows(x, "pm", [1.0], 3, 5, {"job": 1}, BASE)
    c = mean_error_rows(x, "pm", [1.0], 3, 5, {"job": 2}, BASE)
    assert a == b and a != c


def _card(columns):
    return {"columns": columns}


def test_panel_selection_and_mapping():
    df = pd.DataFrame({"age": [17, 90, 53.5], "w": [0.0, 1.0, 0.5], "cat": pd.Categorical(["a", "b", "a"])})
    card = _card(
        [
            {"name": "age", "type": "numeric", "domain": [17, 90]},
            {"name": "w", "type": "numeric", "domain": [0, 1]},
            {"name": "cat", "type": "categorical"},
        ]
    )
    assert panel_columns(card, {"dataset": "x"}) == ["age", "w"]
    assert panel_columns(card, {"dataset": "x", "column_regex": "a.*"}) == ["age"]
    np.testing.assert_allclose(panel_values(df, card, {"dataset": "x", "columns": ["age"]}), [-1, 1, 0])
    assert panel_values(df, card, {"dataset": "x"}).shape == (3, 2)
    with pytest.raises(ValueError, match="not numeric columns"):
        panel_columns(card, {"dataset": "x", "columns": ["cat"]})
    assert budget_fraction({"budget_split": "numeric_share"}, {"categorical": ["cat", "c2"]}, 6) == 0.75
    assert budget_fraction({}, {"categorical": ["cat"]}, 6) == 1.0


def test_run_job_sweeps_and_sizes():
    df = pd.DataFrame({"x": rng_for(3, "x").uniform(-1, 1, 4000)})
    card = _card([{"name": "x", "type": "numeric", "domain": [-1, 1]}])
    fig = {"mechanisms": ["dct"], "sweep": {"alpha": [1, 5]}, "eps": [1.0], "reps": 2, "sizes": [100, 1000]}
    out = tidy_frame(run_job(fig, {"dataset": "s"}, "dct", df, card, 1, "dct", "fig9"))
    assert set(out["alpha"]) == {1, 5} and set(out["n_users"]) == {100, 1000}
    summary = aggregate(out)
    t = summary[summary.metric == "sq_error_theory"].set_index(["alpha", "n_users"])["mean"]
    # theory: Var = 1/(3α²ε²) per user, so the MSE of the mean scales as 1/(α² n)
    assert t[(1, 100)] / t[(5, 100)] == pytest.approx(25)
    assert t[(1, 100)] / t[(1, 1000)] == pytest.approx(10)


def test_sizes_above_the_row_count_are_refused_naming_key_dataset_and_rows():
    """Issue 29.5: a size above the dataset's rows was silently cut to the row count."""
    from ldprepro.pipeline.errors import BadInput

    df = pd.DataFrame({"x": rng_for(3, "x").uniform(-1, 1, 300)})
    card = _card([{"name": "x", "type": "numeric", "domain": [-1, 1]}])
    fig = {"mechanisms": ["pm"], "eps": [1.0], "reps": 2, "sizes": [100, 500, 1000]}
    with pytest.raises(
        BadInput,
        match=r"config.yaml dct.fig9.sizes: \[500, 1000\] larger than the 300 rows of "
        r"dataset 's'.*at most 300",
    ):
        run_job(fig, {"dataset": "s"}, "pm", df, card, 1, "dct", "fig9")
    assert len(run_job({**fig, "sizes": [100, 300]}, {"dataset": "s"}, "pm", df, card, 1, "dct", "fig9"))


def test_availability_rules(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IPUMS_API_KEY", raising=False)
    assert availability("s", {"kind": "synthetic"}) is None
    ip = {"kind": "ipums", "options": {}}
    assert "IPUMS" in availability("ipums_br", ip)
    monkeypatch.setenv("IPUMS_API_KEY", "k")
    import ldprepro.data.availability as av

    monkeypatch.setattr(av, "host_resolves", lambda host, timeout=3.0: host != "api.ipums.org")
    assert "cannot be reached" in availability("ipums_br", ip)  # a key alone, offline: not available
    monkeypatch.setattr(av, "host_resolves", lambda host, timeout=3.0: host == "api.ipums.org")
    assert availability("ipums_br", ip) is None
    (tmp_path / "mirror" / "a").mkdir(parents=True)
    (tmp_path / "mirror" / "a" / "f.csv.gz").write_bytes(b"x")
    entry = {
        "kind": "table",
        "files": [{"name": "f.csv", "sha256": "0" * 64, "mirror": "a/f.csv.gz", "url": "https://host.invalid/f.csv"}],
    }
    assert availability("a", entry, str(tmp_path / "mirror")) is None
    (tmp_path / "other").mkdir()
    reason = availability("a", entry, str(tmp_path / "other"))  # the folder exists, the file is not in it
    assert "host.invalid" in reason and "not in the mirror" in reason
    reason = availability("a", entry, str(tmp_path / "nomirror"))  # the folder itself is missing: say so
    assert f"the mirror folder {tmp_path / 'nomirror'} does not exist" in reason, reason
    assert "not in the mirror" not in reason and "host.invalid" in reason
    no_url = {"kind": "table", "files": [{"name": "f.csv", "sha256": "0" * 64, "mirror": "a/f.csv.gz"}]}
    reason = availability("a", no_url, str(tmp_path / "nomirror"))
    assert f"the mirror folder {tmp_path / 'nomirror'} does not exist" in reason, reason


def test_paper_000_estimators_through_the_runner():
    """HierA (intended, unclipped) and graded Laplace: squared error matches their exact variance."""
    x = rng_for(4, "hiera-values").uniform(-1, 1, 5000)
    for name, params in [("hiera", {"mu": 2, "step5_mode": "intended", "clip": False}), ("graded_laplace", {})]:
        df = tidy_frame(mean_error_rows(x, name, [0.5], 300, 9, {"m": name}, BASE, params=params))
        sq = df[df.metric == "sq_error"]["value"].to_numpy()
        theory = df[df.metric == "sq_error_theory"]["value"].item()
        assert abs(sq.mean() - theory) <= 5 * math.sqrt(2) * theory / math.sqrt(len(sq)), name
    # with the paper's clipping the theory rows are the unclipped reference (same exact variance)
    df = tidy_frame(mean_error_rows(x, "hiera", [0.5], 3, 9, {"m": "clip"}, BASE, params={"mu": 2, "clip": True}))
    unclipped = tidy_frame(
        mean_error_rows(x, "hiera", [0.5], 3, 9, {"m": "clip"}, BASE, params={"mu": 2, "clip": False})
    )
    theory = df[df.metric == "sq_error_theory"]["value"].item()
    assert theory == unclipped[unclipped.metric == "sq_error_theory"]["value"].item()
    # the printed reading is biased: no closed form, no theory rows
    df = tidy_frame(
        mean_error_rows(x, "hiera", [0.5], 3, 9, {"m": "pr"}, BASE, params={"mu": 2, "step5_mode": "printed"})
    )
    assert set(df["metric"]) == {"abs_error", "sq_error"}
    with pytest.raises(ValueError, match="one attribute"):
        mean_error_rows(np.zeros((10, 2)), "hiera", [1.0], 1, 1, {}, BASE)


def test_at_level_estimator_groups_once_and_draws_as_per_level_perturbation():
    """AtLevelEstimator caches the users grouped by level; a repetition's estimate equals
    perturbing each level's users with its own mechanism, level by level, from the same stream."""
    from ldprepro.experiments.mean import AtLevelEstimator

    x = np.random.default_rng(5).uniform(-1, 1, 20_000)
    est = AtLevelEstimator("pm", 0.5)
    for seed in (1, 2):  # twice: the second call runs on the cached grouping
        got = est.estimate(x, np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        level = est.levels.level_of(x)
        total = sum(float(m.perturb(x[level == t], rng).sum()) for t, m in enumerate(est.mechs) if (level == t).any())
        assert got == total / x.size


def test_the_figure_says_how_many_repetitions_its_curves_and_its_verdicts_use():
    """A curve drawn from the paper's reps beside a verdict decided on test_reps says both numbers."""
    from ldprepro.experiments.mean_figures import repetitions_note

    summary = pd.DataFrame({"n": [20, 20, 20]})
    assert repetitions_note(summary, pd.DataFrame({"n_reps": [20, 20]})) == "mean of 20 repetitions"
    note = repetitions_note(summary, pd.DataFrame({"n_reps": [16000, pd.NA]}))
    assert note == "mean of 20 repetitions (verdicts on up to 16,000)"
    assert repetitions_note(pd.DataFrame({"n": [3, 5]}), None) == "mean of 3–5 repetitions"
    # a figure whose only row is not testable (no claim declared): no repetition count to add
    untested = pd.DataFrame({"n_reps": pd.array([pd.NA], dtype="Int64")})
    assert repetitions_note(summary, untested) == "mean of 20 repetitions"


@pytest.mark.parametrize(
    "mechanism, params, d, exact",
    [
        ("pm_sub", {}, 1, True),
        ("hm", {"discretize": 4}, 1, True),
        ("hm_tp", {}, 4, True),
        ("duchi", {}, 4, True),
        ("duchi", {"duchi_ties": "wang"}, 4, False),  # the literal ties are biased
        ("hiera", {"clip": True}, 1, False),  # the theory is the unclipped estimator's
        ("hiera", {"clip": False}, 1, True),
        ("graded_laplace", {}, 1, True),
        ("pm_at_level", {}, 1, True),
    ],
)
def test_theory_rows_declare_whether_they_are_exact(mechanism, params, d, exact):
    """One declared place: sq_error_theory is exact for the unbiased estimators as run; the CLT's
    abs_error_theory never is."""
    x = rng_for(3, "ex").uniform(-1, 1, (400, d) if d > 1 else 400)
    df = tidy_frame(mean_error_rows(x, mechanism, [1.0], 2, 3, {"m": mechanism}, BASE, params=params))
    flag = df.set_index("metric")["theory_exact"]
    assert flag["sq_error_theory"] == exact and flag["abs_error_theory"] == False  # noqa: E712
    assert df.loc[~df["metric"].str.endswith("_theory"), "theory_exact"].isna().all()


def test_a_grouped_job_pairs_each_mechanism_with_its_file_and_refuses_a_count_that_differs():
    from ldprepro.pipeline.results import output_per_name

    assert output_per_name(["pm", "hm"], ["r/a__pm.parquet", "r/a__hm.parquet"]) == [
        ("pm", "r/a__pm.parquet"),
        ("hm", "r/a__hm.parquet"),
    ]
    with pytest.raises(RuntimeError, match=r"2 mechanisms/methods \['pm', 'hm'\] but 1 outputs"):
        output_per_name(["pm", "hm"], ["r/a__pm.parquet"])
