"""Dataset config entries at the level the workflow needs when it is parsed: which raw files a
dataset needs and where they go. Imports nothing heavy (no numpy, pandas or scipy), so that every
parse of the Snakefile (one per cluster job) stays cheap."""

from __future__ import annotations

from pathlib import Path

RAW_ROOT = Path("data/raw")


def _fmt(value, options: dict):
    if isinstance(value, str):
        return value.format_map(options)
    if isinstance(value, dict):
        return {k: _fmt(v, options) for k, v in value.items()}
    if isinstance(value, list):
        return [_fmt(v, options) for v in value]
    return value


def needed_files(entry: dict) -> list[dict]:
    """The file entries this dataset needs, with ``{option}`` placeholders filled in.

    Files that carry a ``year`` are needed only when it equals ``options.year``.
    """
    opts = entry.get("options", {}) or {}
    out = []
    for f in entry.get("files", []):
        if "year" in f and f["year"] != opts.get("year"):
            continue
        out.append(_fmt(dict(f), opts))
    return out
