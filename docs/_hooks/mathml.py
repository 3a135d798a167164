"""MkDocs hook: write the pages' equations as MathML when the site is built.

``pymdownx.arithmatex`` (generic mode) leaves each equation's TeX in
``<span class="arithmatex">\\(...\\)</span>`` or ``<div class="arithmatex">\\[...\\]</div>``,
for a script to typeset in the browser. That script came from a CDN, so a site opened
without a network showed raw TeX. This hook converts each equation to MathML with
``latex2mathml`` instead: browsers render MathML themselves, and the site needs nothing
from the network. An equation it cannot convert is logged as a warning, which fails
``mkdocs build --strict``.
"""

import html
import logging
import re

from latex2mathml.converter import convert

log = logging.getLogger("mkdocs.hooks.mathml")

_INLINE = re.compile(r'<span class="arithmatex">\\\((.*?)\\\)</span>', re.S)
_BLOCK = re.compile(r'<div class="arithmatex">\\\[(.*?)\\\]</div>', re.S)


def _mathml(match, display: str, page) -> str:
    tex = html.unescape(match.group(1)).strip()
    try:
        return convert(tex, display=display)
    except Exception as exc:  # noqa: BLE001 - any failure is reported, the TeX kept
        log.warning("%s: cannot write %r as MathML (%s)", page.file.src_path, tex[:60], exc)
        return match.group(0)


def on_page_content(content, page, config, files):
    content = _BLOCK.sub(lambda m: _mathml(m, "block", page), content)
    return _INLINE.sub(lambda m: _mathml(m, "inline", page), content)
