"""Bytes to text for the loaders: which files are text, how each is decoded, and file
names that are not UTF-8.

Each file is decoded on its own: UTF-16/32 when it starts with a byte-order mark, else
UTF-8 (a BOM dropped), with every invalid byte replaced by U+FFFD and counted, so one
bad byte never changes how the rest of the file is read. An HTML file (``*.html``,
``*.htm``, ``*.xhtml``) gives its visible text (:func:`file_text`,
:mod:`bpetopics.text.markup`).
"""

from __future__ import annotations

import codecs
import os
import re

from bpetopics.text.markup import html_to_text, is_html_name

#: Byte-order marks of the UTF-16/32 encodings read besides UTF-8 (UTF-32 first: its
#: little-endian mark begins with UTF-16's).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
#: Bytes that are not UTF-8, as ``surrogateescape`` decodes them.
_BAD_BYTE_RE = re.compile("[\udc80-\udcff]")


def looks_binary(head: bytes) -> bool:
    """True for bytes that are not text: a NUL byte, or over 30% control bytes (text
    starting with a UTF-16/32 byte-order mark is text)."""
    if not head:
        return False
    if any(head.startswith(bom) for bom, _ in _BOMS):
        return False
    if b"\x00" in head:
        return True
    control = sum(head.count(bytes([c])) for c in range(32) if c not in (9, 10, 12, 13))
    return control > 0.3 * len(head)


def writable_name(path: str) -> str:
    """A file name as text that can be written anywhere: bytes of a name that is not
    UTF-8 (``os`` gives them as lone surrogates) become ``\\xNN`` escapes, so ids stay
    distinct and a corpus holding them can be saved."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", errors="backslashreplace")


def decode_bytes(raw: bytes) -> tuple[str, int]:
    """Decode one file's bytes: UTF-16/32 when they start with its byte-order mark, else
    UTF-8 (a BOM dropped); each byte that is not valid becomes U+FFFD.

    Returns
    -------
    text : str
    n_bad : int
        How many bytes (UTF-8) or code units (UTF-16/32) were replaced.
    """
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            text = raw.decode(codec, errors="replace")
            return text, text.count("\ufffd")
    try:
        return raw.decode("utf-8-sig"), 0
    except UnicodeDecodeError:
        text = raw.decode("utf-8-sig", errors="surrogateescape")
        n_bad = len(_BAD_BYTE_RE.findall(text))
        return _BAD_BYTE_RE.sub("\ufffd", text), n_bad


def replace_bad_bytes(text: str) -> tuple[str, int]:
    """Text decoded with ``errors="surrogateescape"`` (a CSV file read as UTF-8), each
    byte that was not valid UTF-8 replaced by U+FFFD: ``(text, n_replaced)``."""
    if text.isascii():
        return text, 0
    n_bad = len(_BAD_BYTE_RE.findall(text))
    return (_BAD_BYTE_RE.sub("\ufffd", text), n_bad) if n_bad else (text, 0)


def decode_text(raw: bytes) -> str:
    """Decode bytes as :func:`decode_bytes` does (UTF-8 or a marked UTF-16/32; invalid
    bytes replaced by U+FFFD): never fails."""
    return decode_bytes(raw)[0]


def file_text(name: str, raw: bytes) -> tuple[str, int]:
    """A file's text: its bytes decoded (:func:`decode_bytes`), and for an HTML file
    (by ``name``'s ending) the page's visible text (:func:`~bpetopics.text.markup.html_to_text`).

    Returns
    -------
    text : str
    n_bad : int
        Bytes (or code units) replaced by U+FFFD in decoding.
    """
    text, n_bad = decode_bytes(raw)
    return (html_to_text(text) if is_html_name(name) else text), n_bad
