"""The sections of docs/calibration.md that ``calibration_laws`` measures: every test path on the
figures' error laws per direction, power measured against its prediction, the tie detector on
near-ties, and the claims table's test paths with what calibrates each (``TEST_PATHS``: every test
string the engine writes matches one; tests/test_calibration_laws.py checks it on the recorded
claims table)."""

from __future__ import annotations

import math
import re

from ldprepro.claims.calibration import Settings
from ldprepro.claims.calibration_laws import CV_MARGINS, MEAN_MARGINS, within
from ldprepro.claims.names import label as _name

#: The test paths of the claims table: (name, pattern of the ``test`` strings, calibrated where).
#: A path with no calibration says why.
TEST_PATHS = (
    (
        "ratio of means, paired t with Fieller interval",
        r"^ratio of means, paired t with Fieller",
        "A/A and coverage above; 1-D, 10-D mean, histogram MSE and total variation below",
    ),
    (
        "ratio of means, corrected resampled t (CV)",
        r"^ratio of means, corrected resampled t",
        "misclassification under the three CV designs below",
    ),
    (
        "paired t / Wilcoxon on differences",
        r"^(paired t|Wilcoxon signed-rank)[^;]* on differences",
        "1-D mean (absolute error), histogram total variation (LREMH's AVD at n = 10, BSHP at 500), "
        "the interaction contrast",
    ),
    (
        "paired t / Wilcoxon on log-ratios",
        r"^(paired t|Wilcoxon signed-rank)[^;]* on log-ratios",
        "A/A above; 1-D, 10-D mean and histogram MSE below",
    ),
    (
        "corrected resampled t on differences (CV)",
        r"^corrected resampled t",
        "misclassification under the three CV designs below",
    ),
    (
        "TOST on the ratio of means",
        r"^TOST \(margin ×[0-9.]+\) on the ratio of means",
        "A/A and at the margin: ×" + ", ×".join(f"{m:g}" for m in MEAN_MARGINS["means"]) + " (1-D mean), ×1.1 "
        "(10-D mean, histogram MSE); the margins ×1.01, ×3.1623, ×5 and ×10 (ldpfl Fig. 1's Monte-Carlo check, "
        "BSHP's 'same scale') are the same one-sided t at another constant and are not measured apart",
    ),
    (
        "TOST on differences",
        r"^TOST \(margin ±[0-9.]+\) on differences",
        "misclassification under CV, A/A and at the margin: ±" + ", ±".join(f"{m:g}" for m in CV_MARGINS["diff"]),
    ),
    ("TOST on a proportion", r"^TOST on a proportion", "binomial at the margin below"),
    (
        "blocked trend regression (slope)",
        r"^blocked regression slope",
        "flat curves of the 1-D mean (n = 20, 100) and of the histogram's total variation (n = 10, LREMH); "
        "not on the CV design (its blocks are fits that share training data: ldpfl Fig. 14's trend is not "
        "corrected for it)",
    ),
    (
        "step (shape) test",
        r"^(ratio of means|paired t|Wilcoxon)",
        "its steps are the paired paths above; the claim (Holm across the steps) on flat curves below",
    ),
    ("identical output laws (exact ties)", r"^identical output laws", "the tie detector on near-ties below"),
    (
        "exact computation",
        r"(^exact|closed form|enumeration|Theorem|Var\(m\*\))",
        "none needed: no sampling (ties to 1e-12 relative, as the exact points declare)",
    ),
)


def path_of(test: str) -> str | None:
    """The name of the first ``TEST_PATHS`` entry one ``test`` string (one of a claim's "; "-joined
    tests) belongs to, None when none does."""
    return next((name for name, pattern, _ in TEST_PATHS if re.search(pattern, test)), None)


def _pm(p: float, se: float, m: int) -> str:
    if not math.isfinite(p):
        return "—"
    return f"0 (< {3 / m:.3f})" if p == 0 else f"{p:.3f} ± {se:.3f}"


def _cell(row: dict, key: str) -> str:
    level = row["nominal"].get(key)
    if level is None:
        return "— (not an error here)"
    return f"{_pm(row[key], row[key + '_se'], row['claims'])} (nominal {level:g})"


def law_sections(laws: dict, s: Settings, alpha: float) -> list[str]:
    out = [
        "## Every test path on the figures' error laws",
        "",
        'Each row: single-point claims "A\'s metric is lower" on A/A arms (the same law, independent noise, '
        "common repetitions), or with one arm moved exactly to a TOST margin; the rate at which the point takes "
        'the claim\'s side ("holds") and the side against it ("does not hold", `verdicts.point_side`), each '
        f"against its nominal rate: α/2 = {alpha / 2:g} per direction for two-sided tests, α = {alpha:g} for "
        "TOST and the proportion TOST at the margin. A/A coverage of a two-sided 95 % interval is 1 minus the "
        "two rates. Replications: "
        f"{s.law_replications} per row, {s.heavy_replications} for the costly laws (CV fits, histograms, the "
        "10-D mean). Laws: the 1-D mean's error (as above); the 10-D mean (attribute sampling, each attribute "
        "at ε/k, squared error averaged over attributes); misclassification of a Laplace-perturbed "
        "least-squares classifier under repeated k-fold CV of a fixed synthetic dataset (the folds of one CV "
        "repetition share training data, as the LDP-SGD figures' fits do; the naive paired t is shown beside "
        "the corrected resampled t it was replaced by); a 16-cell histogram by generalized randomized "
        "response, its MSE (BSHP's histogram metric) and total variation (LREMH's AVD is a mean of total "
        "variations; n = 10 is its number of runs). BSHP's own collectors and LREMH's EM are not simulated: "
        "the histogram law stands in for them.",
        "",
        '| law | path | n | claims | "holds" | "does not hold" | within level |',
        "|---|---|---:|---:|---|---|---|",
    ]
    bad = []
    for r in laws["paths"]:
        ok = within(r)
        if not ok:
            bad.append(f"{r['law']}, {r['path']}, n = {r['n']}")
        out.append(
            f"| {r['law']} | {r['path']} | {r['n']} | {r['claims']} | {_cell(r, 'holds')} | "
            f"{_cell(r, 'does_not_hold')} | {'yes' if ok else '**no**'} |"
        )
    out += [""] + (
        ["Outside the nominal level (2 s.e.):", "", *[f"- {b}" for b in bad]]
        if bad
        else ["Every row is within its nominal level per direction (2 s.e.)."]
    )
    out += [
        "",
        "## Power, measured",
        "",
        "Laplace at ε = 1 (arm B) against Laplace at ε·√r (arm A): A's MSE is exactly B's / r. The claim \"A's "
        'MSE is lower", one point, ratio of means. Measured: the probability of each verdict over '
        f"{s.law_replications} claims; predicted: the normal-approximation power of `claims.power.point_power` "
        "at the sd the engine computes for power (`stats._power_sd`, on 20,000 repetitions), the one "
        "`joint_reps_needed` multiplies across a claim's "
        "points; the row marked ★ is the n `reps_needed` predicts for 80 % (the repetitions figure).",
        "",
        '| effect | true MSE ratio A/B | n | P("holds") measured | predicted | P(inconclusive) | P("does not hold") |',
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in laws["power"]:
        star = " ★" if r["is_n80"] else ""
        out.append(
            f"| {r['size']} | {r['ratio']:.3f} | {r['n']}{star} | {_pm(r['holds'], r['holds_se'], r['claims'])} "
            f"| {r['predicted']:.3f} | {r['inconclusive']:.3f} | {r['does_not_hold']:.3f} |"
        )
    out += [
        "",
        "## The tie detector on near-ties",
        "",
        "`domain.ties.same_output_law` on exact ties and on pairs that are not ties by a hair (a budget 1e-9 "
        "or 1e-6 apart; Three-Outputs just above ε* ≈ 0.61, where it stops being HM).",
        "",
        "| A | ε_A | B | ε_B | identical laws? | detector says | right |",
        "|---|---:|---|---:|---|---|---|",
    ]
    for r in laws["ties"]:
        right = r["tied"] == r["said"]
        out.append(
            f"| {_name(r['a'])} | {r['eps_a']:.10g} | {_name(r['b'])} | {r['eps_b']:.10g} | "
            f"{'yes' if r['tied'] else 'no'} | {'tie' if r['said'] else 'no tie'} | {'yes' if right else '**no**'} |"
        )
    out += [
        "",
        "## The claims table's test paths",
        "",
        "Every test string the engine writes in a claims table belongs to one of these paths (checked on the "
        "recorded claims table by tests/test_calibration_laws.py); where each is calibrated:",
        "",
        "| path | calibrated on |",
        "|---|---|",
        *[f"| {name} | {where} |" for name, _, where in TEST_PATHS],
        "",
    ]
    return out
