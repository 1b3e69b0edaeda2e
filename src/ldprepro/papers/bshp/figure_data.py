"""Paper 001 (BSHP / WSHP): one figure's per-repetition results, indexed for the claims.

Pairing. Within a repetition every method sees the same users: a job reads the whole city
(or its first ``max_users`` rows, the same for every method), so the population is common;
only the mechanism's own noise differs, drawn from a Generator keyed by (method, ε, r, rep).
The noise of two methods is therefore independent, and pairing on the repetition index is
valid but brings no variance reduction (the data, the only shared randomness, are fixed).
``FigureData`` checks that every method of a dataset saw the same number of users and the
same repetitions before pairing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldprepro.experiments.histogram_figures import BASELINE


def curve_name(mechanism: str, r: float) -> str:
    return mechanism if mechanism == BASELINE else f"{mechanism}@{r:g}"


@dataclass
class FigureData:
    """One figure's per-repetition results, indexed for the claims.

    ``raw``: the tidy job rows of every available city (the paper's T repetitions and ours:
    ``extra_rep``); ``cities``: {city: entry} of the figure with each entry's ``data_role``
    (``paper`` or ``substitute``); ``unavailable``: {dataset: reason}; ``folds``: the consumers'
    queries (protocol), needed by the closed-form claims when no results exist."""

    raw: pd.DataFrame
    fig: dict
    figure: str
    cities: dict
    unavailable: dict
    folds: tuple = (3, 5, 7)

    def __post_init__(self):
        for name, city in self.cities.items():
            role = city.get("data_role")
            if role not in ("paper", "substitute"):
                raise ValueError(
                    f"config.yaml: bshp.cities.{name}.data_role must be 'paper' or 'substitute', got {role!r}"
                )
        raw = self.raw
        self._series: dict[tuple, pd.Series] = {}
        self._theory: dict[tuple, float] = {}
        if len(raw):
            users = raw.groupby("dataset")["n_users"].nunique()
            if (users > 1).any():
                raise ValueError(
                    f"bshp {self.figure}: the methods of {list(users[users > 1].index)} saw different "
                    "numbers of users; the comparisons would not be paired"
                )
            keys = ["metric", "query", "dataset", "mechanism", "r", "eps"]
            per = raw[raw["metric"].isin(["mse", "tv_distance", "bits_per_user"])]
            # one Series per curve point, indexed by repetition (sorted); built from the groups'
            # row positions, not per-group frames (a pandas frame per group cost seconds per figure)
            rep, value = per["rep"].to_numpy(), per["value"].to_numpy()
            for k, rows in per.groupby(keys, sort=False).indices.items():
                order = rows[np.argsort(rep[rows], kind="stable")]
                self._series[k] = pd.Series(value[order], index=pd.Index(rep[order], name="rep"), name="value")
            th = raw[raw["metric"] == "mse_theory"]
            self._theory = {k: float(v) for k, v in th.groupby(keys)["value"].first().items()}
            reps = {k: tuple(s.index) for k, s in self._series.items() if k[0] == "mse" and k[1] == 0}
            bad = {k for k, v in reps.items() if v != next(iter(reps.values()))}
            if bad:
                raise ValueError(
                    f"bshp {self.figure}: the curves {sorted(bad)[:3]} have other repetitions than "
                    f"{next(iter(reps))}; paired tests need the same repetition indices"
                )

    # --- lookups -------------------------------------------------------------------------------
    def series(self, metric: str, dataset: str, mechanism: str, r: float, eps: float, query: int = 0) -> pd.Series:
        key = (metric, query, dataset, mechanism, 1.0 if mechanism == BASELINE else float(r), float(eps))
        if key not in self._series:
            raise ValueError(
                f"bshp {self.figure}: no per-repetition {metric} for {dataset} {curve_name(mechanism, r)} "
                f"at ε = {eps:g} (query {query})"
            )
        return self._series[key]

    def theory(self, dataset: str, mechanism: str, r: float, eps: float) -> float:
        key = ("mse_theory", 0, dataset, mechanism, 1.0 if mechanism == BASELINE else float(r), float(eps))
        return self._theory.get(key, np.nan)

    def exact(self, dataset: str, mechanism: str, r: float, eps: float) -> float | None:
        """The exact expected MSE of this curve point, or None when it has none. The jobs
        (``experiments.histograms``) write ``mse_theory`` only where it is the expectation of exactly the
        estimator measured: the split baseline (unbiased Basic RAPPOR per consumer, its exact
        variance; paper Sec. 4) and BSHP/WSHP with the Horvitz–Thompson estimator of Theorem 5
        (unbiased, variance Lemma 6, independent intervals summed per bin). The ratio estimator of
        Sec. 5.2 (biased at finite n) has none, and the total-variation distance no closed form:
        those stay simulated."""
        t = self.theory(dataset, mechanism, r, eps)
        return float(t) if np.isfinite(t) and t > 0 else None

    @property
    def n_reps(self) -> tuple[int, int]:
        """(the paper's T, repetitions run) of this figure's results."""
        if not len(self.raw):
            return int(self.fig["reps"]), 0
        return int(self.fig["reps"]), int(self.raw["rep"].nunique())

    @property
    def sampling(self) -> list[str]:
        return [m for m in self.fig["mechanisms"] if m != BASELINE]

    @property
    def eps(self) -> list[float]:
        return [float(e) for e in self.fig["eps"]]

    @property
    def ratios(self) -> list[float]:
        return sorted(float(r) for r in self.fig["ratios"])

    def dataset(self, city: str) -> str:
        return self.cities[city]["dataset"]

    def groups(self) -> list[tuple[str, list[str], list[str]]]:
        """[(data role, available cities, unavailable cities)] of the figure, paper data first."""
        out = []
        for role in ("paper", "substitute"):
            names = [c for c in self.cities if self.cities[c]["data_role"] == role]
            if names:
                out.append(
                    (
                        role,
                        [c for c in names if self.dataset(c) not in self.unavailable],
                        [c for c in names if self.dataset(c) in self.unavailable],
                    )
                )
        return out
