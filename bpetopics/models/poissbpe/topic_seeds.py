"""Guided topics: seed words per topic as a prior on PoissBPE's topics.

``PoissBPE(seed_words=[[12, 40], [7], ...], seed_strength=s)``: topic t's seed words S_t
(word ids; ``bpetopics.seed_topics.seed_word_ids`` maps words to them, and
``TopicModel(seed_topics=[["space", "nasa"], ...])`` does it through its vocabulary).

* **Start.** Topic t starts from the summed counts of the training documents holding
  one of its seed words (smoothed towards the corpus, as a restarted topic; for counts
  in memory: rows read from disk keep the usual start), then moves towards its seeds:
  beta_t <- (1 - m) beta_t + m u(S_t), u(S_t) uniform over S_t, m = ``SEED_START_MASS``.
* **Prior.** The theta step's per-token loss gets the term

      (s / T) sum_t sum_{w in S_t} -ln beta_wt,

  a Dirichlet prior with s N_tok / T pseudo-counts on each seed word in its topic (s: the
  share of an average topic's tokens, N_tok / T, each seed word is given). Its
  gradient in topic t's logits is (s / T) (|S_t| beta_t - 1[S_t]) (softmax over words:
  d ln beta_wt / d l_tv = 1[v = w] - beta_vt).

The compiled theta step (:mod:`bpetopics.models.poissbpe.compiled.fused_theta`, :mod:`bpetopics.models.poissbpe.compiled.topic_step`)
has no place for the term: with seed words the theta step runs the torch operations
(the reference path, same gradients otherwise), slower on CPU. Topics do not grow with
seed words (T from the start, so that topic t stays the seeded one).

A mixin of :class:`~bpetopics.models.poissbpe.PoissBPE`, placed before
:class:`~bpetopics.models.poissbpe.topic_priors.TopicPriors`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics.models.poissbpe.topic_repair import corpus_frequencies, smoothed_log_topics

__all__ = ["TopicSeeds", "SEED_START_MASS", "seed_logit_grad"]

#: The share of a seeded topic's starting distribution put on its seed words.
SEED_START_MASS = 0.3


def seed_logit_grad(beta: torch.Tensor, seeds: torch.Tensor, strength: float) -> torch.Tensor:
    """d/dl of (strength) sum_t sum_{w in S_t} -ln beta_wt, (T, W), with ``seeds`` (T, W)
    the 0/1 indicator of each topic's seed words and ``beta`` (W, T)."""
    with torch.no_grad():
        beta_t = beta.t()
        return strength * (beta_t * seeds.sum(1, keepdim=True) - seeds)


class TopicSeeds:
    """The seed-word prior of PoissBPE (module docstring)."""

    def _seed_matrix(self):
        """(T, W) 0/1 of the topics' seed words on the model's device, or None."""
        if not self.seed_words or not any(self.seed_words):
            return None
        cached = getattr(self, "_seeds", None)
        if cached is not None:
            return cached
        logits = self.likelihood_.topic_logits
        seeds = torch.zeros(logits.shape, dtype=logits.dtype, device=logits.device)
        for t, words in enumerate(self.seed_words):
            seeds[t, list(words)] = 1.0
        self._seeds = seeds
        return seeds

    def _check_seed_words(self, n_words: int | None = None) -> None:
        """ValueError (one line) for seed words that are not lists of word ids, one list
        per topic, at most ``n_topics`` lists."""
        if self.seed_words is None:
            return
        if isinstance(self.seed_words, (str, bytes)) or not all(
                isinstance(ws, (list, tuple)) and all(isinstance(w, (int, np.integer)) and not isinstance(w, bool)
                                                      for w in ws) for ws in self.seed_words):
            raise ValueError("seed_words must be lists of word ids, one list per topic: [[12, 40], [7], ...] "
                             "(TopicModel(seed_topics=...) takes words)")
        if len(self.seed_words) > self.n_topics:
            raise ValueError(f"seed_words has {len(self.seed_words)} topics but the model {self.n_topics}")
        if n_words is not None:
            bad = [w for ws in self.seed_words for w in ws if not 0 <= w < n_words]
            if bad:
                raise ValueError(f"seed word id {bad[0]} is outside the vocabulary's {n_words} words")

    def _validate_params(self):
        super()._validate_params()
        self._check_seed_words()

    def has_seed_words(self) -> bool:
        """Whether any topic has seed words (then the theta step takes the torch path:
        the compiled step has no seed term)."""
        return bool(self.seed_words and any(self.seed_words))

    def _build(self, n_data, n_features):
        """With seed words: checked against the vocabulary."""
        self._seeds = None
        self._check_seed_words(int(n_features))
        super()._build(n_data, n_features)

    def initial_topic_count(self) -> int:
        """T with seed words (no growth: topic t stays the seeded one), else as without."""
        if self.seed_words and any(self.seed_words):
            return self.n_topics
        return super().initial_topic_count()

    def _setup(self, X, n_data=None):
        """The usual start; then each seeded topic from the documents holding its seed
        words (in-memory counts), moved towards its seed words."""
        super()._setup(X, n_data)
        seeds = self._seed_matrix()
        if seeds is None:
            return
        with torch.no_grad():
            logits = self.likelihood_.topic_logits
            if sp.issparse(X):
                self._start_from_seed_documents(sp.csr_matrix(X))
            beta = torch.softmax(logits.double(), dim=1)
            counts = seeds.double().sum(1, keepdim=True)
            seeded = counts[:, 0] > 0
            uniform = seeds.double() / counts.clamp_min(1.0)
            moved = (1 - SEED_START_MASS) * beta + SEED_START_MASS * uniform
            logits[seeded] = torch.log(moved[seeded]).to(logits.dtype)

    def _start_from_seed_documents(self, X) -> None:
        """Topic t's logits from the summed counts of the documents holding one of its
        seed words, smoothed towards the corpus (as a restarted topic's)."""
        freq = corpus_frequencies(X)
        logits = self.likelihood_.topic_logits
        for t, words in enumerate(self.seed_words):
            rows = np.flatnonzero(np.asarray(X[:, list(words)].sum(axis=1)).ravel() > 0) if words else []
            if len(rows):
                counts = np.asarray(X[rows].sum(axis=0), dtype=np.float64)
                logits[t] = torch.from_numpy(smoothed_log_topics(counts, freq)[0]).to(logits.dtype)

    def _seed_strength(self) -> float:
        """s / T, the seed prior's weight per token (module docstring)."""
        return float(self.seed_strength) / max(int(self.likelihood_.topic_logits.shape[0]), 1)

    def _theta_penalty(self, out, params=None, usage=None):
        """:meth:`TopicPriors._theta_penalty` plus the seed prior."""
        penalty = super()._theta_penalty(out, params, usage)
        seeds = self._seed_matrix()
        if seeds is None or not self.seed_strength:
            return penalty
        beta = self.likelihood_.topic_word() if params is None else params
        return penalty - self._seed_strength() * (torch.log(beta.t().clamp_min(1e-30)) * seeds).sum()

    def _penalty_backward(self, out, params=None, usage=None) -> None:
        """:meth:`TopicPriors._penalty_backward`, then the seed prior's gradient into
        ``topic_logits.grad``."""
        super()._penalty_backward(out, params, usage)
        seeds = self._seed_matrix()
        if seeds is None or not self.seed_strength:
            return
        logits = self.likelihood_.topic_logits
        beta = self.likelihood_.minibatch_params() if params is None else params
        grad = seed_logit_grad(beta, seeds, self._seed_strength()).to(logits.dtype)
        logits.grad = grad if logits.grad is None else logits.grad.add_(grad)
