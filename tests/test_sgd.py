"""LDP-SGD: gradients, the non-private optimiser recovering known coefficients, and LDP-SGD's error
falling as ε grows (fixed seeds, tolerances from the sampling variability)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ldprepro.domain.mechanisms import get_multidim
from ldprepro.domain.sgd import evaluate, gradients, group_collector, group_size, ldp_sgd, ldp_sgd_fits
from ldprepro.experiments.sgd_figures import design_matrix, run_job
from ldprepro.pipeline.results import aggregate, tidy_frame
from ldprepro.pipeline.seeding import rng_for


@pytest.mark.parametrize("model", ["linear", "logistic", "svm"])
def test_gradients_match_finite_differences(model):
    rng = rng_for(1, model)
    X, theta = rng.uniform(-1, 1, (5, 4)), rng.normal(0, 0.5, 4)
    y = rng.uniform(-1, 1, 5) if model == "linear" else np.sign(rng.uniform(-1, 1, 5))
    lam = 0.1

    def loss(th):
        m = X @ th
        per = {"linear": (m - y) ** 2, "logistic": np.logaddexp(0, -y * m), "svm": np.maximum(0, 1 - y * m)}[model]
        return per + lam / 2 * th @ th

    g = gradients(model, theta, X, y, lam)
    h = 1e-6
    num = np.array([(loss(theta + h * e) - loss(theta - h * e)) / (2 * h) for e in np.eye(4)]).T
    assert np.allclose(g, num, atol=1e-5)


def test_group_size_rule():
    assert group_size(100, 1.0) == 461 and group_size(10, 8.0) == 1 and group_size(1, 1.0) == 1


def _linear_problem(n=200_000, d=5, seed=3):
    rng = rng_for(seed, "linear-problem")
    X = rng.uniform(-1, 1, (n, d))
    beta = np.linspace(-0.4, 0.4, d)
    y = X @ beta + rng.normal(0, 0.05, n)
    return X, y, beta


def test_non_private_sgd_recovers_the_coefficients():
    X, y, beta = _linear_problem()
    theta = ldp_sgd(X, y, "linear", None, 100, 0.0, "constant", 0.1, rng_for(4, "np"))
    # 2000 noisy steps of size 0.1: the iterate sits within a few hundredths of the optimum
    assert np.abs(theta - beta).max() < 0.03


def test_ldp_sgd_error_falls_as_eps_grows():
    """Test MSE of PM-SUB LDP-SGD on a synthetic problem at ε = 0.5, 2, 8 (fixed group size, so only
    the noise changes), eight seeds each. The test MSE is right-skewed and multiplicative in the
    noise, so the comparison is on log MSE: each step up in ε must lower the mean log error by
    more than 5 standard errors of the difference."""
    X, y, beta = _linear_problem(n=80_000)
    Xtr, ytr, Xte, yte = X[:60_000], y[:60_000], X[60_000:], y[60_000:]
    means, ses = [], []
    for eps in [0.5, 2.0, 8.0]:
        mech = get_multidim("pm_sub", eps, X.shape[1])
        errs = [
            evaluate(
                "linear",
                ldp_sgd(
                    Xtr,
                    ytr,
                    "linear",
                    mech.perturb,
                    30,
                    1e-4,
                    "constant_inv_sqrt_T",
                    1.0,
                    rng_for(5, {"eps": eps, "s": s}),
                ),
                Xte,
                yte,
            )[1]
            for s in range(8)
        ]
        logs = np.log(errs)
        means.append(logs.mean())
        ses.append(logs.std(ddof=1) / np.sqrt(len(logs)))
    for i in range(2):
        assert means[i] - means[i + 1] > 5 * np.hypot(ses[i], ses[i + 1]), (means, ses)


def test_design_matrix_encodings():
    df = pd.DataFrame({"a": [0.0, 10.0, 5.0], "c": pd.Categorical(["x", "y", "z"]), "t": [1, -1, 1]})
    card = {
        "columns": [
            {"name": "a", "type": "numeric", "domain": [0, 10]},
            {"name": "c", "type": "categorical", "categories": ["x", "y", "z"]},
            {"name": "t", "type": "categorical", "categories": [-1, 1]},
        ]
    }
    X, y = design_matrix(
        df, card, {"dataset": "d", "target": "t", "target_kind": "label", "positive": 1, "features": ["a", "c"]}
    )
    assert X.tolist() == [[-1, 1, -1], [1, -1, 1], [0, -1, -1]]  # k−1 = 2 attributes; z switches none
    assert y.tolist() == [1, -1, 1]
    X, _ = design_matrix(
        df,
        card,
        {
            "dataset": "d",
            "target": "a",
            "features": ["c"],
            "categorical_on": 1,
            "categorical_off": 0,
            "intercept": True,
        },
    )
    assert X.tolist() == [[1, 0, 1], [0, 1, 1], [0, 0, 1]]
    with pytest.raises(ValueError, match="target column"):
        design_matrix(df, card, {"dataset": "d", "target": "nope"})


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 65_537])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_compiled_shuffle_is_generators_shuffle(n, dtype):
    """``_folds_jit.shuffle`` makes numpy's swaps from numpy's draws: the same order, and the
    generator left where ``Generator.shuffle`` leaves it, also with a buffered 32-bit half word."""
    from ldprepro.experiments import _folds_jit

    for half_word in (False, True):
        ours, numpys = rng_for(2, ("shuffle", n)), rng_for(2, ("shuffle", n))
        if half_word:
            ours.integers(0, 2**32, dtype=np.uint32), numpys.integers(0, 2**32, dtype=np.uint32)
        a, b = np.arange(n, dtype=dtype), np.arange(n, dtype=dtype)
        _folds_jit.shuffle(ours, a)
        numpys.shuffle(b)
        np.testing.assert_array_equal(a, b)
        assert ours.integers(0, 2**32, dtype=np.uint32) == numpys.integers(0, 2**32, dtype=np.uint32)
    with pytest.raises(ValueError, match="1-D integer array"):
        _folds_jit.shuffle(rng_for(2), np.zeros(3))


def test_cv_splits_are_the_same_with_and_without_the_compiled_helpers(monkeypatch):
    """The compiled fold split and shuffle give the numpy path's folds and orders, dtypes included."""
    from ldprepro.experiments import sgd_figures as sf

    common = {"paper": "ldpfl", "figure": "fig8", "dataset": "toy"}
    runs = []
    for flag in ("0", "1"):
        monkeypatch.setenv("LDPREPRO_JIT", flag)
        runs.append(sf.cv_splits(10_007, 5, 2, 3, common))
    for (r0, f0, o0, t0), (r1, f1, o1, t1) in zip(*runs, strict=True):
        assert (r0, f0) == (r1, f1) and o0.dtype == o1.dtype == np.int32 and t0.dtype == t1.dtype
        np.testing.assert_array_equal(o0, o1)
        np.testing.assert_array_equal(t0, t1)


def test_integer_categories_are_coded_as_pandas_codes_them():
    """Integer columns with integer categories take a table lookup (census sizes); its positions
    are ``Index.get_indexer``'s, values outside the categories included (−1), and such a value
    still stops the design matrix with an error naming the column."""
    from ldprepro.experiments.sgd_figures import _category_codes, _integer_codes

    rng = rng_for(4, "codes")
    cats = [7, -3, 12, 0, 5]
    values = pd.Series(rng.choice([7, -3, 12, 0, 5, 6, -9, 40], 500), name="v")
    expected = pd.Index(cats).get_indexer(values.astype(object))
    assert (expected < 0).any()
    np.testing.assert_array_equal(_integer_codes(values, cats), expected)
    for other in (["a", "b"], [1, 2, True], [1, 1, 2], [0, 2**21]):  # strings, a bool, duplicates, a wide range
        assert _integer_codes(pd.Series([1, 2]), other) is None
    assert _integer_codes(pd.Series(["a", "b"]), [1, 2]) is None
    with pytest.raises(ValueError, match="categorical column 'v': .* outside its categories"):
        _category_codes(values, cats)
    ok = values[expected >= 0]
    np.testing.assert_array_equal(_category_codes(ok, cats), expected[expected >= 0])


def test_design_matrix_one_hot_ordinal_and_intercept_columns_in_place():
    """Every encoding written into one preallocated matrix: numeric, one-hot (integer categories,
    on/off ±1), ordinal, k−1 and the intercept, each in its own columns."""
    df = pd.DataFrame({"n": [0.0, 4.0, 2.0], "o": [3, 1, 2], "h": [20, 10, 20], "k": ["u", "v", "w"], "t": [1.0, 2, 3]})
    card = {
        "columns": [
            {"name": "n", "type": "numeric", "domain": [0, 4]},
            {"name": "o", "type": "categorical", "categories": [1, 2, 3]},
            {"name": "h", "type": "categorical", "categories": [10, 20]},
            {"name": "k", "type": "categorical", "categories": ["u", "v", "w"]},
            {"name": "t", "type": "numeric", "domain": [0, 4]},
        ]
    }
    panel = {"dataset": "d", "target": "t", "features": ["n", "o", "h", "k"], "categorical_encoding": "one_hot",
             "ordinal": ["o"], "intercept": True}  # fmt: skip
    X, _ = design_matrix(df, card, panel)
    assert X.tolist() == [
        [-1, 1, -1, 1, 1, -1, -1, 1],
        [1, -1, 1, -1, -1, 1, -1, 1],
        [0, 0, -1, 1, -1, -1, 1, 1],
    ]


def _toy_sgd_job():
    """(fig, panel, df, card) of a small separable LDP-SGD panel."""
    rng = rng_for(6, "job")
    df = pd.DataFrame({"f1": rng.uniform(-1, 1, 600), "f2": rng.uniform(-1, 1, 600)})
    df["lab"] = np.where(df.f1 + df.f2 > 0, 1, -1)
    card = {
        "columns": [
            {"name": "f1", "type": "numeric", "domain": [-1, 1]},
            {"name": "f2", "type": "numeric", "domain": [-1, 1]},
            {"name": "lab", "type": "categorical", "categories": [-1, 1]},
        ]
    }
    fig = {
        "kind": "sgd",
        "mechanisms": ["pm"],
        "eps": [1.0, 4.0],
        "model": "svm",
        "lambda": 1e-4,
        "learning_rate": "constant_inv_sqrt_T",
        "folds": 3,
        "cv_repetitions": 2,
        "metric": "misclassification_rate",
    }
    panel = {"dataset": "toy", "target": "lab", "target_kind": "label", "positive": 1, "features": "f[12]"}
    return fig, panel, df, card


def test_run_job_rows_and_reproducibility():
    fig, panel, df, card = _toy_sgd_job()
    rows = run_job(fig, panel, "pm", df, card, 1, "ldpfl", "fig10")
    assert len(rows) == 2 * 2 * 3 and {r["rep"] for r in rows} == set(range(6))
    assert tidy_frame(rows).equals(tidy_frame(run_job(fig, panel, "pm", df, card, 1, "ldpfl", "fig10")))
    # the aggregate's sample is every fold of every CV repetition (no per-fold key columns)
    summary = aggregate(tidy_frame(rows))
    assert len(summary) == 2 and (summary["n"] == 6).all()
    non_private = run_job(fig, panel, "non_private", df, card, 1, "ldpfl", "fig10")
    assert np.mean([r["value"] for r in non_private]) < 0.2  # a separable toy problem


def test_a_panel_trains_on_the_splits_of_the_figure_it_names():
    """``split_of``: another figure's cross-validation splits and visiting orders (the non-private
    fits, which draw no noise, then equal that figure's exactly); by default its own."""
    fig, panel, df, card = _toy_sgd_job()
    values = {
        name: [r["value"] for r in run_job(fig, panel, "non_private", df, card, 1, "ldpfl", *args)]
        for name, args in {
            "fig10": ("fig10",),
            "fig12 on fig10's splits": ("fig12", None, ("ldpfl", "fig10")),
            "fig12": ("fig12",),
        }.items()
    }
    assert values["fig12 on fig10's splits"] == values["fig10"]
    assert values["fig12"] != values["fig10"]


def test_categorical_encodings_one_hot_and_ordinal():
    df = pd.DataFrame({"c": ["x", "y", "z", "x"], "o": ["lo", "mid", "hi", "mid"], "t": [0.0, 1.0, 2.0, 1.0]})
    card = {
        "columns": [
            {"name": "c", "type": "categorical", "categories": ["x", "y", "z"]},
            {"name": "o", "type": "categorical", "categories": ["lo", "mid", "hi"]},
            {"name": "t", "type": "numeric", "domain": [0, 2]},
        ]
    }
    X, y = design_matrix(
        df,
        card,
        {"dataset": "d", "target": "t", "categorical_encoding": "one_hot", "ordinal": ["o"], "intercept": True},
    )
    assert X.tolist() == [[1, -1, -1, -1, 1], [-1, 1, -1, 0, 1], [-1, -1, 1, 1, 1], [1, -1, -1, 0, 1]]
    assert y.tolist() == [-1, 0, 1, 0]
    with pytest.raises(ValueError, match="categorical_encoding"):
        design_matrix(df, card, {"dataset": "d", "target": "t", "categorical_encoding": "binary"})
    with pytest.raises(ValueError, match="feature columns"):
        design_matrix(df, card, {"dataset": "d", "target": "t", "features": ["nope"]})
    with pytest.raises(ValueError, match="ordinal attributes"):
        design_matrix(df, card, {"dataset": "d", "target": "t", "features": ["c"], "ordinal": ["o"]})
    bad = df.assign(c=["x", None, "w", "x"])  # a missing value and one outside the categories
    with pytest.raises(ValueError, match="'c': 2 values missing or outside"):
        design_matrix(bad, card, {"dataset": "d", "target": "t"})


def _toy_regression(n=3000):
    rng = rng_for(7, "toy-regression")
    df = pd.DataFrame({"a": rng.uniform(-1, 1, n), "b": rng.uniform(-1, 1, n)})
    df["y"] = np.clip(0.5 * df.a - 0.3 * df.b + rng.normal(0, 0.05, n), -1, 1)
    card = {"columns": [{"name": c, "type": "numeric", "domain": [-1, 1]} for c in ("a", "b", "y")]}
    return df, card


def _graded_fig(mechanisms: list[str], cv_reps: int) -> dict:
    """A paper-000-like graded SGD figure (linear regression, sample_one) on a toy problem."""
    return {
        "kind": "sgd",
        "collector": "graded",
        "mechanisms": mechanisms,
        "graded": {"component_rule": "sample_one"},
        "eps": [0.5, 1.0],
        "model": "linear",
        "lambda": 1e-4,
        "learning_rate": "inv_sqrt_t",
        "folds": 2,
        "cv_repetitions": cv_reps,
        "metric": "test_mse",
    }


def test_graded_collector_job():
    """Paper 000's configuration: every graded mechanism trains, rows carry the settings, and the
    non-private model is far better than the zero model on a noiseless-ish toy problem."""
    df, card = _toy_regression()
    fig = _graded_fig(["hiera", "graded_laplace", "harmony", "pm", "harmony_at_level", "pm_at_level"], cv_reps=1)
    fig["mechanism_params"] = {"hiera": {"mu": 2}}
    panel = {"dataset": "toy", "target": "y", "intercept": True}
    for m in fig["mechanisms"] + ["non_private"]:
        frame = tidy_frame(run_job(fig, panel, m, df, card, 2, "hiera", "fig3"))
        assert len(frame) == 4 and np.isfinite(frame["value"]).all()
        assert (frame["n_features"] == 3).all()
        assert frame["group_size"].tolist() == [6, 6, 2, 2]  # ⌈2 ln 2/ε²⌉ with d = 2 attributes (no intercept)
        if m == "non_private":
            assert frame["value"].max() < 0.2 * np.mean(df["y"] ** 2)
    with pytest.raises(ValueError, match="unknown graded SGD mechanism"):
        run_job(fig, panel, "duchi", df, card, 2, "hiera", "fig3")
    # HierA's clipping as two curves; the sweep touches HierA only
    swept = {**fig, "sweep": {"clip": [True, False]}}
    h = tidy_frame(run_job(swept, panel, "hiera", df, card, 2, "hiera", "fig3"))
    assert len(h) == 8 and sorted(h["clip"].unique()) == [False, True] and (h["mu"] == 2).all()
    assert (aggregate(h)["n"] == 2).all()
    pm = tidy_frame(run_job(swept, panel, "pm", df, card, 2, "hiera", "fig3"))
    assert len(pm) == 4 and "clip" not in pm and (pm["budget_factor"] == 1.0).all()
    lv = tidy_frame(run_job(swept, panel, "pm_at_level", df, card, 2, "hiera", "fig3"))
    assert (lv["budget_factor"] > 1.0).all()  # uniform attributes spread over all five levels


def test_discretisation_sweep_rows():
    df, card = _toy_regression(600)
    fig = {
        "kind": "sgd",
        "mechanisms": ["pm_sub", "three_outputs"],
        "discretize": [1, 5, None],
        "discretize_mechanisms": ["pm_sub"],
        "eps": [4.0],
        "model": "linear",
        "lambda": 1e-4,
        "learning_rate": "constant_inv_sqrt_T",
        "folds": 2,
        "cv_repetitions": 1,
        "metric": "test_mse",
        "x": "n_outputs",
    }
    panel = {"dataset": "toy", "target": "y"}
    sub = tidy_frame(run_job(fig, panel, "pm_sub", df, card, 3, "ldpfl", "fig15"))
    assert sorted(sub["n_outputs"].dropna().unique()) == [3.0, 11.0]
    assert sub["n_outputs"].isna().sum() == 2  # continuous PM-SUB: both folds
    three = tidy_frame(run_job(fig, panel, "three_outputs", df, card, 3, "ldpfl", "fig15"))
    assert len(three) == 2 and three["n_outputs"].isna().all()


def test_wisdm_k_minus_1_encoding_reproduces_paper_003s_43_dimensions(tmp_path):
    """Paper 003 §5.4: WISDM has 43 dimensions after the k−1 encoding. Built from a fixture in the
    official raw format through the real reader, card and the shipped dct fig4 panel: x, y + 35
    user + 5 activity attributes = 42 features, plus the target z = 43; the claim row says so."""
    import data_fixtures as fx
    import yaml

    from ldprepro.data.build import build_from_files
    from ldprepro.data.fetch import sha256_file, write_lock
    from ldprepro.data.transform import load
    from ldprepro.papers import decide_figure as claims_for

    root = Path(__file__).resolve().parents[1]
    cfg = yaml.safe_load((root / "config.yaml").read_text())
    raw = fx.wisdm_raw(tmp_path / "raw")
    write_lock(raw, sha256_file(raw), "fixture (as recorded on a first download)")
    build_from_files(
        "wisdm",
        cfg["datasets"]["wisdm"],
        {"WISDM_ar_latest.tar.gz": raw},
        tmp_path / "wisdm.parquet",
        tmp_path / "wisdm.json",
        log=lambda *_: None,
    )
    df, card = load("wisdm", tmp_path)
    panel = next(p for p in cfg["dct"]["fig4"]["panels"] if p["dataset"] == "wisdm")
    X, _ = design_matrix(df, card, panel)
    assert X.shape[1] == 42
    raw = pd.DataFrame(
        {
            "dataset": "wisdm",
            "mechanism": "pm",
            "eps": 1.0,
            "metric": "test_mse",
            "n_features": X.shape[1],
            "rep": range(3),
            "value": [0.1, 0.2, 0.3],
        }
    )
    table = claims_for(
        "dct",
        "fig4",
        raw,
        cfg["dct"]["fig4"],
        unavailable={"ipums_br": "IPUMS extract not configured", "ipums_mx": "IPUMS extract not configured"},
    )
    rows = {r["claim"]: r for r in table.to_dict("records")}
    assert rows["After k−1 encoding wisdm has 43 dimensions"]["verdict"] == "holds"
    assert rows["After k−1 encoding ipums_br has 90 dimensions"]["verdict"] == "not testable"


# ---- all cross-validation fits at once (sgd.ldp_sgd_fits) ---------------------------------------


def _toy_fits(F=3, n=900, seed=9):
    rng = rng_for(seed, "fits")
    X = rng.uniform(-1, 1, (n, 4))
    y = np.clip(X @ np.array([0.4, -0.2, 0.1, 0.3]) + rng.normal(0, 0.05, n), -1, 1)
    orders = [rng.permutation(n)[: n - f] for f in range(F)]  # training sizes differ, as KFold's do
    return X, y, orders


@pytest.mark.parametrize("model", ["linear", "logistic", "svm"])
@pytest.mark.parametrize("schedule", ["inv_sqrt_t", "constant_inv_sqrt_T"])
def test_batched_non_private_fits_equal_single_fits(model, schedule):
    """Without noise a fit is deterministic given its order: F fits at once must equal the per-fit
    reference ``ldp_sgd`` (which shuffles with rng.permutation(n) first) to rounding."""
    X, y, _ = _toy_fits()
    yy = np.sign(y) + (y == 0) if model != "linear" else y
    orders = [rng_for(10, f).permutation(X.shape[0] - f) for f in range(3)]
    batched = ldp_sgd_fits(X, yy, orders, model, group_collector(), 40, 1e-3, schedule, 1.0, rng_for(1, "x"))
    for f in range(3):
        single = ldp_sgd(
            X[: X.shape[0] - f], yy[: X.shape[0] - f], model, None, 40, 1e-3, schedule, 1.0, rng_for(10, f)
        )
        assert np.allclose(batched[f], single, rtol=1e-12, atol=1e-12), (f, batched[f], single)


@pytest.mark.parametrize("mechanism", ["pm_sub", "duchi", "laplace"])
def test_batched_private_fits_have_the_single_fit_law(mechanism):
    """The final θ of 600 batched fits against 600 per-user-path fits (same data, fresh orders):
    two-sample KS and Welch t on two coordinates must not reject at α = 1e-3 (Bonferroni)."""
    from scipy import stats

    X, y, _ = _toy_fits(n=600)
    mech = get_multidim(mechanism, 6.0, X.shape[1])
    R = 600
    orders = [rng_for(11, ("o", r)).permutation(X.shape[0]) for r in range(R)]
    batched = ldp_sgd_fits(
        X, y, orders, "linear", group_collector(mech), 30, 1e-4, "constant_inv_sqrt_T", 1.0, rng_for(11, "noise")
    )
    single = np.array(
        [ldp_sgd(X, y, "linear", mech.perturb, 30, 1e-4, "constant_inv_sqrt_T", 1.0, rng_for(12, r)) for r in range(R)]
    )
    for j in (0, 3):
        p = min(
            stats.ks_2samp(batched[:, j], single[:, j]).pvalue,
            stats.ttest_ind(batched[:, j], single[:, j], equal_var=False).pvalue,
        )
        assert p > 1e-3 / 4, (mechanism, j, p)


def test_graded_aggregate_fits_law():
    """HierA's collector on F groups at once against F one-group calls (KS + Welch t, component 0)."""
    from scipy import stats

    from ldprepro.domain.graded import GradedLevels
    from ldprepro.domain.graded_sgd import GradedGradientCollector

    rng = rng_for(13, "g")
    g = rng.uniform(-1, 1, (50, 3))
    level = rng.integers(0, 5, (50, 3))
    col = GradedGradientCollector("hiera", GradedLevels.from_base_eps(1.0, k=5), mu=2, clip=False)
    F = 4000
    many = col.aggregate_fits(
        np.broadcast_to(g, (F,) + g.shape), np.broadcast_to(level, (F,) + level.shape), rng_for(13, "many")
    )
    one = np.array([col.aggregate(g, level, rng_for(13, ("one", r))) for r in range(F)])
    for j in range(3):
        p = min(
            stats.ks_2samp(many[:, j], one[:, j]).pvalue, stats.ttest_ind(many[:, j], one[:, j], equal_var=False).pvalue
        )
        assert p > 1e-3 / 6, (j, p)


def _job_toy():
    rng = rng_for(14, "job")
    df = pd.DataFrame({"f1": rng.uniform(-1, 1, 700), "f2": rng.uniform(-1, 1, 700)})
    df["lab"] = np.where(df.f1 - df.f2 > 0, 1, -1)
    card = {
        "columns": [
            {"name": "f1", "type": "numeric", "domain": [-1, 1]},
            {"name": "f2", "type": "numeric", "domain": [-1, 1]},
            {"name": "lab", "type": "categorical", "categories": [-1, 1]},
        ]
    }
    fig = {
        "kind": "sgd",
        "mechanisms": ["pm", "duchi"],
        "eps": [0.5, 4.0],
        "model": "svm",
        "lambda": 1e-4,
        "learning_rate": "constant_inv_sqrt_T",
        "folds": 3,
        "cv_repetitions": 2,
        "metric": "misclassification_rate",
    }
    panel = {"dataset": "toy", "target": "lab", "target_kind": "label", "positive": 1, "features": "f[12]"}
    return df, card, fig, panel


def test_every_mechanism_and_eps_sees_the_same_folds_in_the_same_order(monkeypatch):
    """Common random numbers: within a CV repetition every mechanism (and ε, and group rule) trains
    on the same folds, visiting the users in the same order; only the noise stream differs. The
    job hands each fit its training rows already in visiting order (one contiguous copy per fit)."""
    import ldprepro.experiments.sgd_figures as sf

    seen = []
    real = sf.ldp_sgd_fits

    def spy(X, y, orders, *args, **kwargs):
        seen.append(np.concatenate([np.column_stack([X[o], y[o]]) for o in orders]))
        return real(X, y, orders, *args, **kwargs)

    monkeypatch.setattr(sf, "ldp_sgd_fits", spy)
    df, card, fig, panel = _job_toy()
    fig = {**fig, "group_rule": ["paper", "fixed"], "fixed_groups": 20}
    for m in ["pm", "duchi", "non_private"]:
        run_job(fig, panel, m, df, card, 1, "ldpfl", "fig10")
    X, y = design_matrix(df, card, panel)
    common = {"paper": "ldpfl", "figure": "fig10", "dataset": "toy"}
    splits = sf.cv_splits(700, 3, 2, 1, common)
    expected = [np.column_stack([X[train], y[train]]) for _, _, train, _ in splits]
    # 3 mechanisms × 2 ε × 2 rules per fit, and each call visits exactly one fit's training rows in its order
    assert len(seen) == 3 * 2 * 2 * 6
    for rows in seen:
        assert sum(np.array_equal(rows, e) for e in expected) == 1
    for e in expected:
        assert sum(np.array_equal(rows, e) for rows in seen) == 3 * 2 * 2
    # folds of one repetition partition the users; the two repetitions split differently
    first = np.sort(np.concatenate([test for _, _, _, test in splits[:3]]))
    assert np.array_equal(first, np.arange(700))
    assert not np.array_equal(np.sort(splits[0][2]), np.sort(splits[3][2]))
    # a different seed gives different folds
    assert not np.array_equal(sf.cv_splits(700, 3, 2, 2, common)[0][2], splits[0][2])


def test_each_fits_visiting_order_is_its_training_rows_by_the_keyed_permutation():
    """A fit visits its fold's training rows (sorted) in the order of ``Generator.permutation``
    drawn from its own key (cv_rep, fold, purpose "order"): cv_splits shuffles the rows themselves,
    which makes the same swaps, so this is the order every SGD result so far was computed with."""
    from ldprepro.experiments import sgd_figures as sf
    from ldprepro.pipeline.seeding import rng_for

    common = {"paper": "ldpfl", "figure": "fig8", "dataset": "toy"}
    for n, folds_k in [(1001, 3), (10, 10), (45_222, 5)]:
        for cv_rep, fold, order, test in sf.cv_splits(n, folds_k, 2, 7, common):
            train = np.setdiff1d(np.arange(n), test)
            rng = rng_for(7, {**common, "cv_rep": cv_rep, "fold": fold, "purpose": "order"})
            assert order.dtype == np.int32 and np.array_equal(order, train[rng.permutation(train.size)])


@pytest.mark.parametrize("n, k, seed", [(700, 3, 1), (701, 5, 12345), (10, 10, 7), (11, 2, 2**31 - 2)])
def test_shuffled_kfold_is_sklearns_kfold_row_for_row(n, k, seed):
    """The folds (hence every SGD figure's numbers) are scikit-learn's KFold(shuffle=True) exactly."""
    from sklearn.model_selection import KFold

    import ldprepro.experiments.sgd_figures as sf

    ours = list(sf.shuffled_kfold(n, k, seed))
    theirs = list(KFold(n_splits=k, shuffle=True, random_state=seed).split(np.empty((n, 0))))
    assert len(ours) == len(theirs) == k
    for (a_train, a_test), (b_train, b_test) in zip(ours, theirs):
        assert np.array_equal(a_train, b_train) and np.array_equal(a_test, b_test)


def test_fits_do_not_depend_on_which_eps_run_beside_them():
    """Each (ε, fit) has its own noise stream: one call with every ε gives the rows of one call per ε."""
    df, card, fig, panel = _job_toy()
    together = tidy_frame(run_job(fig, panel, "pm", df, card, 1, "ldpfl", "fig10"))
    apart = tidy_frame(
        [r for eps in fig["eps"] for r in run_job({**fig, "eps": [eps]}, panel, "pm", df, card, 1, "ldpfl", "fig10")]
    )
    assert together.equals(apart)


@pytest.mark.parametrize("mechanism", ["pm", "duchi", "laplace", "dct", "non_private"])
def test_job_rows_do_not_depend_on_the_compiled_switch(mechanism, monkeypatch):
    """LDPREPRO_JIT=0 swaps the compiled steps for the numpy steps and nothing else: the same draws,
    so the same rows up to the rounding of the dot products."""
    df, card, fig, panel = _job_toy()
    fig = {**fig, "model": "linear", "metric": "test_mse", "target_kind": "numeric"}
    panel = {**panel, "target": "f2", "features": "f1", "target_kind": "numeric"}
    card = {**card, "columns": [*card["columns"][:2], {"name": "lab", "type": "numeric", "domain": [-1, 1]}]}
    frames = []
    for flag in ("0", "1"):
        monkeypatch.setenv("LDPREPRO_JIT", flag)
        frames.append(tidy_frame(run_job(fig, panel, mechanism, df, card, 1, "ldpfl", "fig9")))
    assert frames[0].drop(columns="value").equals(frames[1].drop(columns="value"))
    np.testing.assert_allclose(frames[1]["value"], frames[0]["value"], rtol=1e-9)
    assert frames[0]["value"].nunique() > 1


@pytest.mark.parametrize("mechanism", ["pm_at_level", "harmony", "hiera"])
def test_graded_job_rows_do_not_depend_on_the_compiled_switch(mechanism, monkeypatch):
    """The same for paper 000's graded collection: PM and Harmony run fit by fit (compiled or
    numpy steps, the same draws), HierA batched numpy steps either way."""
    df, card = _toy_regression()
    fig = _graded_fig([mechanism], cv_reps=2)
    panel = {"dataset": "toy", "target": "y", "intercept": True}
    frames = []
    for flag in ("0", "1"):
        monkeypatch.setenv("LDPREPRO_JIT", flag)
        frames.append(tidy_frame(run_job(fig, panel, mechanism, df, card, 2, "hiera", "fig3")))
    np.testing.assert_allclose(frames[1]["value"], frames[0]["value"], rtol=1e-9)
    assert frames[0]["value"].nunique() > 1


def test_take_rows_is_a_bit_exact_gather(monkeypatch):
    from ldprepro.domain.sgd import take_rows

    rng = rng_for(3, "gather")
    X = rng.normal(size=(500, 13))
    rows = rng.permutation(500)[:321].astype(np.int32)
    assert np.array_equal(take_rows(X, rows), X[rows])
    out = np.full((321, 13), np.nan)
    assert take_rows(X, rows, out=out) is out and np.array_equal(out, X[rows])
    monkeypatch.setenv("LDPREPRO_JIT", "0")
    assert np.array_equal(take_rows(X, rows), X[rows])


def test_group_rule_control_rows():
    """group_rule 'fixed' keeps the number of groups (SGD steps) fixed across ε; rows say which rule
    and which G / number of groups were used; a missing fixed_groups is a clear error."""
    df, card, fig, panel = _job_toy()
    fig = {**fig, "group_rule": ["paper", "fixed"], "fixed_groups": 25}
    frame = tidy_frame(run_job(fig, panel, "pm", df, card, 1, "ldpfl", "fig10"))
    assert sorted(frame["group_rule"].unique()) == ["fixed", "paper"] and len(frame) == 2 * 2 * 6
    fixed = frame[frame["group_rule"] == "fixed"]
    assert fixed["group_size"].nunique() == 1 and (fixed["n_groups"] == 25).all()
    paper = frame[frame["group_rule"] == "paper"]
    # ⌈2 ln 2/ε²⌉: G = 6 at ε = 0.5, 1 at ε = 4; n_groups = ⌊n_train/G⌋ (466 or 467 training users)
    assert sorted(paper["group_size"].unique()) == [1, 6]
    assert (paper.loc[paper["eps"] == 0.5, "n_groups"] == 77).all()
    assert (paper.loc[paper["eps"] == 4.0, "n_groups"] == 466).all()  # smallest training fold: 466 users
    assert (aggregate(frame)["n"] == 6).all()  # one aggregate per (ε, rule) over all six fits
    assert (
        tidy_frame(run_job({**fig, "group_rule": "paper"}, panel, "pm", df, card, 1, "ldpfl", "fig10"))["group_rule"]
        == "paper"
    ).all()
    with pytest.raises(ValueError, match="fig10: group_rule 'fixed' needs fixed_groups"):
        run_job({**fig, "fixed_groups": None}, panel, "pm", df, card, 1, "ldpfl", "fig10")
    with pytest.raises(ValueError, match="group_rule must be one of"):
        run_job({**fig, "group_rule": "steps"}, panel, "pm", df, card, 1, "ldpfl", "fig10")
