"""TextPipeline: raw messages -> cleaned tokens -> sparse counts on a fitted vocabulary."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from bpetopics.text.cleaning import clean_message, tokenize
from bpetopics.text.errors import CorpusError
from bpetopics.text.stopwords import load_stopwords

FORMAT = "bpetopics.text_pipeline"
VERSION = 1


def _identity(tokens):
    return tokens


def _check_df_types(min_df, max_df) -> None:
    """Check ``min_df`` / ``max_df`` alone (before the number of documents is known)."""
    for name, value in (("min_df", min_df), ("max_df", max_df)):
        if isinstance(value, bool) or not isinstance(value, Real):
            raise CorpusError(f"{name}={value!r} is not a number: give a document count (int) or a fraction (float)")
        if isinstance(value, Integral):
            low = 0 if name == "min_df" else 1
            if value < low:
                raise CorpusError(f"{name}={value} is too small: give a document count of at least {low}")
        elif not 0.0 <= value <= 1.0:
            raise CorpusError(f"{name}={value} is outside [0, 1]: give a fraction of documents or a count (int)")
    # Both counts or both fractions: comparable without the number of documents.
    if isinstance(min_df, Integral) == isinstance(max_df, Integral) and max_df < min_df:
        raise CorpusError(f"max_df={max_df} is below min_df={min_df}: raise --max-df or lower --min-df")


def _check_df(min_df, max_df, n_docs: int) -> None:
    """Check that ``max_df`` keeps at least as many documents as ``min_df`` asks for."""
    _check_df_types(min_df, max_df)
    max_count = max_df if isinstance(max_df, Integral) else max_df * n_docs
    min_count = min_df if isinstance(min_df, Integral) else min_df * n_docs
    if min_count > n_docs:
        raise CorpusError(
            f"min_df={min_df} asks for words in at least {min_count:g} documents but there are only "
            f"{n_docs} (with words): lower --min-df"
        )
    if max_count < min_count:
        raise CorpusError(
            f"max_df={max_df} ({max_count:g} of {n_docs} documents) is below "
            f"min_df={min_df} ({min_count:g} documents): raise --max-df or lower --min-df"
        )


class TextPipeline:
    """Cleaning settings and, once fitted, the vocabulary.

    ``__init__`` only stores the settings (scikit-learn's estimator contract); :meth:`fit`
    learns ``vocabulary_`` with scikit-learn's ``CountVectorizer`` on the cleaned tokens.

    Parameters
    ----------
    vocab_size : int or None, default=2000
        Keep the ``vocab_size`` most frequent words (total counts) after the document
        frequency cuts; ``None`` keeps all (``CountVectorizer(max_features=...)``).
    min_df : int or float, default=5
        Drop words in fewer documents than this (a count, or a fraction if float).
    max_df : int or float, default=0.5
        Drop words in more documents than this (a fraction if float, or a count).
    stopwords : str, path or iterable of str, default="nltk"
        ``"nltk"``, ``"sklearn"``, ``"gensim"``, ``"none"``, a file, or the words;
        see :func:`bpetopics.text.stopwords.load_stopwords`.
    strip_headers, strip_footers, strip_quotes, strip_binary : bool, default=True
        Which cleaning steps of :func:`bpetopics.text.cleaning.clean_message` to run.
    lowercase : bool, default=True
        Lower-case before tokenising.
    min_token_length : int, default=3
        Shortest token kept.

    Attributes
    ----------
    vocabulary_ : list of str, length W
        The fitted vocabulary, sorted; column ``j`` of the counts is word ``vocabulary_[j]``.
    """

    def __init__(
        self,
        vocab_size: int | None = 2000,
        min_df: int | float = 5,
        max_df: int | float = 0.5,
        stopwords="nltk",
        strip_headers: bool = True,
        strip_footers: bool = True,
        strip_quotes: bool = True,
        strip_binary: bool = True,
        lowercase: bool = True,
        min_token_length: int = 3,
    ):
        self.vocab_size = vocab_size
        self.min_df = min_df
        self.max_df = max_df
        self.stopwords = stopwords
        self.strip_headers = strip_headers
        self.strip_footers = strip_footers
        self.strip_quotes = strip_quotes
        self.strip_binary = strip_binary
        self.lowercase = lowercase
        self.min_token_length = min_token_length

    _PARAMS = (
        "vocab_size", "min_df", "max_df", "stopwords", "strip_headers", "strip_footers",
        "strip_quotes", "strip_binary", "lowercase", "min_token_length",
    )

    def get_params(self) -> dict:
        """The settings, as given to ``__init__``."""
        return {name: getattr(self, name) for name in self._PARAMS}

    def __repr__(self) -> str:
        params = self.get_params()
        args = ", ".join(f"{k}={v!r}" for k, v in params.items() if not isinstance(v, (list, set, frozenset)))
        return f"TextPipeline({args})"

    # ------------------------------------------------------------------ cleaning
    @property
    def stop_words(self) -> frozenset:
        """The resolved stop words (loaded on first use, then kept)."""
        words = getattr(self, "_stop_words", None)
        if words is None:
            words = self._stop_words = load_stopwords(self.stopwords)
        return words

    def clean(self, text: str) -> str:
        """Clean one raw message (headers, binary blocks, quotes, signature)."""
        return clean_message(
            text,
            headers=self.strip_headers,
            footers=self.strip_footers,
            quotes=self.strip_quotes,
            binary=self.strip_binary,
        )

    def analyze(self, text: str) -> list[str]:
        """Clean and tokenise one raw message: its tokens, stop words dropped."""
        return tokenize(self.clean(text), self.stop_words, self.min_token_length, self.lowercase)

    def analyze_many(self, texts: Iterable[str], cleaned: bool = False) -> list[list[str]]:
        """:meth:`analyze` over documents; a list of N token lists. ``cleaned``: the texts
        are already cleaned (:meth:`clean`), tokenise them only."""
        stop, n, low = self.stop_words, self.min_token_length, self.lowercase
        clean = (lambda text: text) if cleaned else self.clean
        return [tokenize(clean(t), stop, n, low) for t in texts]

    def check_settings(self) -> None:
        """Check what can be checked without documents (``min_df``, ``max_df``, ``vocab_size``).

        Raises
        ------
        CorpusError
            A setting out of range, with the fix in the message.
        """
        _check_df_types(self.min_df, self.max_df)
        v = self.vocab_size
        if v is not None and (isinstance(v, bool) or not isinstance(v, Integral) or v < 1):
            raise CorpusError(f"vocab_size={v!r} is not a positive integer: give e.g. --vocab-size 2000")
        n = self.min_token_length
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
            raise CorpusError(f"min_token_length={n!r} is not a positive integer: give e.g. 3")

    # ---------------------------------------------------------------- vocabulary
    def fit(self, texts: Iterable[str]) -> "TextPipeline":
        """Learn the vocabulary from raw messages; returns ``self``."""
        return self.fit_tokens(self.analyze_many(texts))

    def fit_tokens(self, token_lists: Sequence[Sequence[str]]) -> "TextPipeline":
        """Learn the vocabulary from tokenised documents.

        Document frequencies are taken over the documents that have at least one
        token (those left empty by cleaning are dropped downstream anyway).

        Parameters
        ----------
        token_lists : sequence of sequence of str, length N
            Each document's tokens, as from :meth:`analyze_many`.

        Returns
        -------
        TextPipeline
            ``self``, with ``vocabulary_`` set.

        Raises
        ------
        CorpusError
            Bad ``min_df`` / ``max_df`` / ``vocab_size``, no tokens at all, or an empty
            vocabulary after the cuts.
        """
        from sklearn.feature_extraction.text import CountVectorizer

        docs = [t for t in token_lists if len(t)]
        if not docs:
            raise CorpusError(
                f"no document has any word left after cleaning ({len(token_lists)} documents): "
                "check the source, or keep more words (--stopwords none)"
            )
        self.check_settings()
        _check_df(self.min_df, self.max_df, len(docs))
        vectorizer = CountVectorizer(
            analyzer=_identity,
            min_df=self.min_df,
            max_df=self.max_df,
            max_features=self.vocab_size,
            dtype=np.int64,
        )
        try:
            vectorizer.fit(docs)
        except ValueError as exc:
            if "no terms remain" not in str(exc) and "empty vocabulary" not in str(exc):
                raise
            raise CorpusError(
                f"the vocabulary is empty: no word is in at least min_df={self.min_df} and at most "
                f"max_df={self.max_df} of the {len(docs)} documents: lower --min-df or raise --max-df"
            ) from None
        self.vocabulary_ = [str(w) for w in vectorizer.get_feature_names_out()]
        self._index = None
        return self

    def fit_frequencies(self, doc_freq: dict, term_freq: dict, n_docs: int) -> "TextPipeline":
        """Learn the vocabulary from word frequencies counted elsewhere (a streaming
        build counts them chunk by chunk, :mod:`bpetopics.text.streaming`); the same
        cuts as :meth:`fit_tokens` (CountVectorizer's ``_limit_features``), so the same
        documents give the same vocabulary either way.

        Parameters
        ----------
        doc_freq, term_freq : dict of str to int
            Per word: the documents it occurs in, its total count.
        n_docs : int
            The documents with at least one token.

        Returns
        -------
        TextPipeline
            ``self``, with ``vocabulary_`` set.
        """
        if n_docs == 0:
            raise CorpusError("no document has any word left after cleaning: check the source, "
                              "or keep more words (--stopwords none)")
        self.check_settings()
        _check_df(self.min_df, self.max_df, n_docs)
        words = sorted(doc_freq)
        dfs = np.fromiter((doc_freq[w] for w in words), dtype=np.int64, count=len(words))
        high = self.max_df if isinstance(self.max_df, Integral) else self.max_df * n_docs
        low = self.min_df if isinstance(self.min_df, Integral) else self.min_df * n_docs
        mask = (dfs <= high) & (dfs >= low)
        if self.vocab_size is not None and mask.sum() > self.vocab_size:
            # as scikit-learn: the most frequent words by total count, ties as its argsort
            tfs = np.fromiter((term_freq[w] for w in words), dtype=np.int64, count=len(words))
            keep = (-tfs[mask]).argsort()[:self.vocab_size]
            new_mask = np.zeros(len(dfs), dtype=bool)
            new_mask[np.where(mask)[0][keep]] = True
            mask = new_mask
        if not mask.any():
            raise CorpusError(
                f"the vocabulary is empty: no word is in at least min_df={self.min_df} and at most "
                f"max_df={self.max_df} of the {n_docs} documents: lower --min-df or raise --max-df"
            )
        self.vocabulary_ = [words[i] for i in np.flatnonzero(mask)]
        self._index = None
        return self

    @property
    def vocabulary(self) -> list[str]:
        """The fitted vocabulary (``vocabulary_``)."""
        return self._fitted_vocabulary()

    def _fitted_vocabulary(self) -> list[str]:
        vocabulary = getattr(self, "vocabulary_", None)
        if vocabulary is None:
            raise RuntimeError("this TextPipeline is not fitted yet: call fit() first")
        return vocabulary

    def _word_index(self) -> dict[str, int]:
        index = getattr(self, "_index", None)
        if index is None:
            index = self._index = {w: j for j, w in enumerate(self._fitted_vocabulary())}
        return index

    # ---------------------------------------------------------------- transform
    def transform(self, texts: Iterable[str], cleaned: bool = False) -> sp.csr_matrix:
        """Counts of raw messages on the fitted vocabulary.

        Parameters
        ----------
        texts : iterable of str, length N
            Raw messages (cleaned here).
        cleaned : bool, default=False
            The texts are already cleaned (passages: :meth:`analyze_many`).

        Returns
        -------
        scipy.sparse.csr_matrix of shape (N, W), int64
            Word counts; a document with no vocabulary word is an empty row (nothing
            is dropped here, so rows stay aligned with ``texts``).
        """
        return self.transform_tokens(self.analyze_many(texts, cleaned))[0]

    def fit_transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        """:meth:`fit` then :meth:`transform` on the same messages, cleaning them once."""
        tokens = self.analyze_many(texts)
        return self.fit_tokens(tokens).transform_tokens(tokens)[0]

    def transform_tokens(
        self, token_lists: Iterable[Sequence[str]]
    ) -> tuple[sp.csr_matrix, list[list[str]]]:
        """Counts and in-vocabulary texts of tokenised documents.

        Parameters
        ----------
        token_lists : iterable of sequence of str, length N
            Each document's tokens.

        Returns
        -------
        counts : scipy.sparse.csr_matrix of shape (N, W), int64
            Word counts on ``vocabulary_`` (sorted indices, no explicit zeros).
        texts : list of list of str, length N
            Each document's tokens restricted to the vocabulary, in order;
            ``len(texts[i]) == counts[i].sum()``.
        """
        index = self._word_index()
        texts = []
        indices: list[int] = []
        indptr = [0]
        for doc in token_lists:
            kept = [t for t in doc if t in index]
            texts.append(kept)
            indices.extend([index[t] for t in kept])
            indptr.append(len(indices))
        counts = sp.csr_matrix(
            (
                np.ones(len(indices), dtype=np.int64),
                np.asarray(indices, dtype=np.int32),
                np.asarray(indptr, dtype=np.int64),
            ),
            shape=(len(texts), len(index)),
        )
        counts.sum_duplicates()  # merges repeated words into counts, sorts indices
        return counts, texts

    # ---------------------------------------------------------------- save/load
    def to_dict(self) -> dict:
        """A JSON-safe description: settings, the resolved stop words, the vocabulary."""
        params = self.get_params()
        spec = params["stopwords"]
        if isinstance(spec, (str, os.PathLike)):
            params["stopwords"] = os.fspath(spec)
        elif spec is not None:
            params["stopwords"] = sorted(str(w) for w in spec)
        return {
            "format": FORMAT,
            "version": VERSION,
            "params": params,
            "stop_words": sorted(self.stop_words),
            "vocabulary": getattr(self, "vocabulary_", None),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "TextPipeline":
        """Rebuild a pipeline from :meth:`to_dict` (needs no stop-word data)."""
        if d.get("format") != FORMAT:
            raise CorpusError(f"not a saved TextPipeline (format {d.get('format')!r}): expected {FORMAT!r}")
        if d.get("version", 0) > VERSION:
            raise CorpusError(f"TextPipeline format version {d['version']} is newer than this bpetopics: upgrade it")
        pipeline = cls(**d["params"])
        pipeline._stop_words = frozenset(d.get("stop_words", ()))
        if d.get("vocabulary") is not None:
            pipeline.vocabulary_ = [str(w) for w in d["vocabulary"]]
        return pipeline
