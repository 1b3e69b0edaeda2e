"""The plots of the ``histogram`` experiment kind (ldprepro.experiments.kinds.histogram), by name
(the entry's ``plot``): ``values`` (the published vs true histograms of one panel, paper 001's
Figs. 1–3), ``mse_eps`` (MSE vs ε, Fig. 4) and ``mse_ratio`` (MSE vs the sampling ratio r, the
baseline as a flat line, Fig. 5); one panel per dataset with data, the unavailable ones as one-line
notices "not available: <reason>"."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the collector that uploads every bit (drawn without a ratio; a flat line against r)
BASELINE = "split_baseline"


def panel_title(panel: dict, card: dict | None, n_users: int | None) -> str:
    title = panel.get("title", panel["dataset"])
    if card and card.get("sample"):
        title += "\nSAMPLE, not the paper's full data"
    if n_users:
        title += f" (n = {n_users:,})"
    return title


def _curve_style(mechanism: str, r: float, ratios: list[float]):
    from ldprepro.report.plotting import style

    st = style(mechanism)
    label = st["label"] if mechanism == BASELINE else f"{st['label']}, r = {r:g}"
    ls = "-"
    if mechanism != BASELINE and len(ratios) > 1 and r != max(ratios):
        ls = "--"
    return {**st, "label": label, "ls": ls}


def plot_mse_figure(
    summary: pd.DataFrame,
    fig_cfg: dict,
    cards: dict,
    unavailable: dict,
    title: str,
    png,
    svg=None,
    claims=None,
) -> None:
    """Fig. 4 (x = ε) or Fig. 5 (x = r, baseline as a flat reference line): one panel per city with
    data, then the unavailable cities as one-line notices; one legend right of the panels."""
    import matplotlib.pyplot as plt

    from ldprepro.report.plotting import not_available_panel, save_figure, set_suptitle, shared_legend

    x = "eps" if fig_cfg["plot"] == "mse_eps" else "r"
    names = [p for p in fig_cfg["panels"] if p["dataset"] not in unavailable]
    missing = [p for p in fig_cfg["panels"] if p["dataset"] in unavailable]
    ncols = max(1, len(names) or len(missing))
    heights = ([4.0] if names else []) + [0.22] * len(missing)  # one full-width line per missing city
    fig = plt.figure(figsize=(4.8 * ncols, sum(heights) + 0.8), layout="constrained")
    grid = fig.add_gridspec(len(heights), ncols, height_ratios=heights)
    s = summary[(summary["metric"].isin(["mse", "mse_theory"])) & (summary["query"] == 0)] if len(summary) else summary
    ratios = [float(r) for r in fig_cfg["ratios"]]
    axes, drew_theory = [], False
    for i, city in enumerate(names):
        ax = fig.add_subplot(grid[0, i])
        axes.append(ax)
        ds = city["dataset"]
        g = s[s["dataset"] == ds]
        n_users = int(g["n_users"].iloc[0]) if len(g) else None
        keys = ["mechanism", "r"] if x == "eps" else ["mechanism"]
        order = {m: i for i, m in enumerate(fig_cfg["mechanisms"])}
        groups = sorted(g.groupby(keys), key=lambda kv: (order.get(kv[0][0], 99), -kv[1]["r"].iloc[0]))
        for key, c in groups:
            mech, r = key[0], float(c["r"].iloc[0])
            st = _curve_style(mech, r if x == "eps" else max(ratios), ratios)
            if x == "r" and mech != BASELINE:
                st["label"] = st["label"].split(",")[0]
            meas = c[c["metric"] == "mse"].sort_values(x)
            theory = c[c["metric"] == "mse_theory"].sort_values(x)
            if x == "r" and mech == BASELINE:
                ax.axhline(float(meas["mean"].iloc[0]), color=st["color"], label=f"{st['label']}, every bit uploaded")
                ax.axhspan(float(meas["ci_low"].iloc[0]), float(meas["ci_high"].iloc[0]), color=st["color"], alpha=0.15)
                continue
            ax.plot(
                meas[x],
                meas["mean"],
                marker=st["marker"],
                mfc=st["mfc"],
                color=st["color"],
                ls=st["ls"],
                label=st["label"],
            )
            ax.fill_between(
                meas[x],
                meas["ci_low"].clip(lower=meas["mean"] * 1e-3),
                meas["ci_high"],
                color=st["color"],
                alpha=0.15,
                lw=0,
            )
            if len(theory):
                ax.plot(theory[x], theory["mean"], ls=":", color=st["color"], lw=0.9, alpha=0.9)
                drew_theory = True
        ax.set_yscale("log")
        ax.set_title(panel_title(city, cards.get(ds), n_users))
        ax.set_xlabel("total privacy budget ε" if x == "eps" else "sampling ratio r")
        unit = g["unit"].iloc[0] if len(g) else "frequency"
        ax.set_ylabel(f"MSE of the consumers' histograms ({unit})")
    for j, city in enumerate(missing):
        not_available_panel(
            fig.add_subplot(grid[len(heights) - len(missing) + j, :]),
            city.get("title", city["dataset"]),
            unavailable[city["dataset"]],
        )
    shared_legend(fig, axes)
    key = "markers: mean of the runs with 95% CI band" + ("; dotted: Lemma 6 theory" if drew_theory else "")
    set_suptitle(fig, f"{title} ({key})")
    save_figure(fig, png, svg, claims=claims)


def _edge_labels(m: int) -> list[str]:
    """Labels for the m + 1 bin edges of an m-fold query, as fractions of [v_min, v_max] (every other
    one when there are more than 6 bins, so they stay horizontal and legible)."""
    edges = np.linspace(0, 1, m + 1)
    every = 1 if m <= 6 else 2
    return [f"{e:.2g}" if k % every == 0 or k == m else "" for k, e in enumerate(edges)]


def plot_values_figure(
    summary: pd.DataFrame,
    fig_cfg: dict,
    cards: dict,
    unavailable: dict,
    title: str,
    png,
    svg=None,
    claims=None,
) -> None:
    """Figs. 1–3: per query (panel), the true histogram and each method's published histogram (mean
    over the runs, error bar ± 1 sd of one publication)."""
    import matplotlib.pyplot as plt

    from ldprepro.report.plotting import not_available_panel, save_figure, set_suptitle, shared_legend

    (city,) = fig_cfg["panels"]
    ds = city["dataset"]
    folds = sorted({int(q) for q in summary.loc[summary["metric"] == "estimate", "query"]}) if len(summary) else []
    if ds in unavailable or not folds:
        fig, ax = plt.subplots(figsize=(6.0, 0.8), layout="constrained")
        not_available_panel(ax, city.get("title", ds), unavailable.get(ds, "no results"))
        set_suptitle(fig, title)
        save_figure(fig, png, svg, claims=claims)
        return
    ncols = len(folds)
    fig, axes = plt.subplots(
        2,
        ncols,
        figsize=(4.8 * ncols, 6.6),
        squeeze=False,
        sharex="col",
        gridspec_kw={"height_ratios": [3, 2]},
        layout="constrained",
    )
    est = summary[summary["metric"] == "estimate"]
    tru = summary[summary["metric"] == "truth"]
    n_users = int(est["n_users"].iloc[0])
    curves = list(est.groupby(["mechanism", "r"], sort=False).groups)
    order = {m: i for i, m in enumerate(fig_cfg["mechanisms"])}
    curves.sort(key=lambda k: (order.get(k[0], 99), -k[1]))
    ratios = sorted({float(r) for mech, r in curves if mech != BASELINE})
    width = 0.8 / (len(curves) + 1)
    unit = "frequency" if est["unit"].iloc[0] == "frequency" else "count"
    for ax, err_ax, m in zip(axes[0], axes[1], folds):
        t = tru[tru["query"] == m].groupby("bin")["mean"].first().sort_index()
        bins = t.index.to_numpy()
        ax.bar(
            bins - 0.4 + width / 2, t.to_numpy(), width, color="white", edgecolor="black", lw=0.8, label="ground truth"
        )
        for k, (mech, r) in enumerate(curves):
            e = est[(est["query"] == m) & (est["mechanism"] == mech) & (est["r"] == r)].sort_values("bin")
            vals = e["mean"].to_numpy()
            if fig_cfg.get("clip_for_plot", False):
                vals = np.clip(vals, 0, None)
            st = _curve_style(mech, r, ratios)
            # the smaller sampling ratio of a method: hatched bars in the method's colour
            hatch = "///" if st["ls"] != "-" else None
            pos = e["bin"].to_numpy() - 0.4 + width * (k + 1.5)
            for a, y in ((ax, vals), (err_ax, e["mean"].to_numpy() - t.reindex(e["bin"]).to_numpy())):
                a.bar(
                    pos,
                    y,
                    width,
                    yerr=e["std"].to_numpy(),
                    color=st["color"],
                    alpha=0.85,
                    hatch=hatch,
                    edgecolor="white" if hatch else None,
                    lw=0,
                    label=st["label"] if a is ax else None,
                    error_kw={"lw": 0.7, "capsize": 1.5},
                )
        for a in (ax, err_ax):
            a.set_xticks(np.arange(m + 1) - 0.5, _edge_labels(m))
            a.set_xlim(-0.5, m - 0.5)
            a.axhline(0, color="black", lw=0.5)
            a.grid(False, axis="x")
        ax.set_title(f"{m}-fold query ({m} salary bins)")
        ax.tick_params(labelbottom=False)
        ax.set_ylabel(unit)
        err_ax.set_ylabel(f"published − true ({unit})")
        err_ax.set_xlabel("salary, as a fraction of [v_min, v_max]")
    shared_legend(fig, axes[0])
    eps = ", ".join(f"{e:g}" for e in sorted(est["eps"].unique()))
    set_suptitle(
        fig,
        f"{title} — {panel_title(city, cards.get(ds), n_users).replace(chr(10), ' — ')}; ε = {eps}; "
        f"bars: mean of {int(est['n'].max())} runs, error bars ± 1 sd of one publication; "
        "lower row: error of the mean published histogram",
    )
    save_figure(fig, png, svg, claims=claims)
