"""Report captions generated from claims tables (issue 17): title, the paper's claim, one verdict line
per claim with its test, parameters in words, panels not available here; rst- and Jinja-safe."""

import math

import jinja2
import pandas as pd
from docutils.core import publish_parts

from ldprepro.claims.verdicts import CLAIM_COLUMNS
from ldprepro.report.captions import figure_caption, parameters_text


def claims(*rows):
    base = dict.fromkeys(CLAIM_COLUMNS, math.nan)
    base.update(paper="p", figure="fig1", scope="every ε", kind="pairwise", data_role="paper", evidence="")
    return pd.DataFrame([{**base, **r} for r in rows])


def render(rst: str) -> str:
    """As `snakemake --report` does: Jinja2 first, then docutils."""
    return publish_parts(jinja2.Environment().from_string(rst).render(), writer="html")["body"]


def test_every_claim_gets_a_verdict_line_with_its_test():
    c = claims(
        dict(
            claim="A beats B",
            verdict="holds",
            test="ratio of means",
            effect=0.8,
            ci_low=0.7,
            ci_high=0.9,
            p_value=1e-4,
            p_holm=3e-4,
            ci_level=0.95,
            p_sides=2,
            n_reps=400,
        ),
        dict(claim="C is unbiased", verdict="does not hold", test="exact computation", effect=-0.04),
        dict(
            claim="D at large ε",
            verdict="inconclusive",
            test="paired t",
            effect=1.1,
            ci_low=0.9,
            ci_high=1.3,
            p_value=0.2,
            p_holm=0.4,
            n_reps=50,
        ),
        dict(
            claim="E on our data",
            verdict="holds",
            test="paired t",
            effect=0.5,
            ci_low=0.4,
            ci_high=0.6,
            p_value=1e-6,
            p_holm=1e-6,
            n_reps=100,
            data_role="substitute",
        ),
        dict(claim="F", verdict="not testable", test="", evidence="needs the IPUMS extract"),
    )
    html = render(figure_caption("Fig. 1: MSE vs ε", "The paper claims A beats B.", c, {}, {}))
    assert html.count("Verdict: <strong>") == 5
    assert "<strong>Fig. 1: MSE vs ε</strong>" in html and "The paper claims A beats B." in html
    assert "ratio of means: 0.8 [0.7, 0.9] (95 %), p = 0.0001 two-sided (Holm 0.0003), n = 400" in html
    assert "exact computation: -0.04." in html  # exact: no p-value
    assert "our stand-in data: does not count as reproducing the paper" in html
    assert "<strong>not testable</strong> — F (every ε). needs the IPUMS extract" in html


def test_a_figure_without_claims_says_so_and_unavailable_panels_are_named():
    html = render(figure_caption("T", "prose", claims().iloc[0:0], {}, {"ipums_us": "IPUMS extract not configured"}))
    assert "Verdict: <strong>not testable</strong>" in html
    assert "ipums_us: IPUMS extract not configured" in html


def test_parameters_are_words_not_a_dict():
    entry = {"eps": [0.1, 1.0], "mechanisms": ["pm", "hm"], "sweep": {"mu": [1, 2]}, "reps": 100, "panels": [{}]}
    assert parameters_text(entry) == [
        "ε: 0.1, 1",
        "mechanisms: pm, hm",
        "swept: mu ∈ {1, 2}",
        "repetitions (curve): 100",
    ]


def test_markup_in_claims_stays_literal():
    c = claims(
        dict(
            claim="x* {{ not jinja }} |y| `z`",
            verdict="holds",
            test="t",
            effect=1.0,
            p_value=0.01,
            p_holm=0.01,
            n_reps=5,
            ci_low=0.5,
            ci_high=2.0,
        )
    )
    html = render(figure_caption("T", "p", c, {}, {}))
    assert "x* {{ not jinja }} |y| `z`" in html
