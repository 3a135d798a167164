"""Driving headless Chromium for the page tests: render a page with an error hook
installed (uncaught errors, failed resources and console.error calls recorded on the
<html> element) and host resolution disabled, and return the DOM after its scripts ran.

Needs `chromium` on PATH (Debian: `apt-get install -y --no-install-recommends chromium`).
"""

import shutil
import subprocess

import pytest

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)

needs_chromium = pytest.mark.skipif(
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


def render(page, tmp_path, after_body: str = ""):
    """(DOM, stderr) of ``page`` rendered offline; ``after_body``: a script run after the page's own."""
    hooked = tmp_path / "hooked.html"
    html = page.read_text(encoding="utf-8")
    html = html.replace("<head>", "<head>\n" + ERROR_HOOK, 1)
    if after_body:
        html = html.replace("</body>", after_body + "\n</body>", 1)
    hooked.write_text(html, encoding="utf-8")
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


def page_errors(dom: str, stderr: str) -> list[str]:
    """The errors a rendered page reported: console lines of Chromium's log, and those
    the error hook recorded (an assertion error when the hook did not run)."""
    import json
    import re
    from html import unescape

    console = [line for line in stderr.splitlines() if ":CONSOLE" in line]
    bad = [line for line in console if re.search(r"Uncaught|Error|failed to load", line, re.I)]
    m = re.search(r'data-js-errors="([^"]*)"', dom)
    assert m, "the error hook did not run: " + stderr[-2000:]
    return bad + json.loads(unescape(m.group(1)))
