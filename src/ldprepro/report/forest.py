"""The forest plot of a figure's claims: every point of every claim (``claim_points.parquet``) with
its effect and interval, one panel per claim, the no-effect line, and each point coloured by the side
it favours. It shows at a glance what the claims table condenses into one line: which points carry a
verdict, which are undecided, and which go against the claim.

Ratios (effect scale "ratio …", exact ratios included) are drawn on a log axis around 1; differences
and slopes on a linear axis around 0; exact points as diamonds without an interval, an exact tie at
the reference (``stats.tie_point``); exact values with no declared scale without a reference line.
Colours: the side each point takes in the verdict (``verdicts.point_side``): for the claim, against
it, or undecided. A claim with many points shows its
``MAX_POINTS`` weakest (largest raw p in the claim's favour, every contrary point first) and says so."""

from __future__ import annotations

import os
import textwrap
from collections import defaultdict

import numpy as np
import pandas as pd

from ldprepro.report.plotting import PALETTE, literal_text, plt, save_figure

MAX_POINTS = 30
COLOURS = {"claim": PALETTE["blue"], "against": PALETTE["vermillion"], "none": PALETTE["grey"]}


def _shown(points: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The points drawn for one claim: all, or the MAX_POINTS weakest (contrary points first, then
    undecided ones, then the largest p)."""
    if len(points) <= MAX_POINTS:
        return points, 0
    rank = points["favours"].map({"against": 0, "none": 1}).fillna(2)
    order = points.assign(_rank=rank, _p=points["p_value"].fillna(1.0)).sort_values(
        ["_rank", "_p"], ascending=[True, False], kind="mergesort"
    )
    return order.head(MAX_POINTS).sort_index(), len(points) - MAX_POINTS


def _reference(scales: pd.Series, effects: pd.Series) -> tuple[float | None, bool]:
    """(the no-effect value, whether the axis is a log-scale ratio axis) for a panel whose points
    measure ``scales``: 1 on a log axis when every scale is a ratio (exact ratios included) and
    every effect positive; None — no reference line — when the points are exact values with no
    declared scale (a value compared with a bound, the claim's note says which); else 0 (differences,
    slopes)."""
    words = scales.astype(str)
    if words.str.contains("ratio").all() and bool((effects > 0).all()):
        return 1.0, True
    if (words == "exact value").all():
        return None, False
    return 0.0, False


def _panel(ax, points: pd.DataFrame, title: str) -> None:
    shown, hidden = _shown(points)
    y = np.arange(len(shown))[::-1]
    tested = shown[~shown["exact"].astype(bool)]
    scales = tested if len(tested) else shown
    reference, ratio = _reference(scales["effect_scale"], shown["effect"])
    # the marks of each kind and colour collected first, then drawn in one call each (a call per
    # point made every point four artists, each drawn and measured on its own)
    marks: dict[tuple[str, str], list] = defaultdict(list)  # (kind, colour) -> points
    for yi, r in zip(y, shown.itertuples()):
        colour = COLOURS.get(r.favours, PALETTE["grey"])
        if r.exact or not np.isfinite(r.ci_low):
            marks["D", colour].append((r.effect, yi))
            continue
        # an unbounded (Fieller) upper end is drawn as an arrow one decade (or ten widths) out
        hi = (
            r.ci_high if np.isfinite(r.ci_high) else (r.effect * 10 if ratio else r.effect + 10 * (r.effect - r.ci_low))
        )
        lo = r.ci_low if not ratio or r.ci_low > 0 else r.effect / 10
        marks["interval", colour].append((r.effect, yi, r.effect - lo, hi - r.effect))
        if not np.isfinite(r.ci_high):
            marks[">", colour].append((hi, yi))
        if lo != r.ci_low:  # a lower end of 0 on the log axis: an arrow one decade in
            marks["<", colour].append((lo, yi))
    for (kind, colour), pts in marks.items():
        a = np.array(pts, dtype=float)
        if kind == "interval":
            ax.errorbar(a[:, 0], a[:, 1], xerr=a[:, 2:].T, fmt="o", color=colour, ms=3, capsize=2, lw=1)
        else:
            ax.plot(a[:, 0], a[:, 1], marker=kind, color=colour, ms=4, ls="none")
    if reference is not None:
        ax.axvline(reference, color=PALETTE["black"], lw=0.8, ls="--")
    if ratio:
        from matplotlib.ticker import FuncFormatter, NullFormatter

        ax.set_xscale("log")
        # plain numbers (1.005, not 1.005×10⁰); the minor ticks labelled only within about a decade
        plain = FuncFormatter(lambda v, _: f"{v:g}")
        ends = np.concatenate([shown["effect"], shown["ci_low"], shown["ci_high"]]).astype(float)
        ends = ends[np.isfinite(ends) & (ends > 0)]
        narrow = ends.size and np.log10(ends.max() / ends.min()) <= 1.2
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(plain if narrow else NullFormatter())
    ax.set_yticks(y)
    ax.set_yticklabels([textwrap.shorten(str(p), 38, placeholder="…") for p in shown["point"]], fontsize="x-small")
    scale = scales["effect_scale"].iloc[0] if len(scales) else ""
    levels = sorted({f"{round(100 * v)} %" for v in shown["ci_level"].dropna()})
    ax.set_xlabel(f"{scale}" + (f" ({', '.join(levels)} CI)" if levels else ""), fontsize="small")
    extra = f" — {hidden} more points not drawn (the weakest {MAX_POINTS} shown)" if hidden else ""
    # wrap=True: a long title wraps at the canvas edge (the figure is written uncropped)
    ax.set_title(title + extra, fontsize="small", loc="left", wrap=True)


def draw_forest(
    claims: pd.DataFrame, points: pd.DataFrame, png: str | os.PathLike, svg: str | os.PathLike | None = None
) -> None:
    """One panel per claim with points (claims without points — not testable — are listed in the
    title instead); the verdict heads each panel."""
    with_points = [c for c in claims.itertuples() if (points["claim_id"] == c.claim_id).any()]
    heights = [0.9 + 0.16 * min(MAX_POINTS, int((points["claim_id"] == c.claim_id).sum())) for c in with_points]
    fig, axes = plt.subplots(
        max(1, len(with_points)),
        1,
        figsize=(7.5, max(1.5, sum(heights) + 0.4)),
        squeeze=False,
        gridspec_kw={"height_ratios": heights or [1]},
    )
    if not with_points:
        axes[0, 0].axis("off")
        axes[0, 0].text(
            0.0, 0.5, "no claim of this figure was decided on points (see its claims table)", fontsize="small"
        )
    for ax, c in zip(axes[:, 0], with_points):
        role = "" if c.data_role == "paper" else f" [{c.data_role} data]"
        _panel(ax, points[points["claim_id"] == c.claim_id], f"{c.verdict.upper()}: {c.claim}{role}")
    literal_text(fig)  # before the layout measures the texts (declared claims: never mathtext)
    fig.tight_layout()  # fits the panels to the canvas: written uncropped (one text-measuring pass less)
    save_figure(fig, png, svg, crop=False)
