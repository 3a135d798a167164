"""Small public corpora by name, for checking topic models beyond 20 Newsgroups.

Each is read from a file that NLTK's data or gensim ships, and split into documents the
way its source lays them out; none has a test split (``compare`` holds out a share).

=============== ========= ============================================================
name            documents what
=============== ========= ============================================================
``abc``         3,189     ABC (Australia) radio news stories, one per paragraph of
                          NLTK's ``abc`` corpus; labels ``rural`` / ``science``
``state_union`` 4,683     paragraphs of at least 30 words of 65 US State of the Union
                          addresses (NLTK's ``state_union``, 1945-2006); label: the
                          president (11)
``lee``         300       the Lee background corpus of news articles (Lee, Pincombe
                          and Welsh 2005), shipped in gensim's test data; no labels
=============== ========= ============================================================

NLTK's corpora are found through ``NLTK_DATA`` (or ``python -m nltk.downloader abc
state_union``).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from bpetopics.text.errors import CorpusError
from bpetopics.text.loaders import RawDocuments

__all__ = ["NAMED_CORPORA", "is_named_corpus", "load_named_corpus"]

_BLANK = re.compile(r"\n[ \t]*\n")
MIN_PARAGRAPH_WORDS = 30


# How NLTK itself reads each corpus (nltk/corpus/__init__.py).
_NLTK_ENCODINGS = {"abc": [("science", "latin_1"), ("rural", "utf8")], "state_union": "ISO-8859-2"}


def _nltk_reader(name: str):
    """A fresh reader of NLTK's corpus ``name`` (not nltk.corpus's cached one, so that
    a changed ``nltk.data.path`` is honoured)."""
    import nltk
    from nltk.corpus.reader import PlaintextCorpusReader

    try:
        root = nltk.data.find(f"corpora/{name}.zip/{name}/")
    except LookupError:
        raise CorpusError(f"NLTK's {name!r} corpus is not installed: run `python -m nltk.downloader "
                          f"{name}` or point NLTK_DATA at a folder that has corpora/{name}.zip") from None
    return PlaintextCorpusReader(root, r"(?!\.).*\.txt", encoding=_NLTK_ENCODINGS[name])


def _abc() -> RawDocuments:
    reader = _nltk_reader("abc")
    texts, ids, labels = [], [], []
    names = sorted(f.rsplit(".", 1)[0] for f in reader.fileids())      # rural, science
    for label, name in enumerate(names):
        raw = reader.raw(f"{name}.txt").replace("\r\n", "\n")
        stories = [s.strip() for s in _BLANK.split(raw) if s.strip()]
        texts += stories
        ids += [f"{name}/{i}" for i in range(len(stories))]
        labels += [label] * len(stories)
    return RawDocuments(texts, ids, labels=np.asarray(labels), label_names=names, source="abc")


def _state_union() -> RawDocuments:
    reader = _nltk_reader("state_union")
    texts, ids, presidents = [], [], []
    for fileid in sorted(reader.fileids()):                  # "1945-Truman.txt"
        president = fileid.rsplit(".", 1)[0].split("-", 1)[1].split("-")[0]
        lines = reader.raw(fileid).replace("\r\n", "\n").split("\n")
        for i, line in enumerate(lines):
            if len(line.split()) >= MIN_PARAGRAPH_WORDS:
                texts.append(line.strip())
                ids.append(f"{fileid}/{i}")
                presidents.append(president)
    names = sorted(set(presidents))
    labels = np.searchsorted(names, presidents)
    return RawDocuments(texts, ids, labels=labels, label_names=names, source="state_union")


def _lee() -> RawDocuments:
    import gensim

    path = Path(gensim.__file__).parent / "test" / "test_data" / "lee_background.cor"
    if not path.is_file():
        raise CorpusError(f"gensim's Lee corpus is missing ({path}); reinstall gensim")
    texts = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
             if line.strip()]
    return RawDocuments(texts, [f"lee/{i}" for i in range(len(texts))], source="lee")


#: Corpus name -> loader of its documents (one "train" split).
NAMED_CORPORA = {"abc": _abc, "state_union": _state_union, "lee": _lee}


def is_named_corpus(source) -> bool:
    """True when ``source`` is one of :data:`NAMED_CORPORA` (and not an existing path)."""
    return isinstance(source, str) and source.lower() in NAMED_CORPORA and not Path(source).exists()


def load_named_corpus(name: str) -> dict[str, RawDocuments]:
    """The raw documents of a named corpus, as ``{"train": RawDocuments}``."""
    return {"train": NAMED_CORPORA[name.lower()]()}
