"""A figure's offline status from its panels' data roles and availability (light: imported at
workflow parse time, so no numpy/pandas/scipy here).

- ``built``: every panel's data is here;
- ``partial``: some of the paper's panels are missing, at least one of the paper's panels is built;
- ``not reproduced offline (stand-in shown)``: every panel on the paper's data is missing, only our
  substitute panels are drawn — their verdicts are our extension, not a reproduction;
- ``not reproducible here``: no panel can be built.
"""

from __future__ import annotations


def figure_status(panels: list[dict], unavailable: dict) -> tuple[str, str]:
    """(status, reason) for panels given as config dicts (``dataset``, optional ``data_role``)."""
    if not panels:
        return "built", ""
    missing = [p["dataset"] for p in panels if p["dataset"] in unavailable]
    paper = [p["dataset"] for p in panels if p.get("data_role", "paper") == "paper"]
    paper_missing = [d for d in paper if d in unavailable]
    if len(missing) == len(panels):
        return "not reproducible here", "; ".join(sorted({unavailable[d] for d in missing}))
    if paper and len(paper_missing) == len(paper):
        return "not reproduced offline (stand-in shown)", "missing " + ", ".join(paper_missing)
    if missing:
        return "partial", "missing " + ", ".join(missing)
    return "built", ""
