"""Names of benchmark panels (light: imported by the workflow at parse time)."""

from __future__ import annotations

import re


def panel_columns(panel: dict) -> list[str]:
    """The panel's configured columns (``column`` for one, ``columns`` for several; none: the
    dataset's numeric columns, or ``column_regex``)."""
    if "column" in panel:
        return [panel["column"]]
    return list(panel.get("columns") or [])


def plane_panels(entry: dict) -> list[dict]:
    """The synthetic panels of the frequency task's (k, ε) plane: one per distribution of
    ``entry["plane"]`` and domain size of ``entry["oracle_k"]`` (none without a ``plane``)."""
    plane = entry.get("plane")
    if not plane:
        return []
    return [
        {"synthetic": dist, "k": int(k), "users": int(plane["users"]), "zipf_s": float(plane.get("zipf_s", 1.1))}
        | ({"reps": int(plane["reps"])} if "reps" in plane else {})
        for dist in plane["distributions"]
        for k in entry["oracle_k"]
    ]


def plane_job_panels(entry: dict, distribution: str) -> dict[str, dict]:
    """{panel id: panel} of the (k, ε)-plane panels one job runs: every ``oracle_k`` of one
    ``distribution``, in ``oracle_k`` order (workflow/rules/benchmark.smk's benchmark_plane_job;
    ``distribution`` may be the rule's ``"{distribution}"`` wildcard, giving its output patterns)."""
    plane = dict(entry.get("plane") or {}, distributions=[distribution])
    return {panel_id(p): p for p in plane_panels({**entry, "plane": plane})}


def plane_job_id(distribution: str) -> str:
    """The name of the job running one distribution's (k, ε)-plane panels (its log's stem): the
    panels' ids without their ``__k<k>``."""
    return f"plane__{distribution}"


def panel_id(panel: dict) -> str:
    """File-name-safe id: ``dataset`` or ``dataset__col1-col2`` (``column_regex`` panels: ``dataset__all``;
    synthetic (k, ε)-plane panels: ``plane__<distribution>__k<k>``)."""
    if "synthetic" in panel:
        return f"plane__{panel['synthetic']}__k{int(panel['k'])}"
    cols = panel_columns(panel) or (["all"] if "column_regex" in panel else [])
    raw = panel["dataset"] + ("__" + "-".join(cols) if cols else "")
    return re.sub(r"[^A-Za-z0-9_\-]+", "_", raw)


def panel_label(panel: dict) -> str:
    """Human label: ``dataset: col1 + col2`` (or the panel's ``title``)."""
    if panel.get("title"):
        return str(panel["title"])
    if "synthetic" in panel:
        dist = panel["synthetic"] + (f"({panel['zipf_s']:g})" if panel["synthetic"] == "zipf" else "")
        return f"{dist}, k = {int(panel['k'])}"
    cols = panel_columns(panel)
    return panel["dataset"] + (": " + " + ".join(cols) if cols else "")
