"""Per-repetition results of one figure, as the claim engine reads them.

Claims are decided on per-repetition results (the raw tidy table), paired on the repetition index:
in mean estimation every mechanism sees the same users (the whole dataset), in LDP-SGD the same
cross-validation folds, so only the mechanisms' noise differs. Error metrics are compared on
log-ratios (they span decades), rates on differences.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldprepro.claims.names import NAMES  # noqa: F401  (re-exported: the claim texts' mechanism names)
from ldprepro.claims.verdicts import Claim, paired_point, ratio_of_means_point

RATE_METRICS = ("misclassification_rate",)


# --------------------------------------------------------------------------------------------
# Reading per-repetition results
# --------------------------------------------------------------------------------------------
class Results:
    """Per-repetition results of one figure restricted to one data role, with the figure's
    configuration; ``series`` picks one curve point as a Series indexed by repetition."""

    def __init__(
        self, raw: pd.DataFrame, fig: dict, role: str, paper: str, figure: str, unavailable: dict | None = None
    ):
        self.raw, self.fig, self.role, self.paper, self.figure = raw, fig, role, paper, figure
        self.unavailable = dict(unavailable or {})
        self._derived: dict = {}

    def derived(self, name: str, build):
        """``build(self)``, computed once for these results and then shared by every claim decided on
        them (a paper's index of its curves, say): the results are not changed after they are made,
        so neither is what is derived from them. ``name`` identifies what is built."""
        if name not in self._derived:
            self._derived[name] = build(self)
        return self._derived[name]

    def only(self, datasets: list[str]) -> Results:
        """The same results restricted to some panels."""
        raw = self.raw[self.raw["dataset"].isin(datasets)] if len(self.raw) else self.raw
        return Results(raw, self.fig, self.role, self.paper, self.figure, self.unavailable)

    def with_raw(self, raw: pd.DataFrame) -> Results:
        """The same figure and role on other (e.g. relabelled) results."""
        return Results(raw, self.fig, self.role, self.paper, self.figure, self.unavailable)

    def metric_of(self, dataset: str) -> str:
        return next(
            (p.get("metric", self.fig["metric"]) for p in self.fig["panels"] if p["dataset"] == dataset),
            self.fig["metric"],
        )

    @property
    def datasets(self) -> list[str]:
        return sorted(self.raw["dataset"].unique()) if len(self.raw) else []

    def eps_values(self, dataset: str | None = None) -> list[float]:
        r = self.raw if dataset is None else self.raw[self.raw["dataset"] == dataset]
        return sorted(float(e) for e in r["eps"].dropna().unique())

    @property
    def cv_folds(self) -> int | None:
        """The folds of the figure's repeated cross-validation (LDP-SGD: a repetition is one fit,
        ``rep`` = CV repetition × folds + fold), None when its repetitions are independent."""
        folds = self.fig.get("folds")
        return int(folds) if folds is not None and self.fig.get("cv_repetitions") is not None else None

    def has(self, mechanism: str) -> bool:
        return bool(len(self.raw)) and (self.raw["mechanism"] == mechanism).any()

    def _curve_rows(self, dataset: str, mechanism: str, metric: str) -> pd.DataFrame:
        """The rows of one (dataset, mechanism, metric), in the table's order. The table is split
        into these groups once per Results (a figure's claims read thousands of curve points;
        masking and slicing the whole table for each was most of a figure job's claim time)."""
        groups = self.__dict__.get("_groups")
        if groups is None:
            r = self.raw
            keys = ["dataset", "mechanism", "metric"]
            groups = dict(iter(r.groupby(keys, sort=False, observed=True, dropna=True))) if len(r) else {}
            self._groups = groups
        found = groups.get((dataset, mechanism, metric))
        return found if found is not None else self.raw.iloc[:0]

    def series(self, dataset: str, mechanism: str, metric: str | None = None, **sel) -> pd.Series:
        r = self._curve_rows(dataset, mechanism, metric or self.metric_of(dataset))
        mask = np.ones(len(r), dtype=bool)
        for col, val in sel.items():
            if col not in r:
                if val is None:
                    continue
                return pd.Series(dtype=float)
            nan = val is None or (isinstance(val, float) and math.isnan(val))
            mask &= np.asarray(r[col].isna() if nan else r[col] == val, dtype=bool)
        reps = r["rep"].to_numpy()[mask]
        if len(np.unique(reps)) != len(reps):
            raise ValueError(
                f"{self.paper}/{self.figure}: {dataset}/{mechanism} {sel} is not one curve point "
                f"(repetitions appear twice); add the distinguishing parameter to the selection"
            )
        order = np.argsort(reps, kind="stable")
        index = pd.Index(reps[order], name="rep", dtype=r["rep"].dtype)
        return pd.Series(r["value"].to_numpy()[mask][order], index=index, name="value", dtype=r["value"].dtype)

    def claim(self, text: str, scope: str, kind: str, **kw) -> Claim:
        return Claim(self.paper, self.figure, text, scope, kind, data_role=self.role, **kw)

    def exact_claim(self, decl: dict, points: list, evidence: str, scope: str | None = None) -> Claim:
        """A declared claim decided by exact computation from the closed forms: about the paper's
        mechanisms or theorems, so its data role is ``paper`` whatever panel role asked for it."""
        return Claim(
            self.paper,
            self.figure,
            decl["claim"],
            decl["scope"] if scope is None else scope,
            "closed-form",
            points=points,
            evidence=evidence,
        )


def paired(a: pd.Series, b: pd.Series, label: str, log: bool, claim_a_lower: bool = True, cv_folds: int | None = None):
    """Paired comparison on the common repetitions: the ratio of the mean errors (``log``: MSE/MAE,
    the plotted quantity) or the mean difference (rates). ``cv_folds``: the repetitions are the fits
    of repeated cross-validation (``Results.cv_folds``), tested by the corrected resampled t."""
    common = a.index.intersection(b.index)
    if len(common) == 0:
        return None
    x, y = a.loc[common].to_numpy(), b.loc[common].to_numpy()
    folds = cv_folds if cv_folds and len(common) % cv_folds == 0 else None  # only whole CV repetitions
    if log:
        return ratio_of_means_point(x, y, label, claim_a_lower=claim_a_lower, cv_folds=folds)
    return paired_point(x, y, label, log=False, claim_a_lower=claim_a_lower, cv_folds=folds)


def log_scale(metric: str) -> bool:
    return metric not in RATE_METRICS


def panel_role(panel: dict, default: str = "paper") -> str:
    """A panel's data role: ``paper`` (the paper's own data), ``substitute`` (our stand-in) or
    ``user`` (an experiment a user added); ``default`` when the panel does not say."""
    return panel.get("data_role", default)


def group_rules(raw: pd.DataFrame) -> list:
    """LDP-SGD group-size rules present (the paper's rule first, then controls)."""
    if "group_rule" not in raw or raw["group_rule"].isna().all():
        return [None]
    return sorted(raw["group_rule"].dropna().unique(), key=lambda r: (r != "paper", str(r)))
