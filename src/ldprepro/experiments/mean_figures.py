"""Mean-estimation figures driven by config: one job per (figure, dataset, mechanism), one figure
per (paper, figure) with a panel per dataset.

A figure entry (config.yaml ``<paper>.<figN>`` with ``kind: mean``) names its panels (dataset,
columns), mechanisms, ε grid, repetitions and metric, and optionally sweeps a mechanism parameter
(``sweep: {alpha: [...]}``), the number of users (``sizes``), the discretisation (``discretize``)
or the budget split between numeric and categorical attributes (``budget_split: numeric_share``).
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd

from ..data.transform import to_unit
from .mean import mean_error_rows

CURVE_PARAMS = ("alpha", "discretize", "mu", "clip", "eps", "group_rule")


def panel_columns(card: dict, panel: dict) -> list[str]:
    numeric = [c["name"] for c in card["columns"] if c["type"] == "numeric"]
    if "columns" in panel:
        missing = [c for c in panel["columns"] if c not in numeric]
        if missing:
            raise ValueError(f"panel {panel['dataset']}: columns {missing} are not numeric columns of the "
                             f"dataset (numeric: {numeric[:12]}{' …' if len(numeric) > 12 else ''})")
        return list(panel["columns"])
    if "column_regex" in panel:
        cols = [c for c in numeric if re.fullmatch(panel["column_regex"], c)]
        if not cols:
            raise ValueError(f"panel {panel['dataset']}: column_regex {panel['column_regex']!r} matches no numeric column")
        return cols
    return numeric


def panel_values(df: pd.DataFrame, card: dict, panel: dict, max_users: int | None = None) -> np.ndarray:
    """The panel's numeric attributes mapped to [−1, 1] with their card domains: (n,) or (n, d)."""
    cols = panel_columns(card, panel)
    domains = {c["name"]: c["domain"] for c in card["columns"] if c["name"] in cols}
    x = np.column_stack([to_unit(df[c].to_numpy(dtype=float), domains[c]) for c in cols])
    if max_users:
        x = x[: int(max_users)]
    return x[:, 0] if x.shape[1] == 1 else x


def budget_fraction(fig: dict, panel: dict, d_numeric: int, card: dict | None = None) -> float:
    """Share of ε given to the numeric attributes: d_n/d under ``budget_split: numeric_share``
    (paper 002 Fig. 6, after Wang et al.). The categorical attributes are the panel's
    ``categorical`` list, else every categorical column of the data card. They receive the rest of
    the budget through optimised unary encoding; that part is independent of the numeric outputs,
    so it does not change the numeric MSE and is not simulated."""
    if fig.get("budget_split", "all_numeric") == "numeric_share":
        if "categorical" in panel:
            d_cat = len(panel["categorical"])
        else:
            d_cat = sum(c["type"] == "categorical" for c in (card or {}).get("columns", []))
        return d_numeric / (d_numeric + d_cat)
    return 1.0


def run_reps(fig: dict) -> int:
    """Repetitions a job runs: the paper's ``reps`` (which draw the curve) or more when the figure
    asks for ``test_reps`` (extra repetitions of ours, for the claims' tests to have power)."""
    return max(int(fig["reps"]), int(fig.get("test_reps", 0)))


def run_job(fig: dict, panel: dict, mechanism: str, df: pd.DataFrame, card: dict, seed: int,
            paper: str, figure: str) -> list[dict]:
    """Every (sweep value × size × ε × repetition) of one mechanism on one panel's dataset."""
    values = panel_values(df, card, panel, fig.get("max_users"))
    d = 1 if values.ndim == 1 else values.shape[1]
    sweep = fig.get("sweep", {}) if mechanism in fig.get("sweep_mechanisms", fig["mechanisms"]) else {}
    names = list(sweep)
    sizes = fig.get("sizes") or [len(values)]
    rows = []
    for combo in itertools.product(*(sweep[k] for k in names)) if names else [()]:
        params = {**fig.get("mechanism_params", {}).get(mechanism, {}), **dict(zip(names, combo))}
        if fig.get("discretize") and mechanism in fig.get("discretize_mechanisms", []):
            params["discretize"] = int(fig["discretize"])
        for size in sizes:
            size = min(int(size), len(values))
            key = {"paper": paper, "figure": figure, "dataset": panel["dataset"], "mechanism": mechanism,
                   "n": size, **params}
            base = {"paper": paper, "figure": figure, "dataset": panel["dataset"], **params}
            rows += mean_error_rows(values[:size], mechanism, fig["eps"], run_reps(fig), seed, key, base,
                                    params=params, budget_fraction=budget_fraction(fig, panel, d, card))
    return rows


def curve_label(row: pd.Series, params=CURVE_PARAMS) -> str:
    """Mechanism label plus the curve's parameters (those in ``params``)."""
    from ..plotting import style

    label = style(row["mechanism"])["label"]
    symbol = {"alpha": "α", "mu": "μ", "eps": "ε"}
    extras = [f"{symbol.get(p, p)}={row[p]:g}" for p in params
              if p in row and pd.notna(row[p]) and p not in ("discretize", "clip", "mechanism", "group_rule")]
    if "clip" in params and "clip" in row and pd.notna(row["clip"]):
        extras.append("clipped" if row["clip"] else "unclipped")
    if "discretize" in params and "discretize" in row and pd.notna(row["discretize"]):
        label += f" (discretised, m={int(row['discretize'])})"
    if "group_rule" in params and row.get("group_rule") == "fixed":  # SGD control: same steps at every ε
        extras.append(f"(fixed {int(row['n_groups'])} steps)")
    return label + (" " + " ".join(extras) if extras else "")


def plot_mean_figure(summary: pd.DataFrame, fig_cfg: dict, unavailable: dict, title: str, png, svg=None,
                     claims=None) -> None:
    import matplotlib.pyplot as plt
    from matplotlib import colormaps

    from ..plotting import not_available_panel, save_figure, style

    panels = fig_cfg["panels"]
    xcol = fig_cfg.get("x", "eps")
    # the quantity on the x axis is not a curve: discretisation m sets the number of outputs 2m+1
    x_params = {"n_outputs": ("discretize",)}.get(xcol, ())
    ncols = min(len(panels), 3)
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.8 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    sweep_values = {k: list(v) for k, v in fig_cfg.get("sweep", {}).items()}
    for ax, panel in zip(axes.flat, panels):
        ds = panel["dataset"]
        title_p = panel.get("title", ds)
        if ds in unavailable:
            not_available_panel(ax, title_p, unavailable[ds])
            continue
        s = summary[summary["dataset"] == ds]
        metric = panel.get("metric", fig_cfg["metric"])
        # a parameter is a curve only when it varies here (ε only off the x axis)
        curve_cols = ["mechanism"] + [p for p in CURVE_PARAMS
                                      if p in s.columns and s[p].notna().any() and p not in x_params and p != xcol
                                      and (p != "eps" or s[p].nunique() > 1)]
        for keys, g in s.groupby(curve_cols, dropna=False, sort=False):
            keys = keys if isinstance(keys, tuple) else (keys,)
            ident = dict(zip(curve_cols, keys))
            st = style(ident["mechanism"])
            colour = st["color"]
            for p, vals in sweep_values.items():
                if p != "clip" and p in ident and pd.notna(ident[p]) and len(vals) > 1:
                    colour = colormaps["viridis"](vals.index(ident[p]) / (len(vals) - 1))
            meas = g[g["metric"] == metric].sort_values(xcol)
            if meas.empty:
                continue
            for _, row in meas[meas[xcol].isna()].iterrows():  # no x value (continuous output): a level
                kind = {"three_outputs": " (3 outputs)", "non_private": ""}.get(ident["mechanism"], " (continuous)")
                ax.axhline(row["mean"], color=colour, ls=":", lw=1.3, label=st["label"] + kind)
                ax.axhspan(row["ci_low"], row["ci_high"], color=colour, alpha=0.12, lw=0)
            meas = meas[meas[xcol].notna()]
            if meas.empty:
                continue
            label = curve_label(meas.iloc[0], curve_cols) + (" (discretised)" if x_params else "")
            ax.plot(meas[xcol], meas["mean"], marker=st["marker"], color=colour, label=label, lw=1.3, ms=4,
                    ls=st["ls"] if ident.get("clip", True) is not False and ident.get("group_rule") != "fixed" else ":")
            ax.fill_between(meas[xcol], meas["ci_low"].clip(lower=meas["mean"] * 1e-3), meas["ci_high"],
                            color=colour, alpha=0.18, lw=0)
            theory = g[g["metric"] == f"{metric}_theory"].sort_values(xcol)
            if len(theory):
                ax.plot(theory[xcol], theory["mean"], ls="--", color=colour, lw=0.9, alpha=0.8)
        ax.set_yscale(panel.get("yscale", fig_cfg.get("yscale", "log")))
        if xcol in ("n_users", "n_outputs"):
            ax.set_xscale("log")
        if xcol == "n_outputs":  # label the actual numbers of outputs (3, 5, 7, …)
            ticks = sorted(set(s[xcol].dropna()))
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.minorticks_off()
        ax.set_title(title_p, fontsize=9)
        ax.set_xlabel({"eps": "privacy budget ε", "n_users": "number of users n",
                       "n_outputs": "number of output values 2m+1"}.get(xcol, xcol))
        ax.set_ylabel(panel.get("ylabel", fig_cfg.get("ylabel", metric)))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    note = "; dashed: theory" if fig_cfg.get("kind", "mean") == "mean" else ""
    fig.suptitle(f"{title} (solid: measured mean with 95% CI band{note})", fontsize=9)
    fig.tight_layout()
    save_figure(fig, png, svg, claims=claims)
