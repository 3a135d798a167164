"""Render the LDAvis page in headless Chromium: no JavaScript error, the SVG is drawn,
and nothing is fetched from the network (host resolution is disabled).

Needs `chromium` on PATH (Debian: `apt-get install -y --no-install-recommends chromium`).
"""

import re
import shutil
import subprocess

import pytest

from .conftest import LDA_T

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless browser test: no chromium on PATH (apt-get install -y --no-install-recommends chromium)",
)

# installed first in <head>: records uncaught errors, failed resources and console.error
# calls on the <html> element, where --dump-dom shows them
ERROR_HOOK = """<script>
(function(){
  var errs = [];
  function note(msg){ errs.push(String(msg)); document.documentElement.setAttribute("data-js-errors", JSON.stringify(errs)); }
  window.addEventListener("error", function(e){ note(e.message || ("failed to load " + (e.target && (e.target.src || e.target.href)))); }, true);
  window.addEventListener("unhandledrejection", function(e){ note("unhandled rejection: " + e.reason); });
  var orig = console.error; console.error = function(){ note(Array.prototype.join.call(arguments, " ")); return orig.apply(console, arguments); };
  document.documentElement.setAttribute("data-js-errors", "[]");
})();
</script>"""


def _render(page, tmp_path):
    hooked = tmp_path / "hooked.html"
    html = page.read_text(encoding="utf-8")
    hooked.write_text(html.replace("<head>", "<head>\n" + ERROR_HOOK, 1), encoding="utf-8")
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # an external <script src> would fail
        "--virtual-time-budget=3000", "--dump-dom", hooked.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, proc.stderr


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
