"""Search a trained text model: the topics of a query, the documents like a document.

:class:`DocumentSearch` holds a fitted PoissBPE, its text pipeline and its training
documents (codes, and counts or mixtures); ``bpetopics search`` / ``bpetopics similar``
build one from a run (:meth:`DocumentSearch.from_run`), :class:`bpetopics.TopicModel`
from what it fitted. A query is counted and encoded like a document; its mixture is the
posterior mean of f(z) (``PoissBPE.posterior_topic``). Similar documents are ranked by
topics and words together (:class:`bpetopics.search.TopicWordIndex`: the cosine
similarity of the posterior mixtures blended with that of the TF-IDF vectors);
``word_weight=0`` ranks the documents sharing an active bit of the query's code by their
mixtures alone (:class:`bpetopics.search.MixtureIndex`; every document when fewer than k
share one), ``pool=0`` by the Hamming distance of the codes alone
(:class:`bpetopics.search.CodeIndex`). docs/results/search.md measures them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from bpetopics.runs.run import RunError
from bpetopics.search import WORD_WEIGHT, CodeIndex, MixtureIndex, TopicWordIndex, rerank

__all__ = ["DocumentSearch", "EmptyQueryError", "find_topics", "similar_documents", "POOL", "SHARED_BITS",
           "WORD_WEIGHT"]

#: ``pool``'s default: the search by topics and words (with ``word_weight=0``, the documents
#: sharing an active bit, ranked by their mixtures).
SHARED_BITS = "shared"

#: The pool of the re-ranking search that was the default before :data:`SHARED_BITS`.
POOL = 1000


class EmptyQueryError(ValueError):
    """A query with no word of the model's vocabulary (its code says nothing)."""


@dataclass
class DocumentSearch:
    """Search over a fitted PoissBPE's training documents.

    Attributes
    ----------
    model : PoissBPE
    pipeline : TextPipeline or None
        Counts query texts (None: queries by document only).
    codes : np.ndarray of uint8, shape (N, K)
        The training documents' codes.
    counts : scipy.sparse.csr_matrix, shape (N, W), optional
        Their counts (for the posterior mixtures of re-ranked candidates).
    mixtures : np.ndarray, shape (N, T), optional
        Their posterior mixtures, when known (else computed for the candidates).
    ids : list of str, optional
        Their ids (``bpetopics similar RUN ID``).
    """

    model: object
    pipeline: object
    codes: np.ndarray
    counts: object = None
    mixtures: np.ndarray | None = None
    ids: list | None = None
    _index: CodeIndex | None = field(default=None, repr=False)
    _mixture_index: tuple | None = field(default=None, repr=False)
    _topic_word_index: tuple | None = field(default=None, repr=False)

    @classmethod
    def from_run(cls, run) -> "DocumentSearch":
        """The search over a loaded text run's training documents (RunError, one line,
        for a run without the codes or counts it needs)."""
        from bpetopics.runs.corpus import run_train_counts

        codes = getattr(run.model, "codes_", None)
        if codes is None or "codes" in run.config:
            raise RunError(f"{run.path} was trained on a sharded corpus: search its documents with "
                           "`bpetopics encode` instead")
        ids, _ = run.doc_topics()
        return cls(run.model, run.pipeline, np.asarray(codes, dtype=np.uint8), run_train_counts(run), None, ids)

    @property
    def index(self) -> CodeIndex:
        """The training codes, packed (built on first use)."""
        if self._index is None:
            self._index = CodeIndex.from_codes(self.codes)
        return self._index

    @property
    def mixture_index(self) -> MixtureIndex:
        """The training codes and posterior mixtures, indexed (built on first use, and
        again when :attr:`mixtures` is replaced; the mixtures are computed from the
        counts when not held, once)."""
        if self.mixtures is None:
            self.mixtures = self.mixtures_of(np.arange(len(self.codes)))
        if self._mixture_index is None or self._mixture_index[0] is not self.mixtures:
            self._mixture_index = (self.mixtures, MixtureIndex(self.codes, self.mixtures))
        return self._mixture_index[1]

    @property
    def topic_word_index(self) -> TopicWordIndex:
        """The training documents' posterior mixtures and TF-IDF vectors, indexed (built on
        first use, and again when :attr:`mixtures` is replaced)."""
        if self.counts is None:
            raise RunError("the training documents' counts are unknown: search with word_weight=0 "
                           "(topic mixtures alone)")
        if self.mixtures is None:
            self.mixtures = self.mixtures_of(np.arange(len(self.codes)))
        if self._topic_word_index is None or self._topic_word_index[0] is not self.mixtures:
            self._topic_word_index = (self.mixtures, TopicWordIndex(self.mixtures, self.counts))
        return self._topic_word_index[1]

    # ------------------------------------------------------------------ queries
    def encode(self, texts) -> tuple[object, np.ndarray, np.ndarray]:
        """(counts, codes, posterior mixtures) of raw texts, counted with the pipeline."""
        if self.pipeline is None:
            raise RunError("this model has no text pipeline (it was trained on counts, not texts): "
                           "it cannot read texts")
        counts = self.pipeline.transform(list(texts))
        codes = self.model.transform(counts)
        return counts, codes, self.model.posterior_topic(counts, codes)

    def encode_query(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(code (K,), mixture (T,)) of one query; EmptyQueryError when none of its words
        is in the vocabulary."""
        _, code, mixture = self._counted_query(text)
        return code, mixture

    def _counted_query(self, text: str):
        """(counts (1, W), code (K,), mixture (T,)) of one query (as :meth:`encode_query`)."""
        if not isinstance(text, str) or not text.strip():
            raise EmptyQueryError("the query is empty: give some words")
        counts, codes, mixtures = self.encode([text])
        if counts.sum() == 0:
            raise EmptyQueryError(f"no word of the query {_shorten(text)!r} is in the model's vocabulary "
                                  f"({counts.shape[1]:,} words): try other words")
        return counts, codes[0], mixtures[0]

    def find_topics(self, query: str, top_n: int = 5) -> tuple[list[int], list[float]]:
        """The ``top_n`` topics of a query by its mixture: (topics, weights), heaviest first."""
        _, mixture = self.encode_query(query)
        order = np.argsort(-mixture, kind="stable")[:max(0, int(top_n))]
        return [int(t) for t in order], [float(mixture[t]) for t in order]

    def document_row(self, doc) -> int:
        """The row of a training document given by index (an int, or digits) or by id;
        ValueError (one line) for an unknown one."""
        n = len(self.codes)
        if self.ids is not None and not isinstance(doc, (int, np.integer)) and str(doc) in self._id_rows():
            return self._id_rows()[str(doc)]
        text = str(doc).strip()
        if isinstance(doc, (int, np.integer)) or text.lstrip("-").isdigit():
            row = int(text)
            if 0 <= row < n:
                return row
            raise ValueError(f"document {row} is out of range: the model has {n:,} training documents "
                             f"(0..{n - 1})")
        raise ValueError(f"no training document has the id {text!r}: give an id of the run "
                         f"(doc_topics.npz) or an index 0..{n - 1}, or a new text with --text")

    def _id_rows(self) -> dict:
        rows = getattr(self, "_rows", None)
        if rows is None:
            rows = self._rows = {str(i): r for r, i in enumerate(self.ids or ())}
        return rows

    def mixtures_of(self, rows) -> np.ndarray:
        """Posterior mixtures of training documents ``rows`` (computed when not held)."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.mixtures is not None:
            return np.asarray(self.mixtures)[rows]
        if self.counts is None:
            raise RunError("the training documents' counts are unknown: documents cannot be re-ranked")
        distinct, back = np.unique(rows, return_inverse=True)
        return self.model.posterior_topic(self.counts[distinct], self.codes[distinct])[back]

    def similar(self, doc=None, *, text: str | None = None, k: int = 10, pool: int | str | None = SHARED_BITS,
                word_weight: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` training documents most like a training document ``doc`` (itself
        left out) or a ``text``.

        ``pool``: ``"shared"`` (the default) ranks the documents by ``(1 - word_weight)``
        times the cosine similarity of their posterior mixtures plus ``word_weight``
        times that of their TF-IDF vectors (None: the default :data:`WORD_WEIGHT`); with
        ``word_weight=0``, the documents sharing an active bit with the query's code by
        their mixtures alone (all documents when fewer than ``k`` share one). 0 or None:
        Hamming distance alone; a positive number (deprecated) re-ranks that many
        Hamming-nearest documents by their mixtures. Returns (rows (k,), scores (k,)):
        similarities, or Hamming distances for ``pool=0``; ties by the lower row.
        """
        if (doc is None) == (text is None):
            raise ValueError("give a training document or a text, not both")
        pool = _checked_pool(pool)
        weight = _checked_word_weight(word_weight, pool)
        if pool == SHARED_BITS:
            if text is None:
                rows, scores = self.similar_rows([self.document_row(doc)], k, weight)
                return rows[0], scores[0]
            counts, code, mixture = self._counted_query(text)
            if not weight:
                rows, sims = self.mixture_index.nearest(code, mixture, k)
            else:
                index = self.topic_word_index
                rows, sims = index.nearest(mixture[None, :], index.words.vectors(counts), k, word_weight=weight)
            return rows[0], sims[0]
        if pool:
            warnings.warn(f"pool={pool} (re-ranking the Hamming-nearest) is deprecated and will be removed: leave "
                          f"pool out for the default search (docs/results/search.md compares them)",
                          DeprecationWarning, stacklevel=2)
        if text is not None:
            code, mixture, exclude = (*self.encode_query(text), -1)
        else:
            exclude = self.document_row(doc)
            code = self.codes[exclude]
            mixture = self.mixtures_of([exclude])[0] if pool else None
        if not pool:
            rows, dist = self.index.nearest(code, k, exclude=[exclude])
            return rows[0], dist[0].astype(np.int64)
        candidates, _ = self.index.nearest(code, max(int(pool), int(k)), exclude=[exclude])
        rows, sims = rerank(mixture[None, :], candidates, self.mixtures_of(candidates[0])[None, :, :], k)
        return rows[0], sims[0]

    def similar_rows(self, rows, k: int = 10, word_weight: float = WORD_WEIGHT) -> tuple[np.ndarray, np.ndarray]:
        """The default search (``pool="shared"``) for training documents ``rows`` as
        queries, each left out of its own answer: rows (Q, k) and scores (Q, k)."""
        weight = _checked_word_weight(word_weight, SHARED_BITS)
        if not weight:
            return self.mixture_index.nearest_rows(rows, k)
        return self.topic_word_index.nearest_rows(rows, k, weight)


def _checked_word_weight(word_weight, pool) -> float:
    """``word_weight`` as a number in [0, 1] (None: :data:`WORD_WEIGHT` for the default
    search, 0 for the code-only ones); ValueError (one line) otherwise."""
    if word_weight is None:
        return WORD_WEIGHT if pool == SHARED_BITS else 0.0
    if isinstance(word_weight, bool) or not isinstance(word_weight, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(word_weight) <= 1.0:
        raise ValueError(f"word_weight must be a number from 0 (topic mixtures alone) to 1 (words alone); "
                         f"got {word_weight!r}")
    if float(word_weight) and pool != SHARED_BITS:
        raise ValueError(f"word_weight blends words into the default search only: leave pool out, or give "
                         f"word_weight=0 with pool={pool!r}")
    return float(word_weight)


def _checked_pool(pool):
    """``pool`` as :meth:`DocumentSearch.similar` takes it; ValueError (one line) otherwise."""
    if pool is None or (isinstance(pool, str) and pool == SHARED_BITS):
        return pool
    if isinstance(pool, (int, np.integer)) and not isinstance(pool, bool) and pool >= 0:
        return int(pool)
    raise ValueError(f"pool must be {SHARED_BITS!r}, 0 (Hamming distance alone) or a positive number; got {pool!r}")


def _shorten(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 3] + "..."


def find_topics(run, query: str, top_n: int = 5):
    """:meth:`DocumentSearch.find_topics` over a loaded run."""
    return DocumentSearch(run.model, run.pipeline, np.zeros((0, 0), np.uint8)).find_topics(query, top_n)


def similar_documents(run, doc=None, *, text=None, k: int = 10, pool: int | str | None = SHARED_BITS,
                      word_weight: float | None = None):
    """:meth:`DocumentSearch.similar` over a loaded run's training documents."""
    return DocumentSearch.from_run(run).similar(doc, text=text, k=k, pool=pool, word_weight=word_weight)
