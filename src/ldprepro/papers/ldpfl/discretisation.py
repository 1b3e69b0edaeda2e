"""Paper 002's claims about the discretised mechanisms (Figs. 14-15, Alg. 5; docs/papers/ldpfl.md)
that no generic test kind expresses: "no better than random" at 3 outputs, "close to the
continuous mechanism" with enough segments, and discretised PM-SUB against Three-Outputs with the
exact worst-case variance crossing beside it.

Each function is named by a ``per_dataset`` declaration in ``claims.yaml`` (``test: function``) and
returns the claim(s) for one panel's ``Results``.
"""

from __future__ import annotations

import numpy as np

from ldprepro.claims.declarations import fill
from ldprepro.claims.results import Results, log_scale, paired
from ldprepro.claims.verdicts import Claim, equivalence_point
from ldprepro.domain.mechanisms import get_mechanism, sampling_k


def _outputs_table(res: Results, ds: str, metric: str):
    r = res.raw[(res.raw["dataset"] == ds) & (res.raw["mechanism"] == "pm_sub") & (res.raw["metric"] == metric)]
    return r[r["n_outputs"].notna()].pivot_table(index="rep", columns="n_outputs", values="value")


def _folds(res: Results, n: int) -> int | None:
    """The CV design's folds when ``n`` fits are whole CV repetitions (the corrected resampled t)."""
    return res.cv_folds if res.cv_folds and n % res.cv_folds == 0 else None


def random_at_three_outputs(res: Results, decl: dict) -> list[Claim]:
    """A classifier trained on 3-output PM-SUB has a misclassification rate within 0.5 ± ``margin``
    (declared; 0.05 by default)."""
    out, margin = [], decl.get("margin", 0.05)
    for ds in res.datasets:
        metric = res.metric_of(ds)
        table = _outputs_table(res, ds, metric)
        if metric == "misclassification_rate" and 3.0 in table.columns:
            s = table[3.0].dropna()
            out.append(
                res.claim(
                    decl["claim"],
                    fill(decl["scope"], dataset=ds),
                    "equivalence",
                    points=[
                        equivalence_point(
                            s.to_numpy(),
                            np.full(len(s), 0.5),
                            "3 outputs",
                            margin,
                            log=False,
                            cv_folds=_folds(res, len(s)),
                        )
                    ],
                    evidence=f"'no better than random' taken as a misclassification rate within 0.5 ± {margin:g} (ours)",
                )
            )
    return out


def close_to_continuous(res: Results, decl: dict) -> list[Claim]:
    """With the most segments, discretised PM-SUB within ×``margin_ratio`` (errors; 1.1 by default) or
    ±``margin_rate`` (rates; 0.02) of PM-SUB, both declared."""
    out = []
    for ds in res.datasets:
        metric = res.metric_of(ds)
        table = _outputs_table(res, ds, metric)
        cont = res.series(ds, "pm_sub", metric, n_outputs=None)
        if table.empty or cont.empty:
            continue
        last = table.columns.max()
        common = table.index.intersection(cont.index)
        margin = decl.get("margin_ratio", 1.1) if log_scale(metric) else decl.get("margin_rate", 0.02)
        pt = equivalence_point(
            table.loc[common, last].to_numpy(),
            cont.loc[common].to_numpy(),
            f"{ds} {last:g} outputs",
            margin,
            log=log_scale(metric),
            means=True,
            cv_folds=_folds(res, len(common)),
        )
        out.append(
            res.claim(
                decl["claim"],
                fill(decl["scope"], dataset=ds),
                "equivalence",
                points=[pt],
                evidence=f"'close' taken as within {'×' if log_scale(metric) else '±'}{margin:g} (ours)",
            )
        )
    return out


def _worst_case_crossing(eps: float) -> str:
    """Exact worst-case variances (Lemma 9's discretised pmf): smallest 2m+1 at which discretised
    PM-SUB at ε is below Three-Outputs."""
    three = get_mechanism("three_outputs", eps).worst_case_variance()
    for m in range(1, 201):
        if get_mechanism("pm_sub", eps, discretize=m).worst_case_variance() < three:
            return (
                f"exact worst-case variance at ε = {eps:g}: discretised PM-SUB drops below Three-Outputs "
                f"({three:.4g}) from {2 * m + 1} outputs on"
            )
    return f"exact worst-case variance at ε = {eps:g}: discretised PM-SUB stays above Three-Outputs up to 401 outputs"


def beats_three_outputs(res: Results, decl: dict) -> list[Claim]:
    """Discretised PM-SUB with the most outputs against Three-Outputs, paired on the folds."""
    out = []
    for ds in res.datasets:
        metric = res.metric_of(ds)
        table = _outputs_table(res, ds, metric)
        three = res.series(ds, "three_outputs", metric)
        if table.empty or three.empty:
            continue
        last = table.columns.max()
        t = res.raw[(res.raw["dataset"] == ds) & (res.raw["mechanism"] == "three_outputs")].iloc[0]
        k = sampling_k(float(t["eps"]), int(t["n_features"]))
        pt = paired(
            table[last].dropna(),
            three,
            f"{ds} {last:g} outputs vs Three-Outputs",
            log_scale(metric),
            cv_folds=res.cv_folds,
        )
        out.append(
            res.claim(
                decl["claim"],
                fill(decl["scope"], dataset=ds, last=f"{last:g}"),
                "pairwise",
                points=[pt] if pt else [],
                evidence=_worst_case_crossing(float(t["eps"]) / k) + f" (Alg. 6 per-attribute budget, k = {k})",
            )
        )
    return out
