"""Small public corpora by name, for checking topic models beyond 20 Newsgroups.

Each is read from a file that NLTK's data or gensim ships, and split into documents the
way its source lays them out; none has a test split (``compare`` holds out a share).

=============== ========= ============================================================
name            documents what
=============== ========= ============================================================
``abc``         3,189     ABC (Australia) radio news stories, one per paragraph of
                          NLTK's ``abc`` corpus; labels ``rural`` / ``science``
``abc-          28,137    short texts: the same stories split into sentences of at
sentences``               least three words (about nine distinct words each after
                          cleaning); labels ``rural`` / ``science``
``state_union`` 4,683     paragraphs of at least 30 words of 65 US State of the Union
                          addresses (NLTK's ``state_union``, 1945-2006); label: the
                          president (11)
``state_union-  15,503    short texts: the same paragraphs split into sentences of at
sentences``               least three words (about eight distinct words each after
                          cleaning); label: the president (11)
``lee``         300       the Lee background corpus of news articles (Lee, Pincombe
                          and Welsh 2005), shipped in gensim's test data; no labels
``20newsgroups- 18,846    short texts: the ``Subject:`` line of each 20 Newsgroups post
subjects``                (``Re:`` prefixes removed), a few words each, with its
                          by-date train/test split; label: the newsgroup (20)
=============== ========= ============================================================

NLTK's corpora are found through ``NLTK_DATA`` (or ``python -m nltk.downloader abc
state_union``); the subjects come from scikit-learn's 20 Newsgroups cache
(``SCIKIT_LEARN_DATA``, as for ``20newsgroups``). All but the subjects have one
``"train"`` split.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from bpetopics.text.errors import CorpusError
from bpetopics.text.loaders import RawDocuments, load_20newsgroups

__all__ = ["ABC_SENTENCES", "NAMED_CORPORA", "STATE_UNION_SENTENCES", "SUBJECTS", "corpus_names", "is_named_corpus", "load_named_corpus", "subject_line"]

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


#: The names of the short-text corpora of abc's and state_union's sentences.
ABC_SENTENCES = "abc-sentences"
STATE_UNION_SENTENCES = "state_union-sentences"
#: A sentence ends at ".", "!" or "?" followed by white space.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: ``abc-sentences`` and ``state_union-sentences`` keep sentences of at least this many
#: words (not headings or "Dr Smith." fragments).
MIN_SENTENCE_WORDS = 3


def _sentences(documents: RawDocuments, source: str) -> RawDocuments:
    """Every sentence of at least :data:`MIN_SENTENCE_WORDS` words of ``documents``, in
    their order, labelled as its document, with the id ``<document id>/<i>``."""
    texts, ids, labels = [], [], []
    for text, doc_id, label in zip(documents.texts, documents.ids, documents.labels):
        sentences = [s for s in _SENTENCE_END.split(" ".join(text.split()))
                     if len(s.split()) >= MIN_SENTENCE_WORDS]
        texts += sentences
        ids += [f"{doc_id}/{i}" for i in range(len(sentences))]
        labels += [label] * len(sentences)
    return RawDocuments(texts, ids, labels=np.asarray(labels), label_names=documents.label_names, source=source)


def _abc_sentences() -> RawDocuments:
    return _sentences(_abc(), ABC_SENTENCES)


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


def _state_union_sentences() -> RawDocuments:
    return _sentences(_state_union(), STATE_UNION_SENTENCES)


def _lee() -> RawDocuments:
    import gensim

    path = Path(gensim.__file__).parent / "test" / "test_data" / "lee_background.cor"
    if not path.is_file():
        raise CorpusError(f"gensim's Lee corpus is missing ({path}); reinstall gensim")
    texts = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
             if line.strip()]
    return RawDocuments(texts, [f"lee/{i}" for i in range(len(texts))], source="lee")


#: The name of the short-text corpus of 20 Newsgroups' subject lines.
SUBJECTS = "20newsgroups-subjects"
_REPLY = re.compile(r"^\s*(?:re|fwd?|fw)\s*(?:\[\d+\])?\s*:\s*", re.IGNORECASE)


def subject_line(post: str) -> str:
    """The ``Subject:`` header of a raw news post, reply and forward prefixes (``Re:``,
    ``RE[2]:``, ``Fwd:``) removed; ``""`` when the post's header block has none.

    Only the header block (the lines before the first blank line) is searched, so a
    ``Subject:`` line quoted in the body is never taken; a folded continuation line
    (starting with a space or a tab) is joined to it.
    """
    header = re.split(r"\n[ \t]*\n", post.replace("\r\n", "\n"), maxsplit=1)[0]
    lines = header.split("\n")
    for i, line in enumerate(lines):
        if line[:8].lower() == "subject:":
            parts = [line[8:]]
            for more in lines[i + 1:]:
                if more[:1] not in (" ", "\t"):
                    break
                parts.append(more)
            subject = " ".join(" ".join(parts).split())
            while _REPLY.match(subject):
                subject = _REPLY.sub("", subject, count=1)
            return subject
    return ""


def _newsgroups_subjects(data_home=None, categories=None, download_if_missing: bool = True) -> dict:
    """The subject lines of 20 Newsgroups' posts, split as the posts are (by date)."""
    posts = load_20newsgroups(data_home, categories=categories, download_if_missing=download_if_missing)
    return {split: RawDocuments([subject_line(t) for t in docs.texts], list(docs.ids), split=split,
                                labels=docs.labels, label_names=docs.label_names, source=SUBJECTS)
            for split, docs in posts.items()}


#: Corpus name -> loader of its documents (one "train" split, or for the subjects a
#: "train" and a "test" split).
NAMED_CORPORA = {"abc": _abc, ABC_SENTENCES: _abc_sentences, "state_union": _state_union,
                 STATE_UNION_SENTENCES: _state_union_sentences, "lee": _lee, SUBJECTS: _newsgroups_subjects}


def corpus_names() -> str:
    """The corpora a source may name, for messages: "20newsgroups, abc, ... or
    20newsgroups-subjects" (20 Newsgroups, then :data:`NAMED_CORPORA` in order)."""
    names = ["20newsgroups", *NAMED_CORPORA]
    return ", ".join(names[:-1]) + " or " + names[-1]


def is_named_corpus(source) -> bool:
    """True when ``source`` is one of :data:`NAMED_CORPORA` (and not an existing path)."""
    return isinstance(source, str) and source.lower() in NAMED_CORPORA and not Path(source).exists()


def load_named_corpus(name: str, data_home=None, categories=None,
                      download_if_missing: bool = True) -> dict[str, RawDocuments]:
    """The raw documents of a named corpus, as ``{"train": RawDocuments}`` (and a
    ``"test"`` split for :data:`SUBJECTS`).

    Parameters
    ----------
    name : str
        A key of :data:`NAMED_CORPORA`, any case.
    data_home, categories, download_if_missing
        For :data:`SUBJECTS` only, as in :func:`~bpetopics.text.loaders.load_20newsgroups`
        (the other corpora filter their labels in
        :func:`~bpetopics.text.sources.load_source`).
    """
    if name.lower() == SUBJECTS:
        return _newsgroups_subjects(data_home, categories, download_if_missing)
    return {"train": NAMED_CORPORA[name.lower()]()}
