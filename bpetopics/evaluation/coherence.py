"""Topic coherence against a reference corpus: gensim's measures and our vectorised NPMI.

Two implementations of NPMI are provided and must agree (to 1e-6):

* :func:`gensim_coherence` runs gensim's ``CoherenceModel`` (``c_npmi``, ``c_v``,
  ``c_uci``, ``u_mass``) single-process; it is the reference.
* :func:`npmi_coherence` rebuilds exactly what ``c_npmi`` computes, vectorised:

  - probability estimation ``p_boolean_sliding_window``: every document is cut into
    windows of ``window_size`` consecutive tokens (stride 1; a document shorter than the
    window is one window; an empty document counts as one empty window). A word's
    probability is the share of windows that contain it, a pair's the share of windows
    that contain both (``WordOccurrenceAccumulator``);
  - segmentation ``s_one_one``: all ordered pairs (w_i, w_j), i != j, of a topic's top
    words;
  - confirmation ``log_ratio_measure(normalize=True)``, with epsilon = 1e-12::

        NPMI(w_i, w_j) = log((P(w_i, w_j) + eps) / (P(w_i) P(w_j))) / -log(P(w_i, w_j) + eps)

  - aggregation: the arithmetic mean over the pairs gives the topic's score.

  gensim's window accumulator has one quirk that we reproduce on purpose, because it
  changes the counts: when a token slides out of the window, its word is marked absent
  even if another occurrence of the same word is still inside the window (it becomes
  present again only when a new occurrence enters). See :func:`window_cooccurrence`.

A topic with a top word that never occurs in the reference makes gensim's NPMI
non-finite (P(w) = 0 gives log(eps / 0) = +inf). Such topics are scored at the measure's
minimum (NPMI: -1), flagged, and counted in ``n_nonfinite``; they are never dropped.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from bpetopics.evaluation.cooccurrence import EncodedTexts, encode_texts, window_cooccurrence
from bpetopics.topwords import top_word_ids, top_words  # noqa: F401  (re-exported)

__all__ = [
    "CoherenceScores",
    "top_word_ids",
    "top_words",
    "npmi_coherence",
    "gensim_coherence",
    "EPSILON",
    "MEASURE_FLOORS",
    "GENSIM_MEASURES",
    "MIN_REFERENCE_DOCS",
]

#: A held-out split with fewer documents than this is too small a coherence reference
#: (a word pair seen in no window scores NPMI -1): ``compare --reference auto`` then uses
#: the whole corpus, and ``evaluate`` says so.
MIN_REFERENCE_DOCS = 1000

#: gensim's ``direct_confirmation_measure.EPSILON``.
EPSILON = 1e-12

#: The value given to a topic whose score is non-finite: the measure's minimum.
#: NPMI and cosine (C_V) are bounded below by -1; PMI (UCI) and UMass are bounded below by
#: log(eps), since P(w_i, w_j) + eps >= eps and P(w) <= 1.
MEASURE_FLOORS = {
    "c_npmi": -1.0,
    "c_v": -1.0,
    "c_uci": float(np.log(EPSILON)),
    "u_mass": float(np.log(EPSILON)),
}


#: The gensim measures that ``evaluate`` and ``compare`` report (c_npmi first: the
#: reference for our NPMI).
GENSIM_MEASURES = ("c_npmi", "c_v", "u_mass", "c_uci")


@dataclass(frozen=True)
class CoherenceScores:
    """Per-topic coherence scores.

    Attributes
    ----------
    measure : str
        ``"c_npmi"``, ``"c_v"``, ``"c_uci"`` or ``"u_mass"``.
    per_topic : np.ndarray, shape (T,)
        Score of each topic; non-finite scores are replaced by ``MEASURE_FLOORS[measure]``.
    nonfinite : np.ndarray of bool, shape (T,)
        Which topics had a non-finite raw score.
    seconds : float
        Wall time of the computation.
    implementation : str
        ``"bpetopics"`` or ``"gensim"``.
    """

    measure: str
    per_topic: np.ndarray
    nonfinite: np.ndarray
    seconds: float
    implementation: str

    @property
    def mean(self) -> float:
        """Mean over all topics, floored ones included."""
        return float(np.mean(self.per_topic)) if self.per_topic.size else float("nan")

    @property
    def n_nonfinite(self) -> int:
        """Number of topics whose raw score was non-finite (scored at the floor)."""
        return int(self.nonfinite.sum())


def _topics_to_ids(topics, vocabulary: Sequence[str]) -> np.ndarray:
    """Topics as words (list of list of str) or ids (int array / lists of int) -> ids.

    Returns
    -------
    np.ndarray of int64, shape (T, n_max)
        Vocabulary ids; topics shorter than the longest are padded with -1.
    """
    if isinstance(topics, np.ndarray) and topics.dtype.kind in "iu":
        ids = topics.astype(np.int64).reshape(len(topics), -1)
    else:
        index = {w: i for i, w in enumerate(vocabulary)}
        rows = []
        for topic in topics:
            row = []
            for w in topic:
                if isinstance(w, (int, np.integer)):
                    row.append(int(w))
                elif w in index:
                    row.append(index[w])
                else:
                    raise KeyError(f"top word {w!r} is not in the vocabulary")
            rows.append(row)
        n_max = max((len(r) for r in rows), default=0)
        ids = np.full((len(rows), n_max), -1, dtype=np.int64)
        for t, row in enumerate(rows):
            ids[t, :len(row)] = row
    valid = ids[ids >= 0]
    if valid.size and valid.max() >= len(vocabulary):
        raise IndexError("topic word id outside the vocabulary")
    return ids


def npmi_coherence(
    topics,
    texts,
    vocabulary: Sequence[str],
    window_size: int = 10,
) -> CoherenceScores:
    """NPMI coherence of each topic, vectorised; equal to gensim's ``c_npmi`` to 1e-6.

    Parameters
    ----------
    topics : list of list of str, or np.ndarray of int, shape (T, n)
        Each topic's top words (strings of ``vocabulary``, or vocabulary ids); topics may
        have different lengths (at least 2).
    texts : list of list of str, length N, or EncodedTexts
        The reference corpus, tokenised.
    vocabulary : list of str, length W
    window_size : int
        Sliding window size (gensim's c_npmi default: 10).

    Returns
    -------
    CoherenceScores
        ``per_topic`` shape (T,): the mean NPMI over the ordered pairs of distinct top-word
        positions; a topic with a top word absent from every window is scored -1 and
        flagged in ``nonfinite``.
    """
    t0 = time.perf_counter()
    ids = _topics_to_ids(topics, vocabulary)
    if not isinstance(texts, EncodedTexts):
        texts = encode_texts(texts, vocabulary)
    elif tuple(texts.vocabulary) != tuple(vocabulary):
        raise ValueError("the encoded texts were built on another vocabulary")
    present = ids >= 0  # (T, n): False marks the padding of shorter topics
    if np.any(present.sum(axis=1) < 2):
        raise ValueError("NPMI needs at least two top words per topic")
    uniq, local = np.unique(ids[present], return_inverse=True)
    local_ids = np.zeros(ids.shape, dtype=np.int64)
    local_ids[present] = local
    counts, n_windows = window_cooccurrence(texts, uniq, window_size)

    # P(w_i, w_j) and P(w_i) as gensim's accumulator gives them (counts / num_docs)
    joint = counts / float(n_windows)
    marg = np.diag(joint).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        # PMI = log((P(i,j) + eps) / (P(i) P(j)));  NPMI = PMI / -log(P(i,j) + eps)
        # (a word with P = 0 gives +inf, as in gensim; never -inf since eps > 0)
        pmi = np.log((joint + EPSILON) / np.outer(marg, marg))
        npmi = pmi / -np.log(joint + EPSILON)
    pair = npmi[local_ids[:, :, None], local_ids[:, None, :]]  # (T, n, n)
    # s_one_one: ordered pairs of distinct positions; aggregation: arithmetic mean
    n_max = ids.shape[1]
    mask = present[:, :, None] & present[:, None, :] & ~np.eye(n_max, dtype=bool)[None]
    raw = np.where(mask, pair, 0.0).sum(axis=(1, 2)) / mask.sum(axis=(1, 2))
    nonfinite = ~np.isfinite(raw)
    scores = np.where(nonfinite, MEASURE_FLOORS["c_npmi"], raw)
    return CoherenceScores(
        measure="c_npmi",
        per_topic=scores,
        nonfinite=nonfinite,
        seconds=time.perf_counter() - t0,
        implementation="bpetopics",
    )


def gensim_coherence(
    topics,
    texts: Sequence[Sequence[str]],
    vocabulary: Sequence[str],
    measure: str = "c_npmi",
    window_size: int | None = None,
) -> CoherenceScores:
    """Coherence of each topic through gensim's ``CoherenceModel`` (``processes=1``).

    Parameters
    ----------
    topics : list of list of str, or np.ndarray of int, shape (T, n)
    texts : list of list of str, length N
        The reference corpus, tokenised (for ``u_mass`` it is turned into bag-of-words).
    vocabulary : list of str, length W
        Builds the gensim ``Dictionary``; every top word must be in it (gensim would
        otherwise drop unknown words silently, so we raise instead).
    measure : {"c_npmi", "c_v", "c_uci", "u_mass"}
    window_size : int or None
        None uses gensim's default (c_npmi, c_uci: 10; c_v: 110).

    Returns
    -------
    CoherenceScores
        Non-finite topic scores are replaced by ``MEASURE_FLOORS[measure]`` and counted.
        Note that gensim's ``u_mass`` maps a division by a zero count to 0 rather than to a
        non-finite value, so it rarely flags anything.
    """
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel

    if measure not in MEASURE_FLOORS:
        raise ValueError(f"unknown coherence measure {measure!r}")
    t0 = time.perf_counter()
    ids = _topics_to_ids(topics, vocabulary)
    words = [[vocabulary[i] for i in row if i >= 0] for row in ids]
    if isinstance(texts, EncodedTexts):
        texts = [
            [vocabulary[i] if i >= 0 else "\x00" for i in texts.ids[a:b]]
            for a, b in zip(texts.offsets[:-1], texts.offsets[1:])
        ]
    dictionary = Dictionary([list(vocabulary)])
    cm = CoherenceModel(
        topics=words,
        texts=texts,
        dictionary=dictionary,
        coherence=measure,
        window_size=window_size,
        topn=max(len(w) for w in words),
        processes=1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # gensim's divisions by zero
        raw = np.asarray(cm.get_coherence_per_topic(), dtype=np.float64)
    nonfinite = ~np.isfinite(raw)
    scores = np.where(nonfinite, MEASURE_FLOORS[measure], raw)
    return CoherenceScores(
        measure=measure,
        per_topic=scores,
        nonfinite=nonfinite,
        seconds=time.perf_counter() - t0,
        implementation="gensim",
    )
