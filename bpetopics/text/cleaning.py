"""Cleaning raw messages and turning them into tokens.

Each function takes one raw message (a ``str``) and returns a ``str`` (or a list of
tokens), so a folder of raw newsgroup posts gets the same treatment as 20 Newsgroups.
They do what scikit-learn's ``fetch_20newsgroups(remove=("headers", "footers",
"quotes"))`` does, with these differences, each chosen so that plain (non-news) text is
left alone and so that no header or quoted line survives:

* :func:`strip_headers` removes the leading block only when it *is* a header block
  (``Field: value`` lines and folded continuations, with a known field such as ``From``
  or ``Subject``); scikit-learn cuts everything before the first blank line of any
  text. It also removes header lines of forwarded messages inside the body.
* :func:`strip_quotes` removes lines starting with ``>`` or ``|`` (also after up to three
  letters of initials, as in ``LM> ...``) and attribution lines (``In article ...``,
  ``... writes:``); scikit-learn drops any line that merely contains ``said:``.
* :func:`strip_footer` cuts at a signature separator (``--``, ``-- ``, or a rule of
  ``-=_*~#+`` above a signature-like tail) among the last ``max_lines`` lines and
  leaves a text without one alone;
  scikit-learn cuts at the last blank line, which often takes the last paragraph of
  the message with it.
* :func:`strip_binary` removes uuencoded and base64 attachments, which scikit-learn keeps
  (their tokens, e.g. ``max ax giz bhj``, otherwise capture whole topics).

All regular expressions are compiled once at import; a document is scanned line by line
in Python only when a cheap whole-text search says it may hold something to remove.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection

# --------------------------------------------------------------------------- newlines
_CR_RE = re.compile(r"\r\n?")


def normalize_newlines(text: str) -> str:
    """Turn ``\\r\\n`` and lone ``\\r`` into ``\\n`` (a few 20 Newsgroups posts keep CRs)."""
    return _CR_RE.sub("\n", text) if "\r" in text else text


# ---------------------------------------------------------------------------- headers
# Header fields of news and mail (RFC 1036 / 822) that identify a header block; lower case.
_KNOWN_FIELDS = frozenset(
    """from subject newsgroups path date message-id organization organisation lines
    sender reply-to references distribution keywords summary nntp-posting-host
    followup-to expires article-i.d. to cc in-reply-to approved supersedes
    originator xref mime-version content-type""".split()
)
# A field name followed at once by its colon ("Subject:"); prose tokenised with spaces
# around punctuation ("from : the author") is not a header line.
_FIELD_RE = re.compile(r"([^\s:]+):")
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")
# A header line inside the body (a forwarded message, or a header block broken by a
# badly folded line): a known field at the start of a line.
_EMBEDDED_HEADER_RE = re.compile(
    r"(?im)^(?:from|subject|newsgroups|path|date|message-id|organi[sz]ation|lines|sender"
    r"|reply-to|references|distribution|keywords|summary|nntp-posting-host|followup-to"
    r"|expires|article-i\.d\.|to|cc|in-reply-to|originator|x-[a-z0-9-]+)"
    r":[^\n]*\n?"
)


def _is_known_field(line: str) -> bool:
    m = _FIELD_RE.match(line)
    if m is None:
        return False
    name = m.group(1).lower()
    return name in _KNOWN_FIELDS or name.startswith("x-")


def _is_header_block(block: str) -> bool:
    # A header block starts with a "Field:" line (known or not: "Orginization:" occurs),
    # holds at least two known fields, and has at least as many known fields as other
    # lines (folded continuations, indented, are skipped; a block broken by a badly
    # folded line still counts). Prose that holds "From: ..." lines further down, or a
    # paragraph opening with one "Organization: ...", is not a header block.
    lines = [line for line in block.split("\n") if line[:1] not in (" ", "\t")]
    if not lines or _FIELD_RE.match(lines[0]) is None:
        return False
    n_known = sum(_is_known_field(line) for line in lines)
    n_other = sum(_FIELD_RE.match(line) is None for line in lines)
    return n_known >= 2 and n_known >= n_other


def strip_headers(text: str) -> str:
    """Remove e-mail / news headers.

    Only a document that *starts* with a header block is a message: that block (up to
    the first blank line) goes, and so do header lines of forwarded messages later in
    its body (``From: x``, ``Subject: y``, ... with a value). Any other document is
    returned unchanged, so prose that quotes "From: ..." or begins a paragraph with
    "Organization:" keeps its text.

    Parameters
    ----------
    text : str
        One raw message.

    Returns
    -------
    str
        The message without headers; text that does not start with a header block is
        returned unchanged.
    """
    stripped = text.lstrip("\n")
    parts = _BLANK_LINE_RE.split(stripped, maxsplit=1)
    if not _is_header_block(parts[0]):
        return text
    body = parts[1] if len(parts) > 1 else ""
    return _EMBEDDED_HEADER_RE.sub("", body)


# ----------------------------------------------------------------------------- quotes
# ">" or "|" at the start of a line, possibly indented or after initials ("LM> ").
_QUOTE_RE = re.compile(r"(?m)^[ \t]*[A-Za-z]{0,3}[>|][^\n]*\n?")
# Lines that introduce a quotation.
_ATTRIBUTION_RE = re.compile(
    r"(?im)^(?:in[ \t]+article\b[^\n]*"
    r"|quoted[ \t]+from\b[^\n]*"
    r"|[^\n]*\b(?:writes|wrote|says|said)\b[^\n:]{0,60}:[ \t]*$)\n?"
)


def strip_quotes(text: str) -> str:
    """Remove quoted replies and the lines that introduce them.

    Parameters
    ----------
    text : str
        One message.

    Returns
    -------
    str
        The message without lines starting with ``>`` / ``|`` (optionally indented or
        after up to three letters of initials), without ``In article <...>`` lines and
        without attribution lines ending in ``writes:``, ``wrote:``, ``says:``,
        ``said:``.
    """
    if ">" in text or "|" in text:
        text = _QUOTE_RE.sub("", text)
    return _ATTRIBUTION_RE.sub("", text)


# ----------------------------------------------------------------------------- footer
_DELIMITER_RE = re.compile(r"--[ \t]*")  # the standard signature delimiter "-- "
_RULE_RE = re.compile(r"[ \t]*[-=_*~#+]{3,}[ \t]*")  # a rule: "-----", "=====", "+---+"...
# What a signature holds and prose rarely does: an address, a bang path, a phone number.
_CONTACT_RE = re.compile(r"@|\w![\w.]|\d{3}[-.) ]{1,2}\d{3}[-. ]\d{4}|https?:|ftp[:.]", re.IGNORECASE)


def _looks_like_signature(lines: list[str]) -> bool:
    block = [line for line in lines if line.strip()]
    return len(block) <= 4 or bool(_CONTACT_RE.search("\n".join(block)))


def strip_footer(text: str, max_lines: int = 20) -> str:
    """Remove a signature block.

    The signature starts at the last standard delimiter line (``--`` or ``-- ``) among
    the last ``max_lines`` lines. Without one, it starts at the first rule line (three
    or more of ``-=_*~#+``) among them whose tail looks like a signature (at most four
    non-blank lines, or an e-mail address, bang path, URL or phone number), so a
    signature drawn in a box goes whole while a rule that merely separates a reply from
    the text it answers does not cut the reply. A separator on the first line of the
    text is never taken for one.

    Parameters
    ----------
    text : str
        One message.
    max_lines : int, default=20
        How far from the end (trailing blank lines aside) a separator may be:
        signatures are short.

    Returns
    -------
    str
        The message without its signature; unchanged when no separator is found.
    """
    lines = text.rstrip().split("\n")
    stop = max(1, len(lines) - max_lines)
    rules = []
    for i in range(len(lines) - 1, stop - 1, -1):
        line = lines[i]
        if _DELIMITER_RE.fullmatch(line):
            return "\n".join(lines[:i])
        if _RULE_RE.fullmatch(line):
            rules.append(i)
    for i in reversed(rules):  # the first rule (furthest from the end) first
        if _looks_like_signature(lines[i + 1 :]):
            return "\n".join(lines[:i])
    return text


# ----------------------------------------------------------------------------- binary
# Cheap test on the whole text: is there anything that may be an encoded block?
_BINARY_HINT_RE = re.compile(r"(?m)^(?:begin[ \t]+[0-7]{3,4}[ \t]|M[\x20-\x60]{40}|[ \t]*\S{30})")
_BEGIN_RE = re.compile(r"begin[ \t]+[0-7]{3,4}[ \t]+\S.*", re.IGNORECASE)
# A full uuencoded line: length char "M" (45 bytes), then 60 chars of " "..."`".
_UU_LINE_RE = re.compile(r"M[\x20-\x60]{40,61}")
# Any uuencoded line (partial last lines, the "`" line) or the closing "end".
_UU_ANY_RE = re.compile(r"[\x20-\x60]{1,62}|end[ \t]*")
_UU_TAIL_RE = re.compile(r"[\x21-\x60]{1,62}|end[ \t]*")
_DENSE_RE = re.compile(r"\S{30,}")


def _is_binary_line(line: str) -> bool:
    if _UU_LINE_RE.fullmatch(line):
        return True
    s = line.strip()
    return bool(_DENSE_RE.fullmatch(s)) and len(set(s)) >= 8


def strip_binary(text: str, min_run: int = 3) -> str:
    """Remove encoded binary blocks (uuencoded or base64 attachments, PGP blocks).

    Removed: a uuencode block from its ``begin 644 name`` line through its ``end`` line,
    and any run of at least ``min_run`` consecutive lines that look encoded (a full
    uuencoded line ``M...``, or 30+ characters without a space made of at least 8
    distinct characters, as base64 and space-less uuencode are; rules like ``-----``
    are not) together with the short uuencoded lines that close it.

    Parameters
    ----------
    text : str
        One message.
    min_run : int, default=3
        Shortest run of encoded-looking lines that is removed without a ``begin`` line.

    Returns
    -------
    str
        The message without its encoded blocks.
    """
    if not _BINARY_HINT_RE.search(text):
        return text
    lines = text.split("\n")
    n = len(lines)
    keep = [True] * n
    i = 0
    while i < n:
        line = lines[i]
        if _BEGIN_RE.fullmatch(line.strip()):
            j = i + 1
            while j < n and _UU_ANY_RE.fullmatch(lines[j]):
                j += 1
                if lines[j - 1].strip() == "end":
                    break
            keep[i:j] = [False] * (j - i)
            i = j
        elif _is_binary_line(line):
            j = i + 1
            while j < n and _is_binary_line(lines[j]):
                j += 1
            if j - i >= min_run:
                tail = 0
                while j < n and tail < 3 and _UU_TAIL_RE.fullmatch(lines[j]):
                    j += 1
                    tail += 1
                keep[i:j] = [False] * (j - i)
            i = j
        else:
            i += 1
    return "\n".join(line for line, k in zip(lines, keep) if k)


# ------------------------------------------------------------------------------ all
def clean_message(
    text: str,
    headers: bool = True,
    footers: bool = True,
    quotes: bool = True,
    binary: bool = True,
) -> str:
    """Clean one raw message: newlines, headers, binary blocks, quotes, signature.

    Parameters
    ----------
    text : str
        One raw message (or any text).
    headers, footers, quotes, binary : bool, default=True
        Which of :func:`strip_headers`, :func:`strip_footer`, :func:`strip_quotes`,
        :func:`strip_binary` to apply. Binary blocks go before quotes (uuencoded lines
        may start with ``>``), quotes before the footer (so a quoted signature at the
        end does not hide the author's own).

    Returns
    -------
    str
        The cleaned text, not yet lower-cased.
    """
    text = normalize_newlines(text)
    if headers:
        text = strip_headers(text)
    if binary:
        text = strip_binary(text)
    if quotes:
        text = strip_quotes(text)
    if footers:
        text = strip_footer(text)
    return text


# --------------------------------------------------------------------------- tokens
@functools.lru_cache(maxsize=8)
def _tokenizer(min_length: int):
    # The alphabetic tokens of at least ``min_length`` characters among those of nltk's
    # wordpunct_tokenize (pattern ``\w+|[^\w\s]+``): a ``\w+`` run matches
    # ``\b[^\W\d_]{n,}\b`` exactly when it is made of letters only and is n long or more,
    # so numbers, punctuation, mixed tokens ("x11", "386dx") and short tokens are
    # dropped in one C-level pass instead of a Python filter over every token.
    # The ``regex`` engine nltk's RegexpTokenizer uses (so the tokens are nltk's: unlike
    # ``re``, its ``\w`` holds combining marks), without nltk's wall-clock limit on each
    # match (5 s), which a large document or a busy machine exceeds. The pattern cannot
    # backtrack more than once over each letter run, so its cost is linear in the text.
    import regex

    return regex.compile(rf"\b[^\W\d_]{{{int(min_length)},}}\b",
                         regex.UNICODE | regex.MULTILINE | regex.DOTALL).findall


def tokenize(
    text: str,
    stop_words: Collection[str] = frozenset(),
    min_length: int = 3,
    lowercase: bool = True,
) -> list[str]:
    """Lower-case, tokenise and drop stop words, numbers, punctuation, short tokens.

    Parameters
    ----------
    text : str
        Cleaned text.
    stop_words : collection of str
        Lower-case words to drop (a set, for speed).
    min_length : int, default=3
        Shortest token kept.
    lowercase : bool, default=True
        Lower-case before tokenising.

    Returns
    -------
    list of str
        The tokens in document order.
    """
    if lowercase:
        text = text.lower()
    tokens = _tokenizer(min_length)(text)
    if stop_words:
        tokens = [t for t in tokens if t not in stop_words]
    return tokens
