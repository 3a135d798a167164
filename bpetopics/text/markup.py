"""The visible text of an HTML page (Python's ``html.parser``, no dependency).

A folder of saved web pages read as plain text would fill the vocabulary with markup
("div", "href", "nbsp") and with scripts and style sheets. :func:`html_to_text` keeps
what a browser shows as text, with entities decoded:

* the contents of ``script``, ``style``, ``noscript``, ``template``, ``svg`` and ``math``
  are dropped, and so are ``head``'s (but for its ``title``; a ``head`` left open ends
  where ``body`` starts) and comments;
* white space inside a run of text collapses to one space, as a browser renders it
  (``pre`` keeps its line breaks);
* a block element (a paragraph, heading, list item, table row, ``div``...) starts and
  ends a paragraph, written as a blank line, and ``br`` a line break, so that
  ``--passages paragraphs`` (:mod:`bpetopics.text.passages`) cuts a page where it shows
  its paragraphs.

The loaders apply it to files named ``*.html``, ``*.htm`` and ``*.xhtml``
(:data:`HTML_SUFFIXES`; :func:`bpetopics.text.decoding.file_text`).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

#: File name endings read as HTML (lower case).
HTML_SUFFIXES = (".html", ".htm", ".xhtml")

#: Elements whose contents are not shown as text.
HIDDEN = frozenset({"script", "style", "noscript", "template", "svg", "math"})
#: Elements that start and end a paragraph.
BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "caption", "dd", "details", "dialog", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "td", "th", "title", "tr", "ul",
})
#: Elements that have no end tag, so they never open a hidden or pre-formatted part.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                  "wbr"})

_SPACE = re.compile(r"\s+")
_PARAGRAPH = "\n\n"


class _VisibleText(HTMLParser):
    """Collects the visible text of a page as paragraphs (:func:`html_to_text`)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0          # depth inside hidden elements
        self.in_head = False     # inside <head> (until </head> or <body>)
        self.title = 0           # depth inside <title> (shown although it is in <head>)
        self.pre = 0             # depth inside <pre>

    def handle_starttag(self, tag, attrs):
        self._open(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "br":
            self.parts.append("\n")
        elif tag in BLOCKS:
            self.parts.append(_PARAGRAPH)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if tag == "head":
            self.in_head = False
        elif tag == "title":
            self.title = max(0, self.title - 1)
        elif tag in HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag in BLOCKS:
            self.parts.append(_PARAGRAPH)

    def _open(self, tag):
        if tag == "br":
            self.parts.append("\n")
            return
        if tag in VOID:
            return
        if tag in ("head", "body"):
            self.in_head = tag == "head"
        elif tag == "title":
            self.title += 1
        elif tag in HIDDEN:
            self.hidden += 1
        elif tag == "pre":
            self.pre += 1
        if tag in BLOCKS:
            self.parts.append(_PARAGRAPH)

    def handle_data(self, data):
        if self.hidden or (self.in_head and not self.title):
            return
        self.parts.append(data if self.pre else _SPACE.sub(" ", data))


def html_to_text(markup: str) -> str:
    """The visible text of ``markup`` (the module docstring says what is kept), its
    paragraphs separated by blank lines, each line stripped of surrounding spaces.

    Parameters
    ----------
    markup : str
        An HTML page or fragment; malformed markup is read as far as it goes (never
        raises).

    Returns
    -------
    str
    """
    parser = _VisibleText()
    parser.feed(markup)
    parser.close()
    lines = [line.strip() for line in "".join(parser.parts).split("\n")]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def is_html_name(name: str) -> bool:
    """Whether a file name ends in one of :data:`HTML_SUFFIXES` (any case)."""
    return name.lower().endswith(HTML_SUFFIXES)
