"""Topic labels: a short readable name per topic (numpy and scipy only).

As tomotopy's ``PMIExtractor`` + relevance labeller: the candidates are the corpus's
collocations (adjacent word pairs of high PMI,
:func:`bpetopics.text.collocations.find_collocations`); each topic then takes the
candidate most relevant to it, a pair ``(a, b)`` scoring the LDAvis relevance (Sievert
and Shirley, 2014) of its two words

    r(w, k) = lam ln p(w | k) + (1 - lam) ln [p(w | k) / p(w)],   s((a, b), k) = r(a, k) + r(b, k)

(``p(w)``: the word's share of the corpus's tokens; ``lam`` = 0.4). Mei, Shen and Zhai's
first-order relevance (tomotopy's ``FoRelevance``, the PMI of the label with the topic's
words over documents) was tried first: on 20 Newsgroups it favoured rare pairs that
happen to share documents with a topic's words ("journal medicine" for the topic of
guns), where r chose "gun laws" (docs/topic-model.md). The topics choose in turn, the
surest first, each the best candidate no other has taken. Both words of a label are
among the topic's ``TOP_WORDS`` most probable, the words a reader sees beside it: the
lift rewards rare words, and a pair from further down named topics by words they hardly
hold ("islamic jihad" for a topic of "match team" on the Lee corpus, "outer space" for
one of "communist space alliance" on State of the Union's addresses;
docs/topic-model.md). A topic without such a candidate, or a corpus without candidates
(no texts, or too small), falls back to its top two words (``"space, nasa"``).

Labels are saved in a run's ``labels.json`` (:func:`labels_record`): the automatic ones
and those set by hand, kept apart so that setting one by hand loses nothing.
"""

from __future__ import annotations

import numpy as np

from bpetopics.topwords import top_word_ids

LABELS_FORMAT = "bpetopics.topic_labels"
LABELS_VERSION = 1
#: How the automatic labels were chosen (recorded in labels.json).
METHOD = "pmi-collocations+word-relevance+top-words"
#: lam of the relevance: the weight of ln p(w | k) against the lift ln [p(w | k) / p(w)].
RELEVANCE_LAMBDA = 0.4
#: Both words of a label are among its topic's this many most probable words (as many as
#: ``bpetopics topics`` and the explorer show).
TOP_WORDS = 10


def fallback_label(topic_word_row, vocabulary) -> str:
    """A topic's top two words, ``"space, nasa"``."""
    top = top_word_ids(np.asarray(topic_word_row)[None, :], 2)[0]
    return ", ".join(vocabulary[j] for j in top)


def word_relevance(topic_word, word_share, lam: float = RELEVANCE_LAMBDA) -> np.ndarray:
    """r(w, k) (T, W): ``lam`` ln p(w | k) + (1 - ``lam``) ln [p(w | k) / p(w)]."""
    log_topic = np.log(np.maximum(np.asarray(topic_word, dtype=np.float64), 1e-300))
    return log_topic - (1.0 - lam) * np.log(np.maximum(np.asarray(word_share, dtype=np.float64), 1e-300))


def label_topics(topic_word, vocabulary, texts=None, *, min_count: int = 10, min_docs: int = 5,
                 max_candidates: int = 5000, lam: float = RELEVANCE_LAMBDA) -> list[str]:
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
    lam : float
        The relevance's weight of ln p(w | k), in [0, 1].

    Returns
    -------
    list of str, length T
    """
    # (imported here: the command line parses label assignments with this module, and
    # the text package brings numba)
    from bpetopics.text.collocations import find_collocations, token_ids

    topic_word = np.asarray(topic_word, dtype=np.float64)
    labels = [fallback_label(row, vocabulary) for row in topic_word]
    if texts is None:
        return labels
    candidates = find_collocations(texts, vocabulary, min_count, min_docs, max_candidates)
    if not len(candidates):
        return labels
    ids = token_ids(texts, vocabulary)
    counts = np.bincount(np.concatenate(ids), minlength=len(vocabulary)) if ids else np.zeros(len(vocabulary))
    relevance = word_relevance(topic_word, counts / max(counts.sum(), 1), lam)
    first, second = candidates.pairs[:, 0], candidates.pairs[:, 1]
    scores = relevance[:, first] + relevance[:, second]                      # (T, C)
    top = top_word_ids(topic_word, min(TOP_WORDS, topic_word.shape[1]))
    in_top = np.zeros(topic_word.shape, dtype=bool)
    np.put_along_axis(in_top, top, True, axis=1)
    scores[~(in_top[:, first] & in_top[:, second])] = -np.inf               # both about the topic
    names = candidates.names(vocabulary)
    taken = np.zeros(len(candidates), dtype=bool)
    for topic in np.argsort(-scores.max(axis=1), kind="stable"):   # the surest topics choose first
        row = np.where(taken, -np.inf, scores[topic])
        best = int(np.argmax(row))
        if np.isfinite(row[best]):
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
    version = record.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValueError(f"its version is {version!r}, not a number")
    if version > LABELS_VERSION:
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
