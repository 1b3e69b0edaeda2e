"""The reproduction card of a paper (issue 51.3, ldprepro.report.cards) on constructed claims tables:
today's columns, and those the fair reading adds (verdict_strict, statement, finding, counted,
reconstructed, panels); config and claim text written as data, never as Markdown markup."""

from __future__ import annotations

import pandas as pd

from ldprepro.claims.verdicts import CLAIM_COLUMNS
from ldprepro.report.cards import reproduction_card
from ldprepro.report.markup import markdown_link, markdown_text

LONG_REASON = (
    "IPUMS extract not configured (set IPUMS_API_KEY or put the extract under ipums.extract_dir; "
    "see docs/data.md) " + "x" * 200
)
FIGURES = [
    {
        "paper": "toy",
        "figure": "fig1",
        "title": "MSE | vs ε",
        "status": "partial",
        "reason": "missing census",
        "unavailable": {"census": LONG_REASON},
        "panels": [
            {"dataset": "census", "data_role": "paper"},
            {"dataset": "adult", "data_role": "paper"},
            {"dataset": "synthetic", "data_role": "substitute"},
        ],
    },
    {"paper": "toy", "figure": "fig2", "title": "t2", "status": "built", "reason": "", "unavailable": {}, "panels": []},
    {"paper": "other", "figure": "fig1", "title": "x", "status": "built", "reason": "", "unavailable": {}},
]


#: the claims-table columns before the fair reading (issue 51) added its own
FAIR_READING_COLUMNS = ("verdict_strict", "statement", "finding", "counted", "reconstructed", "panels")
LEGACY_COLUMNS = [c for c in CLAIM_COLUMNS if c not in FAIR_READING_COLUMNS]


def row(figure, claim, verdict, *, kind="pairwise", role="paper", robustness="robust", **extra) -> dict:
    r = dict.fromkeys(LEGACY_COLUMNS, None)
    r |= {"paper": "toy", "figure": figure, "claim": claim, "scope": "every ε", "kind": kind, "test": "t"}
    r |= {"effect": 1.5, "data_role": role, "verdict": verdict, "robustness": robustness, "evidence": "e"}
    return r | extra


def today() -> pd.DataFrame:
    """The claims table's columns as the pipeline writes them before the fair reading."""
    return pd.DataFrame(
        [
            row("fig1", "A beats *B* | always <script>", "holds"),
            row("fig1", "Theorem 7: A is ε-LDP", "does not hold", kind="closed-form"),
            row("fig2", "Theorem 7: A is ε-LDP", "does not hold", kind="closed-form"),
            row("fig2", "Lemma 1: the variance is v", "holds", kind="closed-form"),
            row("fig1", "A beats B on the stand-in", "inconclusive", role="substitute"),
            row("fig2", "EM in low dimension is fast", "does not hold", robustness="depends on: time read as CPU"),
            {**row("fig1", "elsewhere", "holds"), "paper": "other"},
        ],
        columns=LEGACY_COLUMNS,
    )


DECLARATIONS = {
    "fig1": [{"claim": "A beats *B* | always <script>", "readings": ["'always' read as every ε [I]"]}],
    "fig2": [
        {"claim": "EM in low dimension is fast", "reconstructed": True, "readings": ["'low' read as k = 2 (ours)"]}
    ],
}


def sections(card: str) -> dict[str, str]:
    out, name = {}, ""
    for line in card.splitlines():
        if line.startswith("## "):
            name = line[3:]
            out[name] = ""
        elif name:
            out[name] += line + "\n"
    return out


def test_card_on_todays_table():
    card = reproduction_card("toy", FIGURES, today(), DECLARATIONS, "smoke", 7)
    s = sections(card)
    assert list(s) == [
        "Headline",
        "Figures and panels",
        "Errors in the paper's theorems and algorithms",
        "Experimental claims: the fair and the literal reading",
        "Claims reconstructed by us",
    ]
    # the theorem found in two figures is one finding; the reconstructed claim is not counted
    assert "2 checked, 1 erroneous" in s["Headline"]
    assert "fair reading: 1 holds; literal reading: 1 holds (1 claims)" in s["Headline"]
    assert "Claims reconstructed by us (not counted above): 1" in s["Headline"]
    assert s["Errors in the paper's theorems and algorithms"].count("Theorem 7") == 1
    assert "| fig1, fig2 |" in s["Errors in the paper's theorems and algorithms"]
    # panels: the paper's data, the stand-in, and the missing one with a brief reason and the data page
    fig1 = next(line for line in s["Figures and panels"].splitlines() if line.startswith("| fig1"))
    assert "| adult | synthetic |" in fig1 and "census: IPUMS extract not configured" in fig1
    assert "x" * 100 not in fig1 and "](../../docs/data.md)" in fig1
    # reconstructed claim shown apart, with its reading; the other paper's rows are not on the card
    assert "EM in low dimension is fast" in s["Claims reconstructed by us"]
    assert "EM in low dimension" not in s["Experimental claims: the fair and the literal reading"]
    assert r"'low' read as k = 2 \(ours\)" in s["Claims reconstructed by us"]  # as Markdown text
    assert "elsewhere" not in card
    # today's table has no literal column: the literal reading is the verdict
    assert "0 of 2 verdicts differ" in s["Experimental claims: the fair and the literal reading"]


def test_card_with_the_fair_reading_columns():
    t = today()
    t["verdict_strict"] = t["verdict"]
    t.loc[0, ["verdict", "verdict_strict"]] = ["holds", "does not hold"]
    t["statement"] = ["experimental", "theorem", "theorem", "experimental", "experimental", "experimental", "x"]
    t["finding"] = ["", "bshp-thm7", "bshp-thm7", "", "", "", ""]
    t["counted"] = [True, True, False, True, True, True, True]
    t["reconstructed"] = [False, False, False, False, False, True, False]
    t["panels"] = ["1 of 4 panels", "", "", "", "", "", ""]
    card = reproduction_card("toy", FIGURES, t, {}, "paper", 1)
    s = sections(card)
    # Lemma 1 is an experimental statement here (the table says so): one finding, Theorem 7, erroneous
    assert "1 checked, 1 erroneous" in s["Headline"]
    assert "fair reading: 2 holds; literal reading: 1 holds, 1 does not hold (2 claims)" in s["Headline"]
    exp = s["Experimental claims: the fair and the literal reading"]
    assert "1 of 3 verdicts differ" in exp
    first = next(line for line in exp.splitlines() if "always" in line)
    assert "| holds | does not hold | 1 of 4 panels |" in first
    assert "EM in low dimension is fast" in s["Claims reconstructed by us"]


def test_claim_text_is_data_not_markup():
    card = reproduction_card("toy", FIGURES, today(), DECLARATIONS, "smoke", 7)
    assert "<script>" not in card and "&lt;script&gt;" in card
    assert r"A beats \*B\* \| always" in card  # emphasis and a cell break, escaped
    assert r"MSE \| vs ε" in card
    for line in card.splitlines():  # every table row keeps its column count
        if line.startswith("| fig"):
            assert line.replace(r"\|", "").count("|") in (7, 6, 9), line


def test_markdown_escaping():
    assert markdown_text("# a\n- b\n3. c") == "\\# a \\- b 3\\. c"  # one line, no heading or list
    assert markdown_text("a|b\nc") == "a\\|b c"
    assert markdown_text("[x](javascript:y) `code` _u_ ~s~ & <b>") == (
        "\\[x\\]\\(javascript\\:y\\) \\`code\\` \\_u\\_ \\~s\\~ &amp; &lt;b&gt;"
    )
    assert markdown_text(None) == "" and markdown_text(float("nan")) == ""
    assert markdown_link("a [b]", "x y(1).md") == "[a \\[b\\]](x%20y%281%29.md)"
