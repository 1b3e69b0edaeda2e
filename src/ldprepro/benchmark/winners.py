"""The best mechanism of each benchmark cell (task × dataset × ε), from paired tests.

Rule (declared in docs/benchmark.md): among the mechanisms that are ε-LDP at that ε
(:mod:`.privacy`), the candidate is the one with the lowest mean squared error. Every other LDP
mechanism is compared with it by the claim engine's paired test of the ratio of mean errors
(:func:`ldprepro.claims.verdicts.ratio_of_means_point`, paired t test and Fieller interval over the common-random-number
repetitions), Holm-adjusted over the comparisons of the cell. A mechanism is *tied* with the
candidate unless its ratio is > 1 with Holm-adjusted p < α; the winner of the cell is the set
{candidate} ∪ tied. Choosing the candidate by its sample mean favours it slightly, so the test
separates a little more readily than a pre-declared pair would; a tie therefore really means the
repetitions cannot tell the mechanisms apart. Mechanisms that are not LDP, or whose declared law is
unverifiable (:mod:`.privacy`), are reported with their error and ratio but never compete: they
cannot be "best".
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldprepro.claims.verdicts import ALPHA, holm, ratio_of_means_point

STATUSES = ("best", "tied", "worse", "not LDP", "unverifiable")


def cell_table(
    errors: dict[str, np.ndarray], ldp: dict[str, bool], alpha: float = ALPHA, unverifiable=()
) -> pd.DataFrame:
    """One row per mechanism of a cell: mean error, ratio to the candidate with its CI, Holm p,
    MDE of the ratio test, and status (best / tied / worse / not LDP / unverifiable). ``errors``
    holds the per-repetition squared errors, paired by repetition; the mechanisms in
    ``unverifiable`` (their declared law failed ``law_check``) never compete, like the not-LDP ones."""
    missing = [m for m in errors if m not in ldp]
    if missing:
        raise KeyError(f"no privacy verdict for {missing}")
    ldp = {m: bool(v) and m not in set(unverifiable) for m, v in ldp.items()}
    means = {m: float(np.mean(e)) for m, e in errors.items()}
    eligible = [m for m in errors if ldp[m] and math.isfinite(means[m])]
    best = min(eligible, key=lambda m: means[m]) if eligible else None
    others = [m for m in errors if m != best]
    points = {
        m: ratio_of_means_point(errors[m], errors[best], f"{m} / {best}", claim_a_lower=False)
        for m in others
        if best is not None
    }
    compared = [m for m in others if ldp[m]]
    adjusted = dict(zip(compared, holm([points[m].p_value for m in compared]))) if best is not None else {}
    rows = []
    for m in errors:
        pt = points.get(m)
        if m == best:
            status = "best"
        elif m in set(unverifiable):
            status = "unverifiable"
        elif not ldp[m]:
            status = "not LDP"
        elif best is None:
            status = "worse"
        else:
            separated = adjusted[m] < alpha and pt.effect > 1
            status = "worse" if separated else "tied"
        rows.append(
            {
                "mechanism": m,
                "mse": means[m],
                "n_reps": int(np.size(errors[m])),
                "ratio_to_best": 1.0 if m == best else (pt.effect if pt else math.nan),
                "ci_low": 1.0 if m == best else (pt.ci_low if pt else math.nan),
                "ci_high": 1.0 if m == best else (pt.ci_high if pt else math.nan),
                "p_value": pt.p_value if pt else math.nan,
                "p_holm": adjusted.get(m, math.nan),
                "mde": pt.mde if pt else math.nan,
                "ldp": bool(ldp[m]),
                "status": status,
            }
        )
    return pd.DataFrame(rows)


def rank_cells(results: pd.DataFrame, privacy: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """:func:`cell_table` for every (task, dataset, ε) of the tidy benchmark results, on the
    task's one measured metric (``sq_error``; LDP-SGD: its test metric; ``*_theory`` rows are
    closed forms, not repetitions), joined with the privacy table on (task, mechanism, ε, k)."""
    err = results[~results["metric"].str.endswith("_theory")]
    per_task = err.groupby("task")["metric"].nunique()
    if (per_task > 1).any():
        raise ValueError(
            f"one metric per benchmark task expected, got {err.groupby('task')['metric'].unique().to_dict()}"
        )
    priv = privacy.set_index(["task", "mechanism", "eps", "k"])["ldp"]
    reasons = (
        privacy.set_index(["task", "mechanism", "eps", "k"])["unverifiable"]
        if "unverifiable" in privacy
        else pd.Series("", index=priv.index)
    )
    out = []
    for (task, dataset, eps), cell in err.groupby(["task", "dataset", "eps"], sort=True):
        wide = cell.pivot(index="rep", columns="mechanism", values="value")
        ks = cell.groupby("mechanism")["k"].first()
        ldp = {m: bool(priv.loc[(task, m, float(eps), ks[m])]) for m in wide.columns}
        unverified = [m for m in wide.columns if reasons.loc[(task, m, float(eps), ks[m])]]
        table = cell_table({m: wide[m].to_numpy() for m in wide.columns}, ldp, alpha, unverified)
        out.append(table.assign(task=task, dataset=dataset, eps=float(eps)))
    cols = ["task", "dataset", "eps"]
    return (
        pd.concat(out, ignore_index=True)[cols + [c for c in out[0].columns if c not in cols]]
        if out
        else pd.DataFrame()
    )


def winners(ranked: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: the candidate, the tied set, the runner-up's ratio with CI and Holm p."""
    rows = []
    for (task, dataset, eps), cell in ranked.groupby(["task", "dataset", "eps"], sort=True):
        best = cell[cell["status"] == "best"]
        tied = cell[cell["status"] == "tied"].sort_values("mse")
        rivals = cell[cell["status"].isin(["tied", "worse"])].sort_values("mse")
        below = cell[(cell["status"] == "not LDP") & (cell["mse"] < (best["mse"].iloc[0] if len(best) else np.inf))]
        row = {
            "task": task,
            "dataset": dataset,
            "eps": eps,
            "best": best["mechanism"].iloc[0] if len(best) else None,
            "tied": ",".join(tied["mechanism"]),
            "winner_set": ",".join(list(best["mechanism"]) + list(tied["mechanism"])),
            "runner_up": rivals["mechanism"].iloc[0] if len(rivals) else None,
            "runner_up_ratio": rivals["ratio_to_best"].iloc[0] if len(rivals) else math.nan,
            "runner_up_ci_low": rivals["ci_low"].iloc[0] if len(rivals) else math.nan,
            "runner_up_ci_high": rivals["ci_high"].iloc[0] if len(rivals) else math.nan,
            "runner_up_p_holm": rivals["p_holm"].iloc[0] if len(rivals) else math.nan,
            "runner_up_mde": rivals["mde"].iloc[0] if len(rivals) else math.nan,
            "n_reps": int(cell["n_reps"].max()),
            "not_ldp_below_best": ",".join(below["mechanism"]),
        }
        rows.append(row)
    return pd.DataFrame(rows)
