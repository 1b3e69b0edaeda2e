"""The one dispatcher: a figure's declared claims, decided on its per-repetition results.

For every figure of every paper (and every experiment a user adds) the same steps:

1. split the panels by data role (``paper``: the paper's own data; ``substitute``: our stand-in;
   ``user``: a user's experiment) — only claims on the paper's data count as reproductions;
2. a role whose panels are all unavailable gets one ``not testable`` row naming why;
3. otherwise every declaration is decided on that role's results, once per LDP-SGD group-size
   rule (controls other than the paper's rule are prefixed "(control: …)"), and a claim decided
   while some panels are missing says which;
4. declarations marked ``per_role`` are decided once per role, those marked ``once`` once per
   figure (exact computations from the closed forms, whatever the data);
5. robustness: a declaration's ``alternatives`` (other readings of an [I]/[U] choice) are decided
   too, and so are the LDP-SGD group-size controls; each claim's ``robustness`` says "robust" when
   they all give its verdict, else "depends on: <reading> (<verdict per alternative>)";
6. ``judge`` combines the points of each claim (each claim is its own family).
"""

from __future__ import annotations

import pandas as pd

from ldprepro.claims.declarations import decide, validate
from ldprepro.claims.results import Results, group_rules, panel_role
from ldprepro.claims.verdicts import Claim, claim_row, judge, not_testable

NO_CLAIM_HINT = (
    "this experiment declares no claim; declare one under `claims:` in its config.yaml entry "
    "(docs/extending.md, 'Your own claims')"
)


def _blocks(declarations: list[dict]) -> list[list[dict]]:
    """Consecutive ``per_dataset`` declarations form one block (decided panel by panel, so a
    panel's claims stay together in the table); every other declaration is a block of its own."""
    blocks: list[list[dict]] = []
    for d in declarations:
        if d.get("per_dataset") and blocks and blocks[-1][0].get("per_dataset"):
            blocks[-1].append(d)
        else:
            blocks.append([d])
    return blocks


def _verdict(c) -> str:
    return c["verdict"] if isinstance(c, dict) else claim_row(c)["verdict"]


#: how a robustness statement names the readings declared ``show: true`` that give the declared verdict
SAME = "same verdict under: "


def robustness(verdicts: dict[str, str], declared: str, shown=()) -> str:
    """'robust', or 'depends on: …' naming each alternative reading whose verdict differs; the
    readings in ``shown`` (an alternative declared ``show: true``, e.g. paper 004's CPU time) are
    named with their verdict even when it agrees: 'robust (same verdict under: … → holds)'."""
    differ = {reading: v for reading, v in verdicts.items() if v != declared}
    agree = "; ".join(f"{r} → {v}" for r, v in verdicts.items() if r in shown and v == declared)
    if not differ:
        return f"robust ({SAME}{agree})" if agree else "robust"
    return (
        "depends on: "
        + "; ".join(f"{reading} → {v}" for reading, v in differ.items())
        + f" (as declared: {declared})"
        + (f"; {SAME}{agree}" if agree else "")
    )


def _combine(existing: str, new: str) -> str:
    """Two robustness statements of one claim as one ('robust' only if both are)."""
    if existing in ("", "robust"):
        return new
    if new.startswith(f"robust ({SAME}"):  # robust to the new readings, some named: append them
        return f"{existing}; {new[len('robust (') : -1]}"
    return existing if new == "robust" else f"{existing}; {new}"


def headline_fields(d: dict, figure: str) -> dict:
    """How a declaration's rows count in the headline (docs/verdicts-standard.md, "Findings are
    counted once"): a theorem's ``finding`` counts only in its ``counted_in`` figure; a
    reconstructed claim, or a row declared ``counted: false`` (an "(ours, stricter)" split), never."""
    finding = str(d.get("finding") or "")
    counted = bool(d.get("counted", True)) and not d.get("reconstructed") and (not finding or d["counted_in"] == figure)
    return {
        "statement": "theorem" if finding else "experimental",
        "finding": finding,
        "counted": counted,
        "reconstructed": bool(d.get("reconstructed", False)),
    }


def _decide(res: Results, d: dict, datasets: list[str] | None = None) -> list:
    """The claims of one declaration and, under each declared alternative reading, their
    robustness (the alternatives' claims are decided, compared and dropped)."""
    claims = decide(res, d, datasets)
    fields = headline_fields(d, res.figure)
    counted = fields.pop("counted")
    for name, value in fields.items():
        _amend(claims, name, lambda _old, value=value: value)
    for c in claims:  # a row its function already keeps out of the count (a control) stays out
        if isinstance(c, dict):
            c["counted"] = counted and c.get("counted", True) is not False
        else:
            c.counted = counted and c.counted
    alternatives = d.get("alternatives") or []
    if not alternatives:
        return claims
    per_alt = {}
    for alt in alternatives:
        changed = {k: v for k, v in alt.items() if k not in ("reading", "show")}
        per_alt[alt["reading"]] = decide(res, {**d, **changed, "alternatives": []}, datasets)
    shown = {alt["reading"] for alt in alternatives if alt.get("show")}
    for i, c in enumerate(claims):
        if not isinstance(c, Claim):
            continue
        verdicts = {r: _verdict(alt[i]) if i < len(alt) else "not testable" for r, alt in per_alt.items()}
        c.robustness = _combine(c.robustness, robustness(verdicts, _verdict(c), shown))
    return claims


def _decide_all(res: Results, declarations: list[dict], panels: str = "") -> list:
    """Every declaration's claims; ``panels`` ("1 of 4 panels": some of the role's panels missing)
    marks the claims about the whole figure (a ``per_dataset`` claim speaks about its own panel)."""
    claims = []
    for block in _blocks(declarations):
        if block[0].get("per_dataset"):
            for ds in res.datasets:
                for d in block:
                    claims += _decide(res, d, [ds])
        else:
            whole = _decide(res, block[0])
            if panels:
                _amend(whole, "panels", lambda _old: panels)
            claims += whole
    return claims


def _group_rulerobustness(by_rule: dict) -> None:
    """The paper's LDP-SGD group-size rule against its controls: a claim decided under the paper's
    rule is robust to the rule when every control gives it the same verdict."""
    paper = by_rule.get("paper")
    if not paper or len(by_rule) < 2:
        return
    for i, c in enumerate(paper):
        if not isinstance(c, Claim):
            continue
        verdicts = {
            f"{rule} number of groups (control)": _verdict(claims[i]) if i < len(claims) else "not testable"
            for rule, claims in by_rule.items()
            if rule != "paper"
        }
        c.robustness = _combine(c.robustness, robustness(verdicts, _verdict(c)))


def _amend(claims: list, field: str, change) -> None:
    """Rewrite one field of every decided claim: a ``Claim`` or an already written row (a function
    may return a not-testable row for a claim it cannot decide)."""
    for c in claims:
        if isinstance(c, dict):
            c[field] = change(c.get(field) or "")
        else:
            setattr(c, field, change(getattr(c, field) or ""))


def prepared(raw: pd.DataFrame, relabel: list[dict]) -> pd.DataFrame:
    """The results as the claims read them: ``relabel`` entries (``{mechanism, column, value,
    as}``) give a mechanism run with a distinguishing parameter its own name (HierA unclipped)."""
    for r in relabel:
        if r["column"] in raw:
            hit = (raw["mechanism"] == r["mechanism"]) & (raw[r["column"]] == r["value"])
            raw = raw.assign(mechanism=raw["mechanism"].where(~hit, r["as"]))
    return raw


def claims_for(
    paper: str,
    figure: str,
    raw: pd.DataFrame,
    fig: dict,
    unavailable: dict | None = None,
    declarations: list | dict | None = None,
    where: str = "",
    default_role: str = "paper",
) -> pd.DataFrame:
    """The figure's claims table: each declared claim judged per data role on the per-repetition
    results ``raw``; ``not testable`` rows for roles whose panels are all unavailable.

    ``declarations``: the figure's claim declarations, a list or ``{relabel: [...], claims: [...]}``
    (``ldprepro.papers.declared_claims`` gives a paper's, plus any under ``claims:`` in the config
    entry); ``where`` names where they were declared, for error messages; ``default_role`` is the data
    role of panels that do not declare one (``user`` for an experiment a user added)."""
    unavailable = dict(unavailable or {})
    spec = declarations if isinstance(declarations, dict) else {"claims": declarations or []}
    decls = validate(spec.get("claims", []), where or f"{paper}.{figure}.claims")
    data_decls = [d for d in decls if not d.get("once") and not d.get("per_role")]
    role_decls = [d for d in decls if d.get("per_role")]
    rows: list = []
    if not decls:
        rows.append(
            not_testable(
                paper,
                figure,
                "(no claim declared for this figure)",
                "—",
                "pairwise",
                NO_CLAIM_HINT,
                data_role=default_role,
            )
        )
    roles: dict[str, list[str]] = {}
    for p in fig.get("panels", []) if data_decls or role_decls else []:
        roles.setdefault(panel_role(p, default_role), []).append(p["dataset"])
    for role, datasets in roles.items():
        r = raw[raw["dataset"].isin(datasets)] if len(raw) else raw
        missing = [d for d in datasets if d in unavailable]
        if r.empty:
            reason = "; ".join(f"{d}: {unavailable.get(d, 'no results')}" for d in datasets)
            rows.append(
                not_testable(
                    paper,
                    figure,
                    "(every claim of this figure)",
                    ", ".join(datasets),
                    "pairwise",
                    "no panel's data can be obtained here: " + reason,
                    data_role=role,
                )
            )
            continue
        r = prepared(r, spec.get("relabel", []))
        by_rule = {}
        panels = f"{len(datasets) - len(missing)} of {len(datasets)} panels" if missing else ""
        for rule in group_rules(r):
            rr = r if rule is None else r[r["group_rule"] == rule]
            claims = by_rule[rule] = _decide_all(Results(rr, fig, role, paper, figure, unavailable), data_decls, panels)
            if rule not in (None, "paper"):
                _amend(claims, "claim", lambda text, rule=rule: f"(control: {rule} number of groups) " + text)
                for c in claims:  # a control is the claim's robustness, not a claim of its own
                    if isinstance(c, dict):
                        c["counted"] = False
                    else:
                        c.counted = False
            if missing:
                note = "panels not available here: " + ", ".join(missing)
                _amend(claims, "evidence", lambda text, note=note: (text + ". " if text else "") + note)
            rows += claims
        _group_rulerobustness(by_rule)
        rows += _decide_all(Results(r, fig, role, paper, figure, unavailable), role_decls, panels)
    once = Results(raw, fig, default_role, paper, figure, unavailable)
    for d in decls:
        if d.get("once"):
            rows += _decide(once, d)
    return judge(rows)
