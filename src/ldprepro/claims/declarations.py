"""Claims declared as data, and how one declaration becomes a claim with its points. The reference
for users is docs/claims.md, checked against this module by tests/test_claims_doc.py.

A paper's claims live in its folder (``ldprepro/papers/<key>/claims.yaml``, keyed by figure); a
user's experiment declares its own under ``claims:`` in its config.yaml entry, in the same form::

    - claim: "PM-SUB's MSE is smaller than PM's when ε is large"   # the paper's words
      source: "§VI-B, Fig. 6"                                     # where the paper says it
      scope: "ε ≥ 2 ('large' [I])"                                # what the verdict speaks about
      readings: ["'large ε' read as ε ≥ 2 [I]"]                  # interpretations it depends on
      test: outperform                                            # the test kind (below)
      mechanism: pm_sub
      against: [pm]
      eps: {min: 2}

Test kinds (``TESTS``), their keys, and the claim kind they give (docs/verdicts-standard.md):

- ``outperform`` (pairwise / win-over-set / range): ``mechanism`` beats every one of ``against``
  at every panel and ε in scope; ``eps`` narrows the scope (``{min: x}``, ``{max: x}``,
  ``{below: x}``, ``smallest``, ``lowest_third``); ``check_ties: false`` skips the exact tie check;
  ``if_present``: declared only when one of these mechanisms was run; ``mechanism`` a list: a
  collective claim ("our approaches outperform existing solutions"), the best of these against the
  best of ``against`` at each point; ``fair_margin``: the claim's own practical margin for the fair
  reading (a ratio for errors, a difference for rates; docs/verdicts-standard.md, "Two readings");
- ``no_worse`` (pairwise / range): ``mechanism`` is no worse than every one of ``against`` (A ≤ B,
  ties allowed; exact: ratio of the expectations ≤ ``margin``, default 1; simulated: non-inferiority
  within ×``margin``), with the same ``eps`` / ``where`` scope;
- ``sweep_trend`` (trend): the metric of ``mechanism`` falls as ``sweep`` grows (``log_x``,
  ``log``: true, false or auto = log for errors, linear for rates; ``theory_effect``);
- ``mechanism_trend`` (trend): every mechanism's metric falls as ``x`` (ε, n_users) grows;
  both trends take ``shape: monotone`` (a shape test: the metric falls at every step of the grid,
  within ``tolerance``, ``claims.comparatives``) or ``shape: slope`` (the default: the fitted slope),
  the slope declared as the secondary reading through ``alternatives``;
- ``interaction`` (range): the gain of ``mechanism`` over each of ``against`` is larger in the
  ``eps`` scope ("especially for small ε") than in ``large_eps`` (default: the top third of the grid),
  per panel and baseline (``claims.comparatives.interaction_points``);
- ``equivalence``: ``a`` and ``b`` within ×``margin`` at every ``x`` in scope (TOST);
  ``where`` (on ``outperform``, ``no_worse`` and ``equivalence``): a condition on the point's ε, domain
  size k and number of users n, e.g. ``"k > 3*exp(eps) + 2"`` (``ldprepro.claims.conditions``); a
  figure with several k decides these tests at every k;
- ``ratio_below`` (range): metric(``mechanism``)/metric(b) < ``bound`` for every b in ``against``;
- ``theory_agreement`` (equivalence): the simulated ``metric`` (default: the panel's) agrees with
  its exact expectation within ×``margin``, pooled per mechanism (TOST); declared ``per_role`` on
  every figure whose claims are decided exactly (exact first, ``ldprepro.claims.points``);
- ``function``: ``function: "package.module:name"`` computes the claim(s), for exact computations
  from the closed forms and the claims no generic kind expresses (paper 004's per-run tests); it
  is called with the figure's ``Results`` and the declaration (whose further keys are its
  parameters, e.g. a declared margin) and returns a list of ``Claim``.

A list inside a figure's list of declarations is spliced in (a YAML alias to a shared group).

Common keys: ``for_each: {mechanism: [a, b]}`` repeats the declaration (``{mechanism_label}`` in
the text); ``per_dataset: true`` gives one claim per panel (``{dataset}`` in the scope);
``skip_without_points: true`` drops a claim that found no point; ``evidence`` is a fixed note;
``once: true`` decides the claim once per figure (closed forms, whatever the data);
``per_role: true`` once per data role (not per LDP-SGD group-size rule).

Findings and the headline (docs/verdicts-standard.md, "Findings are counted once"): a theorem,
lemma or algorithm statement of the paper declares ``finding`` (its key, "bshp: Theorem 7", the same
in every figure citing it) and ``counted_in`` (the one figure whose row counts it; its rows elsewhere
are repeats, not counted); ``reconstructed: true`` marks a claim rebuilt by us from a sentence the
source cuts off (shown, never counted in the headline); ``counted: false`` a row of ours that splits
a counted claim more strictly ("(ours, stricter)").

``alternatives``: the other readings of an [I]/[U] choice the claim depends on, each a ``reading``
(its words) and the keys it changes (a margin, the ε scope, a bound, a function's parameter)::

      alternatives:
        - {reading: "'large ε' read as ε ≥ 1", eps: {min: 1}}
        - {reading: "'large ε' read as ε ≥ 4", eps: {min: 4}}

The claim is decided again under each (``claims.dispatch``); its ``robustness`` says "robust" when
every alternative gives the declared reading's verdict, else which reading it depends on. An
alternative declared ``show: true`` is named with its verdict even when that verdict agrees
("robust (same verdict under: … → holds)"): a reading the paper itself used, shown, never the verdict.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from ldprepro.claims import conditions
from ldprepro.claims.names import label

if TYPE_CHECKING:  # the declarations are validated at workflow parse time: no pandas imported here
    from ldprepro.claims.results import Results
    from ldprepro.claims.verdicts import Claim

COMMON_KEYS = {
    "claim",
    "scope",
    "source",
    "readings",
    "test",
    "evidence",
    "for_each",
    "per_dataset",
    "skip_without_points",
    "once",
    "per_role",
    "if_present",
    "kind",
    "alternatives",
    "finding",
    "counted_in",
    "counted",
    "reconstructed",
}
TEST_KEYS = {
    "outperform": {"mechanism", "against", "eps", "check_ties", "fair_margin", "where"},
    "no_worse": {"mechanism", "against", "margin", "eps", "where"},
    "sweep_trend": {"mechanism", "sweep", "log_x", "log", "theory_effect", "shape", "tolerance"},
    "mechanism_trend": {"x", "shape", "tolerance"},
    "interaction": {"mechanism", "against", "eps", "large_eps"},
    "equivalence": {"a", "b", "margin", "x", "eps", "where"},
    "ratio_below": {"mechanism", "against", "bound", "x", "fair_margin"},
    "theory_agreement": {"margin", "metric"},
    "function": {"function"},
}
REQUIRED = {
    "outperform": {"mechanism", "against"},
    "no_worse": {"mechanism", "against"},
    "sweep_trend": {"mechanism", "sweep"},
    "mechanism_trend": {"x"},
    "interaction": {"mechanism", "against", "eps"},
    "equivalence": {"a", "b", "margin"},
    "ratio_below": {"mechanism", "against", "bound"},
    "theory_agreement": {"margin"},
    "function": {"function"},
}


class DeclarationError(ValueError):
    """A claim declaration that cannot be decided; the message names where it was declared."""


def validate(declarations: list, where: str, import_functions: bool = True) -> list[dict]:
    """Check a figure's declarations (``where`` names the file or config key) and expand
    ``for_each``; returns plain dicts in declaration order. ``import_functions=False`` (workflow
    parse time) checks a function's 'module:name' form without importing it."""
    if not isinstance(declarations, list):
        raise DeclarationError(f"{where}: claims must be a list of declarations, got {type(declarations).__name__}")
    flat = []  # a list inside the list (a YAML alias to a shared group of declarations) is spliced in
    for decl in declarations:
        flat += decl if isinstance(decl, list) else [decl]
    out = []
    for i, decl in enumerate(flat):
        at = f"{where}[{i}]"
        if not isinstance(decl, dict) or "claim" not in decl or "scope" not in decl or "test" not in decl:
            raise DeclarationError(f"{at}: a claim declaration needs 'claim', 'scope' and 'test' (got {decl!r})")
        test = decl["test"]
        if test not in TEST_KEYS:
            raise DeclarationError(f"{at} ({decl['claim']!r}): unknown test {test!r}; known: {', '.join(TEST_KEYS)}")
        unknown = set(decl) - COMMON_KEYS - TEST_KEYS[test]
        if unknown and test != "function":  # a function reads its own parameters from the declaration
            raise DeclarationError(
                f"{at} ({decl['claim']!r}): unknown keys {sorted(unknown)} for test {test!r}; "
                f"allowed: {sorted(COMMON_KEYS | TEST_KEYS[test])}"
            )
        missing = REQUIRED[test] - set(decl) - set(decl.get("for_each") or {})
        if missing:
            raise DeclarationError(f"{at} ({decl['claim']!r}): test {test!r} needs {sorted(missing)}")
        if test in ("sweep_trend", "mechanism_trend") and decl.get("shape", "slope") not in ("slope", "monotone"):
            raise DeclarationError(f"{at} ({decl['claim']!r}): shape must be slope or monotone, got {decl['shape']!r}")
        if "eps" in decl and test != "function":
            try:
                eps_filter(decl["eps"], [])
            except DeclarationError as exc:
                raise DeclarationError(f"{at} ({decl['claim']!r}): {exc}") from None
        conditions_declared = [decl] + [a for a in decl.get("alternatives") or [] if isinstance(a, dict)]
        for holder in conditions_declared if test != "function" else []:
            try:
                if "where" in holder:
                    conditions.parse(holder["where"])
            except conditions.ConditionError as exc:
                raise DeclarationError(f"{at} ({decl['claim']!r}): where: {exc}") from None
        for j, alt in enumerate(decl.get("alternatives") or []):
            bad = set(alt) - {"reading", "show"} - TEST_KEYS[test] if isinstance(alt, dict) else None
            if not isinstance(alt, dict) or "reading" not in alt or (bad and test != "function"):
                raise DeclarationError(
                    f"{at}.alternatives[{j}] ({decl['claim']!r}): an alternative is a 'reading' and the keys it "
                    f"changes, among {sorted(TEST_KEYS[test])} (got {alt!r})"
                )
        if ("finding" in decl) != ("counted_in" in decl):
            raise DeclarationError(
                f"{at} ({decl['claim']!r}): a theorem's finding needs both 'finding' (its key, e.g. "
                f"'bshp: Theorem 7') and 'counted_in' (the one figure whose row counts it)"
            )
        if test == "function":
            if ":" not in str(decl["function"]):
                raise DeclarationError(f"{at}: function {decl['function']!r}: write it as 'package.module:name'")
            if import_functions:
                _function(decl["function"], at)
        for_each = decl.get("for_each")
        if for_each:
            (key, values), *rest = for_each.items()
            if rest or key != "mechanism":
                raise DeclarationError(f"{at}: for_each takes one key, mechanism (got {sorted(for_each)})")
            for m in values:
                one = {k: v for k, v in decl.items() if k != "for_each"}
                one["mechanism"] = m
                one["claim"] = decl["claim"].replace("{mechanism_label}", label(m))
                one["scope"] = decl["scope"].replace("{mechanism_label}", label(m))
                out.append(one)
        else:
            out.append(dict(decl))
    return out


#: the declaration keys that name mechanisms (a list or one name)
MECHANISM_KEYS = ("mechanism", "against", "a", "b")


def check_in_scope(declarations: list[dict], entry: dict, where: str) -> None:
    """Refuse, naming the key, a claim whose scope the figure does not run (issue 54 item 3): a
    mechanism (``mechanism``, ``against``, ``a``, ``b``, ``for_each``) not among the figure's
    ``mechanisms`` (or ``methods``), or an ``eps`` scope that selects none of its ε. Such a claim
    was decided "not testable", which reads like a verdict. ``declarations``: :func:`validate`'s
    output; ``entry``: the figure's entry at the run's scale. A claim with ``if_present`` is declared
    for the mechanisms that may be absent and is left alone."""
    run = entry.get("mechanisms") or entry.get("methods")
    grid = sorted(float(e) for e in entry.get("eps") or [])
    for i, decl in enumerate(declarations):
        at = f"{where}[{i}] ({decl['claim']!r})"
        if decl.get("test") == "function" or decl.get("if_present"):
            continue
        for key in MECHANISM_KEYS if run else ():
            named = decl.get(key)
            for m in [named] if isinstance(named, str) else named or []:
                if m not in run:
                    raise DeclarationError(
                        f"{at}: {key} {m!r} is not run by this figure (its mechanisms: {', '.join(map(str, run))}); "
                        f"add it to the figure's mechanisms or fix the claim"
                    )
        if "eps" in decl and grid:
            select, _ = eps_filter(decl["eps"], grid)
            if select is not None and not any(select(e) for e in grid):
                raise DeclarationError(
                    f"{at}: eps {decl['eps']!r} selects none of the figure's ε ({', '.join(f'{e:g}' for e in grid)})"
                )


def _function(path: str, where: str) -> Callable:
    module, _, name = str(path).partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise DeclarationError(
            f"{where}: function {path!r} cannot be imported ({exc}); write it as 'module:name'"
        ) from exc


def eps_filter(spec, eps_grid: list[float]):
    """(where(ε) -> bool, the largest ε in scope) for an ``eps`` scope declaration."""
    if spec is None:
        return None, (eps_grid[-1] if eps_grid else None)
    if spec == "smallest":
        hi = eps_grid[0] if eps_grid else None
        return (lambda e: e <= hi), hi
    if spec == "lowest_third":
        small = eps_grid[: max(1, len(eps_grid) // 3)]
        hi = small[-1] if small else None
        return (lambda e: e <= hi), hi
    if isinstance(spec, dict) and set(spec) <= {"min", "max", "below"}:
        lo, top, below = spec.get("min"), spec.get("max"), spec.get("below")

        def where(e):
            return (lo is None or e >= lo) and (top is None or e <= top) and (below is None or e < below)

        in_scope = [e for e in eps_grid if where(e)]
        return where, (in_scope[-1] if in_scope else None)
    raise DeclarationError(f"eps scope {spec!r}: use smallest, lowest_third or {{min, max, below}}")


def fill(text: str, **fields) -> str:
    """``text`` with the placeholders ``{name}`` of ``fields`` filled in (other braces left alone)."""
    for name, value in fields.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def _theory_effect(spec) -> float | None:
    """A declared theory effect: a number, or ``{log_ratio: r, over: n}`` = log(r)/n."""
    if spec is None or isinstance(spec, int | float):
        return spec
    return math.log(spec["log_ratio"]) / spec.get("over", 1)


def _log(spec):
    return None if spec == "auto" else bool(spec) if spec is not None else True


def decide(res: Results, decl: dict, datasets: list[str] | None = None) -> list[Claim]:
    """The claim(s) of one declaration on one role's results (``datasets``: one panel, for
    ``per_dataset`` declarations)."""
    from ldprepro.claims import comparatives
    from ldprepro.claims.points import (
        best_of_points,
        equivalence_points,
        mechanism_trend_points,
        no_worse_points,
        outperform_kind,
        ratio_below_points,
        sweep_trend_points,
        theory_agreement_points,
        win_points,
    )

    test = decl["test"]
    if test == "function":
        return list(_function(decl["function"], decl["claim"])(res if datasets is None else res.only(datasets), decl))
    if decl.get("if_present") and not any(res.has(m) for m in decl["if_present"]):
        return []
    where, eps_hi = eps_filter(decl.get("eps"), res.eps_values())
    scope = fill(
        decl["scope"], dataset=datasets[0] if datasets else "", eps_hi=f"{eps_hi:g}" if eps_hi is not None else ""
    )
    kind = decl.get("kind")
    extra = {"evidence": decl["evidence"]} if decl.get("evidence") else {}
    if test in ("outperform", "no_worse"):
        sub = res if datasets is None else res.only(datasets)
        ties, margin = decl.get("check_ties", True), decl.get("fair_margin")
        pts = []
        for sel, within in _slices(sub, where, decl.get("where")):
            if test == "no_worse":
                found = no_worse_points(sub, decl["mechanism"], decl["against"], decl.get("margin", 1.0), within, **sel)
            elif isinstance(decl["mechanism"], list):  # a collective claim: best proposed vs best existing
                if sel:
                    raise DeclarationError(
                        f"{decl['claim']!r}: a collective claim (mechanism: a list) is not defined per domain size k"
                    )
                found = best_of_points(sub, decl["mechanism"], decl["against"], within, check_ties=ties, margin=margin)
            else:
                found = win_points(sub, decl["mechanism"], decl["against"], within, ties, margin, **sel)
            pts += _labelled(found, sel)
        kind = kind or outperform_kind(sub, decl["against"], where)
    elif test == "interaction":
        large = decl.get("large_eps")
        large_where = eps_filter(large, res.eps_values())[0] if large else comparatives.top_third(res.eps_values())
        sub = res if datasets is None else res.only(datasets)
        pts = comparatives.interaction_points(sub, decl["mechanism"], decl["against"], where, large_where)
        kind = kind or "range"
    elif test in ("sweep_trend", "mechanism_trend") and decl.get("shape") == "monotone":
        tol = float(decl.get("tolerance", 0.0))
        if test == "sweep_trend":
            pts = comparatives.sweep_step_points(
                res, decl["mechanism"], decl["sweep"], tol, _log(decl.get("log")), datasets
            )
        else:
            pts = [
                pt
                for ds in (datasets or res.datasets)
                for pt in comparatives.mechanism_step_points(res, ds, decl["x"], tol)
            ]
        kind = kind or "trend"
        if test == "sweep_trend" and decl.get("theory_effect") is not None:
            extra["theory_effect"] = _theory_effect(decl["theory_effect"])
    elif test == "sweep_trend":
        pts = sweep_trend_points(
            res,
            decl["mechanism"],
            decl["sweep"],
            log_x=decl.get("log_x", False),
            log=_log(decl.get("log")),
            datasets=datasets,
        )
        kind = kind or "trend"
        if decl.get("theory_effect") is not None:
            extra["theory_effect"] = _theory_effect(decl["theory_effect"])
    elif test == "mechanism_trend":
        pts = [pt for ds in (datasets or res.datasets) for pt in mechanism_trend_points(res, ds, decl["x"])]
        kind = kind or "trend"
    elif test == "equivalence":
        pts = []
        for sel, within in _slices(res, where, decl.get("where")):
            found = equivalence_points(
                res, decl["a"], decl["b"], decl["margin"], decl.get("x", "eps"), within, datasets, **sel
            )
            pts += _labelled(found, sel)
        kind = kind or "equivalence"
    elif test == "theory_agreement":
        pts = theory_agreement_points(res, decl["margin"], decl.get("metric"), datasets)
        kind = kind or "equivalence"
    else:  # ratio_below
        pts = ratio_below_points(
            res,
            decl["mechanism"],
            decl["against"],
            decl["bound"],
            decl.get("x", "eps"),
            datasets,
            decl.get("fair_margin"),
        )
        kind = kind or "range"
    if decl.get("skip_without_points") and not pts:
        return []
    return [res.claim(decl["claim"], scope, kind, points=pts, **extra)]


def _slices(res: Results, eps_where, condition: str | None) -> list[tuple[dict, Callable | None]]:
    """[(curve selection, ε filter)] of a pairwise test: one slice, or one per domain size k when the
    results have several (a frequency figure drawn against k); the filter is the ``eps`` scope and
    the ``where`` condition (``ldprepro.claims.conditions``) evaluated at the slice's k and n."""
    raw = res.raw
    by_k = len(raw) and "k" in raw and (res.fig or {}).get("kind") == "frequency"  # k: a frequency domain size
    ks = sorted(raw["k"].dropna().unique()) if by_k else []
    users = raw["n_users"].dropna().unique() if len(raw) and "n_users" in raw else []
    n = float(users[0]) if len(users) == 1 else None
    holds = conditions.parse(condition) if condition else None
    out = []
    for k in ks or [None]:
        sel = {"k": k} if len(ks) > 1 else {}
        kv = float(k) if k is not None else None

        def within(e, kv=kv):
            return (eps_where is None or eps_where(e)) and (holds is None or holds({"eps": e, "k": kv, "n": n}))

        out.append((sel, within if (eps_where is not None or holds is not None) else None))
    return out


def _labelled(points: list, sel: dict) -> list:
    """The points of one slice, their labels prefixed with it (``k=64 …``) when there are several."""
    import dataclasses

    if not sel:
        return points
    prefix = " ".join(f"{key}={value:g}" for key, value in sel.items())
    return [dataclasses.replace(p, label=f"{prefix} {p.label}") for p in points]
