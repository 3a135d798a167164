"""Passages: each document split into paragraphs or sentences, to be modelled one by one.

A topic model reads a document as one bag of words with one mixture of topics. A long
document (a speech, a report, a chapter) holds many themes, and with a few dozen such
documents a model has little to tell topics apart by: the State of the Union addresses
as whole documents give topics that mix decades and themes, their paragraphs give
topics of one theme each (docs/results/text-comparison.md compares both). Splitting is the usual
remedy, and the named corpora ``state_union``, ``abc``, ``abc-sentences`` and
``state_union-sentences`` are built that way; :func:`split_passages` does it for any source.

* **paragraphs**: a document is cut at its blank lines, and a block between them at its
  line breaks too when it holds a line longer than :data:`WRAP_WIDTH` characters (text
  written one paragraph a line, as most State of the Union files are); a block of
  shorter lines is one paragraph wrapped at a fixed width, its lines joined.
* **sentences**: a document is cut after ".", "!" or "?" followed by white space.

No text is dropped: a passage of fewer than the unit's minimum words (a heading, a
"Thank you." sentence) is joined to the passage after it, the last one to the one
before. Each passage keeps its document's label and time, and its id is the document's
with ``#k`` (k = 1, 2, ...) added.
"""

from __future__ import annotations

import re

import numpy as np

from bpetopics.text.errors import CorpusError
from bpetopics.text.loaders import RawDocuments

#: The units a document can be split into, with the fewest words a passage keeps on its
#: own (the named corpora's rules: ``state_union``'s paragraphs of at least 30 words,
#: ``abc-sentences``' and ``state_union-sentences``' sentences of at least 3).
PASSAGE_UNITS = {"paragraphs": 30, "sentences": 3}

#: Text wrapped at a fixed width has no line longer than this many characters (e-mail and
#: plain-text books wrap at 72-80); a block with a longer line has one paragraph a line.
WRAP_WIDTH = 100

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def paragraphs(text: str) -> list[str]:
    """The paragraphs of ``text`` (the module docstring says where it is cut), white
    space normalised."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for block in _BLANK_LINE.split(text):
        lines = block.split("\n")
        pieces = lines if max(len(line) for line in lines) > WRAP_WIDTH else [block]
        out += [" ".join(piece.split()) for piece in pieces if piece.strip()]
    return out


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (cut after ".", "!" or "?" and white space), white space
    normalised."""
    return [s for s in SENTENCE_END.split(" ".join(text.split())) if s]


def join_short(pieces: list[str], min_words: int) -> list[str]:
    """``pieces`` with each of fewer than ``min_words`` words joined to the one after it
    (the last to the one before): the same words in the same order, in pieces of at
    least ``min_words`` words unless all of them together have fewer."""
    out: list[str] = []
    pending = ""
    for piece in pieces:
        pending = f"{pending} {piece}" if pending else piece
        if len(pending.split()) >= min_words:
            out.append(pending)
            pending = ""
    if pending:
        if out:
            out[-1] = f"{out[-1]} {pending}"
        else:
            out.append(pending)
    return out


def split_text(text: str, unit: str) -> list[str]:
    """The passages of one document (:data:`PASSAGE_UNITS` names ``unit``); an empty list
    for a document of white space only."""
    pieces = paragraphs(text) if unit == "paragraphs" else sentences(text)
    return join_short(pieces, PASSAGE_UNITS[unit])


def source_documents(ids) -> int:
    """How many documents the passages of ``ids`` (``<document id>#k``) were cut from."""
    return len({str(i).rsplit("#", 1)[0] for i in ids})


def check_unit(unit) -> None:
    """CorpusError (one line) unless ``unit`` is None or one of :data:`PASSAGE_UNITS`."""
    if unit is not None and unit not in PASSAGE_UNITS:
        raise CorpusError(f"passages={unit!r} is not a unit to split documents into: give "
                          f"{' or '.join(PASSAGE_UNITS)}")


def split_passages(docs: RawDocuments, unit: str | None, clean=None) -> RawDocuments:
    """``docs`` with each document replaced by its passages (the module docstring), in
    order; ``docs`` itself when ``unit`` is None. A document of white space only gives one
    empty passage, so that cleaning records it as empty rather than it vanishing here.

    Parameters
    ----------
    docs : RawDocuments
    unit : {"paragraphs", "sentences"} or None
    clean : callable, optional
        str -> str applied to each document before it is split (a pipeline's
        :meth:`~bpetopics.text.pipeline.TextPipeline.clean`: an e-mail's headers and
        signature are stripped as a whole, not paragraph by paragraph); the passages are
        then marked ``cleaned``.

    Returns
    -------
    RawDocuments
        One entry per passage: its text, the id ``<document id>#k``, the document's label
        and time; ``skipped`` and the label names as ``docs``'.
    """
    check_unit(unit)
    if unit is None:
        return docs
    texts, ids, owner = [], [], []
    for i, (text, doc_id) in enumerate(zip(docs.texts, docs.ids)):
        if clean is not None and not docs.cleaned:
            text = clean(text)
        passages = split_text(text, unit) or [""]
        texts += passages
        ids += [f"{doc_id}#{k}" for k in range(1, len(passages) + 1)]
        owner += [i] * len(passages)
    owner = np.asarray(owner, dtype=np.int64)
    return RawDocuments(texts=texts, ids=ids, split=docs.split,
                        labels=None if docs.labels is None else docs.labels[owner],
                        label_names=docs.label_names, source=docs.source, skipped=docs.skipped,
                        times=None if docs.times is None else docs.times[owner],
                        cleaned=docs.cleaned or clean is not None)
