"""Topic labels: a short readable name per topic (numpy and scipy only).

As tomotopy's ``PMIExtractor`` + ``FoRelevance`` labeller (Mei, Shen and Zhai, 2007,
"Automatic labeling of multinomial topic models"): the candidates are the corpus's
collocations (adjacent word pairs of high PMI, :func:`bpetopics.text.collocations.find_collocations`);
a candidate ``l`` scores for topic ``k``

    s(l, k) = sum_w p(w | k) PMI(w, l),   PMI(w, l) = ln [(n(w, l) + smoothing) N / (n(w) n(l))]

over the documents (``n(w, l)``: documents holding both the word and the pair; the sum
over each topic's ``top_words`` most probable words), less ``mu`` times its mean score
for the other topics (a label should tell its topic apart). Each topic takes its best
candidate not taken by a topic that scored higher; a topic whose best candidate scores
at most 0, or a corpus without candidates (no texts, or too small), falls back to its
top two words (``"space, nasa"``).

Labels are saved in a run's ``labels.json`` (:func:`labels_record`): the automatic ones
and those set by hand, kept apart so that setting one by hand loses nothing.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bpetopics.text.collocations import find_collocations, token_ids
from bpetopics.topwords import top_word_ids

LABELS_FORMAT = "bpetopics.topic_labels"
LABELS_VERSION = 1
#: How the automatic labels were chosen (recorded in labels.json).
METHOD = "pmi-collocations+relevance"
#: Words of each topic whose weights score a candidate.
RELEVANCE_WORDS = 100
#: Words scored together (bounds the memory of the word-by-candidate table).
WORD_CHUNK = 2048


def fallback_label(topic_word_row, vocabulary) -> str:
    """A topic's top two words, ``"space, nasa"``."""
    top = top_word_ids(np.asarray(topic_word_row)[None, :], 2)[0]
    return ", ".join(vocabulary[j] for j in top)


def relevance_scores(topic_word, texts, vocabulary, collocations, smoothing: float = 0.01,
                     mu: float = 0.25, top_words: int = RELEVANCE_WORDS) -> np.ndarray:
    """s(l, k) less ``mu`` times its mean over the other topics, (T, C) (module docstring)."""
    topic_word = np.asarray(topic_word, dtype=np.float64)
    n_topics, width = topic_word.shape
    docs = token_ids(texts, vocabulary)
    rows = np.repeat(np.arange(len(docs)), [len(d) for d in docs])
    words = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, np.concatenate(docs) if docs else rows)),
                          shape=(len(docs), width))
    words.data[:] = 1.0                                     # documents holding the word, once each
    pair_docs = collocations.documents.astype(np.float32)
    n_docs = max(len(docs), 1)
    word_df = np.asarray(words.sum(axis=0)).ravel()
    pair_df = np.asarray(pair_docs.sum(axis=0)).ravel()
    top = top_word_ids(topic_word, min(top_words, width))
    used = np.unique(top)
    weights = np.zeros_like(topic_word)
    np.put_along_axis(weights, top, np.take_along_axis(topic_word, top, 1), 1)
    weights /= np.maximum(weights.sum(axis=1, keepdims=True), 1e-300)
    scores = np.zeros((n_topics, len(collocations)))
    by_word = words.tocsc()
    for begin in range(0, len(used), WORD_CHUNK):
        chunk = used[begin:begin + WORD_CHUNK]
        together = (by_word[:, chunk].T @ pair_docs).toarray()          # (w, C) documents with both
        pmi = (np.log(together + smoothing) + np.log(n_docs)
               - np.log(np.maximum(word_df[chunk], 1))[:, None] - np.log(np.maximum(pair_df, 1))[None, :])
        scores += weights[:, chunk] @ pmi
    if n_topics > 1:
        scores -= mu * (scores.sum(axis=0, keepdims=True) - scores) / (n_topics - 1)
    return scores


def label_topics(topic_word, vocabulary, texts=None, *, min_count: int = 10, min_docs: int = 5,
                 max_candidates: int = 5000, smoothing: float = 0.01, mu: float = 0.25) -> list[str]:
    """One label per topic (the module docstring says how).

    Parameters
    ----------
    topic_word : np.ndarray, shape (T, W)
    vocabulary : sequence of str, length W
    texts : sequence of sequence of str, optional
        The training documents' tokens in order (``Corpus.texts``); None: every topic
        gets its top two words.
    min_count, min_docs, max_candidates :
        The collocations' cuts (:func:`~bpetopics.text.collocations.find_collocations`).
    smoothing, mu :
        The relevance's pseudo-count and weight of the other topics.

    Returns
    -------
    list of str, length T
    """
    topic_word = np.asarray(topic_word, dtype=np.float64)
    labels = [fallback_label(row, vocabulary) for row in topic_word]
    if texts is None:
        return labels
    candidates = find_collocations(texts, vocabulary, min_count, min_docs, max_candidates)
    if not len(candidates):
        return labels
    scores = relevance_scores(topic_word, texts, vocabulary, candidates, smoothing, mu)
    names = candidates.names(vocabulary)
    taken = np.zeros(len(candidates), dtype=bool)
    for topic in np.argsort(-scores.max(axis=1), kind="stable"):   # the surest topics choose first
        row = np.where(taken, -np.inf, scores[topic])
        best = int(np.argmax(row))
        if row[best] > 0:
            labels[topic], taken[best] = names[best], True
    return labels


# --------------------------------------------------------------- labels.json
def labels_record(automatic, manual=None) -> dict:
    """The content of a run's ``labels.json``: the automatic labels (one per topic) and
    those set by hand (``{topic: label}``)."""
    return {"format": LABELS_FORMAT, "version": LABELS_VERSION, "method": METHOD,
            "automatic": [str(label) for label in automatic],
            "manual": {str(int(t)): str(label) for t, label in sorted((manual or {}).items())}}


def parse_labels_record(record, n_topics: int) -> tuple[list[str], dict[int, str]]:
    """(automatic labels, labels set by hand) of a ``labels.json`` content; ValueError
    (one line) when it is not one, or is for another number of topics."""
    if not isinstance(record, dict) or record.get("format") != LABELS_FORMAT:
        raise ValueError(f"not a topic labels file (format {record.get('format') if isinstance(record, dict) else None!r})")
    if record.get("version", 0) > LABELS_VERSION:
        raise ValueError(f"topic labels version {record['version']} is newer than this bpetopics: upgrade it")
    automatic, manual = record.get("automatic"), record.get("manual") or {}
    if not isinstance(automatic, list) or len(automatic) != n_topics or not isinstance(manual, dict):
        raise ValueError(f"the labels are not one per topic of the {n_topics}")
    try:
        manual = {int(t): str(label) for t, label in manual.items()}
    except ValueError:
        raise ValueError("a label set by hand names no topic number") from None
    if any(not 0 <= t < n_topics for t in manual):
        raise ValueError(f"a label set by hand names a topic outside 0..{n_topics - 1}")
    return [str(label) for label in automatic], manual


def merge_labels(automatic, manual) -> list[str]:
    """The labels to show: those set by hand, the automatic ones elsewhere."""
    return [manual.get(t, label) for t, label in enumerate(automatic)]


def parse_label_assignment(text: str) -> tuple[int, str]:
    """``'3=space'`` -> ``(3, 'space')``; ValueError (one line) otherwise."""
    topic, sep, label = text.partition("=")
    label = label.strip().strip('"').strip("'").strip()
    if not sep or not topic.strip().isdigit() or not label:
        raise ValueError(f"{text!r} is not TOPIC=LABEL: give e.g. 3=\"space flight\"")
    return int(topic), label
