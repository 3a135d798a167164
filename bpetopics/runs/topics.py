"""A run's topics as rows and text: what ``bpetopics topics`` prints and ``train`` shows
at its end (the same order as the run's ``topics.csv``: :func:`bpetopics.topwords.top_word_ids`)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from bpetopics.topwords import top_word_ids

#: Words of a document shown after its id (its cleaned tokens, in order).
SNIPPET_WORDS = 16


def topic_shares(run):
    """Each topic's share of the corpus's tokens (from summary.json), or None when unknown."""
    share = run.summary.get("topic_share")
    if share is None:
        try:
            share = run.doc_topics()[1].mean(0).tolist()
        except (OSError, KeyError, ValueError):
            return None
    return [float(s) for s in share]


def topic_rows(run, top: int = 10, labels=None) -> list[dict]:
    """One dict per topic: ``topic``, ``share``, ``label`` (of ``labels``, one per topic:
    :func:`bpetopics.runs.labels.topic_labels`; None when not given), ``words`` and
    ``weights`` (top ``top``)."""
    topic_word = run.model.topic_word_
    shares = topic_shares(run)
    order = top_word_ids(topic_word, top)  # the order of topics.csv
    return [{"topic": t, "share": None if shares is None else shares[t],
             "label": None if labels is None else labels[t],
             "words": [run.vocabulary[j] for j in row],
             "weights": [round(float(topic_word[t, j]), 6) for j in row]}
            for t, row in enumerate(order)]


def top_documents(weights, lengths, n_docs: int) -> np.ndarray:
    """The rows of the ``n_docs`` documents that give a topic the most weight: ``weights``
    (N,) their weights of the topic, ``lengths`` (N,) their lengths; among weights equal
    to two decimals (as shown: peaked mixtures give many documents 1.00) the longest
    first (it shows more of the topic), then corpus order. Returns int array (n_docs,)."""
    weights, lengths = np.asarray(weights, dtype=np.float64), np.asarray(lengths, dtype=np.float64)
    return np.lexsort((-lengths, -np.round(weights, 2)))[:int(n_docs)]     # last key first


def add_topic_documents(rows: list[dict], run, n_docs: int) -> str | None:
    """Give each topic's row (of :func:`topic_rows`) ``documents``: the ``n_docs``
    training documents that give it the largest weight in their mixtures (the run's
    ``doc_topics.npz``), ranked by :func:`top_documents`, each ``{"id", "weight",
    "text"}``, ``text`` its first :data:`SNIPPET_WORDS`
    words after cleaning. Returns a note when the texts cannot be rebuilt (``text`` is
    then empty, ties stay in corpus order); RunError for a run that keeps no mixtures
    (trained on a sharded corpus)."""
    from bpetopics.runs.corpus import run_train_split

    ids, mixtures = run.doc_topics()                                    # (N,), (N, T)
    n_docs = min(int(n_docs), len(ids))
    train, note = run_train_split(run)
    texts = None if train is None else train.texts
    lengths = np.zeros(len(ids)) if texts is None else np.array([len(t) for t in texts], dtype=np.float64)
    for row in rows:
        weights = mixtures[:, row["topic"]]
        best = top_documents(weights, lengths, n_docs)
        row["documents"] = [{"id": ids[i], "weight": round(float(weights[i]), 4),
                             "text": "" if texts is None else " ".join(texts[i][:SNIPPET_WORDS])}
                            for i in best]
    return note


#: Widest label shown in the table (longer ones are cut with "...").
LABEL_WIDTH = 24


def _cut(label: str, width: int = LABEL_WIDTH) -> str:
    return label if len(label) <= width else label[:width - 3] + "..."


def format_table(rows: list[dict]) -> str:
    """Topics as aligned text: topic, share of the corpus, label (when the rows have
    labels), top words with their weights; under each, its documents (when the rows
    have them: :func:`add_topic_documents`), weight, id and first words."""
    labelled = any(row.get("label") is not None for row in rows)
    width = max([len("label")] + [len(_cut(row.get("label") or "")) for row in rows]) if labelled else 0
    lines = ["topic   share  " + (f"{'label':<{width}}  " if labelled else "") + "top words (weight)"]
    for row in rows:
        share = "     -" if row["share"] is None else f"{row['share']:6.1%}"
        label = f"{_cut(row.get('label') or ''):<{width}}  " if labelled else ""
        words = "  ".join(f"{w} {p:.3f}" for w, p in zip(row["words"], row["weights"]))
        lines.append(f"{row['topic']:>5}  {share}  {label}{words}")
        documents = row.get("documents") or []
        id_width = max((len(doc["id"]) for doc in documents), default=0)
        lines += [f"         {doc['weight']:5.2f}  {doc['id']:<{id_width}}  {doc['text']}".rstrip()
                  for doc in documents]
    return "\n".join(lines)


def format_rows(rows: list[dict], fmt: str) -> str:
    """``rows`` in ``fmt``: table, csv (long: topic, share, rank, word, weight, and label
    when the rows have labels) or json."""
    if fmt == "table":
        return format_table(rows)
    if fmt == "json":
        return json.dumps(rows, indent=1, ensure_ascii=False)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    labelled = any(row.get("label") is not None for row in rows)
    writer.writerow(["topic", "share", "rank", "word", "weight"] + (["label"] if labelled else []))
    for row in rows:
        share = "" if row["share"] is None else f"{row['share']:.6g}"
        label = [row.get("label") or ""] if labelled else []
        writer.writerows([row["topic"], share, rank, w, p, *label]
                         for rank, (w, p) in enumerate(zip(row["words"], row["weights"])))
    return buf.getvalue().rstrip("\n")
