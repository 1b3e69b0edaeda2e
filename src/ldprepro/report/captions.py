"""Report captions generated from results: a figure's title, the paper's claim (the static prose of
src/ldprepro/papers/<paper>/captions/<fig>.rst), one line per claim with our verdict and its test, the figure's
parameters in words, and the panels that could not be drawn here. Nothing is typed by hand."""

from __future__ import annotations

import pandas as pd

from ldprepro.claims.tables import effect_text, p_text
from ldprepro.report.markup import rst_text

#: config keys shown as the figure's parameters (in this order), with their readable names
PARAMETERS = {
    "eps": "ε",
    "mechanisms": "mechanisms",
    "methods": "methods",
    "sweep": "swept",
    "reps": "repetitions (curve)",
    "test_reps": "repetitions (tests)",
    "runs": "runs",
    "folds": "cross-validation folds",
    "cv_repetitions": "cross-validation repetitions",
    "model": "model",
    "metric": "metric",
    "n": "users",
    "ratio": "sampling ratio",
}


def _value(v) -> str:
    if isinstance(v, dict):
        return "; ".join(
            f"{k} ∈ {{{', '.join(map(str, x))}}}" if isinstance(x, list) else f"{k} = {x}" for k, x in v.items()
        )
    if isinstance(v, list | tuple):
        return ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v)
    return f"{v:g}" if isinstance(v, float) else str(v)


#: the names that differ by the figure's kind (a histogram figure's ``folds`` are its consumers' queries)
KIND_PARAMETERS = {"histogram": {"folds": "consumers' queries (bins)"}}


def parameters_text(entry: dict) -> list[str]:
    """'ε: 0.1, 0.2, …' lines for the figure's configured parameters that a reader needs."""
    labels = {**PARAMETERS, **KIND_PARAMETERS.get(entry.get("kind"), {})}
    return [
        f"{label}: {_value(entry[k])}" for k, label in labels.items() if k in entry and entry[k] not in (None, [], {})
    ]


def claim_line(r) -> str:
    """'**holds** — claim (scope). test: effect [CI], p (Holm), n = 400'."""
    role = " [our stand-in data: does not count as reproducing the paper]" if r.data_role == "substitute" else ""
    n = "" if pd.isna(r.n_reps) else f", n = {int(r.n_reps)}"
    p = "" if pd.isna(r.p_value) else f", p = {p_text(r)}"
    test = f" Test: {rst_text(r.test)}: {effect_text(r)}{p}{n}." if r.verdict != "not testable" else ""
    why = f" {rst_text(r.evidence)}" if r.verdict == "not testable" else ""
    robust = getattr(r, "robustness", "—")
    if isinstance(robust, str) and robust.startswith("depends on"):
        why += f" Not robust to our readings: {rst_text(robust.removeprefix('depends on: '))}."
    return f"- Verdict: **{r.verdict}** — {rst_text(r.claim)} ({rst_text(r.scope)}){role}.{test}{why}"


def figure_caption(title: str, prose: str, claims: pd.DataFrame, entry: dict, unavailable: dict[str, str]) -> str:
    """The rst caption of one figure (see the module docstring)."""
    lines = [
        "{% raw %}",
        f"**{rst_text(title)}**",
        "",
        prose.strip(),
        "",
        "**Our verdicts** (claims table: details and evidence)",
        "",
    ]
    if len(claims):
        lines += [claim_line(r) for r in claims.itertuples()]
    else:
        lines.append("- Verdict: **not testable** — no claim of the paper is attached to this figure.")
    params = parameters_text(entry)
    if params:
        lines += ["", "**Parameters**", ""] + [f"- {rst_text(p)}" for p in params]
    if unavailable:
        lines += ["", "**Not available here**", ""] + [
            f"- {rst_text(ds)}: {rst_text(why)}" for ds, why in sorted(unavailable.items())
        ]
    lines += ["{% endraw %}", ""]
    return "\n".join(lines)
