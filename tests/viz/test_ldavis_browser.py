"""Render the LDAvis page in headless Chromium: no JavaScript error, the SVG is drawn,
and nothing is fetched from the network (host resolution is disabled).

Needs `chromium` on PATH (Debian: `apt-get install -y --no-install-recommends chromium`).
"""

import re

from .browser import needs_chromium, render as _render
from .conftest import LDA_T

pytestmark = needs_chromium


def test_ldavis_page_renders_without_js_errors(ldavis_page, tmp_path):
    dom, stderr = _render(ldavis_page, tmp_path)
    console = [line for line in stderr.splitlines() if ":CONSOLE" in line]
    bad = [line for line in console if re.search(r"Uncaught|Error|failed to load", line, re.I)]
    assert not bad, "\n".join(bad)
    m = re.search(r'data-js-errors="([^"]*)"', dom)
    assert m, "the error hook did not run: " + stderr[-2000:]
    assert m.group(1) == "[]", m.group(1)
    # LDAvis drew its svg: one circle per topic in the left panel, term bars on the right
    assert "<svg" in dom
    assert len(re.findall(r'<circle[^>]*class="dot"', dom)) == LDA_T
    assert "Intertopic Distance Map" in dom
    assert ">t0a<" in dom or "t0a" in dom


def test_browser_check_catches_a_broken_page(tmp_path):
    """The check itself works: a page that throws, or needs a CDN, is caught."""
    page = tmp_path / "broken.html"
    page.write_text(
        '<html><head></head><body><script src="https://d3js.org/d3.v5.js"></script>'
        "<script>d3.select('body');</script></body></html>",
        encoding="utf-8",
    )
    dom, stderr = _render(page, tmp_path)
    assert "d3 is not defined" in dom or "Uncaught ReferenceError" in stderr
    assert "<svg" not in dom
