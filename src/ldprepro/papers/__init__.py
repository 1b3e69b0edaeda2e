"""Everything specific to one paper, one folder per paper key (config.yaml names the same keys):
``hiera`` (000), ``bshp`` (001), ``ldpfl`` (002), ``dct`` (003), ``lremh`` (004).

A paper's folder holds its claims as data (``claims.yaml``, keyed by figure), the exact
computations those declarations name, its paper-specific runs and plots, and its figures' report
captions (``captions/figN.rst``). ``declared_claims`` gives the claim engine a figure's declarations:
the paper's own, followed by any a user declares under ``claims:`` in the figure's config entry.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ldprepro.pipeline.parse import load_yaml

PAPERS_DIR = Path(__file__).resolve().parent
PAPER_KEYS = ("hiera", "bshp", "ldpfl", "dct", "lremh")


def paper_dir(paper: str) -> Path:
    """The folder of a paper key (it may not exist for a user's or a toy paper)."""
    return PAPERS_DIR / paper


def paper_section(paper: str, figure: str) -> dict | None:
    """The figure's section of its paper folder's ``claims.yaml`` as ``{relabel, claims}``, or
    None when the paper has no folder or does not declare the figure."""
    path = paper_dir(paper) / "claims.yaml"
    if not path.is_file():
        return None
    try:
        section = (load_yaml(path.read_text(encoding="utf-8")) or {}).get(figure)
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({exc}); fix the file") from exc
    if isinstance(section, list):
        section = {"claims": section}
    return section or None


def declared_claims(
    paper: str, figure: str, entry: dict | None = None, section: dict | None = None
) -> tuple[dict, str]:
    """({relabel, claims}, where they were declared) for one figure: the paper folder's
    ``claims.yaml`` section for the figure (``section``, read here unless given), plus the config
    entry's own ``claims:``."""
    from ldprepro.claims.declarations import validate

    section = paper_section(paper, figure) if section is None else section
    spec: dict = {"relabel": [], "claims": []}
    where = []
    if section:
        spec["relabel"] += section.get("relabel", [])
        spec["claims"] += section.get("claims", [])
        path = paper_dir(paper) / "claims.yaml"
        where.append(f"{path.relative_to(PAPERS_DIR.parents[1])} [{figure}]")
    own = (entry or {}).get("claims")
    if own:
        validate(own, f"config.yaml {paper}.{figure}.claims")
        spec["claims"] += list(own)
        where.append(f"config.yaml {paper}.{figure}.claims")
    return spec, " + ".join(where) or f"{paper}.{figure}"


def declarations_by_figure(paper: str, figures) -> dict[str, list[dict]]:
    """{figure: its declarations in the paper folder's ``claims.yaml``, ``for_each`` expanded} for
    the ``figures`` the paper declares (the reproduction card reads their readings)."""
    from ldprepro.claims.declarations import validate

    out = {}
    for figure in figures:
        section = paper_section(paper, figure)
        if section:
            out[figure] = validate(section.get("claims", []), f"{paper} {figure}", import_functions=False)
    return out


def default_role(paper: str, figure: str, section: dict | None) -> str:
    """The data role of a figure's panels unless a panel says otherwise: ``user`` for your own
    experiments (under ``experiments:``, or a figure added under one of the five papers' keys that
    the paper's folder does not declare: ``section`` None), ``paper`` for a paper's figures."""
    if paper == "experiments" or (paper in PAPER_KEYS and section is None):
        return "user"
    return "paper"


def decide_figure(paper: str, figure: str, raw, fig: dict, unavailable: dict | None = None, claim_rows=None):
    """The figure's claims table: its declared claims (``declared_claims``) decided by the one
    dispatcher (``ldprepro.claims.dispatch.claims_for``) on the per-repetition results ``raw``.
    ``claim_rows``: the rows the claim language's tests read when they are not ``raw`` (a kind's
    ``claim_rows``: a histogram figure's curves over every consumer); a ``function`` claim, a
    paper's own computation, always reads ``raw``."""
    from ldprepro.claims.dispatch import claims_for

    section = paper_section(paper, figure)
    declarations, where = declared_claims(paper, figure, fig, section)
    role = default_role(paper, figure, section)
    if claim_rows is None:
        return claims_for(paper, figure, raw, fig, unavailable, declarations, where, default_role=role)
    import pandas as pd

    own = [d for d in declarations["claims"] if d.get("test") == "function"]
    rest = [d for d in declarations["claims"] if d.get("test") != "function"]
    tables = []
    if own or not rest:
        spec = {**declarations, "claims": own}
        tables.append(claims_for(paper, figure, raw, fig, unavailable, spec, where, default_role=role))
    if rest:
        spec = {**declarations, "claims": rest}
        tables.append(claims_for(paper, figure, claim_rows, fig, unavailable, spec, where, default_role=role))
    return tables[0] if len(tables) == 1 else pd.concat(tables, ignore_index=True)
