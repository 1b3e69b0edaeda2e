"""Text from config, declarations and tables written into generated Markdown as data, never as markup.

A claim's words, a dataset's unavailability reason or a reading may hold ``|`` (which would split a
table cell), ``*``, ``_``, backquotes, brackets, ``<tag>`` or a newline; written as they are, they
would restyle the page, break its tables or inject HTML. :func:`text` escapes every character that
CommonMark or GitHub's tables read as markup; :func:`cell` also folds line breaks, for table cells.
"""

from __future__ import annotations

import re

#: characters that are markup anywhere in a line: emphasis, code, links and images, table cells,
#: strikethrough, escapes (``( ) !`` are links only after an escaped ``]``, so they stay as they are)
_MARKUP = re.compile(r"([\\`*_\[\]|~])")
#: what is markup only at the start of a line: headings, list items, ordered lists, setext rules
_LINE_START = re.compile(r"^(\s*)([#+=-]|\d+(?=[.)]))", flags=re.M)
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def _escape_line_start(m: re.Match) -> str:
    """``\\#``, ``\\-``, … for a heading or bullet; ``12\\.`` for an ordered-list number."""
    indent, mark = m.group(1), m.group(2)
    return indent + (mark + "\\" if mark[0].isdigit() else "\\" + mark)


def text(value) -> str:
    """``value`` as literal Markdown text: HTML's ``& < >`` as entities, markup characters
    backslash-escaped (rendered as themselves), a heading or list marker at a line's start escaped.
    ``None`` and NaN give an empty string."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    s = _MARKUP.sub(r"\\\1", "".join(_HTML.get(ch, ch) for ch in str(value)))
    return _LINE_START.sub(_escape_line_start, s)


def cell(value) -> str:
    """:func:`text` for a table cell: line breaks folded into spaces (a cell is one line)."""
    return " ".join(text(value).split())


def link(label, target: str) -> str:
    """A Markdown link whose label is escaped text and whose target (a path we build, never config
    text) has its parentheses and spaces percent-encoded."""
    safe = str(target).replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    return f"[{text(label)}]({safe})"
