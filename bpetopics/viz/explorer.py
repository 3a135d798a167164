"""The browser explorer: one self-contained HTML page (no network) from the data of
:func:`bpetopics.runs.explorer.explorer_data`.

The page is plain HTML, CSS and JavaScript (``assets/explorer.js``, ``explorer.css``,
drawn with SVG; no library): the data goes in as JSON, every ``<`` written ``\\u003c`` so that
no word of the corpus can end the script element.
"""

from __future__ import annotations

import html
import json
import os
from importlib import resources
from pathlib import Path

from bpetopics.files import write_text_atomic

__all__ = ["explorer_html", "write_explorer_html"]


def _asset(name: str) -> str:
    return resources.files("bpetopics.viz").joinpath("assets", name).read_text(encoding="utf-8")


def explorer_html(data: dict, title: str | None = None) -> str:
    """The page as a string: ``data`` (JSON-safe) embedded, the script and style inline."""
    title = title or f"Topics of {data.get('run', 'a run')}"
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("<", "\\u003c")     # inside JSON strings only: the same text
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>\n{_asset('explorer.css')}</style>\n</head>\n<body>\n"
            f'<script type="application/json" id="explorer-data">{payload}</script>\n'
            f"<script>\n{_asset('explorer.js')}</script>\n</body>\n</html>\n")


def write_explorer_html(data: dict, path: str | os.PathLike, title: str | None = None) -> Path:
    """Write :func:`explorer_html` to ``path`` atomically; return ``path``."""
    write_text_atomic(path, explorer_html(data, title))
    return Path(path)
