"""Stop-word lists: NLTK's English list (default), scikit-learn's, gensim's, a file, none.

The lists differ (60 of NLTK's 179 words are not in scikit-learn's 318), so the
choice is recorded with every corpus; the resolved words travel with the pipeline,
so a saved corpus never needs NLTK's data again.
"""

from __future__ import annotations

import os
from pathlib import Path

from bpetopics.text.errors import CorpusError

#: Names accepted by :func:`load_stopwords` besides a path to a file.
STOPWORD_CHOICES = ("nltk", "sklearn", "gensim", "none")


def _nltk_english() -> list[str]:
    try:
        from nltk.corpus import stopwords
    except ImportError as exc:  # pragma: no cover - nltk is a dependency
        raise CorpusError(
            "NLTK is not installed: pip install nltk, or choose --stopwords sklearn|gensim|none|FILE"
        ) from exc
    try:
        return list(stopwords.words("english"))
    except LookupError as exc:
        raise CorpusError(
            "NLTK's stop-word list is not installed: run `python -m nltk.downloader stopwords` "
            "(or point NLTK_DATA at a folder holding corpora/stopwords.zip), "
            "or choose --stopwords sklearn|gensim|none|FILE"
        ) from exc


def _from_file(path: Path) -> list[str]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CorpusError(f"cannot read stop-word file {path}: {exc.strerror}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    words = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            words.extend(line.split())
    return words


def load_stopwords(spec: str | os.PathLike | None = "nltk") -> frozenset[str]:
    """Resolve a stop-word choice to a set of lower-case words.

    Parameters
    ----------
    spec : {"nltk", "sklearn", "gensim", "none"}, path, iterable of str or None
        ``"nltk"``: NLTK's English list (179 words; needs NLTK's ``stopwords`` data).
        ``"sklearn"``: ``sklearn.feature_extraction.text.ENGLISH_STOP_WORDS`` (318).
        ``"gensim"``: ``gensim.parsing.preprocessing.STOPWORDS`` (337).
        ``"none"`` or ``None``: no stop words. A path: a UTF-8 (or latin-1) text
        file, whitespace-separated words, ``#`` starts a comment. An iterable of
        strings is used as given.

    Returns
    -------
    frozenset of str
        The words, lower-cased.

    Raises
    ------
    CorpusError
        Unknown name, unreadable file, or NLTK's data missing (the message says how
        to get it or which list to choose instead).
    """
    if spec is None:
        return frozenset()
    if isinstance(spec, (str, os.PathLike)):
        name = os.fspath(spec)
        key = name.lower()
        if key == "nltk":
            words = _nltk_english()
        elif key == "sklearn":
            from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

            words = ENGLISH_STOP_WORDS
        elif key == "gensim":
            from gensim.parsing.preprocessing import STOPWORDS

            words = STOPWORDS
        elif key == "none":
            words = ()
        elif Path(name).is_file():
            words = _from_file(Path(name))
        else:
            raise CorpusError(
                f"unknown stop-word list {name!r}: choose one of "
                f"{', '.join(STOPWORD_CHOICES)} or give an existing file (one word per line)"
            )
    else:
        words = spec
    return frozenset(str(w).lower() for w in words)
