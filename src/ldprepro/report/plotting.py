"""Figure conventions shared by every paper: one style file (``ldprepro.mplstyle``, applied here on
import), one colour-blind-safe palette with a fixed colour and marker per mechanism, line styles that
tell variants of one method apart, legends outside the data area, compact "not available" panels,
ratio-to-best panels, and atomic PNG + SVG output.

Palette: Okabe & Ito, "Color Universal Design" (2008), plus Paul Tol's indigo; no two mechanisms drawn
in one figure share a hue (tests/test_plotting.py checks the CIELAB distance of every pair)."""

from __future__ import annotations

import importlib
import os
import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.layout_engine import PlaceHolderLayoutEngine  # noqa: E402
from matplotlib.ticker import Formatter  # noqa: E402

from ldprepro.pipeline.io import atomic_path  # noqa: E402

STYLE_FILE = Path(__file__).with_name("ldprepro.mplstyle")

#: Okabe–Ito colours (black, orange, sky blue, bluish green, blue, vermillion, reddish purple) and
#: Paul Tol's indigo and a neutral grey.
PALETTE = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "indigo": "#332288",
    "grey": "#7F7F7F",
}

#: name -> (label, colour, marker); the same in every figure of every paper. Variants of a method
#: (``<m>_at_level``, ``<m>_disc``, ``em_converged``, HierA unclipped) keep the base method's colour
#: and marker and differ in line style and marker fill (see ``style``).
MECHANISM_STYLE: dict[str, tuple[str, str, str]] = {
    "laplace": ("Laplace", PALETTE["grey"], "x"),
    "duchi": ("Duchi et al.", PALETTE["blue"], "o"),
    "pm": ("PM", PALETTE["orange"], "s"),
    "hm": ("HM", PALETTE["green"], "^"),
    "three_outputs": ("Three-Outputs", PALETTE["vermillion"], "D"),
    "pm_opt": ("PM-OPT", PALETTE["sky_blue"], "P"),
    "pm_sub": ("PM-SUB", PALETTE["purple"], "*"),
    "hm_tp": ("HM-TP", PALETTE["indigo"], "h"),
    "non_private": ("non-private", PALETTE["black"], ""),
    # HierA paper (hiera, harmony, pm, graded_laplace and the budget-matched references)
    "hiera": ("HierA", PALETTE["vermillion"], "p"),
    "harmony": ("Harmony", PALETTE["sky_blue"], "v"),
    "graded_laplace": ("graded Laplace (not LDP)", PALETTE["green"], ">"),
    "harmony_at_level": ("Harmony at the level budget (ours)", PALETTE["sky_blue"], "v"),
    "pm_at_level": ("PM at the level budget (ours)", PALETTE["orange"], "s"),
    # DCT paper
    "dct": ("DCT (not LDP)", PALETTE["purple"], "<"),
    # RR-LDP / LREMH paper
    "em": ("EM", PALETTE["blue"], "o"),
    "em_converged": ("EM run to convergence", PALETTE["blue"], "o"),
    "lasso": ("LASSO", PALETTE["orange"], "s"),
    "lremh": ("LREMH", PALETTE["green"], "^"),
    "lremh_converged": ("LREMH, EM run to convergence", PALETTE["green"], "^"),
    "em_lopub": ("EM, LoPub's stopping rule", PALETTE["blue"], "o"),
    "lremh_lopub": ("LREMH, LoPub's stopping rule", PALETTE["green"], "^"),
    # BSHP paper
    "split_baseline": ("baseline (ε/m per query)", PALETTE["grey"], "o"),
    "bshp": ("BSHP", PALETTE["blue"], "s"),
    "wshp": ("WSHP", PALETTE["vermillion"], "^"),
}

#: (colour, marker) of the mechanisms registered by plugins (config.yaml ``mechanism_plugins``),
#: given in registration order and cycling after five: colours at CIE76 ΔE ≥ 25 from every colour
#: above (the benchmark's overrides included) and from each other (tests/test_plotting.py), so a
#: plugin is never drawn like a built-in mechanism; markers that no entry above uses.
PLUGIN_STYLES: tuple[tuple[str, str], ...] = (
    ("#882255", "d"),  # Paul Tol's wine
    ("#8C510A", "X"),  # brown
    ("#EE6677", "8"),  # Paul Tol's red
    ("#A6D854", "H"),  # light green
    ("#661100", "+"),  # dark brown
)
#: the style of a name that is neither above nor registered
UNKNOWN_STYLE = ("#555555", ".")
#: the frequency oracles (only ever drawn among themselves): label, Okabe–Ito / Tol colour, marker
ORACLE_STYLE = {
    "grr": ("GRR", "#D55E00", "o"),
    "sue": ("SUE", "#56B4E9", "v"),
    "oue": ("OUE", "#0072B2", "s"),
    "olh": ("OLH", "#009E73", "^"),
    "blh": ("BLH", "#999933", "<"),
    "ss": ("SS", "#CC79A7", "D"),
    "hr": ("HR", "#E69F00", "P"),
}

#: line style per kind of curve: the measured method, and its variants (same colour and marker)
LINESTYLE = {
    "base": "-",
    "at_level": "-.",  # a budget-matched reference: dash-dot, hollow markers
    "discretised": ":",  # the discretised post-processing (Zhao et al. Alg. 5)
    "converged": "--",  # EM run to convergence: dashed, hollow markers
    "lopub": ":",  # EM stopped by LoPub's |Δ max θ| rule (paper 004's alternative reading; not drawn there)
    "unclipped": "--",  # HierA without clipping
    "theory": (0, (4, 2)),  # an exact closed form: thin dashes, no markers
}
#: minimum CIELAB (CIE76) distance between the colours of two mechanisms drawn in one figure
MIN_COLOUR_DISTANCE = 25.0
#: longest "not available" reason shown in a figure (the full one is in the claims and the report)
NA_REASON_CHARS = 70
#: the verdict badges' size, relative to the style's font.size
BADGE_FONTSIZE = "small"


def use_style() -> None:
    """Apply the project's matplotlib style (ldprepro.mplstyle) to every figure drawn after it."""
    plt.style.use(STYLE_FILE)


use_style()


def registered_style(name: str) -> tuple[str, str, str] | None:
    """(label, colour, marker) of a mechanism registered outside :data:`MECHANISM_STYLE` (a plugin):
    the ``label=`` it was registered with, and the k-th entry of :data:`PLUGIN_STYLES` for the k-th
    such mechanism in registration order (the order of ``mechanism_plugins``, so the same in every
    figure of a run). None when ``name`` is not registered."""
    # imported by name, and only for a name outside the table: the figures of the built-in
    # mechanisms need no registry (and their code fingerprint does not follow it)
    info = importlib.import_module("ldprepro.domain.mechanisms").MECHANISM_INFO
    if name not in info:
        return None
    plugins = [n for n in info if n not in MECHANISM_STYLE]
    colour, marker = PLUGIN_STYLES[plugins.index(name) % len(PLUGIN_STYLES)]
    return info[name].label, colour, marker


def style(name: str) -> dict:
    """matplotlib keyword arguments (label, color, marker, ls, mfc) for mechanism ``name``: from
    :data:`MECHANISM_STYLE` (a frequency oracle: :data:`ORACLE_STYLE`), else (a plugin) its registered label and a plugin colour
    (:func:`registered_style`), else the name itself in a neutral grey. ``<m>_disc`` and
    ``<m>_at_level`` are drawn in ``<m>``'s colour with a dotted line, resp. a dash-dot line and
    hollow markers."""
    base = name[: -len("_disc")] if name.endswith("_disc") else name
    label, colour, marker = (
        MECHANISM_STYLE.get(base) or ORACLE_STYLE.get(base) or registered_style(base) or (base, *UNKNOWN_STYLE)
    )
    ls, mfc = LINESTYLE["base"], colour
    if name.endswith("_disc"):
        label += " (discretised)"
        ls = LINESTYLE["discretised"]
    if base.endswith("_at_level"):
        ls, mfc = LINESTYLE["at_level"], "none"
    if base.endswith("_converged"):
        ls, mfc = LINESTYLE["converged"], "none"
    if base.endswith("_lopub"):
        ls, mfc = LINESTYLE["lopub"], "none"
    return {"label": label, "color": colour, "marker": marker, "ls": ls, "mfc": mfc}


def variant(st: dict, *, clip=None, discretize=None) -> dict:
    """``st`` restyled for a variant of the same method: unclipped (dashed) or discretised
    (dotted); the colour and marker stay the method's."""
    st = dict(st)
    if clip is not None and not bool(clip):
        st["ls"] = LINESTYLE["unclipped"]
    if discretize is not None:
        st["ls"] = LINESTYLE["discretised"]
    return st


def short_reason(reason: str, limit: int = NA_REASON_CHARS) -> str:
    """First sentence/clause of ``reason`` on one line, cut at a word boundary with "…"."""
    text = " ".join(str(reason).split())
    for sep in (". ", "; ", " ("):
        head = text.split(sep)[0]
        if 12 <= len(head) < len(text):
            text = head
            break
    return textwrap.shorten(text, width=limit, placeholder=" …")


def not_available_panel(ax, title: str, reason: str) -> None:
    """Turn ``ax`` into a one-line notice "<title> — not available: <short reason>" (the full reason
    stays in the claims table and the report)."""
    # the notice may run past a narrow panel: it must not shrink the real panels (constrained layout)
    ax.text(
        0.0,
        0.5,
        f"{title} — not available: {short_reason(reason)}",
        ha="left",
        va="center",
        transform=ax.transAxes,
        fontsize="small",
        color="#8b0000",
        clip_on=False,
    ).set_in_layout(False)
    ax.set_gid(f"not available: {title}")
    ax.set_axis_off()


def plain_log_ticks(ax, axis: str = "y") -> None:
    """On a log axis spanning less than two decades, label ticks as plain numbers (0.8, 1, 2), not
    as 8×10⁻¹."""
    from matplotlib.ticker import FuncFormatter

    lo, hi = ax.get_ylim() if axis == "y" else ax.get_xlim()
    if lo > 0 and hi / lo < 100:
        target = ax.yaxis if axis == "y" else ax.xaxis
        fmt = FuncFormatter(lambda v, _: f"{v:.3g}")
        target.set_major_formatter(fmt)
        target.set_minor_formatter(fmt)


def set_suptitle(fig, text: str) -> None:
    """Figure title wrapped to the figure's width (no text runs past the panels)."""
    width = max(40, int(fig.get_figwidth() * 72 / (0.55 * plt.rcParams["figure.titlesize"])))
    fig.suptitle("\n".join(textwrap.wrap(text, width=width)))


def shared_legend(fig, axes, extra=(), where: str = "right") -> None:
    """One legend for the whole figure, outside the data area (right of or below the panels), with
    each label once, in the order first drawn; ``extra``: (handle, label) pairs appended."""
    seen: dict[str, object] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab and not lab.startswith("_") and lab not in seen:
                seen[lab] = h
    for h, lab in extra:
        seen.setdefault(lab, h)
    if not seen:
        return
    constrained = type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    if constrained:
        fig.legend(
            list(seen.values()),
            list(seen),
            loc="outside lower center" if where == "below" else "outside right center",
            ncol=max(1, min(len(seen), int(fig.get_figwidth() // 2.4))) if where == "below" else 1,
        )
    elif where == "below":
        ncol = max(1, min(len(seen), int(fig.get_figwidth() // 2.4)))
        fig.legend(list(seen.values()), list(seen), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol)
    else:
        fig.legend(list(seen.values()), list(seen), loc="center left", bbox_to_anchor=(1.0, 0.5))


def ratio_to_best(curves: dict) -> tuple[dict, np.ndarray]:
    """Ratio-to-best curves from summary means. ``curves``: key -> (x, mean, ci_low, ci_high) arrays.
    Best = the lowest mean at each x among the curves; returns key -> (x, ratio, low, high) (the CI
    bounds divided by the same best mean) and the sorted x grid."""
    xs = np.unique(np.concatenate([np.asarray(c[0], dtype=float) for c in curves.values()]))
    best = np.full(len(xs), np.inf)
    for x, m, *_ in curves.values():
        idx = np.searchsorted(xs, np.asarray(x, dtype=float))
        np.minimum.at(best, idx, np.asarray(m, dtype=float))
    out = {}
    for key, (x, m, lo, hi) in curves.items():
        b = best[np.searchsorted(xs, np.asarray(x, dtype=float))]
        out[key] = (np.asarray(x, dtype=float), np.asarray(m) / b, np.asarray(lo) / b, np.asarray(hi) / b)
    return out, xs


def curves_overlap(curves: dict, factor: float = 1.5, share: float = 0.5) -> bool:
    """True when two curves lie within ``factor`` of each other at at least ``share`` of the x values
    they share (a log axis cannot separate them there: the figure gets a ratio-to-best panel)."""
    items = [(np.asarray(x, dtype=float), np.asarray(m, dtype=float)) for x, m, *_ in curves.values()]
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            (xa, ma), (xb, mb) = items[i], items[j]
            common, ia, ib = np.intersect1d(xa, xb, return_indices=True)
            if len(common) and np.mean(np.maximum(ma[ia], mb[ib]) <= factor * np.minimum(ma[ia], mb[ib])) >= share:
                return True
    return False


def draw_ratio_panel(ax, curves: dict, styles: dict, cap: float = 3.0) -> None:
    """Each curve divided by the best (lowest) mean at each x, with its CI band; y from 1 up to the
    largest ratio below ``cap`` (curves beyond it leave the panel)."""
    ratios, _ = ratio_to_best(curves)
    top = 1.0
    for key, (x, r, lo, hi) in ratios.items():
        st = styles[key]
        ax.plot(x, r, color=st["color"], ls=st.get("ls", "-"), marker=st.get("marker"), mfc=st.get("mfc"), ms=3)
        ax.fill_between(x, lo, hi, color=st["color"], alpha=0.08, lw=0)
        finite = r[np.isfinite(r) & (r <= cap)]
        top = max(top, float(finite.max()) if len(finite) else top)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_ylim(0.97, min(cap, top * 1.08) if top > 1.0 else 1.1)


#: resolution of the PNG files (the SVGs are vector)
SAVE_DPI = 150


class _LiteralTicks(Formatter):
    """A formatter of declared tick labels (fixed labels, category names) whose ``$`` are drawn
    as written (``\\$``: mathtext's literal dollar)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def __call__(self, x, pos=None):
        return str(self.inner(x, pos)).replace("$", "\\$")

    def set_axis(self, axis):
        super().set_axis(axis)
        self.inner.set_axis(axis)

    def set_locs(self, locs):
        super().set_locs(locs)
        self.inner.set_locs(locs)


def literal_text(fig) -> None:
    """Every text of ``fig`` drawn as written, never as mathtext (issue 54 item 2): titles, panel
    titles, axis labels, legend entries, badges, notes and declared tick labels carry declared text
    (a title or a mechanism label with ``$…$`` was typeset as math, and an unbalanced one stopped
    the render). Numeric tick labels and the axes' offset text are left to their formatters (log
    axes write ``$\\mathdefault{10^{-3}}$``); no text of ours uses mathtext. Call it before a layout
    measures the texts (:func:`save_figure` does)."""
    from matplotlib.category import StrCategoryFormatter
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    formatted = set()
    for ax in fig.axes:
        for axis in ax._axis_map.values():
            for which in ("major", "minor"):
                fmt = getattr(axis, f"get_{which}_formatter")()
                # set_ticks(labels=...) gives a FuncFormatter; no formatter of ours writes mathtext
                if isinstance(fmt, FixedFormatter | FuncFormatter | StrCategoryFormatter):
                    getattr(axis, f"set_{which}_formatter")(_LiteralTicks(fmt))
            formatted.update(map(id, axis.get_ticklabels(which="both")))
            formatted.add(id(axis.get_offset_text()))
    for text in fig.findobj(Text):
        if id(text) in formatted:
            continue
        if text.get_wrap():  # matplotlib wraps by measuring mathtext whatever parse_math says
            text.set_text(re.sub(r"(?<!\\)\$", r"\\$", text.get_text()))
        else:
            text.set_parse_math(False)


def save_figure(
    fig, png: str | os.PathLike, svg: str | os.PathLike | None = None, claims=None, crop: bool = True
) -> None:
    """Write PNG (and SVG) atomically, with deterministic metadata, then close the figure.
    ``claims`` (a claims table or its rows): a one-line verdict badge per claim under the figure
    (the test, effect and evidence live in the report caption and docs/figures/verdicts.md).
    ``crop=False`` (a figure laid out to fit its canvas, e.g. by ``tight_layout``, nothing outside
    it) writes the canvas as it is: no extra pass to find the crop, which measures every text of
    the figure once more."""
    badges = claims is not None and len(claims)
    if badges and not crop:
        raise ValueError("verdict badges sit under the canvas: a figure with claims is written cropped")
    if badges:
        add_verdicts(fig, claims)
    literal_text(fig)
    if crop:
        bbox = _fix_layout(fig)
    else:
        engine = fig.get_layout_engine()
        if engine is not None and not isinstance(engine, PlaceHolderLayoutEngine):
            engine.execute(fig)  # a layout engine still to run: once, then the positions stay
        _drop_layout_engine(fig)
        # the whole canvas (None would fall back to rcParams["savefig.bbox"], which may crop)
        bbox = fig.bbox_inches
    for path, fmt in [(png, "png"), (svg, "svg")]:
        if path is None:
            continue
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        metadata = {"Software": None} if fmt == "png" else {"Date": None}
        # fixed svg.hashsalt: clip-path and glyph ids no longer random, so identical runs give identical SVGs
        with atomic_path(path, suffix=f".{fmt}", digest=True) as tmp, plt.rc_context({"svg.hashsalt": "ldprepro"}):
            fig.savefig(tmp, format=fmt, dpi=SAVE_DPI, bbox_inches=bbox, metadata=metadata)
    plt.close(fig)


def _fix_layout(fig):
    """Lay ``fig`` out once and keep that layout for every file written; returns the bounding box
    (inches) that ``bbox_inches="tight"`` would crop to. Saved with "tight" and a layout engine,
    each file costs two draws, each running the engine (constrained layout measures every tick
    label); this way every file is one plain draw, after one layout pass, made at the PNG's
    resolution (where savefig made the PNG's)."""
    screen_dpi = fig.dpi
    fig.set_dpi(SAVE_DPI)
    fig.draw_without_rendering()  # runs the layout engine, if any
    _drop_layout_engine(fig)
    bbox = fig.get_tightbbox(fig.canvas.get_renderer())
    fig.set_dpi(screen_dpi)
    return bbox.padded(plt.rcParams["savefig.pad_inches"])


def _drop_layout_engine(fig) -> None:
    """No layout engine from here on, so the positions computed so far stay and savefig does not
    pre-draw for one ("none", which ``tight_layout`` leaves, is a placeholder savefig still
    pre-draws for)."""
    if fig.get_layout_engine() is not None:
        with plt.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)


def add_verdicts(fig, claims) -> None:
    """One short line per claim under the figure: the verdict (the fair reading; "(1 of 4 panels)" when
    decided on fewer panels than the paper shows), then the claim (truncated)."""
    import pandas as pd

    rows = claims.to_dict("records") if isinstance(claims, pd.DataFrame) else list(claims)
    from matplotlib.font_manager import FontProperties

    size = FontProperties(size=BADGE_FONTSIZE).get_size_in_points()
    width = int(fig.get_figwidth() * 19 * 7 / size)  # 19 characters per inch at 7 pt
    lines = []
    for c in rows:
        role = " [substitute data]" if c.get("data_role") == "substitute" else ""
        panels = c.get("panels") if isinstance(c.get("panels"), str) and c.get("panels") else ""
        line = f"{c['verdict'].upper()}{f' ({panels})' if panels else ''}: {c['claim']}{role}"
        lines.append(line if len(line) <= width else line[: width - 1] + "…")
    fig.text(0.01, -0.02, "\n".join(lines), ha="left", va="top", fontsize=BADGE_FONTSIZE)
