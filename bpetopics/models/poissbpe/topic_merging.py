"""Merging and reducing the topics of a fitted PoissBPE, exactly.

PoissBPE's mixture is f(z) = softmax of the decoder's T outputs and a document's word
rates are beta f(z). Merging topics a and b gives a model whose merged topic has

* the mixture weight f'(z)_m = f(z)_a + f(z)_b, exactly, for every code z (the codes do
  not change);
* the word distribution beta'_m = (w_a beta_a + w_b beta_b) / (w_a + w_b), the
  token-weighted mixture of the two (w_t = sum_n N_n f(z_n)_t, the tokens topic t
  explains in the training documents).

The decoder is left as it is (no linear layer gives log-sum-exp of two outputs): the
model keeps its T outputs and a **merge map** ``topic_groups_`` (T,), each output's topic
after merging. The outputs of a merged topic share its word distribution (their
columns of beta are set to beta'_m), so beta f(z) = sum_m beta'_m f'(z)_m is the merged
model's rate, and the pursuit, the codes' scores and the likelihood run unchanged
(:mod:`bpetopics.bpe`). What the model reports is in merged topics:
``topic_word_`` (T', W), ``code_topic``, ``posterior_topic`` and ``doc_topic`` (N, T'),
rows on the simplex. ``state_dict`` saves the map (``topics.groups``), so a run folder
keeps the merge (``bpetopics topics``, ``encode``, ``graph`` see the merged topics).

:func:`reduce_topics` merges greedily, the most similar pair first, until n topics
remain. The similarity of topics a and b is the mean of

* the cosine of their word distributions, and
* their co-activation: the cosine of their columns of the training documents' mixtures
  (N, T), sum_n f_na f_nb / (||f_.a|| ||f_.b||), 1 when the two are on in the same
  documents in the same proportions, 0 when never on together;

after each merge the merged topic's distribution and mixture column are recomputed
(token-weighted mixture, sum). Both functions report the change of the log-likelihood
per token of the training counts at the training codes, sum x ln [beta f(z)] / sum x.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["TopicMerging", "TopicMergeReport", "merge_topics", "reduce_topics", "topic_similarity",
           "log_likelihood_per_token"]

#: The key of the merge map in ``state_dict``.
GROUPS_KEY = "topics.groups"


class TopicMerging:
    """The merge map of a PoissBPE (module docstring): outputs reported in merged
    topics. A mixin placed before :class:`~bpetopics.models.poissbpe.topic_outputs.TopicOutputs`."""

    #: Each decoder output's topic after merging, (T,) int; None: no merge.
    topic_groups_ = None

    def _merge_matrix(self):
        """(T, T') 0/1: output t counts towards topic ``topic_groups_[t]``; None unmerged."""
        groups = self.topic_groups_
        if groups is None:
            return None
        matrix = np.zeros((len(groups), int(groups.max()) + 1))
        matrix[np.arange(len(groups)), groups] = 1.0
        return matrix

    @property
    def topic_word_(self) -> np.ndarray:
        """(T', W) topic-word distributions of the (merged) topics, rows sum to 1."""
        rows = super().topic_word_
        matrix = self._merge_matrix()
        if matrix is None:
            return rows
        return (matrix.T @ rows) / matrix.sum(0)[:, None]      # the tied outputs' mean: their row

    def code_topic(self, codes) -> np.ndarray:
        """Topic mixtures f(z) of codes (N, K) -> (N, T'), merged outputs summed."""
        return self._merged(super().code_topic(codes))

    def posterior_topic(self, *args, **kwargs) -> np.ndarray:
        """:meth:`TopicOutputs.posterior_topic`, merged outputs summed: (N, T')."""
        return self._merged(super().posterior_topic(*args, **kwargs))

    def _merged(self, mixtures: np.ndarray) -> np.ndarray:
        matrix = self._merge_matrix()
        if matrix is None:
            return mixtures
        return (np.asarray(mixtures, dtype=np.float64) @ matrix).astype(mixtures.dtype)

    def _build(self, n_data, n_features):
        """A model built afresh has no merge."""
        self.topic_groups_ = None
        super()._build(n_data, n_features)

    def _train(self, X, n_epochs):
        """Training a merged model is refused (ValueError): its tied outputs would part."""
        if self.topic_groups_ is not None:
            raise ValueError("this model's topics were merged: train (or update) the model before merging its "
                             "topics, then merge again")
        return super()._train(X, n_epochs)

    def state_dict(self) -> dict:
        """:meth:`SavedState.state_dict`, with the merge map when there is one."""
        state = super().state_dict()
        if self.topic_groups_ is not None:
            state[GROUPS_KEY] = torch.as_tensor(self.topic_groups_, dtype=torch.int64)
        return state

    def load_state(self, state: dict, n_data: int, n_features: int, training=None):
        """:meth:`SavedState.load_state`, and the merge map when saved (ValueError for one
        that does not fit the outputs)."""
        groups = state.get(GROUPS_KEY)
        super().load_state({k: v for k, v in state.items() if k != GROUPS_KEY}, n_data, n_features, training)
        self.topic_groups_ = None
        if groups is not None:
            groups = groups.numpy().astype(np.int64)
            n_out = int(self.likelihood_.topic_logits.shape[0])
            if groups.shape != (n_out,) or groups.min() < 0 or set(groups.tolist()) != set(range(groups.max() + 1)):
                raise ValueError(f"{GROUPS_KEY} is not a merge map of the model's {n_out} topics")
            self.topic_groups_ = groups
        return self


@dataclass
class TopicMergeReport:
    """What a merge did: the merged groups (topics before, in the numbering before), the
    number of topics before and after, the log-likelihood per token of the training
    counts at their codes before and after, and ``mapping`` (old topic -> new topic)."""

    groups: list
    n_topics_before: int
    n_topics_after: int
    log_likelihood_before: float
    log_likelihood_after: float
    mapping: np.ndarray

    @property
    def change(self) -> float:
        """After minus before, nats per token (negative: the merged model fits worse)."""
        return self.log_likelihood_after - self.log_likelihood_before

    def __str__(self) -> str:
        return (f"{self.n_topics_before} -> {self.n_topics_after} topics; log-likelihood per token of the "
                f"training counts {self.log_likelihood_before:.4f} -> {self.log_likelihood_after:.4f} "
                f"({self.change:+.4f} nats)")


def log_likelihood_per_token(model, X, codes=None, batch_size: int = 1024) -> float:
    """sum_n sum_w x_nw ln [beta f(z_n)]_w / sum x at the codes ``codes`` (default: the
    training codes ``model.codes_``), the objective's data term per token."""
    X = model._check_X(X)
    codes = np.asarray(model.codes_ if codes is None else codes)
    total = 0.0
    with torch.no_grad():
        for begin in range(0, X.shape[0], batch_size):
            batch = model.likelihood_.batch(X[begin:begin + batch_size], model.device_)
            z = torch.as_tensor(codes[begin:begin + batch_size], dtype=torch.float32, device=model.device_)
            total += float(model.likelihood_.data_term(model.decoder_(z), batch).double().sum())
    return total / max(float(X.sum()), 1.0)


def _check_groups(groups, n_topics: int) -> list:
    """Groups of topics as lists of distinct ints (ValueError, one line, otherwise)."""
    checked, seen = [], set()
    for group in groups:
        members = []
        for t in group:
            if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= t < n_topics:
                raise ValueError(f"topic {t!r} is not one of the model's topics 0..{n_topics - 1}")
            if int(t) in seen:
                raise ValueError(f"topic {t} is in two groups (or twice in one): merge each topic once")
            seen.add(int(t))
            members.append(int(t))
        if len(members) < 2:
            raise ValueError(f"the group {list(group)} has fewer than two topics: give [[a, b], ...]")
        checked.append(sorted(members))
    return checked


def _mapping(groups: list, n_topics: int) -> np.ndarray:
    """Old topic -> new topic: a merged group takes the place of its lowest topic, the
    other topics keep their order."""
    lead = {t: g[0] for g in groups for t in g}
    new, mapping = {}, np.empty(n_topics, dtype=np.int64)
    for t in range(n_topics):
        head = lead.get(t, t)
        if head not in new:
            new[head] = len(new)
        mapping[t] = new[head]
    return mapping


def merge_topics(model, X, groups, codes=None) -> TopicMergeReport:
    """Merge each group of topics of the fitted PoissBPE ``model`` into one, in place.

    Parameters
    ----------
    model : PoissBPE
        Fitted; merged before or not (topics are numbered as it reports them now).
    X : sparse matrix, shape (N, W)
        The training counts (the token weights w_t and the log-likelihood's documents).
    groups : list of list of int
        ``[[a, b], [c, d, e]]``: each at least two topics, each topic in one group.
    codes : np.ndarray, shape (N, K), optional
        X's codes (default: ``model.codes_``); they do not change.

    Returns
    -------
    TopicMergeReport
        The merged topic of a group takes its lowest topic's place; ``mapping`` says
        where each topic went.
    """
    model._check_fitted()
    X = model._check_X(X)
    codes = np.asarray(model.codes_ if codes is None else codes)
    if codes.shape != (X.shape[0], model.code_length()):
        raise ValueError(f"codes must be ({X.shape[0]}, {model.code_length()}), one of each row of X; "
                         f"got {codes.shape}")
    n_topics = int(model.topic_word_.shape[0])
    groups = _check_groups(groups, n_topics)
    before = log_likelihood_per_token(model, X, codes)
    lengths = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
    weights = lengths @ np.asarray(model.code_topic(codes), dtype=np.float64)          # (T',) tokens
    mapping = _mapping(groups, n_topics)
    outputs = np.arange(int(model.likelihood_.topic_logits.shape[0]))
    current = outputs if model.topic_groups_ is None else model.topic_groups_          # output -> topic now
    with torch.no_grad():
        logits = model.likelihood_.topic_logits
        log_topics = torch.log_softmax(logits.double(), dim=1)                         # (T, W)
        for group in groups:
            members = torch.as_tensor(group)
            heads = torch.as_tensor([int(np.flatnonzero(current == t)[0]) for t in group])  # an output of each
            w = torch.as_tensor(weights[group], dtype=torch.float64)
            w = w / w.sum() if float(w.sum()) > 0 else torch.full_like(w, 1.0 / len(group))
            merged = torch.logsumexp(log_topics[heads] + torch.log(w.clamp_min(1e-300))[:, None], dim=0)
            rows = torch.as_tensor(np.flatnonzero(np.isin(current, members.numpy())))
            logits[rows] = merged.to(logits.dtype)
    model.topic_groups_ = mapping[current]
    model.likelihood_.next_topics = None
    after = log_likelihood_per_token(model, X, codes)
    return TopicMergeReport(groups, n_topics, int(mapping.max()) + 1, before, after, mapping)


def topic_similarity(topic_word: np.ndarray, mixtures: np.ndarray) -> np.ndarray:
    """(T, T) similarity of topics (module docstring): the mean of the cosine of their
    word distributions (T, W) and of their columns of the documents' mixtures (N, T)."""
    def cosine(rows):
        rows = np.asarray(rows, dtype=np.float64)
        unit = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-300)
        return unit @ unit.T

    return 0.5 * (cosine(topic_word) + cosine(np.asarray(mixtures).T))


def reduce_topics(model, X, n_topics: int, codes=None) -> TopicMergeReport:
    """Merge the most similar pair of topics (:func:`topic_similarity`) again and again
    until ``n_topics`` remain, then apply the merges (:func:`merge_topics`) in place.
    ValueError when ``n_topics`` is not between 1 and the topics the model has."""
    model._check_fitted()
    X = model._check_X(X)
    codes = np.asarray(model.codes_ if codes is None else codes)
    topic_word = np.asarray(model.topic_word_, dtype=np.float64)
    have = topic_word.shape[0]
    if isinstance(n_topics, bool) or not isinstance(n_topics, (int, np.integer)) or not 1 <= n_topics <= have:
        raise ValueError(f"n_topics must be an int from 1 to the model's {have} topics, not {n_topics!r}")
    mixtures = np.asarray(model.code_topic(codes), dtype=np.float64)
    weights = np.asarray(X.sum(axis=1), dtype=np.float64).ravel() @ mixtures
    members = [[t] for t in range(have)]
    while len(members) > n_topics:
        sim = topic_similarity(topic_word, mixtures)
        np.fill_diagonal(sim, -np.inf)
        a, b = sorted(np.unravel_index(int(np.argmax(sim)), sim.shape))
        total = weights[a] + weights[b]
        share = weights[a] / total if total > 0 else 0.5
        topic_word[a] = share * topic_word[a] + (1 - share) * topic_word[b]
        mixtures[:, a] += mixtures[:, b]
        weights[a] = total
        members[a] = members[a] + members[b]
        topic_word, mixtures = np.delete(topic_word, b, 0), np.delete(mixtures, b, 1)
        weights = np.delete(weights, b)
        del members[b]
    groups = [g for g in members if len(g) > 1]
    if not groups:
        before = log_likelihood_per_token(model, X, codes)
        return TopicMergeReport([], have, have, before, before, np.arange(have))
    return merge_topics(model, X, groups, codes)
