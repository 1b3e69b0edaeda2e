"""Calibration of every test path on the error laws the figures have (docs/calibration.md, issue 52).

``calibration`` measures the ratio-of-means and paired tests on the 1-D mean's error; this module
adds the other laws and paths, each through the engine's own point tests (``claims.stats``) and the
side a point takes in a verdict (``verdicts.point_side``):

- **laws** (per-repetition metrics of two arms, A/A: the same law, independent noise, common
  repetitions): the 1-D mean's squared/absolute error (``calibration.MeanError``); the
  multidimensional mean (d attributes, Zhao et al.'s attribute sampling of k, each attribute's mean
  at ε/k, the squared error averaged over attributes); LDP-SGD misclassification under repeated
  k-fold cross-validation (a Laplace-perturbed least-squares classifier fitted on each training
  fold of a fixed synthetic dataset, tested on its fold: the folds share training data as the
  figures' fits do); a histogram estimated by generalized randomized response (MSE and total
  variation, the laws of BSHP's histograms and of LREMH's AVD, a mean of total variations);
- **paths**: the ratio of means, paired t/Wilcoxon on differences and log-ratios, the corrected
  resampled t (and the naive paired t it replaces, for reference), TOST on the ratio of means, on
  log-ratios and on differences at every margin the claims declare (A/A: a false "does not hold";
  at the margin, made exact by scaling or shifting one arm: a false "holds"), the proportion TOST,
  the blocked trend, the step (shape) test, the interaction contrast;
- **power**: Laplace at ε against ε·√r (a true MSE ratio 1/r, exact) for a small, a medium and a
  large r: the measured probability of "holds" / "inconclusive" beside the normal-approximation
  power of ``claims.power`` and the repetitions ``reps_needed`` predicts for 80 %.

Every stream comes from a SeedSequence keyed by its case: the same settings give the same page.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from ldprepro.claims.calibration import MeanError, _metric, _rate
from ldprepro.claims.comparatives import step_points
from ldprepro.claims.power import ALPHA, point_power, reps_needed
from ldprepro.claims.stats import (
    equivalence_point,
    paired_point,
    proportion_equivalence_point,
    ratio_of_means_point,
    trend_point,
)
from ldprepro.claims.verdicts import Claim, judge, point_side
from ldprepro.domain.mechanisms import sampling_k
from ldprepro.pipeline.seeding import rng_for

Draw = Callable[[int, int, np.random.Generator], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Law:
    """Per-repetition metrics of two arms: ``draw(m, n, rng)`` gives (a, b), each (m, n): m
    independent replicates of n paired repetitions. ``cv_folds``: the repetitions are fits of
    repeated cross-validation with this many folds (n a multiple of it)."""

    name: str
    draw: Draw
    cv_folds: int | None = None
    rate: bool = False  # a rate (compared as differences) rather than an error (ratios)


# --------------------------------------------------------------------------------------------
# Laws
# --------------------------------------------------------------------------------------------
def mean_law(mechanism: str, eps: float, metric: str, users, eps_b: float | None = None) -> Law:
    """The 1-D mean's error (``calibration.MeanError``); ``eps_b``: arm B at another ε (power)."""
    la = MeanError(mechanism, eps, *users)
    lb = la if eps_b is None else MeanError(mechanism, eps_b, *users)

    def draw(m, n, rng):
        return (_metric(la.draw(m * n, rng).reshape(m, n), metric), _metric(lb.draw(m * n, rng).reshape(m, n), metric))

    word = "squared" if metric == "sq" else "absolute"
    return Law(f"1-D mean, {mechanism} ε = {eps:g}, {word} error", draw)


def multi_mean_law(mechanism: str, eps: float, d: int, users) -> Law:
    """The multidimensional mean's squared error: each of ``d`` attributes reported by a share k/d
    of the users at ε/k (attribute sampling, k = ``sampling_k``), averaged over the attributes."""
    k = sampling_k(eps, d)
    values, counts = users
    share = np.maximum(1, np.round(np.asarray(counts) * k / d)).astype(np.int64)
    law = MeanError(mechanism, eps / k, values, share)

    def draw(m, n, rng):
        out = []
        for _ in range(2):
            e = law.draw(m * n * d, rng).reshape(m, n, d)
            out.append((e**2).mean(axis=2))
        return out[0], out[1]

    return Law(f"{d}-D mean, {mechanism} ε = {eps:g} (k = {k}), squared error averaged over attributes", draw)


def cv_law(folds: int, cv_reps: int, eps: float, n_users: int = 600, d: int = 5) -> Law:
    """Misclassification under repeated ``folds``-fold cross-validation: a fixed synthetic dataset
    (logistic labels in ``d`` Gaussian features), per CV repetition a fold split shared by both
    arms, per fit and arm a least-squares classifier on Laplace-perturbed training features
    (scale 2d/ε per feature, fresh per fit), its error rate on the clean test fold."""
    base = rng_for(0, {"calibration": "cv-data", "n": n_users, "d": d})
    x = base.normal(0, 1, (n_users, d))
    y = np.where(x @ np.linspace(1, 0.2, d) + base.logistic(0, 1, n_users) > 0, 1.0, -1.0)
    scale = 2 * d / eps

    def fit_error(train, test, rng):
        xt = np.column_stack([x[train] + rng.laplace(0, scale, (train.size, d)), np.ones(train.size)])
        w = np.linalg.lstsq(xt.T @ xt + 1e-3 * np.eye(d + 1), xt.T @ y[train], rcond=None)[0]
        pred = np.column_stack([x[test], np.ones(test.size)]) @ w
        return float(np.mean(np.where(pred > 0, 1.0, -1.0) != y[test]))

    def draw(m, n, rng):
        assert n == folds * cv_reps, (n, folds, cv_reps)
        a, b = np.empty((m, n)), np.empty((m, n))
        for i in range(m):
            j = 0
            for _ in range(cv_reps):
                parts = np.array_split(rng.permutation(n_users), folds)
                for f in range(folds):
                    train = np.concatenate(parts[:f] + parts[f + 1 :])
                    a[i, j], b[i, j] = fit_error(train, parts[f], rng), fit_error(train, parts[f], rng)
                    j += 1
        return a, b

    return Law(
        f"misclassification, {folds} folds × {cv_reps} CV repetitions (perturbed least squares, ε = {eps:g})",
        draw,
        cv_folds=folds,
        rate=True,
    )


def histogram_law(eps: float, metric: str, bins: int = 16, n_users: int = 2000) -> Law:
    """A histogram of ``bins`` cells (Zipf-like, ``n_users`` users) estimated by generalized
    randomized response at ε: its MSE over the cells (``metric`` "mse") or its total variation
    distance ("tv")."""
    w = 1.0 / np.arange(1, bins + 1)
    counts = np.floor(n_users * w / w.sum()).astype(np.int64)
    counts[0] += n_users - counts.sum()
    truth = counts / n_users
    p = math.exp(eps) / (math.exp(eps) + bins - 1)
    q = (1 - p) / (bins - 1)

    def error(size, rng):
        out = np.zeros((size, bins))
        for j, c in enumerate(counts):
            probs = np.full(bins, q)
            probs[j] = p
            out += rng.multinomial(int(c), probs, size=size)
        est = (out / n_users - q) / (p - q)
        return ((est - truth) ** 2).mean(axis=1) if metric == "mse" else 0.5 * np.abs(est - truth).sum(axis=1)

    def draw(m, n, rng):
        return error(m * n, rng).reshape(m, n), error(m * n, rng).reshape(m, n)

    name = "MSE" if metric == "mse" else "total variation"
    return Law(f"histogram by GRR ({bins} cells, ε = {eps:g}), {name}", draw)


# --------------------------------------------------------------------------------------------
# Test paths: (a, b, law) -> Point; A/A arms, or at the margin of a TOST
# --------------------------------------------------------------------------------------------
def _cv(law: Law, n: int) -> int | None:
    return law.cv_folds if law.cv_folds and n % law.cv_folds == 0 else None


PATHS: dict[str, Callable] = {
    "ratio of means": lambda a, b, law: ratio_of_means_point(a, b, "c", cv_folds=_cv(law, a.size)),
    "paired t / Wilcoxon on differences": lambda a, b, law: paired_point(a, b, "c", log=False),
    "paired t / Wilcoxon on log-ratios": lambda a, b, law: paired_point(a, b, "c", log=True),
    "corrected resampled t on differences": lambda a, b, law: paired_point(
        a, b, "c", log=False, cv_folds=_cv(law, a.size)
    ),
}


def tost_path(kind: str, margin: float) -> Callable:
    """TOST on the ratio of means ("means"), log-ratios ("log") or differences ("diff")."""
    if kind == "means":
        return lambda a, b, law: equivalence_point(a, b, "c", margin, means=True, cv_folds=_cv(law, a.size))
    return lambda a, b, law: equivalence_point(a, b, "c", margin, log=kind == "log", cv_folds=_cv(law, a.size))


def at_margin(kind: str, margin: float, b: np.ndarray) -> np.ndarray:
    """Arm B moved so that the true effect A vs B is exactly at the margin: B·margin (ratios) or
    B − margin (differences; A − B = +margin)."""
    return b * margin if kind in ("means", "log") else b - margin


def _sides(points) -> tuple[int, int]:
    sides = [point_side(p, p.p_value if p.p_value is not None else math.nan) for p in points]
    return sides.count("claim"), sides.count("against")


def _row(law: str, path: str, n: int, m: int, holds: int, against: int, nominal: dict) -> dict:
    """A calibration row: each decided side's rate ± s.e. and each direction's nominal level (None:
    not an error in this case)."""
    h, h_se = _rate(holds, m)
    d, d_se = _rate(against, m)
    return dict(law=law, path=path, n=int(n), claims=m, holds=h, holds_se=h_se, does_not_hold=d, nominal=nominal) | {
        "does_not_hold_se": d_se
    }


def _rng(seed: int, law: Law, path: str, n: int) -> np.random.Generator:
    return rng_for(seed, {"calibration": "laws", "law": law.name, "path": path, "n": int(n)})


def measure(law: Law, path: str, test: Callable, n: int, m: int, seed: int) -> tuple[int, int]:
    """``m`` single-point claims "A lower" on ``n`` repetitions of ``law`` through ``test``: how many
    points take the claim's side ("holds") and how many go against it ("does not hold")."""
    a, b = law.draw(m, n, _rng(seed, law, path, n))
    return _sides([test(a[i], b[i], law) for i in range(m)])


TWO_SIDED = {"holds": ALPHA / 2, "does_not_hold": ALPHA / 2}


@dataclass(frozen=True)
class Case:
    """A test path on a law's draw: A/A (``shift`` None) or at a TOST margin (``shift`` moves arm B
    there), with each direction's nominal level (None: not an error in this case)."""

    path: str
    test: Callable
    nominal: dict
    shift: Callable | None = None


def aa_cases(law: Law, margins: dict[str, list[float]]) -> list[Case]:
    """The paths a law feeds: the two-sided tests A/A, and every TOST of ``margins`` ({kind:
    margins}) A/A (a false "does not hold": significantly outside, ≤ α) and at its margin (a false
    "holds", ≤ α)."""
    names = (
        ["corrected resampled t on differences", "paired t / Wilcoxon on differences", "ratio of means"]
        if law.cv_folds
        else (["paired t / Wilcoxon on differences"] if law.rate else list(PATHS)[:3])
    )
    cases = [Case(p, PATHS[p], TWO_SIDED) for p in names]
    for kind, ms in margins.items():
        for mg in ms:
            what = {"means": "ratio of means", "log": "log-ratios", "diff": "differences"}[kind]
            name = f"TOST {'±' if kind == 'diff' else '×'}{mg:g} on {what}"
            test = tost_path(kind, mg)
            cases.append(Case(name + ", A/A", test, {"holds": None, "does_not_hold": ALPHA}))
            shift = partial(at_margin, kind, mg)
            cases.append(Case(name + ", at the margin", test, {"holds": ALPHA, "does_not_hold": None}, shift))
    return cases


def law_rows(law: Law, n: int, m: int, seed: int, cases: list[Case]) -> list[dict]:
    """Every case on one draw of ``m`` × ``n`` repetitions of ``law`` (A/A arms)."""
    a, b = law.draw(m, n, _rng(seed, law, "draw", n))
    rows = []
    for c in cases:
        bb = b if c.shift is None else c.shift(b)
        holds, against = _sides([c.test(a[i], bb[i], law) for i in range(m)])
        rows.append(_row(law.name, c.path, n, m, holds, against, c.nominal))
    return rows


def trend_row(law: Law, n: int, m: int, seed: int, shape: bool = False, x=(1, 2, 3, 4, 5)) -> dict:
    """A flat curve (the same law at every x, independent columns): the blocked trend or, ``shape``,
    the step test (its intersection–union "holds" needs every step: only "does not hold" is an error
    rate worth measuring; Holm across the steps)."""
    path = "step (shape) test, Holm across 4 steps" if shape else "blocked trend regression"
    rng = _rng(seed, law, path, n)
    cols = [law.draw(m, n, rng)[0] for _ in x]
    holds = against = 0
    claims = []
    for i in range(m):
        table = pd.DataFrame({xv: c[i] for xv, c in zip(x, cols)})
        if shape:
            claims.append(Claim("c", "c", "falls", "c", "trend", points=step_points(table, "c", log=not law.rate)))
        else:
            h, g = _sides([trend_point(table, "c", log=not law.rate)])
            holds, against = holds + h, against + g
    if shape:
        v = judge(claims)["verdict"].to_numpy()
        holds, against = int((v == "holds").sum()), int((v == "does not hold").sum())
    nominal = {"holds": None if shape else ALPHA / 2, "does_not_hold": ALPHA / 2}
    return _row(law.name, path, n, m, holds, against, nominal)


def interaction_row(law: Law, n: int, m: int, seed: int) -> dict:
    """A/A at two small and two large ε (four independent pairs of arms): the contrast of mean
    log-ratios (differences for rates) small − large, paired test."""
    path = "interaction contrast (small ε − large ε)"
    rng = _rng(seed, law, path, n)
    pairs = [law.draw(m, n, rng) for _ in range(4)]
    cmp = [(a - b) if law.rate else (np.log(a) - np.log(b)) for a, b in pairs]
    small, large = (cmp[0] + cmp[1]) / 2, (cmp[2] + cmp[3]) / 2
    holds, against = _sides([paired_point(small[i], large[i], "c", log=False) for i in range(m)])
    return _row(law.name, path, n, m, holds, against, TWO_SIDED)


def proportion_row(n: int, p: float, margin: float, m: int, seed: int) -> dict:
    """The proportion TOST at its margin: successes ~ Binomial(n, p·margin) against the exact p."""
    rng = rng_for(seed, {"calibration": "proportion", "n": int(n), "p": p, "margin": margin})
    k = rng.binomial(int(n), p * margin, size=m)
    holds, _ = _sides([proportion_equivalence_point(int(s), int(n), p, "c", margin) for s in k])
    law = f"binomial proportion p = {p:g} at the margin ×{margin:g}"
    return _row(law, f"proportion TOST ×{margin:g}", n, m, holds, 0, {"holds": ALPHA, "does_not_hold": None})


def within(row: dict) -> bool:
    """Each direction's rate within its nominal level + 2 Monte-Carlo s.e. (binomial at the nominal
    rate when none was observed)."""
    ok = True
    for key, nominal in row["nominal"].items():
        if nominal is None or not np.isfinite(row[key]):
            continue
        se = max(row[key + "_se"], math.sqrt(nominal * (1 - nominal) / row["claims"]))
        ok &= row[key] <= nominal + 2 * se
    return bool(ok)


# --------------------------------------------------------------------------------------------
# Power
# --------------------------------------------------------------------------------------------
POWER_RATIOS = (("small", 1.1), ("medium", 1.5), ("large", 3.0))


def power_rows(users, ns: list[int], m: int, seed: int, eps: float = 1.0, cap: int = 4000) -> list[dict]:
    """Laplace at ε (arm B) against Laplace at ε·√r (arm A): A's MSE is B's / r exactly. The claim
    "A's MSE is lower", ratio of means, one point: measured P(holds), P(inconclusive) at each n and
    at the n ``reps_needed`` predicts for 80 % power (≤ ``cap``), beside the normal-approximation
    power ``point_power`` at the sd the engine computes for power on 20,000 repetitions."""
    rows = []
    for size, r in POWER_RATIOS:
        law = mean_law("laplace", eps * math.sqrt(r), "sq", users, eps_b=eps)
        rng = rng_for(seed, {"calibration": "power-sd", "r": r})
        a, b = law.draw(1, 20_000, rng)
        sd = ratio_of_means_point(a[0], b[0], "sd").sd  # the engine's own sd for power
        delta = -math.log(r)
        n80 = reps_needed(sd, delta)
        for n in sorted(set(ns) | ({int(n80)} if n80 <= cap else set())):
            holds, against = measure(law, f"power r = {r:g}", PATHS["ratio of means"], n, m, seed)
            h, h_se = _rate(holds, m)
            rows.append(
                {
                    "size": size,
                    "ratio": 1 / r,
                    "n": int(n),
                    "claims": m,
                    "holds": h,
                    "holds_se": h_se,
                    "does_not_hold": against / m,
                    "inconclusive": 1 - (holds + against) / m,
                    "predicted": point_power(int(n), sd, delta, math.nan, ALPHA),
                    "n80": n80,
                    "sd": sd,
                    "is_n80": int(n) == int(n80),
                }
            )
    return rows


# --------------------------------------------------------------------------------------------
# The tie detector on near-ties, and the plan of the page
# --------------------------------------------------------------------------------------------
#: (A, ε_A, B, ε_B, whether the laws are identical): exact ties, and near-ties the detector must
#: not call ties (a budget a hair apart; Three-Outputs just above ε* ≈ 0.61, where it leaves HM).
TIE_CASES = (
    ("hm_tp", 0.5, "hm", 0.5, True),
    ("three_outputs", 0.5, "hm", 0.5, True),
    ("three_outputs", 0.6, "hm", 0.6, True),
    ("three_outputs", 0.62, "hm", 0.62, False),
    ("three_outputs", 1.0, "hm", 1.0, False),
    ("laplace", 1.0, "laplace", 1.0 + 1e-9, False),
    ("duchi", 1.0, "duchi", 1.0 + 1e-9, False),
    ("duchi", 1.0, "duchi", 1.0 + 1e-6, False),
    ("pm", 1.0, "pm", 1.0 + 1e-6, False),
    ("hm", 2.0, "pm", 2.0, False),
    ("laplace", 1.0, "duchi", 1.0, False),
)


def tie_rows() -> list[dict]:
    """The tie detector (``domain.ties.same_output_law``) on exact ties and near-ties."""
    from ldprepro.domain.mechanisms import get_mechanism
    from ldprepro.domain.ties import same_output_law

    rows = []
    for a, ea, b, eb, tied in TIE_CASES:
        said = bool(same_output_law(get_mechanism(a, ea), get_mechanism(b, eb)))
        rows.append({"a": a, "eps_a": ea, "b": b, "eps_b": eb, "tied": tied, "said": said})
    return rows


MEAN_MARGINS = {"means": [1.02, 1.05, 1.1, 1.2, 1.25, 1.5]}
CV_MARGINS = {"diff": [0.02, 0.05, 0.1]}
CV_DESIGNS = ((10, 5), (5, 10), (5, 5))


def plan(users) -> list[tuple[Law, list[int], list[Case], bool]]:
    """(law, the repetition counts the figures use on it, its cases, heavy: fewer replications)."""
    mean = mean_law("duchi", 1.0, "sq", users)
    absolute = mean_law("three_outputs", 2.0, "abs", users)
    multi = multi_mean_law("duchi", 1.0, 10, users)
    mse, tv = histogram_law(2.0, "mse"), histogram_law(2.0, "tv")
    tv_cases = [Case(p, PATHS[p], TWO_SIDED) for p in ("paired t / Wilcoxon on differences", "ratio of means")]
    out = [
        (mean, [20, 100, 500], aa_cases(mean, MEAN_MARGINS), False),
        (absolute, [100, 400], aa_cases(absolute, {}), False),
        (multi, [100], aa_cases(multi, {"means": [1.1]}), True),
        (mse, [500], aa_cases(mse, {"means": [1.1]}), True),
        (tv, [10, 500], tv_cases, True),
    ]
    for folds, reps in CV_DESIGNS:
        law = cv_law(folds, reps, 8.0)
        out.append((law, [folds * reps], aa_cases(law, CV_MARGINS), True))
    return out


def run_laws(users, m: int, heavy: int, seed: int, progress=None) -> dict[str, list[dict]]:
    """Every row of the page's law sections: {"paths": A/A and at-margin rows, "power": power rows,
    "ties": tie-detector rows}."""
    rows = []
    for law, ns, cases, is_heavy in plan(users):
        for n in ns:
            rows += law_rows(law, n, heavy if is_heavy else m, seed, cases)
            if progress:
                progress(f"{law.name}, n = {n}")
    mean = mean_law("duchi", 1.0, "sq", users)
    tv = histogram_law(2.0, "tv")
    for law, n, mm in ((mean, 20, m), (mean, 100, m), (tv, 10, m)):
        rows.append(trend_row(law, n, mm, seed))
        rows.append(trend_row(law, n, mm, seed, shape=True))
    rows.append(interaction_row(mean, 400, m, seed))
    for n, margin in ((20_000, 1.02), (200_000, 1.02), (20_000, 1.05)):
        rows.append(proportion_row(n, 0.3, margin, m, seed))
    if progress:
        progress("trend, shape, interaction, proportion TOST")
    power = power_rows(users, [10, 20, 50, 100, 400], m, seed)
    return {"paths": rows, "power": power, "ties": tie_rows()}
