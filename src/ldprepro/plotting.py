"""Figure conventions shared by every paper: one colour and marker per mechanism everywhere,
explicit "not available" panels, and atomic PNG + SVG output."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .io import atomic_path  # noqa: E402

#: name -> (label, colour, marker); the same in every figure of every paper.
MECHANISM_STYLE: dict[str, tuple[str, str, str]] = {
    "laplace": ("Laplace", "#7f7f7f", "x"),
    "duchi": ("Duchi et al.", "#1f77b4", "o"),
    "harmony": ("Harmony", "#17becf", "v"),
    "pm": ("PM", "#ff7f0e", "s"),
    "hm": ("HM", "#2ca02c", "^"),
    "three_outputs": ("Three-Outputs", "#d62728", "D"),
    "pm_opt": ("PM-OPT", "#9467bd", "P"),
    "pm_sub": ("PM-SUB", "#8c564b", "*"),
    "hm_tp": ("HM-TP", "#e377c2", "h"),
    "dct": ("DCT (not LDP)", "#bcbd22", "<"),
    "graded_laplace": ("graded Laplace (not LDP)", "#393b79", ">"),
    "hiera": ("HierA", "#e6550d", "p"),
    "harmony_at_level": ("Harmony at the level budget (ours)", "#17becf", "1"),
    "pm_at_level": ("PM at the level budget (ours)", "#ff7f0e", "2"),
    "non_private": ("non-private", "#000000", ""),
    "em": ("EM", "#1f77b4", "o"),
    "lasso": ("LASSO", "#ff7f0e", "s"),
    "lremh": ("LREMH", "#2ca02c", "^"),
    "split_baseline": ("baseline (ε/m per query)", "#7f7f7f", "o"),
    "bshp": ("BSHP", "#1f77b4", "s"),
    "wshp": ("WSHP", "#d62728", "^"),
}


def style(name: str) -> dict:
    """matplotlib keyword arguments for mechanism ``name`` (unknown names get a neutral style)."""
    base = name.split("_disc")[0]
    label, colour, marker = MECHANISM_STYLE.get(base, (name, "#555555", "."))
    if name.endswith("_disc"):
        label += " (discretised)"
    return {"label": label, "color": colour, "marker": marker, "ls": "--" if base.endswith("_at_level") else "-"}


def not_available_panel(ax, title: str, reason: str) -> None:
    """Fill ``ax`` with an explicit 'not available: <reason>' notice."""
    import textwrap

    ax.set_title(title, fontsize=9)
    body = "\n".join(textwrap.wrap(reason, width=38))
    ax.text(0.5, 0.5, f"not available:\n{body}", ha="center", va="center", transform=ax.transAxes,
            fontsize=8, color="#8b0000", clip_on=True)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_linestyle(":")


def save_figure(fig, png: str | os.PathLike, svg: str | os.PathLike | None = None, claims=None) -> None:
    """Write PNG (and SVG) atomically, with deterministic metadata, then close the figure.
    ``claims`` (a claims table or its rows): a one-line verdict badge per claim under the figure
    (the test, effect and evidence live in the report caption and docs/figures/verdicts.md)."""
    if claims is not None and len(claims):
        add_verdicts(fig, claims)
    for path, fmt in [(png, "png"), (svg, "svg")]:
        if path is None:
            continue
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        metadata = {"Software": None} if fmt == "png" else {"Date": None}
        # fixed svg.hashsalt: clip-path and glyph ids no longer random, so identical runs give identical SVGs
        with atomic_path(path, suffix=f".{fmt}") as tmp, plt.rc_context({"svg.hashsalt": "ldprepro"}):
            fig.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight", metadata=metadata)
    plt.close(fig)


def add_verdicts(fig, claims) -> None:
    """One short line per claim under the figure: the verdict, then the claim (truncated)."""
    import pandas as pd

    rows = claims.to_dict("records") if isinstance(claims, pd.DataFrame) else list(claims)
    width = int(fig.get_figwidth() * 19)  # characters per line at fontsize 7
    lines = []
    for c in rows:
        role = " [substitute data]" if c.get("data_role") == "substitute" else ""
        line = f"{c['verdict'].upper()}: {c['claim']}{role}"
        lines.append(line if len(line) <= width else line[: width - 1] + "…")
    fig.text(0.01, -0.02, "\n".join(lines), ha="left", va="top", fontsize=7)
