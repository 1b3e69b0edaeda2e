"""Benchmark figures: the winner map (ε × dataset, coloured by the best LDP mechanism, ties
annotated) and the ratio of every mechanism's MSE to the cell's best (log scale)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ldprepro.benchmark.tables import TASK_TITLES
from ldprepro.report.plotting import ORACLE_STYLE, plt, save_figure, set_suptitle, shared_legend, style

#: colours for mechanisms that share a hue in the per-paper figures but meet in the benchmark
#: (Harmony and PM-OPT are both sky blue there, DCT and PM-SUB both reddish purple): Paul Tol's
#: olive for Harmony, black for DCT (not LDP; also drawn hollow).
BENCHMARK_COLOURS = {"harmony": "#999933", "dct": "#000000"}


def bench_style(name: str) -> dict:
    """:func:`ldprepro.report.plotting.style` with the benchmark's colour overrides (and the
    frequency oracles' own styles)."""
    if name in ORACLE_STYLE:
        label, colour, marker = ORACLE_STYLE[name]
        return {"label": label, "color": colour, "marker": marker, "ls": "-", "mfc": colour}
    st = style(name)
    if name in BENCHMARK_COLOURS:
        st["color"] = BENCHMARK_COLOURS[name]
        st["mfc"] = st["color"]
    return st


def _winner_patch(ax, i: int, j: int, best: str, n_tied: int) -> dict:
    """Fill cell (row i, column j) of a winner map in ``best``'s colour, hatched when others tie with
    it; returns ``best``'s style (its colour and label)."""
    st = bench_style(best) if best else {"color": "#ffffff", "label": "none LDP"}
    ax.add_patch(
        plt.Rectangle(
            (j - 0.5, i - 0.5),
            1,
            1,
            facecolor=to_rgba(st["color"], 0.75),
            edgecolor="white",
            hatch="//" if n_tied else None,
            lw=1.5,
        )
    )
    return st


def plot_winner_map(win: pd.DataFrame, task: str, png, svg=None) -> None:
    """One cell per (dataset, ε): filled with the best mechanism's colour; the text names it and,
    where the paired tests could not separate others from it, "+ n tied" (hatched)."""
    w = win[win["task"] == task]
    datasets = sorted(w["dataset"].unique())
    eps = sorted(w["eps"].unique())
    fig, ax = plt.subplots(figsize=(1.2 * len(eps) + 3.0, 0.55 * len(datasets) + 1.6), layout="constrained")
    used = {}
    for r in w.itertuples(index=False):
        i, j = datasets.index(r.dataset), eps.index(r.eps)
        n_tied = len([t for t in r.tied.split(",") if t])
        st = _winner_patch(ax, i, j, r.best, n_tied)
        used[r.best] = st
        text = st["label"].split(" (")[0] + (f"\n+{n_tied} tied" if n_tied else "")
        ax.text(j, i, text, ha="center", va="center", fontsize="x-small")
    ax.set_xlim(-0.5, len(eps) - 0.5)
    ax.set_ylim(len(datasets) - 0.5, -0.5)
    ax.set_xticks(range(len(eps)), [f"{e:g}" for e in eps])
    ax.set_yticks(range(len(datasets)), datasets)
    ax.set_xlabel("ε")
    ax.grid(False)
    handles = [Patch(facecolor=to_rgba(st["color"], 0.75), label=st["label"]) for st in used.values()]
    handles.append(
        Patch(facecolor="white", edgecolor="grey", hatch="//", label="tied: not separated (paired test, Holm)")
    )
    fig.legend(handles=handles, loc="outside right center")
    set_suptitle(fig, f"Benchmark — {TASK_TITLES.get(task, task)}: best ε-LDP mechanism per cell")
    save_figure(fig, png, svg)


def plot_ratio_to_best(ranked: pd.DataFrame, task: str, png, svg=None, cap: float = 100.0) -> None:
    """Per dataset: MSE / the cell's best LDP MSE against ε, with the paired 95% CI; mechanisms that
    are not LDP at an ε are drawn hollow and grey-edged there (they never define the best)."""
    r = ranked[ranked["task"] == task]
    datasets = sorted(r["dataset"].unique())
    ncol = min(3, len(datasets))
    nrow = math.ceil(len(datasets) / ncol)
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(4.2 * ncol, 3.0 * nrow), squeeze=False, layout="constrained", sharey=True
    )
    for ax, ds in zip(axes.flat, datasets):
        g = r[r["dataset"] == ds]
        for mech, m in g.groupby("mechanism", sort=True):
            m = m.sort_values("eps")
            st = bench_style(mech)
            y = np.clip(m["ratio_to_best"].to_numpy(), None, cap)
            ax.plot(m["eps"], y, color=st["color"], marker=st["marker"], ls=st["ls"], ms=3, label=st["label"])
            ax.fill_between(
                m["eps"],
                np.clip(m["ci_low"], None, cap),
                np.clip(m["ci_high"], None, cap),
                color=st["color"],
                alpha=0.1,
                lw=0,
            )
            bad = ~m["ldp"].to_numpy()
            if bad.any():
                ax.plot(m["eps"][bad], y[bad], ls="none", marker=st["marker"], mfc="white", mec="black", ms=5)
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(ds, fontsize="small")
        ax.set_xlabel("ε")
    for ax in axes.flat[len(datasets) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"error / best LDP error (capped at {cap:g})")
    shared_legend(
        fig,
        list(axes.flat),
        extra=[
            (
                Line2D([], [], ls="none", marker="o", mfc="white", mec="black"),
                "not LDP or law unverifiable at this ε (never best)",
            )
        ],
    )
    set_suptitle(fig, f"Benchmark — {TASK_TITLES.get(task, task)}: ratio to the best ε-LDP mechanism")
    save_figure(fig, png, svg)


def _is_plane(dataset: str) -> bool:
    return ", k = " in dataset


def _plane_key(dataset: str) -> tuple[str, int]:
    dist, k = dataset.rsplit(", k = ", 1)
    return dist, int(k)


def _winner_cells(ax, cells, rows: list, cols: list) -> dict:
    """Fill a (row, ε) grid of winners; ``cells``: (row, ε, best, tied names) tuples."""
    used = {}
    for row, eps, best, tied in cells:
        i, j = rows.index(row), cols.index(eps)
        st = _winner_patch(ax, i, j, best, len(tied))
        used[best] = st
        ax.text(j, i, st["label"] + (f"\n+{len(tied)}" if tied else ""), ha="center", va="center", fontsize="x-small")
    ax.set_xlim(-0.5, len(cols) - 0.5)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xticks(range(len(cols)), [f"{e:g}" for e in cols])
    ax.set_yticks(range(len(rows)), [str(r) for r in rows])
    ax.set_xlabel("ε")
    ax.set_ylabel("k")
    ax.grid(False)
    return used


def plot_plane(win: pd.DataFrame, exact_win: pd.DataFrame, png, svg=None) -> None:
    """The (k, ε) plane: per synthetic distribution the measured winner (paired test, Holm; "+n": tied
    with n others, hatched), and the exact winner from the closed-form variances at true count 0
    ("+n": n others with the same variance)."""
    w = win[(win["task"] == "frequency") & win["dataset"].map(_is_plane)]
    dists = sorted({_plane_key(d)[0] for d in w["dataset"]})
    fig, axes = plt.subplots(
        1, len(dists) + 1, figsize=(4.6 * (len(dists) + 1) + 1.5, 3.6), squeeze=False, layout="constrained"
    )
    used = {}
    for ax, dist in zip(axes[0], dists):
        sub = w[w["dataset"].map(lambda d, dist=dist: _plane_key(d)[0] == dist)]
        ks = sorted({_plane_key(d)[1] for d in sub["dataset"]})
        cells = [
            (_plane_key(r.dataset)[1], r.eps, r.best, [t for t in r.tied.split(",") if t])
            for r in sub.itertuples(index=False)
        ]
        used |= _winner_cells(ax, cells, ks, sorted(sub["eps"].unique()))
        ax.set_title(f"measured: {dist}", fontsize="small")
    ax = axes[0][-1]
    ks, eps = sorted(exact_win["k"].unique()), sorted(exact_win["eps"].unique())
    cells = []
    for r in exact_win.itertuples(index=False):
        names = r.winners.split(",")
        cells.append((r.k, r.eps, names[0], names[1:]))
    used |= _winner_cells(ax, cells, ks, eps)
    ax.set_title("exact: variance at true count 0", fontsize="small")
    handles = [Patch(facecolor=to_rgba(st["color"], 0.75), label=st["label"]) for st in used.values()]
    handles.append(Patch(facecolor="white", edgecolor="grey", hatch="//", label="+n: tied with n others"))
    fig.legend(handles=handles, loc="outside right center")
    set_suptitle(fig, "Benchmark — frequency oracles on the (k, ε) plane: best oracle per cell")
    save_figure(fig, png, svg)


#: how the plane's exact expectation is drawn: a thin dashed line over k, or with one k (a line
#: through one point draws nothing) a horizontal tick at the value; the legend shows the one drawn
EXACT_LINE = {"ls": (0, (4, 2)), "lw": 0.8}
EXACT_TICK = {"ls": "none", "marker": "_", "ms": 12, "mew": 1.2}


def plot_plane_theory(results: pd.DataFrame, png, svg=None) -> None:
    """Measured mean squared error (markers, the mean over repetitions) beside its exact expectation
    (``sq_error_theory``: a thin dashed line; with one k a horizontal tick) against k, one panel per
    (distribution, ε)."""
    r = results[(results["task"] == "frequency") & results["dataset"].map(_is_plane)].copy()
    r[["dist", "kk"]] = r["dataset"].map(_plane_key).tolist()
    exact, drawn = (EXACT_LINE, "dashed") if r["kk"].nunique() > 1 else (EXACT_TICK, "horizontal ticks")
    dists, eps = sorted(r["dist"].unique()), sorted(r["eps"].unique())
    fig, axes = plt.subplots(
        len(dists),
        len(eps),
        figsize=(2.6 * len(eps) + 1.8, 2.5 * len(dists) + 0.6),
        squeeze=False,
        layout="constrained",
        sharex=True,
    )
    for i, dist in enumerate(dists):
        for j, e in enumerate(eps):
            ax = axes[i][j]
            g = r[(r["dist"] == dist) & (r["eps"] == e)]
            for mech, m in g.groupby("mechanism", sort=True):
                st = bench_style(mech)
                meas = m[m["metric"] == "sq_error"].groupby("kk")["value"].mean()
                theo = m[m["metric"] == "sq_error_theory"].groupby("kk")["value"].first()
                ax.plot(theo.index, theo.to_numpy(), color=st["color"], **exact)
                ax.plot(
                    meas.index,
                    meas.to_numpy(),
                    color=st["color"],
                    marker=st["marker"],
                    ls="none",
                    ms=3,
                    label=st["label"],
                )
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{dist}, ε = {e:g}", fontsize="x-small")
            if i == len(dists) - 1:
                ax.set_xlabel("k")
        axes[i][0].set_ylabel("MSE of the frequencies")
    shared_legend(fig, list(axes.flat), extra=[(Line2D([], [], color="grey", **exact), "exact expectation")])
    set_suptitle(fig, f"Benchmark — frequency oracles: measured MSE (markers) and its exact expectation ({drawn})")
    save_figure(fig, png, svg)
