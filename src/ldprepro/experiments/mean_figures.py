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

from ldprepro.data.transform import to_unit
from ldprepro.experiments.mean import mean_error_rows
from ldprepro.pipeline.errors import BadInput
from ldprepro.pipeline.repetitions import repetitions_run

CURVE_PARAMS = ("alpha", "discretize", "mu", "clip", "eps", "group_rule")


def panel_columns(card: dict, panel: dict) -> list[str]:
    numeric = [c["name"] for c in card["columns"] if c["type"] == "numeric"]
    if "columns" in panel:
        missing = [c for c in panel["columns"] if c not in numeric]
        if missing:
            raise ValueError(
                f"panel {panel['dataset']}: columns {missing} are not numeric columns of the "
                f"dataset (numeric: {numeric[:12]}{' …' if len(numeric) > 12 else ''})"
            )
        return list(panel["columns"])
    if "column_regex" in panel:
        cols = [c for c in numeric if re.fullmatch(panel["column_regex"], c)]
        if not cols:
            raise ValueError(
                f"panel {panel['dataset']}: column_regex {panel['column_regex']!r} matches no numeric column"
            )
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
    asks for ``test_reps`` (extra repetitions of ours, for the claims' tests to have power; the rule's
    home is ``pipeline.repetitions``)."""
    return repetitions_run(fig)


def check_sizes(sizes, n_rows: int, dataset: str, paper: str, figure: str, max_users=None) -> None:
    """Every configured number of users must be at most the rows the panel has: a larger size was
    silently cut to the row count (two sizes then drew one point twice). Refused before any work,
    naming the figure's key, the dataset and its rows."""
    over = [int(s) for s in sizes if int(s) > n_rows]
    if over:
        cap = f" (max_users {max_users})" if max_users else ""
        raise BadInput(
            f"config.yaml {paper}.{figure}.sizes: {over} larger than the {n_rows} rows{cap} of dataset "
            f"'{dataset}'; a size is a prefix of the data, so it can be at most {n_rows}. Lower or remove "
            "those sizes (at scale smoke: the entry's smoke: sizes)."
        )


def run_job(
    fig: dict, panel: dict, mechanism: str, df: pd.DataFrame, card: dict, seed: int, paper: str, figure: str
) -> list[dict]:
    """Every (sweep value × size × ε × repetition) of one mechanism on one panel's dataset."""
    values = panel_values(df, card, panel, fig.get("max_users"))
    d = 1 if values.ndim == 1 else values.shape[1]
    sweep = fig.get("sweep", {}) if mechanism in fig.get("sweep_mechanisms", fig["mechanisms"]) else {}
    names = list(sweep)
    sizes = fig.get("sizes") or [len(values)]
    check_sizes(sizes, len(values), panel["dataset"], paper, figure, fig.get("max_users"))
    rows = []
    for combo in itertools.product(*(sweep[k] for k in names)) if names else [()]:
        params = {**fig.get("mechanism_params", {}).get(mechanism, {}), **dict(zip(names, combo))}
        if fig.get("discretize") and mechanism in fig.get("discretize_mechanisms", []):
            params["discretize"] = int(fig["discretize"])
        for size in sizes:
            size = int(size)
            key = {
                "paper": paper,
                "figure": figure,
                "dataset": panel["dataset"],
                "mechanism": mechanism,
                "n": size,
                **params,
            }
            base = {"paper": paper, "figure": figure, "dataset": panel["dataset"], **params}
            rows += mean_error_rows(
                values[:size],
                mechanism,
                fig["eps"],
                run_reps(fig),
                seed,
                key,
                base,
                params=params,
                budget_fraction=budget_fraction(fig, panel, d, card),
            )
    return rows


#: the marker of a theory value at a lone x (a line through one point draws nothing): a horizontal tick
THEORY_TICK = "_"
#: a qualifier for the dashed "exact theory" lines of (mechanism, metric), where the closed form is not
#: that of the estimator measured (HierA Fig. 1: the curve is clipped, the theory unclipped)
THEORY_NOTE = {("hiera", "abs_error"): "HierA: MAE of the unclipped estimator"}
#: how a theory line is qualified when its rows are not the exact expectation (``theory_exact`` false,
#: declared by the jobs, ``ldprepro.experiments.mean``): the MAE's is the normal approximation
APPROXIMATE_NOTE = {"abs_error": "MAE: normal approximation √(2/π)·√(Σ Var)/n, not exact"}
#: the y-label suffix for errors of attributes mapped to [−1, 1] (``panel_values``)
#: the y label of a figure that declares none (issue 54: the raw key `sq_error` was shown)
METRIC_LABELS = {
    "sq_error": "mean squared error of the mean estimate",
    "abs_error": "mean absolute error of the mean estimate",
    "misclassification_rate": "misclassification rate",
    "test_mse": "test mean squared error",
}
RESCALED = "(attribute rescaled to [−1, 1])"


def curve_label(row: pd.Series, params=CURVE_PARAMS) -> str:
    """Mechanism label plus the curve's parameters (those in ``params``)."""
    from ldprepro.report.plotting import style

    label = style(row["mechanism"])["label"]
    symbol = {"alpha": "α", "mu": "μ", "eps": "ε"}
    extras = [
        f"{symbol.get(p, p)}={row[p]:g}"
        for p in params
        if p in row and pd.notna(row[p]) and p not in ("discretize", "clip", "mechanism", "group_rule")
    ]
    if "clip" in params and "clip" in row and pd.notna(row["clip"]):
        extras.append("clipped" if row["clip"] else "unclipped")
    if "discretize" in params and "discretize" in row and pd.notna(row["discretize"]):
        label += f" (discretised, m={int(row['discretize'])})"
    if "group_rule" in params and row.get("group_rule") == "fixed":  # SGD control: same steps at every ε
        extras.append(f"(fixed {int(row['n_groups'])} steps)")
    return label + (" " + " ".join(extras) if extras else "")


def _panel_curves(s: pd.DataFrame, metric: str, xcol: str, x_params: tuple, sweep_values: dict) -> tuple[dict, list]:
    """One panel's curves from the summary: {curve key: {style, x, mean, ci_low, ci_high, theory}} and
    its levels (rows without an x value, drawn as horizontal lines)."""
    from matplotlib import colormaps

    from ldprepro.report.plotting import style, variant

    # a parameter is a curve only when it varies here (ε only off the x axis)
    curve_cols = ["mechanism"] + [
        p
        for p in CURVE_PARAMS
        if p in s.columns
        and s[p].notna().any()
        and p not in x_params
        and p != xcol
        and (p != "eps" or s[p].nunique() > 1)
    ]
    curves, levels = {}, []
    for keys, g in s.groupby(curve_cols, dropna=False, sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        ident = dict(zip(curve_cols, keys))
        st = style(ident["mechanism"])
        st = variant(
            st,
            clip=ident.get("clip") if pd.notna(ident.get("clip", np.nan)) else None,
            discretize=ident.get("discretize") if not x_params and pd.notna(ident.get("discretize", np.nan)) else None,
        )
        if ident.get("group_rule") == "fixed":  # SGD control (fixed number of steps): dotted, hollow
            st["ls"], st["mfc"] = ":", "none"
        for p, vals in sweep_values.items():
            if p != "clip" and p in ident and pd.notna(ident[p]) and len(vals) > 1:
                st["color"] = st["mfc"] = colormaps["viridis"](0.85 * vals.index(ident[p]) / (len(vals) - 1))
        meas = g[g["metric"] == metric].sort_values(xcol)
        if meas.empty:
            continue
        for _, row in meas[meas[xcol].isna()].iterrows():  # no x value (continuous output): a level
            kind = {"three_outputs": " (3 outputs)", "non_private": ""}.get(ident["mechanism"], " (continuous)")
            levels.append(
                {
                    **st,
                    "label": st["label"] + kind,
                    "mean": row["mean"],
                    "ci_low": row["ci_low"],
                    "ci_high": row["ci_high"],
                }
            )
        meas = meas[meas[xcol].notna()]
        if meas.empty:
            continue
        st["label"] = curve_label(meas.iloc[0], curve_cols) + (" (discretised)" if x_params else "")
        theory = g[g["metric"] == f"{metric}_theory"].sort_values(xcol)
        curves[keys] = {
            "style": st,
            "mechanism": ident["mechanism"],
            "x": meas[xcol].to_numpy(float),
            "mean": meas["mean"].to_numpy(float),
            "ci_low": meas["ci_low"].to_numpy(float),
            "ci_high": meas["ci_high"].to_numpy(float),
            "theory": (theory[xcol].to_numpy(float), theory["mean"].to_numpy(float)) if len(theory) else None,
            # False when the jobs declared the theory rows approximate; None for results without the flag
            "theory_exact": (
                bool(theory["theory_exact"].eq(True).all())
                if len(theory) and "theory_exact" in theory and theory["theory_exact"].notna().any()
                else None
            ),
        }
    return curves, levels


def _log_limits(ax, curves: dict, levels: list) -> None:
    """y-limits of a log panel from the measured means: a CI whose lower bound is ≤ 0 (few
    repetitions) cannot be drawn on a log axis, so bands are cut at a tenth of the lowest mean
    instead of stretching the axis over decades nobody measured. Every measured mean stays inside the
    axis: a curve whose band reaches ≤ 0 sets no floor, so another curve's lower CI end could lie
    above its mean (PM at 3.3e-5 under a floor of 5e-5 at smoke scale)."""
    means = [v for cv in curves.values() for v in cv["mean"]] + [lv["mean"] for lv in levels]
    means = np.asarray([m for m in means if np.isfinite(m) and m > 0])
    if not len(means):
        return
    highs = [v for cv in curves.values() for v in cv["ci_high"]] + [lv["ci_high"] for lv in levels]
    lows = [v for cv in curves.values() for v in cv["ci_low"]] + [lv["ci_low"] for lv in levels]
    lo = max(min([v for v in lows if np.isfinite(v) and v > 0], default=means.min()), means.min() / 10)
    lo = min(lo, means.min())
    hi = min(max([v for v in highs if np.isfinite(v)], default=means.max()), means.max() * 10)
    ax.set_ylim(lo / 1.3, hi * 1.3)


def repetitions_note(summary: pd.DataFrame, claims: pd.DataFrame | None) -> str:
    """How many repetitions a curve point averages, and how many the verdicts were decided on when
    the figure's ``test_reps`` ran more than its ``reps`` (a curve of 20 next to a verdict of 16,000)."""
    measured = summary[~summary["metric"].astype(str).str.endswith("_theory")] if "metric" in summary else summary
    if "n" not in measured or not len(measured):
        return "measured mean"
    lo, hi = int(measured["n"].min()), int(measured["n"].max())
    shown = f"mean of {lo:,}" + (f"–{hi:,}" if hi != lo else "") + " repetitions"
    tested = pd.Series(dtype=float)
    if claims is not None and "n_reps" in claims:
        tested = pd.to_numeric(claims["n_reps"], errors="coerce").dropna()
    if len(tested) and int(tested.max()) > hi:
        shown += f" (verdicts on up to {int(tested.max()):,})"
    return shown


def plot_mean_figure(
    summary: pd.DataFrame, fig_cfg: dict, unavailable: dict, title: str, png, svg=None, claims=None
) -> None:
    """One panel per available dataset (markers: measured mean, band: 95% CI; thin dashes: exact theory
    where the jobs wrote ``<metric>_theory`` rows), a ratio-to-best panel under each when two curves
    lie within ×1.5 of each other (``ratio_panel`` in the figure's config forces it on or off), one
    shared legend right of the panels, and the unavailable datasets as one-line notices after them."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from ldprepro.report.plotting import (
        LINESTYLE,
        curves_overlap,
        draw_ratio_panel,
        not_available_panel,
        plain_log_ticks,
        save_figure,
        set_suptitle,
        shared_legend,
    )

    panels = fig_cfg["panels"]
    real = [p for p in panels if p["dataset"] not in unavailable]
    missing = [p for p in panels if p["dataset"] in unavailable]
    xcol = fig_cfg.get("x", "eps")
    # the quantity on the x axis is not a curve: discretisation m sets the number of outputs 2m+1
    x_params = {"n_outputs": ("discretize",)}.get(xcol, ())
    sweep_values = {k: list(v) for k, v in fig_cfg.get("sweep", {}).items()}
    drawn = []
    for panel in real:
        s = summary[summary["dataset"] == panel["dataset"]]
        metric = panel.get("metric", fig_cfg["metric"])
        curves, levels = _panel_curves(s, metric, xcol, x_params, sweep_values)
        # legend and drawing order: the figure's mechanism list, as in the paper
        order = {m: i for i, m in enumerate(fig_cfg.get("mechanisms", []))}
        curves = dict(sorted(curves.items(), key=lambda kv: order.get(kv[1]["mechanism"], len(order))))
        drawn.append((panel, s, metric, curves, levels))
    ratio = fig_cfg.get("ratio_panel")
    if ratio is None:
        ratio = any(curves_overlap({k: (c["x"], c["mean"]) for k, c in curves.items()}) for *_, curves, _ in drawn)

    ncols = min(max(len(real), len(missing) if not real else 1), 3)
    real_rows = -(-len(real) // ncols)
    na_rows = len(missing)  # one full-width line each
    heights = [4.1 if ratio else 3.0] * real_rows + [0.22] * na_rows
    # + 2.8 in on the right for the shared legend, so one-panel figures keep a full-width panel
    width = 4.6 * ncols + 2.8 if real else 6.5  # only notices: no legend, one column of lines
    fig = plt.figure(figsize=(width, sum(heights) + 0.9), layout="constrained")
    grid = fig.add_gridspec(len(heights), ncols, height_ratios=heights)
    main_axes = []
    drew_theory, approximate = set(), set()
    dashed, ticked = set(), set()  # metrics whose theory was drawn as a line, as a lone tick
    for i, (panel, s, metric, curves, levels) in enumerate(drawn):
        r, c = divmod(i, ncols)
        if ratio:
            cell = grid[r, c].subgridspec(2, 1, height_ratios=[3.0, 1.1], hspace=0.04)
            ax = fig.add_subplot(cell[0])
            bottom = fig.add_subplot(cell[1], sharex=ax)
        else:
            ax = bottom = fig.add_subplot(grid[r, c])
        main_axes.append(ax)
        for lv in levels:
            ax.axhline(lv["mean"], color=lv["color"], ls=":", lw=1.3, label=lv["label"])
            ax.axhspan(lv["ci_low"], lv["ci_high"], color=lv["color"], alpha=0.12, lw=0)
        for cv in curves.values():
            st = cv["style"]
            ax.plot(
                cv["x"],
                cv["mean"],
                marker=st["marker"],
                color=st["color"],
                mfc=st["mfc"],
                ls=st["ls"],
                label=st["label"],
            )
            ax.fill_between(
                cv["x"],
                np.clip(cv["ci_low"], cv["mean"] * 1e-3, None),
                cv["ci_high"],
                color=st["color"],
                alpha=0.18,
                lw=0,
            )
            if cv["theory"] is not None:
                # a line through one point draws nothing: a lone value is a horizontal tick
                lone = len(cv["theory"][0]) == 1
                ax.plot(
                    *cv["theory"],
                    ls=LINESTYLE["theory"],
                    color=st["color"],
                    lw=0.9,
                    alpha=0.9,
                    **({"marker": THEORY_TICK, "ms": 14, "mew": 1.2} if lone else {}),
                )
                (ticked if lone else dashed).add(metric)
                drew_theory.add((cv["mechanism"], metric))
                if cv["theory_exact"] is False:
                    approximate.add(metric)
        ax.set_yscale(panel.get("yscale", fig_cfg.get("yscale", "log")))
        if ax.get_yscale() == "log":
            _log_limits(ax, curves, levels)
            plain_log_ticks(ax)
        ax.set_title(panel.get("title", panel["dataset"]))
        ylabel = panel.get("ylabel", fig_cfg.get("ylabel", METRIC_LABELS.get(metric, metric)))
        if fig_cfg.get("kind", "mean") == "mean" and "[−1, 1]" not in ylabel:
            ylabel += "\n" + RESCALED
        ax.set_ylabel(ylabel)
        if ratio:
            if curves:
                draw_ratio_panel(
                    bottom,
                    {k: (cv["x"], cv["mean"], cv["ci_low"], cv["ci_high"]) for k, cv in curves.items()},
                    {k: cv["style"] for k, cv in curves.items()},
                )
            bottom.set_ylabel("÷ lowest mean")
            ax.tick_params(labelbottom=False)
        if xcol in ("n_users", "n_outputs"):
            ax.set_xscale("log")
        if xcol == "n_outputs":  # label the actual numbers of outputs (3, 5, 7, …)
            ticks = sorted(set(s[xcol].dropna()))
            bottom.set_xticks(ticks, [f"{t:g}" for t in ticks])
            bottom.minorticks_off()
        bottom.set_xlabel(
            {
                "eps": "privacy budget ε",
                "n_users": "number of users n",
                "n_outputs": "number of output values 2m+1",
            }.get(xcol, xcol)
        )
    # the unavailable datasets: compact one-line notices after the real panels
    first_na_row = real_rows
    for j, panel in enumerate(missing):
        ax = fig.add_subplot(grid[first_na_row + j, :])
        not_available_panel(ax, panel.get("title", panel["dataset"]), unavailable[panel["dataset"]])
    extra = []
    notes = sorted({THEORY_NOTE[k] for k in drew_theory if k in THEORY_NOTE})
    notes += sorted(APPROXIMATE_NOTE.get(m, f"{m}: approximate") for m in approximate)
    drawn_as = "dashed" if not ticked else "ticks" if not dashed else "dashed (a tick at a lone x)"
    what = f"{drawn_as}: theory" if approximate else f"{drawn_as}: exact theory"
    theory_key = what + (f" ({'; '.join(notes)})" if notes else "") if drew_theory else ""
    if drew_theory:
        tick = {"marker": THEORY_TICK, "ms": 10} if ticked else {}
        extra.append((Line2D([], [], color="black", ls=LINESTYLE["theory"], lw=0.9, **tick), theory_key))
    if ratio and main_axes:
        extra.append(
            (
                Line2D([], [], color="black", lw=0.8),
                "lower panels: mean ÷ the lowest mean at each x\n(band: 95% CI ÷ the same)",
            )
        )
    shared_legend(fig, main_axes, extra)
    key = f"markers: {repetitions_note(summary, claims)}, band: 95% CI" + (f"; {theory_key}" if drew_theory else "")
    if fig_cfg.get("kind") == "sgd" and xcol == "eps":
        # the paper's group size G = ⌈d ln d/ε²⌉ changes the number of SGD steps with ε (issue 13)
        key += "; the number of SGD steps n/G changes with ε (G = ⌈d ln d/ε²⌉)" + (
            "; dotted: control with a fixed number of steps"
            if "group_rule" in summary and (summary["group_rule"] == "fixed").any()
            else ""
        )
    set_suptitle(fig, f"{title} ({key})" if real else title)
    save_figure(fig, png, svg, claims=claims)
