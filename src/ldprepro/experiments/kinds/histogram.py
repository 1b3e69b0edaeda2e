"""Kind ``histogram``: histogram publication of a numeric column of any dataset by named collectors
(ldprepro.experiments.histograms: ``split_baseline``, ``bshp``, ``wshp`` and any registered with
``register_collector``) over ε × r × repetitions, behind the experiment-kind contract
(ldprepro.experiments.kinds). Paper 001's Figs. 1–5 are of this kind.

An entry names its ``panels`` (datasets, the ``column`` of each or the entry's), its collectors
(``mechanisms``), ``eps``, sampling ``ratios``, ``reps`` (``claim_reps``: more repetitions for the
claims, never drawn), the collection options (``folds``, ``estimator``, ...: histograms module) and
its ``plot``: ``values``, ``mse_eps`` or ``mse_ratio`` (ldprepro.experiments.histogram_figures),
or ``module:function``, a paper's own plot with the same parameters as :func:`plot`. A paper
section may name its panels once (``cities: {name: panel}``) and its options once (``protocol``),
the figures then list ``cities: [name, ...]`` (:func:`ldprepro.experiments.kinds.section_entry`).

Exact rows: ``mse_theory`` at rep 0, ``theory_exact`` True, where the collector has exact variances
(Lemma 6 / the SUE variance with the Horvitz-Thompson estimator; the split baseline).
"""

from __future__ import annotations

import importlib
import time

import pandas as pd

from ldprepro.experiments.histograms import COLUMN_ORDER, column_positions, run_rows
from ldprepro.pipeline.errors import BadInput
from ldprepro.pipeline.repetitions import repetitions_run
from ldprepro.pipeline.verify import Grid

__all__ = ["COLUMN_ORDER", "run_job", "grid", "plot", "drawn_rows", "claim_rows", "figure_claims", "PLOTS"]

#: the kind's plots by name (``plot`` in the entry)
PLOTS = {"values": "plot_values_figure", "mse_eps": "plot_mse_figure", "mse_ratio": "plot_mse_figure"}


def run_job(fig, panel, mechanism, df, card, seed, paper, figure, progress, split_of=None) -> list[dict]:
    """Every ε × r × repetition of one collector on one panel's column, one ε at a time (to log
    progress per ε; every random stream is keyed by (paper, figure, dataset, collector, ε, r, rep))."""
    column = panel.get("column", fig.get("column"))
    if not column:
        raise BadInput(
            f"{paper}.{figure}: histogram panel {panel['dataset']!r}: name its numeric column (column: NAME)"
        )
    positions = column_positions(df, card, column, fig.get("max_users"))
    rows = []
    for i, eps in enumerate(fig["eps"], 1):
        t0 = time.monotonic()
        rows += run_rows(fig, paper, figure, panel["dataset"], mechanism, positions, seed, eps)
        progress("%s: ε = %g done (%d/%d) in %.1f s", mechanism, eps, i, len(fig["eps"]), time.monotonic() - t0)
    return rows


def grid(fig: dict) -> Grid:
    """ε and every repetition run (``reps``, or ``claim_reps`` when more)."""
    return Grid(eps=list(fig["eps"]), reps=repetitions_run(fig))


def drawn_rows(raw: pd.DataFrame, fig: dict) -> pd.DataFrame:
    """The paper's ``reps`` repetitions only (what the figure plots), without the ``extra_rep`` label."""
    if "extra_rep" not in raw.columns:
        return raw
    return raw[~raw["extra_rep"].astype(bool)].drop(columns="extra_rep")


def claim_rows(raw: pd.DataFrame, fig: dict) -> pd.DataFrame:
    """The rows the claim language's tests read (``outperform``, ``no_worse``, ``theory_agreement``,
    ...: one curve point per dataset, collector and ε): each collector's metrics over every
    consumer (query 0), at the figure's one sampling ratio (a collector that uploads every bit has
    r = 1). A ``function`` claim (paper 001's) reads every row."""
    if not len(raw):
        return raw
    return raw[raw["query"] == 0]


def figure_claims(table: pd.DataFrame, width: int = 160) -> list[dict]:
    """The claims table's rows for printing under the figure: the full rows, with the evidence cut
    to its first sentence (where it held or failed) and the data role named."""
    rows = []
    for row in table.to_dict("records"):
        lead = str(row["evidence"]).split(". ")[0]
        if len(lead) > width:
            lead = lead[: width - 1] + "…"
        rows.append(
            {
                **row,
                "evidence": f"{row['data_role']} data; {lead}" if row["kind"] != "closed-form" else f"exact; {lead}",
            }
        )
    return rows


def plot_function(name: str):
    """The plot named ``name``: one of :data:`PLOTS`, or ``module:function`` (a paper's own)."""
    if name in PLOTS:
        from ldprepro.experiments import histogram_figures

        return getattr(histogram_figures, PLOTS[name])
    if ":" in name:
        module, function = name.split(":", 1)
        return getattr(importlib.import_module(module), function)
    raise BadInput(f"histogram figure: unknown plot {name!r}; choose {', '.join(PLOTS)} or module:function")


def plot(summary, fig, unavailable, title, png, svg=None, claims=None, cards=None) -> None:
    """The entry's ``plot`` (default ``mse_eps``): one panel per dataset, the unavailable ones as
    "not available: <reason>"; ``cards``: {dataset: data card} (a sample's panel title says so)."""
    shown = {**fig, "plot": fig.get("plot", "mse_eps")}
    printed = figure_claims(claims) if isinstance(claims, pd.DataFrame) else claims
    plot_function(shown["plot"])(summary, shown, dict(cards or {}), unavailable, title, png, svg, claims=printed)
