"""Stop-word lists: NLTK's English list (default), scikit-learn's, gensim's, a file, none.

The lists differ (60 of NLTK's 179 words are not in scikit-learn's 318), so the
choice is recorded with every corpus; the resolved words travel with the pipeline,
so a saved corpus never needs the list again. NLTK's list ships with the package
(``english_stopwords.txt``, a copy of the ``stopwords`` corpus of NLTK's data): the
default needs no download, and every machine gets the same 179 words whatever NLTK
data it has.
"""

from __future__ import annotations

import os
from pathlib import Path

from bpetopics.text.errors import CorpusError

#: Names accepted by :func:`load_stopwords` besides a path to a file.
STOPWORD_CHOICES = ("nltk", "sklearn", "gensim", "none")
#: NLTK's English list, as shipped with the package (``#`` lines credit its source).
NLTK_ENGLISH_FILE = Path(__file__).with_name("english_stopwords.txt")


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
        ``"nltk"``: NLTK's English list (179 words; the copy in the package).
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
        Unknown name or unreadable file (the message says what to choose instead).
    """
    if spec is None:
        return frozenset()
    if isinstance(spec, (str, os.PathLike)):
        name = os.fspath(spec)
        key = name.lower()
        if key == "nltk":
            words = _from_file(NLTK_ENGLISH_FILE)
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
