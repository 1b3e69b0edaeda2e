r"""Declared text is data, never markup (issue 54 item 2): one escaping function per output format.

Every string a user can declare (a claim, a figure's or panel's title, a dataset's description, a
mechanism's label, a reason built from any of them) passes through the function of the format it is
written into, at the point where it is written:

- :func:`rst_text`: reST (the report captions, results/<paper>/<fig>/caption.rst, and the report's
  description). One line; its first character and every character of inline markup backslash-escaped
  (``\ ` * _ | [ ] < > { } % : @``): no directive (``.. raw:: html``, which needs a line of its
  own), list or field, role, reference, substitution, emphasis, literal, standalone link or Jinja tag
  (``{%``, ``{{``: the report renders captions as templates) can form, and docutils escapes
  ``<``/``>`` on output.
- :func:`markdown_text`: Markdown (docs/figures/verdicts.md, the README block, the dataset page,
  reproduction cards). One line, ``& < >`` as entities (no raw HTML), Markdown punctuation
  backslash-escaped (no link, autolink, image, emphasis, code span, heading, list, table cell break
  or ``$…$`` math, which GitHub typesets).
- :func:`html_text`: HTML (the report's tables): :func:`html.escape`, quotes included.
- Figure text (matplotlib's mathtext, ``$…$``): :func:`ldprepro.report.plotting.literal_text`, applied
  to every figure as it is saved.

SVG needs nothing of its own: matplotlib writes text into SVG as escaped character data.
"""

from __future__ import annotations

import html
import re

#: reST's inline markup, standalone links (``http:``, ``a@b``) and Jinja's tags
_RST_MARKUP = re.compile(r"([\\`*_|\[\]<>{}%:@])")
#: Markdown's backslash-escapable punctuation (CommonMark), less ``& < >`` (written as entities)
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:$])")


def one_line(text) -> str:
    """``text`` as one line: every run of whitespace (newlines, tabs) one space."""
    return " ".join(str(text).split())


def rst_text(text) -> str:
    """``text`` as literal reST inline text on one line (see the module docstring)."""
    line = one_line(text)
    if not line:
        return line
    # the first character too: at the start of a line (a list item's) it could open a directive
    # (".."), a list ("-", "1.", "a)", "#."), a field, a line block or a section
    plain_start = line[0].isalpha() and line[1:2] not in (".", ")")
    return (line[0] if plain_start else "\\" + line[0]) + _RST_MARKUP.sub(r"\\\1", line[1:])


def markdown_text(text) -> str:
    """``text`` as literal Markdown inline text on one line, safe in a table cell (``None`` and NaN:
    an empty string)."""
    if text is None or (isinstance(text, float) and text != text):
        return ""
    escaped = one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", escaped)


def markdown_link(label, target: str) -> str:
    """A Markdown link whose label is :func:`markdown_text` and whose target (a path we build, never
    config text) has its parentheses and spaces percent-encoded."""
    safe = str(target).replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    return f"[{markdown_text(label)}]({safe})"


def html_text(text) -> str:
    """``text`` as HTML character data or an attribute value."""
    return html.escape(str(text), quote=True)
