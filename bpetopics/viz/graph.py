"""The topic co-activation graph and the bit view, from plain arrays.

Everything here takes numpy arrays (and, for the bit view, a function from codes to
mixtures), so it works for any topic model that exposes the contract of
``docs/design.md``: ``topic_word`` (T x W, rows on the simplex) and ``doc_topic``
(N x T, rows on the simplex). For PoissBPE, ``doc_topic`` is f(z_n), the decoder's
softmax at each document's code z_n, and ``code_topic_fn`` is ``model.code_topic``.

The paper shows "the topics that share a code as a graph (one node per topic, sized by
its probability, edges joining topics switched on by the same code)". What "switched on"
means for a softmax output, which is never exactly zero, is fixed here by an explicit
activation rule (:func:`activation_matrix`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

import networkx as nx
import numpy as np
import pandas as pd

from bpetopics.files import atomic_path
from bpetopics.topwords import top_word_ids

__all__ = [
    "DEFAULT_THRESHOLD",
    "DEFAULT_MASS",
    "top_word_lists",
    "topic_labels",
    "activation_matrix",
    "coactivation_graph",
    "bit_topics",
    "bit_table",
    "write_graph",
]

#: Default for ``rule="threshold"``: a topic is active when it holds >= 10% of the mixture.
DEFAULT_THRESHOLD = 0.1
#: Default for ``rule="top_mass"``: the smallest set of topics covering 80% of the mixture.
DEFAULT_MASS = 0.8

_RULES = ("threshold", "top_mass")


# ----------------------------------------------------------------------------- words


def top_word_lists(topic_word: np.ndarray, vocabulary: Sequence[str], n: int = 10) -> list[list[str]]:
    """The ``n`` most probable words of each topic (row of ``topic_word``), best first.

    Ties are broken by vocabulary index (stable sort), so the result is deterministic.
    """
    topic_word = np.asarray(topic_word)
    vocabulary = np.asarray(list(vocabulary), dtype=object)
    if topic_word.ndim != 2 or topic_word.shape[1] != len(vocabulary):
        raise ValueError(
            f"topic_word must be T x W with W = len(vocabulary) = {len(vocabulary)}, "
            f"got shape {topic_word.shape}"
        )
    n = int(min(n, topic_word.shape[1]))
    return [[str(w) for w in vocabulary[row]] for row in top_word_ids(topic_word, n)]


def topic_labels(topic_word: np.ndarray, vocabulary: Sequence[str], n: int = 3) -> list[str]:
    """A short label per topic: its ``n`` top words joined by spaces."""
    return [" ".join(words) for words in top_word_lists(topic_word, vocabulary, n)]


# ------------------------------------------------------------------------ activation


def activation_matrix(
    doc_topic: np.ndarray,
    rule: str = "threshold",
    threshold: float = DEFAULT_THRESHOLD,
    mass: float = DEFAULT_MASS,
) -> np.ndarray:
    """Which topics each mixture activates: a boolean matrix of the shape of ``doc_topic``.

    ``doc_topic`` is N x T, each row a mixture over topics (f(z_n) for PoissBPE). Rows are
    normalised to sum to 1 first (an all-zero row activates nothing).

    Rules
    -----
    ``"threshold"`` (default)
        Topic t is active under mixture f when ``f_t >= threshold``. The default 0.1 is
        twice the uniform share at T = 20 (1.5x at T = 15, the paper's setting), so a
        topic must clearly stand out from the softmax's floor to count, and at most
        ``1 / threshold`` = 10 topics can ever be active at once. A PoissBPE code switches
        on one to a few bits and each bit pushes up one or a few topics, so a typical
        code's mixture puts >= 10% on 1 to 4 topics; flat mixtures (e.g. the empty
        code's f(0) on an untrained decoder, which sits near 1/T everywhere) activate
        nothing once T > 10. Raise it for small T (for T <= 10 the uniform share itself
        reaches 0.1).
    ``"top_mass"``
        The smallest set of topics, taken from the largest weight down, whose weights
        sum to at least ``mass`` (default 0.8). Every non-zero mixture activates at least
        one topic; a flat mixture activates about ``mass * T`` topics. Scale-free, so it
        needs no re-tuning when T changes, but it draws edges for diffuse mixtures too.
    """
    f = np.asarray(doc_topic, dtype=np.float64)
    if f.ndim != 2:
        raise ValueError(f"doc_topic must be 2-D (N x T), got shape {f.shape}")
    if not np.all(np.isfinite(f)) or np.any(f < 0):
        raise ValueError("doc_topic must be finite and non-negative")
    total = f.sum(axis=1, keepdims=True)
    f = np.divide(f, total, out=np.zeros_like(f), where=total > 0)
    if rule == "threshold":
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        return f >= threshold
    if rule == "top_mass":
        if not 0.0 < mass <= 1.0:
            raise ValueError(f"mass must be in (0, 1], got {mass}")
        order = np.argsort(-f, axis=1, kind="stable")
        sorted_f = np.take_along_axis(f, order, axis=1)
        mass_before = np.cumsum(sorted_f, axis=1) - sorted_f
        # the k-th largest topic is taken while the mass already taken is short of `mass`;
        # a small tolerance keeps e.g. (0.5, 0.3, 0.2) at two topics for mass 0.8
        take_sorted = (mass_before < mass - 1e-9) & (sorted_f > 0)
        active = np.zeros_like(take_sorted)
        np.put_along_axis(active, order, take_sorted, axis=1)
        return active
    raise ValueError(f"rule must be one of {_RULES}, got {rule!r}")


def _distinct_codes(codes: np.ndarray, n_docs: int):
    """Distinct rows of ``codes``: (index of each one's first document, inverse, counts)."""
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[0] != n_docs:
        raise ValueError(f"codes must be N x K with N = {n_docs}, got shape {codes.shape}")
    _, first, inverse, counts = np.unique(
        codes, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    return first, inverse.reshape(-1), counts


def coactivation_graph(
    doc_topic: np.ndarray,
    topic_word: np.ndarray,
    vocabulary: Sequence[str],
    codes: np.ndarray | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    rule: str = "threshold",
    top_n: int = 10,
    doc_lengths: np.ndarray | None = None,
    mass: float = DEFAULT_MASS,
    labels: Sequence[str] | None = None,
    doc_weights: np.ndarray | None = None,
) -> nx.Graph:
    """The topic co-activation graph: one node per topic, an edge per pair of topics
    switched on together by documents' codes.

    Parameters
    ----------
    doc_topic : (N, T) array
        Each document's mixture over topics; for PoissBPE f(z_n) (``model.doc_topic(X)``
        or ``model.code_topic(model.codes_)``).
    topic_word : (T, W) array
        Topics as distributions over words (``model.topic_word_``, beta transposed).
    vocabulary : sequence of W strings
    codes : (N, K) uint8 array, optional
        Each document's binary code z_n. Documents sharing a code share f(z), so the
        activation is computed once per distinct code and weighted by how many documents
        use it (np.unique over rows). Raises ValueError if two documents with the same
        code have different ``doc_topic`` rows. Without codes every row counts on its own
        (which also serves models without codes, e.g. LDA).
    threshold, rule, mass
        The activation rule, see :func:`activation_matrix`.
    top_n : int
        Number of top words stored in each node's ``top_words``.
    doc_lengths : (N,) array, optional
        Words per document. Node ``probability`` is the topic's share of the corpus:
        sum_n L_n f(z_n)_t / sum_n L_n (the token share, as pyLDAvis computes it); without
        lengths, the plain mean over documents.
    labels : sequence of T strings, optional
        Node labels; default: each topic's top 3 words.
    doc_weights : (N,) array of int, optional
        How many documents each row stands for (rows = distinct codes, without
        ``codes``: a sharded run's ``codes/distinct.npz``; ``doc_lengths`` are then the
        rows' summed lengths). Default: one each.

    Returns
    -------
    networkx.Graph
        Nodes ``0..T-1`` with attributes (all scalars, so GraphML/GEXF can store them):
        ``topic`` (int), ``label`` (str), ``top_words`` (space-joined str),
        ``probability`` (float, sums to 1 over topics), ``n_docs`` (int: documents whose
        code activates the topic). Edge ``(s, t)`` exists iff some document's code
        activates both, with ``weight`` (int) = the number of such documents.
        Graph attributes: ``rule``, ``threshold`` or ``mass``, ``n_documents``.

    Notes
    -----
    With A the N x T boolean activation matrix, the co-activation counts are A^T A
    (computed per distinct code as A_u^T diag(counts) A_u); its diagonal is ``n_docs``.
    """
    f = np.asarray(doc_topic, dtype=np.float64)
    topic_word = np.asarray(topic_word, dtype=np.float64)
    if f.ndim != 2:
        raise ValueError(f"doc_topic must be N x T, got shape {f.shape}")
    n_docs, n_topics = f.shape
    if topic_word.ndim != 2 or topic_word.shape[0] != n_topics:
        raise ValueError(
            f"topic_word must have T = {n_topics} rows (doc_topic's columns), got shape {topic_word.shape}"
        )
    words = top_word_lists(topic_word, vocabulary, top_n)
    if labels is None:
        labels = [" ".join(w[:3]) for w in words]
    elif len(labels) != n_topics:
        raise ValueError(f"labels must have {n_topics} entries, got {len(labels)}")

    # topic probability: (length-weighted) mean mixture
    if doc_lengths is not None:
        lengths = np.asarray(doc_lengths, dtype=np.float64).reshape(-1)
        if lengths.shape[0] != n_docs:
            raise ValueError(f"doc_lengths must have {n_docs} entries, got {lengths.shape[0]}")
        prob = lengths @ f
    else:
        prob = f.sum(axis=0)
    prob = prob / prob.sum() if prob.sum() > 0 else np.full(n_topics, 1.0 / max(n_topics, 1))

    # activation, once per distinct code when codes are given
    if codes is not None and n_docs > 0:
        first, inverse, counts = _distinct_codes(codes, n_docs)
        rows = f[first]
        if not np.allclose(f, rows[inverse], rtol=0.0, atol=1e-4):
            raise ValueError(
                "documents with the same code have different doc_topic rows; "
                "pass doc_topic = f(codes) for these codes, or codes=None"
            )
    else:
        rows, counts = f, np.ones(n_docs) if doc_weights is None else np.asarray(doc_weights, np.float64).ravel()
        if counts.shape != (n_docs,):
            raise ValueError(f"doc_weights must have {n_docs} entries, got shape {counts.shape}")
    active = activation_matrix(rows, rule=rule, threshold=threshold, mass=mass)
    a = active.astype(np.float64)
    # A^T diag(c) A in float64 BLAS; exact for counts < 2**53
    co = np.rint((a * counts[:, None].astype(np.float64)).T @ a).astype(np.int64)

    G = nx.Graph()
    G.graph.update({"rule": rule, "n_documents": int(counts.sum()) if doc_weights is not None else int(n_docs)})
    if rule == "threshold":
        G.graph["threshold"] = float(threshold)
    else:
        G.graph["mass"] = float(mass)
    for t in range(n_topics):
        G.add_node(
            t,
            topic=t,
            label=str(labels[t]),
            top_words=" ".join(words[t]),
            probability=float(prob[t]),
            n_docs=int(co[t, t]),
        )
    src, dst = np.nonzero(np.triu(co, k=1))
    G.add_weighted_edges_from((int(s), int(d), int(co[s, d])) for s, d in zip(src, dst))
    return G


# --------------------------------------------------------------------------- bit view


def bit_topics(
    code_topic_fn: Callable[[np.ndarray], np.ndarray],
    n_bits: int,
    base_code: np.ndarray | None = None,
) -> np.ndarray:
    """What each bit does to the mixture: a (K, T) array of f(base + e_k) - f(base - e_k).

    ``code_topic_fn`` maps a uint8 code array (M x K) to mixtures (M x T), e.g.
    ``model.code_topic``. With the default ``base_code`` (the empty code) row k is
    f(e_k) - f(0): positive entries are the topics bit k raises, negative the ones it
    takes mass from (rows sum to ~0). With another base code, row k is the effect of
    switching bit k on versus off in that context (bit k of ``base_code`` is ignored).
    One call to ``code_topic_fn`` with 2K codes.
    """
    n_bits = int(n_bits)
    if n_bits < 1:
        raise ValueError(f"n_bits must be >= 1, got {n_bits}")
    base = np.zeros(n_bits, dtype=np.uint8) if base_code is None else np.asarray(base_code).astype(np.uint8).reshape(-1)
    if base.shape[0] != n_bits:
        raise ValueError(f"base_code must have {n_bits} entries, got {base.shape[0]}")
    on = np.tile(base, (n_bits, 1))
    off = on.copy()
    idx = np.arange(n_bits)
    on[idx, idx] = 1
    off[idx, idx] = 0
    mix = np.asarray(code_topic_fn(np.concatenate([on, off], axis=0)), dtype=np.float64)
    if mix.ndim != 2 or mix.shape[0] != 2 * n_bits:
        raise ValueError(f"code_topic_fn must return a (M x T) array for M = {2 * n_bits} codes, got {mix.shape}")
    return mix[:n_bits] - mix[n_bits:]


def bit_table(
    code_topic_fn: Callable[[np.ndarray], np.ndarray],
    n_bits: int,
    labels: Sequence[str] | None = None,
    codes: np.ndarray | None = None,
    base_code: np.ndarray | None = None,
    n_raised: int = 3,
    topic_word: np.ndarray | None = None,
    vocabulary: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per bit: how often it is used and which topics it raises most.

    Columns: ``bit``; ``usage`` (share of documents whose code has the bit on; NaN
    without ``codes``); ``n_docs`` (count; <NA> without codes); then for i = 1..n_raised:
    ``topic_i`` (int), ``raise_i`` (float: f(base + e_k)_t - f(base - e_k)_t, from
    :func:`bit_topics`, largest first), ``label_i`` (the topic's label). Labels come from
    ``labels``, else from ``topic_word`` + ``vocabulary`` (top 3 words), else "topic t".
    """
    delta = bit_topics(code_topic_fn, n_bits, base_code)
    n_topics = delta.shape[1]
    if labels is None:
        if topic_word is not None and vocabulary is not None:
            labels = topic_labels(topic_word, vocabulary, 3)
        else:
            labels = [f"topic {t}" for t in range(n_topics)]
    if len(labels) != n_topics:
        raise ValueError(f"labels must have {n_topics} entries, got {len(labels)}")
    table: dict[str, object] = {"bit": np.arange(n_bits)}
    if codes is not None:
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != n_bits:
            raise ValueError(f"codes must be N x {n_bits}, got shape {codes.shape}")
        on = (codes != 0).sum(axis=0)
        table["usage"] = on / max(codes.shape[0], 1)
        table["n_docs"] = pd.array(on, dtype="Int64")
    else:
        table["usage"] = np.full(n_bits, np.nan)
        table["n_docs"] = pd.array([pd.NA] * n_bits, dtype="Int64")
    n_raised = int(min(n_raised, n_topics))
    order = np.argsort(-delta, axis=1, kind="stable")[:, :n_raised]
    labels = np.asarray([str(x) for x in labels], dtype=object)
    for i in range(n_raised):
        t = order[:, i]
        table[f"topic_{i + 1}"] = t
        table[f"raise_{i + 1}"] = delta[np.arange(n_bits), t]
        table[f"label_{i + 1}"] = labels[t]
    return pd.DataFrame(table)


# ------------------------------------------------------------------------------ files


def _scalar(value):
    """A GraphML/GEXF-safe scalar: python bool/int/float/str; sequences joined by spaces."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        return " ".join(str(v) for v in value)
    return str(value)


def _scalar_copy(G: nx.Graph) -> nx.Graph:
    H = G.__class__()
    H.graph.update({k: _scalar(v) for k, v in G.graph.items() if v is not None})
    H.add_nodes_from((n, {k: _scalar(v) for k, v in d.items() if v is not None}) for n, d in G.nodes(data=True))
    H.add_edges_from((u, v, {k: _scalar(x) for k, x in d.items() if x is not None}) for u, v, d in G.edges(data=True))
    return H


def write_graph(G: nx.Graph, path_stem: str | os.PathLike) -> tuple[Path, Path]:
    """Write ``G`` as ``<path_stem>.graphml`` and ``<path_stem>.gexf`` (for Gephi etc.).

    Attribute values are coerced to scalars (numpy numbers to python numbers, lists to
    space-joined strings; None dropped). Each file is written atomically. Read back with
    ``nx.read_graphml(path, node_type=int)``. Returns the two paths.
    """
    stem = Path(path_stem)
    if stem.suffix in (".graphml", ".gexf"):
        stem = stem.with_suffix("")
    H = _scalar_copy(G)
    out = []
    for ext, writer in ((".graphml", nx.write_graphml), (".gexf", nx.write_gexf)):
        path = stem.with_name(stem.name + ext)
        with atomic_path(path) as tmp:
            writer(H, str(tmp))
        out.append(path)
    return out[0], out[1]
