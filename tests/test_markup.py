"""Issue 54 item 2: the escaping functions of each output format (ldprepro.report.markup) and the
figure text, on constructed cases (the end-to-end case is tests/test_extension_examples.py)."""

from __future__ import annotations

import re

import jinja2
import matplotlib
import pytest
from docutils.core import publish_parts

from ldprepro.report.markup import html_text, markdown_text, rst_text

matplotlib.use("Agg")

INJECTED = [
    "PM beats Laplace\n\n.. raw:: html\n\n   <script>alert(5)</script>\n\n",
    "x\n\n.. include:: /etc/passwd\n",
    "<img src=x onerror=alert(1)>",
    "[link](http://evil.example/) ![image](http://evil.example/a.png) <http://evil.example/>",
    "*em* **strong** `code` ``literal`` |sub| ref_ `ref`_ [1]_ :math:`x` {% endraw %}{{ 7*7 }}",
    "# heading\n- item\n> quote\n1. one | cell |",
]


@pytest.mark.parametrize("text", INJECTED)
def test_rst_text_renders_as_the_text_itself(text):
    """Through Jinja (the report renders captions as templates) and docutils, the line is the text
    with its whitespace collapsed, nothing else: no directive ran, no element was made."""
    src = f"- Verdict: **holds** — {rst_text(text)} ({rst_text('scope')})\n"
    body = publish_parts(jinja2.Environment().from_string(src).render(), writer="html")["body"]
    item = re.search(r"<li>(.*)</li>", body, re.S).group(1)
    assert item == f"Verdict: <strong>holds</strong> — {html_text(' '.join(text.split()))} (scope)".replace(
        "&#x27;", "'"
    ).replace("&quot;", '"')


@pytest.mark.parametrize("text", INJECTED)
def test_markdown_text_escapes_every_construct(text):
    out = markdown_text(text)
    assert "\n" not in out and "<" not in out and ">" not in out
    # every Markdown punctuation character is escaped (CommonMark: a backslash before it makes it literal)
    unescaped = re.findall(r"(?<!\\)[`*_\[\]()#!|]", out)
    assert not unescaped, (out, unescaped)


def test_html_text_quotes_too():
    assert html_text("<a href=\"x\" title='y'>&") == "&lt;a href=&quot;x&quot; title=&#x27;y&#x27;&gt;&amp;"


def test_figure_text_is_drawn_as_written(tmp_path):
    """Titles, panel titles, axis labels and mechanism labels (legend) with mathtext: drawn as
    written, an unbalanced one included (it stopped the render); log tick labels keep their math."""
    from ldprepro.report.plotting import plt, save_figure

    fig, ax = plt.subplots()
    ax.plot([1, 2], [1e-3, 1e-1], label="mechanism $\\alpha$ label")
    ax.set_yscale("log")
    ax.set_title("panel $\\frac{$ title")
    ax.set_ylabel("$x^2$ label")
    ax.legend()
    fig.suptitle("<script>alert(1)</script> $x$")
    save_figure(fig, tmp_path / "f.png", tmp_path / "f.svg")
    svg = (tmp_path / "f.svg").read_text()
    for text in ("mechanism $\\alpha$ label", "panel $\\frac{$ title", "$x^2$ label", "&lt;script&gt;alert(1)"):
        assert f"<!-- {text}" in svg, text
    assert "<script" not in svg and "$\\mathdefault{10^{-3}}$" in svg


def test_data_cards_html_escapes_the_description():
    from ldprepro.report.tables import data_cards_html

    card = {"dataset": "d", "description": "<script>alert(1)</script>", "rows_before_cleaning": 1, "columns": []}
    page = data_cards_html([card])
    assert "<script>alert" not in page


def test_declared_tick_labels_are_drawn_as_written(tmp_path):
    """Tick labels set from declared text (a claim's scope on the forest plot, category names)."""
    from ldprepro.report.plotting import literal_text, plt, save_figure

    fig, (a, b) = plt.subplots(2)
    a.set_yticks([0, 1], labels=["scope $\\frac{$ one", "two $x$"])
    b.bar(["cat $\\frac{$", "other"], [1, 2])
    literal_text(fig)
    fig.tight_layout()  # measures every text: an unbalanced $ stopped it here
    save_figure(fig, tmp_path / "f.png", tmp_path / "f.svg", crop=False)
    svg = (tmp_path / "f.svg").read_text()
    assert "scope $\\frac{$ one" in svg and "cat $\\frac{$" in svg


def test_wrapped_text_is_drawn_as_written(tmp_path):
    """A wrapped title (the forest plot's claim headings): matplotlib measures it as mathtext."""
    from ldprepro.report.plotting import literal_text, plt

    fig, ax = plt.subplots()
    ax.set_title("claim $\\frac{$ " * 12, wrap=True)
    literal_text(fig)
    literal_text(fig)  # idempotent
    fig.tight_layout()
    fig.savefig(tmp_path / "f.svg")
    assert "claim $\\frac{$ claim" in (tmp_path / "f.svg").read_text()


@pytest.mark.parametrize("text", [".. raw:: html\n\n   <b>x</b>", "1. one", "a) one", "- item", ":field: x", "| line"])
def test_rst_text_at_the_start_of_a_list_item_stays_text(text):
    """Where a declared text opens a line (a bullet's body), it cannot open a directive or a list."""
    body = publish_parts(f"- {rst_text(text)}\n", writer="html")["body"]
    item = re.search(r"<li>(.*)</li>", body, re.S).group(1)
    assert item == html_text(" ".join(text.split())).replace("&#x27;", "'").replace("&quot;", '"')


def test_a_full_disk_during_a_render_leaves_no_file_behind(tmp_path, monkeypatch):
    """Issue 54, untried probe: the disk fills while a figure is written. The error (ENOSPC) stops the
    job; neither a cut PNG nor a temporary is left (the next run draws it again)."""
    import errno

    from matplotlib.figure import Figure

    from ldprepro.report.plotting import plt, save_figure

    def full(self, fname, *args, **kwargs):
        with open(fname, "wb") as fh:
            fh.write(b"\x89PNG\r\n\x1a\n half")
        raise OSError(errno.ENOSPC, "No space left on device")

    fig, ax = plt.subplots()
    ax.plot([0, 1])
    monkeypatch.setattr(Figure, "savefig", full)
    with pytest.raises(OSError, match="No space left"):
        save_figure(fig, tmp_path / "f.png", tmp_path / "f.svg")
    assert list(tmp_path.iterdir()) == []
