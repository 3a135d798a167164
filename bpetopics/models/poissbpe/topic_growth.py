"""Topic growth: PoissBPE trains with fewer topics first, then splits each in two.

At T = 50 on 20 Newsgroups a model trained with its T topics from the start ends with a
lower tail of little-used topics that join two themes' words (docs/defaults.md): a bit gathers the documents that share a few words and gives them a topic of
their own. Grown topics are children of topics that already hold a theme: the model
starts with ``initial_topics`` T0 topics (about 25 by default, where PoissBPE's topics
are at their best) and doubles them in rounds spread over the first third of the epochs
until it has T (:meth:`TopicGrowth.growth_schedule`). In a round each topic's documents
are split in two by the split moves' 2-means on what it explains of each
(:func:`~bpetopics.models.poissbpe.topic_split.split_gains`), the topics whose split gains most
become two topics (one from each half), as many as the round adds, and training goes on.

A child starts from its half's counts, smoothed like a split move's halves; both children
take their parent's decoder row, with ln 2 off the bias, so that every code's mixture
over the other topics is what it was and the parent's share is shared between the two
until the data pull them apart. Adam starts afresh on the grown parameters; q(pi) and the
codes' bits are kept.

A mixin of :class:`~bpetopics.models.poissbpe.PoissBPE` (needs its ``decoder_``,
``likelihood_``, ``optimizer_``, ``n_topics``, ``initial_topics``, ``epochs`` and
``doc_topic``).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from bpetopics.bpe.adam import Adam
from bpetopics.bpe.decoder import CodeDecoder
from bpetopics.models.poissbpe.topic_split import split_gains
from bpetopics.models.poissbpe.topic_repair import SPLIT_SMOOTHING, corpus_frequencies, smoothed_log_topics

#: ``initial_topics=None`` grows the topics from this many topics on (at T = 20 growth
#: raised NPMI but lowered classifier accuracy and purity; docs/defaults.md measures both) ...
GROWTH_MIN_TOPICS = 40
#: ... from about this many: T / 2^r topics (rounded up), r = round(log2(T / 25)) >= 1
#: doublings (25 at T = 50 and 100, 20 at 40, 19 at 75).
GROWTH_START_TOPICS = 25
#: Training documents (a seeded sample, all of a smaller corpus) whose mixtures decide a
#: round's splits: this many a topic after the round (the topic check's rule), at least
#: GROWTH_MIN_SAMPLE, at most GROWTH_SAMPLE.
GROWTH_DOCS_PER_TOPIC = 50
GROWTH_MIN_SAMPLE = 1000
GROWTH_SAMPLE = 20000
#: Their mixtures are posterior means over the code's neighbourhood with the pairs of this
#: many best flips: the neighbourhood growth was measured with (``doc_topic`` has used
#: 16 since; a round's splits, and so the trained models, stay as measured).
GROWTH_PAIR_FLIPS = 8


def growth_sample_size(n_topics: int) -> int:
    """How many training documents decide a round's splits (a seeded sample; all of a
    smaller corpus): GROWTH_DOCS_PER_TOPIC for each of the ``n_topics`` topics the round
    makes, at least GROWTH_MIN_SAMPLE and at most GROWTH_SAMPLE (1,000 at T = 20, 10,000
    at T = 200). A round's cost is its sample's pursuit, posterior means and 2-means,
    so a per-topic sample keeps the early rounds (25 -> 50 topics) as cheap as the checks
    at that T."""
    return min(GROWTH_SAMPLE, max(GROWTH_MIN_SAMPLE, GROWTH_DOCS_PER_TOPIC * int(n_topics)))


def child_topics(gains: np.ndarray, halves: np.ndarray, log_topics: np.ndarray, n_topics: int,
                 freq: np.ndarray):
    """The grown topics: the ``n_topics - T0`` topics of largest gain split in two.

    Parameters
    ----------
    gains : np.ndarray, shape (T0,)
        Each topic's split gain in nats (:func:`~bpetopics.models.poissbpe.topic_split.split_gains`).
    halves : np.ndarray, shape (T0, 2, W)
        The summed counts of each topic's two halves.
    log_topics : np.ndarray, shape (T0, W)
        ln beta transposed: the topics now.
    n_topics : int
        T, the topics after growth (T0 <= T <= 2 T0).
    freq : np.ndarray, shape (W,)
        The corpus's word frequencies (:func:`~bpetopics.models.poissbpe.topic_repair.corpus_frequencies`).

    Returns
    -------
    parents : np.ndarray of int, shape (T,)
        Each new topic's parent, in order (a split topic's two children side by side).
    new_log_topics : np.ndarray, shape (T, W)
        ln of the new topics' word distributions: a split topic's children from its
        halves (smoothed with ``SPLIT_SMOOTHING``), an unsplit topic as it was.
    """
    n_old = len(gains)
    split = set(np.argsort(-gains, kind="stable")[:n_topics - n_old].tolist())
    parents, rows = [], []
    for t in range(n_old):                                  # a loop over topics
        if t in split:
            rows.append(smoothed_log_topics(halves[t], freq, SPLIT_SMOOTHING))
            parents += [t, t]
        else:
            rows.append(log_topics[t][None])
            parents.append(t)
    return np.asarray(parents), np.concatenate(rows)


class TopicGrowth:
    """The growth step of PoissBPE's training (see the module docstring)."""

    def initial_topic_count(self) -> int:
        """T0, the topics training starts with: ``initial_topics``, or for None T / 2^r
        (rounded up, r = round(log2(T / GROWTH_START_TOPICS)), at least 1) from
        ``GROWTH_MIN_TOPICS`` topics on and T below; T when training runs fewer than 3
        epochs (no third of them to grow in)."""
        if self.epochs is not None and self.epochs < 3:
            return self.n_topics
        if self.initial_topics is None:
            if self.n_topics < GROWTH_MIN_TOPICS:
                return self.n_topics
            rounds = max(1, round(math.log2(self.n_topics / GROWTH_START_TOPICS)))
            return -(-self.n_topics // 2 ** rounds)
        return int(self.initial_topics)

    def _build(self, n_data, n_features):
        """:meth:`BPEBase._build` with ``current_topics_`` topics: a saved model's (while
        :meth:`load_state` reads it), else :meth:`initial_topic_count`."""
        saved = getattr(self, "_saved_topics", None)
        self.current_topics_ = saved if saved is not None else self.initial_topic_count()
        super()._build(n_data, n_features)

    def load_state(self, state: dict, n_data: int, n_features: int, training=None):
        """:meth:`BPEBase.load_state`, the modules built with the saved model's topics (a
        checkpoint taken while the topics grow has fewer than T)."""
        logits = state.get("likelihood.topic_logits")           # saved as (W, T)
        saved = None if logits is None else int(logits.shape[-1])
        # a finished model has T topics; a checkpoint T or fewer while its topics grow (other
        # counts: built with T, so that loading names the mismatched shapes)
        allowed = {self.n_topics} if training is None else set(self.topic_counts())
        self._saved_topics = saved if saved in allowed else self.n_topics
        try:
            return super().load_state(state, n_data, n_features, training)
        finally:
            del self._saved_topics

    def topic_counts(self) -> list:
        """The topics the model has in turn, [T0, 2 T0, 4 T0, ..., T] ([T] without growth)."""
        counts = [self.initial_topic_count()]
        while counts[-1] < self.n_topics:
            counts.append(min(2 * counts[-1], self.n_topics))
        return counts

    def growth_schedule(self) -> list:
        """The rounds of growth, [(epoch, topics after it), ...]: from T0 the topics double
        (the last round to T) after epochs ceil(i E3 / r), i = 1..r, E3 = a third of the
        epochs (at least 1): at T = 50 of 15 epochs [(5, 50)], at T = 100 [(3, 50), (5, 100)].
        Empty without growth."""
        counts = self.topic_counts()[1:]
        third = max(1, self.total_epochs() // 3)
        return [(max(1, math.ceil(i * third / len(counts))), n) for i, n in enumerate(counts, 1)]

    def _grow_topics(self, X) -> int:
        """The rounds of :meth:`growth_schedule` due at the end of this epoch; returns the
        number of topics added."""
        added = 0
        for epoch, topics in self.growth_schedule():
            if epoch <= self.epoch_ and topics > self.current_topics_:
                added += self._grow_round(X, topics)
        return added

    def _grow_round(self, X, n_topics: int) -> int:
        """Split the topics worth splitting most so that the model has ``n_topics``
        (at most twice as many as now); returns the number added."""
        n_old = self.current_topics_
        gen = torch.Generator().manual_seed(int(self.random_state) * 7919 + 104729 + self.epoch_)
        sample = torch.randperm(X.shape[0], generator=gen)[:growth_sample_size(n_topics)]
        sample = np.sort(sample.numpy())
        X_sample = X[sample]
        mix = self.doc_topic(X_sample, posterior="local", pair_flips=GROWTH_PAIR_FLIPS)
        mix = np.asarray(mix, dtype=np.float64)                                        # (n, T0)
        with torch.no_grad():
            beta = self.likelihood_.topic_word().cpu().numpy().astype(np.float64)  # (W, T0)
            log_topics = torch.log_softmax(self.likelihood_.topic_logits.double(), 1).cpu().numpy()
        gains, halves = split_gains(X_sample, beta, mix)
        parents, new_log_topics = child_topics(gains, halves, log_topics, n_topics, corpus_frequencies(X))
        self._replace_topics(parents, new_log_topics)
        return n_topics - n_old

    def _replace_topics(self, parents: np.ndarray, log_topics: np.ndarray) -> None:
        """New decoder and likelihood with ``len(parents)`` topics: topic i takes the
        decoder output row of ``parents[i]`` (its bias lowered by ln of the parent's
        number of children) and the word distribution exp ``log_topics[i]``; a fresh
        Adam over the new parameters."""
        old = self.decoder_
        n_new = len(parents)
        last = f"head.{len(old.head) - 1}" if len(old.head) else "first"
        state = {k: v.detach().clone() for k, v in old.state_dict().items()}
        index = torch.as_tensor(parents, device=state[f"{last}.weight"].device)
        children = torch.bincount(index, minlength=int(index.max()) + 1)[index]
        state[f"{last}.weight"] = state[f"{last}.weight"][index]
        state[f"{last}.bias"] = state[f"{last}.bias"][index] - torch.log(children.to(state[f"{last}.bias"].dtype))
        self.current_topics_ = n_new
        with torch.random.fork_rng(devices=[]):          # its random start is overwritten
            decoder = CodeDecoder(self.code_length(), n_new, tuple(self.hidden), self.activation)
        decoder.load_state_dict(state)
        likelihood = self._make_likelihood((0, self.likelihood_.n_words))
        with torch.no_grad():
            likelihood.topic_logits.copy_(torch.from_numpy(log_topics))
        self.decoder_, self.likelihood_ = decoder.to(self.device_), likelihood.to(self.device_)
        self.optimizer_ = Adam(self._parameters(), lr=self._learning_rate())
