"""Names of benchmark panels (light: imported by the workflow at parse time)."""

from __future__ import annotations

import re


def panel_columns(panel: dict) -> list[str]:
    """The panel's configured columns (``column`` for one, ``columns`` for several; none: the
    dataset's numeric columns, or ``column_regex``)."""
    if "column" in panel:
        return [panel["column"]]
    return list(panel.get("columns") or [])


def panel_id(panel: dict) -> str:
    """File-name-safe id: ``dataset`` or ``dataset__col1-col2`` (``column_regex`` panels: ``dataset__all``)."""
    cols = panel_columns(panel) or (["all"] if "column_regex" in panel else [])
    raw = panel["dataset"] + ("__" + "-".join(cols) if cols else "")
    return re.sub(r"[^A-Za-z0-9_\-]+", "_", raw)


def panel_label(panel: dict) -> str:
    """Human label: ``dataset: col1 + col2`` (or the panel's ``title``)."""
    if panel.get("title"):
        return str(panel["title"])
    cols = panel_columns(panel)
    return panel["dataset"] + (": " + " + ".join(cols) if cols else "")
