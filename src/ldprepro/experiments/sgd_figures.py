"""LDP-SGD figures (papers 000, 002, 003) driven by config entries with ``kind: sgd``.

One job per (figure, dataset, mechanism) runs every cross-validation fit (repetitions × folds) at
every ε (``sgd.ldp_sgd_fits``), fit after fit: a fit's training rows are copied once into its
visiting order and read in sequence by every ε; each (ε, fit) draws its noise from its own
Generator keyed by the job's parameters, ε, the repetition and the fold (``_fit_all``). Common
random numbers: the fold split of CV repetition r and each fold's training order are keyed by
(paper, figure, dataset, r[, fold]) only, so every mechanism, ε and group rule of a figure sees the
same folds in the same order; only the privacy noise differs. Rows:
metric ``misclassification_rate`` (logistic, SVM) or ``test_mse`` (linear) on the held-out fold,
``rep`` = CV repetition × k + fold (the aggregation's sample is every fold of every repetition).
The non-private reference is the mechanism ``non_private``. ``discretize`` may be a list (error vs
the number of outputs 2m+1, paper 002 Figs. 14-15).

Group-size control (ours; the paper's G = ⌈d ln d/ε²⌉ changes the number of SGD steps with ε, so
ε's effect is confounded with the number of steps): ``group_rule`` is ``paper`` (default) or
``fixed``, or a list of both to draw both curves; ``fixed`` takes ``fixed_groups`` groups (= SGD
steps) at every ε, G = ⌊smallest training fold / fixed_groups⌋. Rows carry ``group_rule``,
``group_size`` (G) and ``n_groups`` (groups = SGD steps of the smallest training fold; KFold's folds
differ by at most one user, so a fit may take one step more; constant per (ε, rule) so that the
aggregate's sample stays every fold of every repetition).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import numpy as np
import pandas as pd

from ldprepro.data.transform import to_unit
from ldprepro.domain.graded import GradedLevels
from ldprepro.domain.graded_sgd import GradedGradientCollector, GradedSteps, component_levels, mean_budget_factor
from ldprepro.domain.mechanisms import get_multidim
from ldprepro.domain.sgd import evaluate_many, group_collector, group_size, ldp_sgd_fits, runs_fit_by_fit, take_rows
from ldprepro.pipeline.seeding import rng_for

ENCODINGS = ("k_minus_1", "one_hot")
GROUP_RULES = ("paper", "fixed")


def _category_codes(values: pd.Series, cats: list) -> np.ndarray:
    """Each value's position in ``cats``; a clear error for a value missing or outside them.
    Integer values and distinct integer categories are looked up in a table (the same positions as
    the general path, ``Index.get_indexer`` on objects, which costs about 70 ms per census column)."""
    codes = _integer_codes(values, cats)
    if codes is None:
        codes = pd.Index(cats).get_indexer(pd.Series(values).astype(object))  # −1: missing or unknown
    if (codes < 0).any():
        bad = values[codes < 0]
        raise ValueError(
            f"categorical column {values.name!r}: {len(bad)} values missing or outside its categories "
            f"(first: {bad.iloc[0]!r}); the dataset's cleaning must drop or map them"
        )
    return codes


def _integer_codes(values: pd.Series, cats: list) -> np.ndarray | None:
    """Positions of integer values among distinct integer categories (−1 for any other value) by a
    table over the categories' range; None when that does not apply (the caller then asks pandas)."""
    v = pd.Series(values).to_numpy()
    is_int = [isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) for c in cats]
    if v.dtype.kind not in "iu" or not cats or not all(is_int) or len(set(cats)) != len(cats):
        return None
    lo, hi = min(cats), max(cats)
    if hi - lo >= 1 << 20:
        return None
    table = np.full(hi - lo + 1, -1, dtype=np.intp)
    table[np.asarray(cats, dtype=np.int64) - lo] = np.arange(len(cats))
    inside = (v >= lo) & (v <= hi)
    codes = np.full(v.size, -1, dtype=np.intp)
    codes[inside] = table[v[inside].astype(np.int64) - lo]
    return codes


def _encoded_width(cats: list, encoding: str) -> int:
    return 1 if encoding == "ordinal" else len(cats) if encoding == "one_hot" else len(cats) - 1


def _encode_categorical_into(block: np.ndarray, values: pd.Series, cats: list, encoding: str, on: float) -> None:
    """Write the column's encoding into ``block`` (its columns of the design matrix, in place: at
    census sizes, building each attribute's block apart and stacking them cost seconds per job).
    A one-hot or k−1 block must already hold ``off`` everywhere; only its ``on`` cells are set."""
    codes = _category_codes(values, cats)
    if encoding == "ordinal":  # consecutive integers in the card's category order, rescaled to [−1, 1]
        k = len(cats)
        block[:, 0] = 2.0 * codes / (k - 1) - 1.0 if k > 1 else 0.0
        return
    rows = np.flatnonzero(codes < block.shape[1])  # k−1: the last value switches none of the attributes on
    block[rows, codes[rows]] = on


def design_matrix(df: pd.DataFrame, card: dict, panel: dict) -> tuple[np.ndarray, np.ndarray]:
    """Features in [−1, 1] and the target (numeric → [−1, 1]; label → ±1).

    Numeric attributes map through their card domains. Categorical ones follow the panel's
    ``categorical_encoding``: ``k_minus_1`` (papers 002, 003: k values → k−1 binary attributes, value
    l < k switches attribute l on, value k none), or ``one_hot`` (paper 000: k attributes), with the
    ``categorical_on`` / ``categorical_off`` values; attributes listed in ``ordinal`` become
    consecutive integers rescaled to [−1, 1] (paper 000). ``intercept: true`` appends a column of 1s
    (last column)."""
    cols = {c["name"]: c for c in card["columns"]}
    target = panel["target"]
    if target not in cols:
        raise ValueError(f"panel {panel['dataset']}: target column {target!r} is not in the dataset")
    features = panel.get("features")
    if isinstance(features, str):
        names = [c for c in cols if c != target and re.fullmatch(features, c)]
    elif features:
        names = list(features)
    else:
        names = [c for c in cols if c != target and cols[c]["type"] in ("numeric", "categorical")]
    missing = [c for c in names if c not in cols]
    if missing:
        raise ValueError(f"panel {panel['dataset']}: feature columns {missing} are not in the dataset")
    encoding = panel.get("categorical_encoding", "k_minus_1")
    if encoding not in ENCODINGS:
        raise ValueError(f"panel {panel['dataset']}: categorical_encoding must be one of {ENCODINGS}, got {encoding!r}")
    ordinal = set(panel.get("ordinal", []))
    not_categorical = sorted(ordinal - {c for c in names if cols[c]["type"] == "categorical"})
    if not_categorical:
        raise ValueError(f"panel {panel['dataset']}: ordinal attributes {not_categorical} are not categorical features")
    on, off = panel.get("categorical_on", 1.0), panel.get("categorical_off", -1.0)
    layout = []  # (name, categories or None for numeric, encoding, width)
    for name in names:
        c = cols[name]
        if c["type"] == "numeric":
            layout.append((name, None, None, 1))
        else:
            cats = list(c.get("categories") or pd.unique(df[name]))
            enc = "ordinal" if name in ordinal else encoding
            layout.append((name, cats, enc, _encoded_width(cats, enc)))
    intercept = bool(panel.get("intercept", False))
    X = np.empty((len(df), sum(w for *_, w in layout) + intercept))
    X.fill(off)  # every one-hot / k−1 cell not switched on; the other columns are written below
    start = 0
    for name, cats, enc, width in layout:
        if cats is None:
            X[:, start] = to_unit(df[name].to_numpy(dtype=float), cols[name]["domain"])
        else:
            _encode_categorical_into(X[:, start : start + width], df[name], cats, enc, on)
        start += width
    if intercept:
        X[:, -1] = 1.0
    kind = panel.get("target_kind", "numeric")
    if kind == "label":
        y = np.where(df[target].to_numpy() == panel["positive"], 1.0, -1.0)
    elif kind == "above_median":
        v = df[target].to_numpy(dtype=float)
        y = np.where(v > np.median(v), 1.0, -1.0)
    else:
        y = to_unit(df[target].to_numpy(dtype=float), cols[target]["domain"])
    return X, y


def n_outputs(disc: int | None) -> float:
    """Number of output values 2m+1 of a discretised mechanism (Alg. 5); NaN without discretisation
    (continuous outputs, and Three-Outputs' native 3, drawn as reference levels)."""
    return float("nan") if disc is None else float(2 * disc + 1)


def _levels(fig: dict, eps: float) -> GradedLevels:
    g = fig.get("graded", {})
    return GradedLevels.from_base_eps(eps, k=int(g.get("k", 5)), multipliers=g.get("multipliers"))


def _collector(fig: dict, mechanism: str, eps: float, d: int, disc: int | None, params: dict, side: np.ndarray | None):
    """``collect(grads, rows, rng)`` for one ε (``sgd.group_collector``): Alg. 6 multidimensional
    perturbation (papers 002, 003), or paper 000's graded collection (``collector: graded``;
    ``ldprepro.domain.graded_sgd``), which needs each user's component levels ``side``."""
    if mechanism == "non_private":
        return group_collector()
    if fig.get("collector", "multidim") == "graded":
        col = GradedGradientCollector(
            mechanism,
            _levels(fig, eps),
            mu=int(params.get("mu", 2)),
            step5_mode=params.get("step5_mode", "intended"),
            clip=params.get("clip", True),
            component_rule=fig.get("graded", {}).get("component_rule", "sample_one"),
        )
        return GradedSteps(col, side)
    return group_collector(get_multidim(mechanism, eps, d, discretize=disc))


def group_rules(fig: dict, figure: str = "") -> list[str]:
    """The figure's group-size rules (``group_rule``: one or a list), validated."""
    rules = fig.get("group_rule", "paper")
    rules = [rules] if isinstance(rules, str) else list(rules)
    bad = [r for r in rules if r not in GROUP_RULES]
    if bad or not rules:
        raise ValueError(
            f"figure {figure}: group_rule must be one of {GROUP_RULES} or a list of them, got {bad or rules!r}"
        )
    if "fixed" in rules and not (isinstance(fig.get("fixed_groups"), int) and fig["fixed_groups"] >= 1):
        raise ValueError(
            f"figure {figure}: group_rule 'fixed' needs fixed_groups (a positive integer), "
            f"got {fig.get('fixed_groups')!r}"
        )
    return rules


def shuffled_kfold(n: int, folds_k: int, seed: int, train_dtype=np.int64):
    """The (training rows, test rows) of each fold of scikit-learn's ``KFold(folds_k, shuffle=True,
    random_state=seed)``, element for element (tested against it), without importing scikit-learn
    (about 1 s of CPU per job): the rows are shuffled by ``numpy.random.RandomState(seed)``, the
    first n mod k folds get one extra row, and each fold's rows and the rest come back sorted
    (int64; ``train_dtype`` may ask for another integer type of the training rows)."""
    from ldprepro.domain.mechanisms import kernels

    order = np.arange(n)
    np.random.RandomState(seed).shuffle(order)
    sizes = np.full(folds_k, n // folds_k, dtype=np.int64)
    sizes[: n % folds_k] += 1
    fold_of = np.empty(n, dtype=np.int8 if folds_k <= 127 else np.int64)
    start = 0
    for fold, size in enumerate(sizes):
        fold_of[order[start : start + size]] = fold
        start += size
    compiled = kernels.enabled()
    if compiled:
        from ldprepro.experiments._folds_jit import split_fold
    for fold, size in enumerate(sizes):
        if not compiled:
            yield np.flatnonzero(fold_of != fold).astype(train_dtype, copy=False), np.flatnonzero(fold_of == fold)
            continue
        train, test = np.empty(n - size + 1, dtype=train_dtype), np.empty(size + 1, dtype=np.int64)
        split_fold(fold_of, fold, train, test)  # each array one entry longer than its rows
        yield train[:-1], test[:-1]


def cv_splits(
    n: int, folds_k: int, cv_reps: int, seed: int, common: dict
) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
    """(cv_rep, fold, training rows in visiting order, test rows) of every fit. Keyed by ``common``
    (paper, figure, dataset) and the repetition only: the same for every mechanism, ε and rule."""
    from ldprepro.domain.mechanisms import kernels

    compiled = kernels.enabled()
    if compiled:
        from ldprepro.experiments import _folds_jit
    fits = []
    train_dtype = np.int32 if n < 2**31 else np.int64
    for cv_rep in range(cv_reps):
        split_seed = int(rng_for(seed, {**common, "cv_rep": cv_rep, "purpose": "folds"}).integers(2**31 - 1))
        for fold, (train, test) in enumerate(shuffled_kfold(n, folds_k, split_seed, train_dtype)):
            # train[permutation(train.size)], from the same draws: Generator.permutation(k) shuffles
            # arange(k), and shuffling the rows themselves makes the same swaps (no gather of the
            # rows by the permutation; 50 such folds of 2.6 M rows per census-size SGD job); compiled
            # (_folds_jit.shuffle: numpy's loop and draws, about 2× faster) when the kernels are on
            rng = rng_for(seed, {**common, "cv_rep": cv_rep, "fold": fold, "purpose": "order"})
            if compiled:
                _folds_jit.shuffle(rng, train)
            else:
                rng.shuffle(train)
            fits.append((cv_rep, fold, train, test))
    return fits


def _graded_columns(fig: dict, mechanism: str, params: dict, budget_factor: float) -> dict:
    """Settings of the graded collection recorded in every row (HierA's μ and clipping only for HierA)."""
    if fig.get("collector") != "graded":
        return {}
    cols = {
        "component_rule": fig.get("graded", {}).get("component_rule", "sample_one"),
        "budget_factor": budget_factor if mechanism not in ("harmony", "pm", "non_private") else 1.0,
    }
    if mechanism == "hiera":
        cols.update(mu=int(params.get("mu", 2)), clip=bool(params.get("clip", True)))
    return cols


def run_job(
    fig: dict,
    panel: dict,
    mechanism: str,
    df: pd.DataFrame,
    card: dict,
    seed: int,
    paper: str,
    figure: str,
    progress: Callable[[int, int], None] | None = None,
    split_of: tuple[str, str] | None = None,
) -> list[dict]:
    """Every (discretisation × swept parameter × ε × CV repetition × fold) of one mechanism on one
    panel. Panels may override the figure's ``model`` and ``metric``; ``sweep`` (e.g. HierA's
    ``clip``) applies to ``sweep_mechanisms``. ``rep`` = CV repetition × folds + fold. The rows do
    not depend on how the ε values are split across calls. ``progress(done, total)`` is called
    after each fit (every setting of it). ``split_of``: the (paper, figure) whose cross-validation
    splits and visiting orders the panel uses (``ldprepro.pipeline.shared_jobs.split_sources``: the
    first figure with the same panel and split keys, so that curves two figures share stay paired
    with each figure's own); default the figure itself."""
    fig = {**fig, **{k: panel[k] for k in ("model", "metric") if k in panel}}
    X, y = design_matrix(df, card, panel)
    if fig.get("max_users"):
        X, y = X[: fig["max_users"]], y[: fig["max_users"]]
    n, d = X.shape
    d_features = d - bool(panel.get("intercept", False))
    model = fig["model"]
    disc_values = fig.get("discretize") if mechanism in fig.get("discretize_mechanisms", []) else None
    disc_values = disc_values if isinstance(disc_values, list) else [disc_values]
    side, budget_factor = None, float("nan")
    if fig.get("collector") == "graded":
        levels = _levels(fig, 1.0)
        side = component_levels(
            X,
            y,
            levels,
            d - 1 if panel.get("intercept") else None,
            fig.get("graded", {}).get("intercept_level", "target"),
        )
        budget_factor = mean_budget_factor(side, levels)
    sweep = fig.get("sweep", {}) if mechanism in fig.get("sweep_mechanisms", ["hiera"]) else {}
    names = list(sweep)
    folds_k = int(fig["folds"])
    rules = group_rules(fig, f"{paper}/{figure}")
    common = {"paper": paper, "figure": figure, "dataset": panel["dataset"]}
    split_paper, split_figure = split_of or (paper, figure)
    split = {"paper": split_paper, "figure": split_figure, "dataset": panel["dataset"]}
    fits = cv_splits(n, folds_k, int(fig["cv_repetitions"]), seed, split)
    n_train_min = min(train.size for _, _, train, _ in fits)
    settings = []
    for disc, combo, eps, rule in itertools.product(
        disc_values, itertools.product(*(sweep[k] for k in names)), fig["eps"], rules
    ):
        params = {**fig.get("mechanism_params", {}).get(mechanism, {}), **dict(zip(names, combo))}
        eps = float(eps)
        if rule == "paper":
            G = group_size(d_features, eps, fig.get("group_size", "d_log_d_over_eps2"), fig.get("group_size_fixed"))
        else:
            G = max(1, n_train_min // int(fig["fixed_groups"]))
        n_groups = max(1, n_train_min // G) if G <= n_train_min else 1  # a fold one user larger may take one more
        settings.append(
            {
                "disc": disc,
                "eps": eps,
                "rule": rule,
                "params": params,
                "G": G,
                "n_groups": n_groups,
                "extra": _graded_columns(fig, mechanism, params, budget_factor),
                "key": {
                    **common,
                    "mechanism": mechanism,
                    "eps": eps,
                    "discretize": disc,
                    "group_rule": rule,
                    **dict(zip(names, combo)),
                    "purpose": "noise",
                },
            }
        )
    values, metric = _fit_all(fig, mechanism, X, y, side, fits, settings, model, seed, progress)
    rows = []
    for s, per_fit in zip(settings, values):
        for (cv_rep, fold, _train, _test), value in zip(fits, per_fit):
            rows.append(
                {
                    "paper": paper,
                    "figure": figure,
                    "dataset": panel["dataset"],
                    "mechanism": mechanism,
                    "eps": s["eps"],
                    "rep": cv_rep * folds_k + fold,
                    "discretize": s["disc"],
                    "n_outputs": n_outputs(s["disc"]),
                    "model": model,
                    "n_users": n,
                    "n_features": d,
                    "group_rule": s["rule"],
                    "group_size": s["G"],
                    "n_groups": s["n_groups"],
                    **s["extra"],
                    "metric": metric,
                    "value": float(value),
                }
            )
    return rows


def _fit_all(fig, mechanism, X, y, side, fits, settings, model, seed, progress=None) -> tuple[np.ndarray, str]:
    """The test metric of every (setting, fit): ``values[c, f]``.

    Settings whose collector has compiled steps that draw for runs of steps (``runs_fit_by_fit``)
    run fit-major: fit f's training rows are copied once, in its visiting order, into one
    contiguous block that every such setting (ε, discretisation, swept parameter, group rule) then
    reads in sequence; visiting them in place in a shuffled order made every user a cache miss, once
    per setting (the fits at census sizes spent most of their time there). Each (setting, fit)
    draws its noise from its own Generator, keyed by the setting and (cv_rep, fold), so a fit's
    result depends neither on the fits beside it nor on ``LDPREPRO_JIT`` (which only swaps in the
    numpy steps). The other settings (numpy steps only: HierA's and graded Laplace's collections,
    plugin mechanisms without a compiled sampler; and DCT, whose draws are those of all its batched
    fits' users, step after step) run all their fits batched, from one Generator per setting, so their Python work runs
    once per step, not once per step and fit. Each fit's test fold is scored for all settings at
    once."""
    d = X.shape[1]
    finite = bool(np.isfinite(X).all() and np.isfinite(y).all())

    def collector(s, side_rows):
        return _collector(fig, mechanism, s["eps"], d, s["disc"], s["params"], side_rows)

    def fit(Xs, ys, orders, s, collect, rng):
        lam, schedule, eta0 = fig["lambda"], fig["learning_rate"], fig.get("eta0", 1.0)
        return ldp_sgd_fits(Xs, ys, orders, model, collect, s["G"], lam, schedule, eta0, rng, finite=finite)

    whole_data = [collector(s, side) for s in settings]
    per_fit = [c for c, collect in enumerate(whole_data) if runs_fit_by_fit(collect)]
    thetas = np.empty((len(settings), len(fits), d))
    for c in range(len(settings)):
        if c not in per_fit:
            orders = [train for _, _, train, _ in fits]
            thetas[c] = fit(X, y, orders, settings[c], whole_data[c], rng_for(seed, settings[c]["key"]))
    block = np.empty((max(train.size for _, _, train, _ in fits) if per_fit else 0, d))
    values = np.empty((len(settings), len(fits)))
    metric = ""
    for f, (cv_rep, fold, train, test) in enumerate(fits):
        if per_fit:
            Xf = take_rows(X, train, out=block[: train.size])
            yf, side_f = y[train], (None if side is None else side[train])
            visit = np.arange(train.size, dtype=train.dtype)
            for c in per_fit:
                s = settings[c]
                rng = rng_for(seed, {**s["key"], "cv_rep": cv_rep, "fold": fold})
                thetas[c, f] = fit(Xf, yf, [visit], s, collector(s, side_f), rng)[0]
        metric, values[:, f] = evaluate_many(model, thetas[:, f], take_rows(X, test), y[test])
        if progress is not None:
            progress(f + 1, len(fits))
    return values, metric
