"""The (k, ε) plane's declared claims (config.yaml ``benchmark.frequency.claims``, the claim
language of docs/claims.md): the oracles they name, checked at parse time (light: no pandas), and
the declarations the plane decides for the oracles a run compared (``ldprepro.benchmark.theory``)."""

from __future__ import annotations

from ldprepro.claims.declarations import MECHANISM_KEYS, fill
from ldprepro.pipeline.mechanism_names import FREQUENCY_ORACLES


def named(decl: dict) -> list[tuple[str, str]]:
    """[(key, oracle)] a declaration names, under ``mechanism``, ``against``, ``a`` and ``b``."""
    out = []
    for key in MECHANISM_KEYS:
        value = decl.get(key)
        out += [(key, name) for name in ([value] if isinstance(value, str) else value or [])]
    return out


def claim_oracle_problems(declarations: list[dict], where: str) -> list[str]:
    """The plane's claims (validated declarations) naming something that is no frequency oracle, one
    message each naming the key and the oracles known. An oracle left out of ``oracles`` is fine:
    its claims are not made (:func:`declared_for`)."""
    return [
        f"{where}[{i}] ({decl['claim']!r}): {key} {name!r} is not a frequency oracle; "
        f"the plane compares {', '.join(FREQUENCY_ORACLES)}"
        for i, decl in enumerate(declarations)
        for key, name in named(decl)
        if name not in FREQUENCY_ORACLES
    ]


def declared_for(declarations: list[dict], oracles, grid: str) -> list[dict]:
    """The declarations the plane decides for the ``oracles`` the benchmark ran: ``against`` keeps
    the oracles that ran, a claim whose ``mechanism``, ``a`` or ``b`` did not run, or whose
    ``against`` keeps none, is not made (an excluded oracle appears in no claim); ``{grid}`` (the
    plane's k × ε, ``grid``) and ``{against}`` (the compared oracles' names, upper case) are filled in."""
    ran = [o for o in FREQUENCY_ORACLES if o in set(oracles)]
    out = []
    for decl in declarations:
        d = dict(decl)
        if "against" in d:
            d["against"] = [o for o in d["against"] if o in ran]
            if not d["against"]:
                continue
        if any(name not in ran for _, name in named(d)):
            continue
        fields = {"grid": grid, "against": ", ".join(o.upper() for o in d.get("against", []))}
        d["claim"], d["scope"] = fill(d["claim"], **fields), fill(d["scope"], **fields)
        out.append(d)
    return out
