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


def job_id(panel: dict) -> str:
    """The benchmark job that runs a panel (one job per task × dataset, every panel on it, the
    dataset loaded once): the panel's dataset, or for a synthetic (k, ε)-plane panel
    ``plane__<distribution>`` (one job per distribution, every k)."""
    return f"plane__{panel['synthetic']}" if "synthetic" in panel else panel["dataset"]


def job_panels(panels: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """{job id: {panel id: panel}} of a task's panels (``{panel id: panel}``), in their order."""
    jobs: dict[str, dict[str, dict]] = {}
    for pid, panel in panels.items():
        jobs.setdefault(job_id(panel), {})[pid] = panel
    return jobs


def job_of_panel_id(pid: str) -> str:
    """The job id of a panel id (:func:`panel_id`), from the id alone (the timing scripts read result
    files): ``plane__<distribution>__k<k>`` → ``plane__<distribution>``, ``<dataset>__<columns>`` →
    ``<dataset>``."""
    return pid.rsplit("__k", 1)[0] if pid.startswith("plane__") else pid.split("__")[0]


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
