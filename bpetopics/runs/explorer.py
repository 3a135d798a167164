"""What the browser explorer shows of a run (``bpetopics explore``), as plain JSON-safe
data: the topics with their labels and top words, the co-activation graph laid out
(:func:`~bpetopics.runs.explore.run_graph`, :func:`~bpetopics.viz.graph_layout`), the
first documents with their codes, topics, nearest neighbours by Hamming distance, most
similar documents by topics and words (as ``bpetopics similar`` finds them), a snippet
of their words and the rest of their vocabulary words (for the page's search), and topic
shares over time when the run has timestamps."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bpetopics.runs.run import RunError

#: Documents shown on the page by default (the page grows by about 0.5 KB a document).
DEFAULT_MAX_DOCS = 2000
#: Documents listed per topic, neighbours per document, words per snippet and topic.
TOPIC_DOCS, NEIGHBOURS, SNIPPET_WORDS, TOP_WORDS = 50, 5, 40, 10


def hamming_neighbours(codes, k: int = NEIGHBOURS) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest other codes of each code (rows of a 0/1 matrix, N x K) by
    Hamming distance, ties broken by row order (:class:`bpetopics.search.CodeIndex`):
    (indices, distances), both N x k (fewer columns when N <= k)."""
    from bpetopics.search import CodeIndex

    index = CodeIndex.from_codes(codes)
    near, dist = index.nearest(codes, k=k, exclude=np.arange(len(index)))
    return near, dist.astype(np.int64)


def similar_neighbours(run, n_shown: int, k: int = NEIGHBOURS, counts=None):
    """The ``k`` documents most like each of the run's first ``n_shown`` training
    documents, among them, by ``bpetopics similar``'s default search (topics and words
    together, :meth:`~bpetopics.runs.search.DocumentSearch.similar_rows`): (indices,
    scores), both n_shown x k; None when the run's training counts cannot be read.
    ``counts``: the training counts when the caller has them (its rebuilt corpus's),
    else they are read from the run."""
    from bpetopics.runs.corpus import run_train_counts
    from bpetopics.runs.search import DocumentSearch

    if counts is None:
        try:
            counts = run_train_counts(run)
        except RunError:
            return None
    codes = np.asarray(run.model.codes_[:n_shown], dtype=np.uint8)
    return DocumentSearch(run.model, run.pipeline, codes, counts[:n_shown]).similar_rows(np.arange(n_shown), k)


def _time_text(times) -> list[str]:
    if np.issubdtype(times.dtype, np.datetime64):
        return [str(t)[:10] if str(t).endswith("T00:00:00") else str(t) for t in times.astype("datetime64[s]")]
    return [f"{t:g}" for t in times]


def _documents(train, note, n_shown: int, vocabulary):
    """(snippets, other words, lengths in tokens, label names per document, note) of the
    first ``n_shown`` training documents, from the run's train split rebuilt
    (:func:`~bpetopics.runs.corpus.run_train_split`'s pair): a document's other words are
    its vocabulary words (``vocabulary``, the counts' columns) beyond its snippet, in
    vocabulary order, so that the page's search finds a document by any word the model
    counted in it. Without the split, empty snippets and words, zero lengths and its note."""
    if train is None:
        return [""] * n_shown, [""] * n_shown, np.zeros(n_shown), None, note
    snippets = [" ".join(tokens[:SNIPPET_WORDS]) for tokens in train.texts[:n_shown]]
    counts = sp.csr_matrix(train.counts[:n_shown])
    counts.sort_indices()                                   # each row's words in vocabulary order
    others = []
    for i, tokens in enumerate(train.texts[:n_shown]):
        shown = set(tokens[:SNIPPET_WORDS])
        columns = counts.indices[counts.indptr[i]:counts.indptr[i + 1]]
        others.append(" ".join(w for w in (vocabulary[j] for j in columns) if w not in shown))
    lengths = np.array([len(tokens) for tokens in train.texts[:n_shown]], dtype=np.float64)
    names = None
    if train.labels is not None and train.label_names is not None:
        names = [str(train.label_names[i]) for i in train.labels[:n_shown]]
    return snippets, others, lengths, names, None


def _over_time(doc_topic, times, bins: int = 12) -> dict:
    from bpetopics.runs.over_time import topics_over_time

    frame = topics_over_time(doc_topic, times, bins=bins)
    n_topics = doc_topic.shape[1]
    starts = frame.drop_duplicates("bin")["start"].to_numpy()
    share = frame["share"].to_numpy().reshape(-1, n_topics)
    return {"starts": _time_text(np.asarray(starts)),
            "documents": frame.drop_duplicates("bin")["documents"].astype(int).tolist(),
            "share": [[None if not np.isfinite(v) else round(float(v), 5) for v in row] for row in share.T]}


def explorer_data(run, max_docs: int = DEFAULT_MAX_DOCS, labels=None, seed: int = 0) -> dict:
    """The explorer's data for a text run (JSON-safe).

    ``labels``: one label per topic [default: the run's labels, :func:`bpetopics.runs.labels.topic_labels`:
    set by hand, else the collocation most relevant to the topic]. The first
    ``max_docs`` training documents are shown (in the run's order); their nearest
    neighbours are found among them. Topic shares over time use every document.
    """
    from bpetopics.runs.explore import run_graph
    from bpetopics.runs.corpus import run_train_split
    from bpetopics.runs.topics import top_documents, topic_rows
    from bpetopics.runs.labels import topic_labels
    from bpetopics.viz import graph_layout

    if "codes" in run.config:
        raise RunError(f"{run.path} was trained on a sharded corpus: the explorer reads runs of in-memory corpora "
                       "(train on a sample built with `bpetopics corpus INPUT --out DIR`)")
    model = run.model
    codes = getattr(model, "codes_", None)
    if codes is None:
        raise RunError(f"{run.path} has no codes of its training documents (doc_codes.npz): train it again")
    n_topics = model.topic_word_.shape[0]
    labels = topic_labels(run) if labels is None else [str(x) for x in labels]
    if len(labels) != n_topics:
        raise RunError(f"{len(labels)} topic labels for {n_topics} topics: give one label per topic")
    ids, doc_topic = run.doc_topics()
    n_docs, n_shown = len(ids), min(len(ids), max_docs)
    G = run_graph(run)
    min_weight = max(1.0, round(0.01 * n_docs))
    pos = graph_layout(G, min_weight=min_weight, seed=seed)
    topics = [{"topic": row["topic"], "label": labels[row["topic"]], "share": row["share"],
               "words": [[w, p] for w, p in zip(row["words"], row["weights"])],
               "xy": [round(float(v), 4) for v in pos[row["topic"]]],
               "documents": int(G.nodes[row["topic"]].get("n_docs", 0))}
              for row in topic_rows(run, TOP_WORDS)]
    edges = [[int(u), int(v), int(w)] for u, v, w in G.edges(data="weight") if w >= min_weight]
    shown_codes = np.asarray(codes[:n_shown], dtype=np.uint8)
    shown_topics = np.asarray(doc_topic[:n_shown], dtype=np.float64)
    near, dist = hamming_neighbours(shown_codes)
    train, note = run_train_split(run)                      # rebuilt once: snippets and similar documents
    similar = similar_neighbours(run, n_shown, counts=None if train is None else train.counts)
    snippets, others, lengths, names, note = _documents(train, note, n_shown, run.vocabulary)
    times = run.doc_times()
    top3 = np.argsort(-shown_topics, axis=1, kind="stable")[:, :3]
    documents = [{"id": ids[i], "bits": np.flatnonzero(shown_codes[i]).tolist(),
                  "topics": [[int(t), round(float(shown_topics[i, t]), 4)] for t in top3[i]],
                  "near": [[int(j), int(d)] for j, d in zip(near[i], dist[i])], "text": snippets[i],
                  "words": others[i],
                  **({"similar": [[int(j), round(float(v), 4)] for j, v in zip(similar[0][i], similar[1][i])]}
                     if similar is not None else {}),
                  **({"label": names[i]} if names is not None else {}),
                  **({"time": _time_text(times[i:i + 1])[0]} if times is not None else {})}
                 for i in range(n_shown)]
    # as `bpetopics topics --documents` ranks them: weight to two decimals, then the longer
    topic_docs = [top_documents(shown_topics[:, t], lengths, TOPIC_DOCS).tolist() for t in range(n_topics)]
    notes = [] if note is None else [note]
    if similar is None:
        notes.append("no similar documents: the run's training counts cannot be read")
    if n_shown < n_docs:
        notes.append(f"showing the first {n_shown:,} of {n_docs:,} documents (--max-docs); neighbours are found "
                     "among them; shares over time count every document")
    return {"run": run.path.name, "n_documents": n_docs, "n_bits": int(shown_codes.shape[1]), "topics": topics,
            "edges": edges, "edge_min_weight": min_weight, "documents": documents, "topic_documents": topic_docs,
            "over_time": None if times is None else _over_time(np.asarray(doc_topic), times), "notes": notes}
