"""Issue #11: no hang, no traceback, no lost run, on what a user can throw at the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import one_line_error

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with this checkout first on the path (a hang
    fails the test through the timeout instead of hanging the suite)."""
    full_env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def test_corpus_errors_returns_after_an_ordinary_warning():
    done = _python("import warnings\nfrom bpetopics.cli import corpus_errors\n"
                   "with corpus_errors():\n    warnings.warn('x')\nprint('returned')", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "returned"
    assert "UserWarning: x" in done.stderr  # re-emitted once, after the block


def test_corpus_20newsgroups_without_data_fails_fast_with_one_line(tmp_path):
    empty = tmp_path / "sklearn"
    empty.mkdir()
    # no download can succeed: every URL goes through a proxy that refuses connections
    env = {"SCIKIT_LEARN_DATA": str(empty), "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    done = _python("from bpetopics.cli import main\nmain(['corpus', '20newsgroups', '--out', "
                   f"{str(tmp_path / 'out')!r}])", env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: cannot load 20 Newsgroups"), done.stderr
    assert not (tmp_path / "out").exists()
