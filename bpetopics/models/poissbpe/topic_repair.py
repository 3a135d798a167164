"""Topic repair at the end of an epoch: restarts of dead and duplicated topics, and
split moves (:mod:`bpetopics.models.poissbpe.topic_split` plans them; this mixin of
:class:`~bpetopics.models.poissbpe.PoissBPE` makes them on the model's parameters and
Adam state)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics.bpe.threads import kernel_threads
from bpetopics.models.poissbpe.compiled import fused_pursuit, rows_pursuit
from bpetopics.bpe.pursuit import greedy_pursuit
from bpetopics.models.poissbpe.topic_split import plan_moves

#: A split's halves start from their counts plus this share of as many pseudo-counts
#: spread like the corpus (a restart from a few documents uses 1: half corpus).
SPLIT_SMOOTHING = 0.1
#: The bit a split move gives the topic that takes the documents: +this on its logit,
#: -this on the split topic's (e^4 = 55 times the split topic's weight).
SPLIT_BIT_STRENGTH = 2.0
#: Split moves are made until this share of the epochs.
LAST_MOVE = 0.9
#: The check samples this many documents per topic (at least 1,000): a topic that leads a
#: few percent of the documents must lead some of the sample's, whatever T.
CHECK_DOCS_PER_TOPIC = 50
#: With split moves the check runs about CHECKS_PER_RUN times a run, at least CHECK_STRIDE
#: epochs apart: every fourth epoch of the 15 that large corpora train, every eighth
#: of the 30 of small ones, whose checks past four changed no figure beyond the seeds'
#: spread but took time (docs/defaults.md: the topic check's schedule) ...
CHECK_STRIDE = 4
CHECKS_PER_RUN = 4
#: ... but every epoch when the training documents have fewer distinct words than this on
#: average (subject lines, titles of a few words: TopicRepair.check_stride).
EVERY_EPOCH_WORDS = 5


def corpus_frequencies(X) -> np.ndarray:
    """The corpus's word frequencies, add-one smoothed, (W,) summing to 1 (one pass over
    X: computed once per check, not per restarted topic)."""
    freq = np.asarray(X.sum(0), dtype=np.float64).ravel() + 1.0
    return freq / freq.sum()


def smoothed_log_topics(counts, freq, weight=1.0) -> np.ndarray:
    """ln of word distributions from summed document counts (T, W), each smoothed with
    ``weight`` times as many pseudo-counts as it has tokens, spread like ``freq`` (W,)."""
    smoothed = counts + weight * freq * counts.sum(1, keepdims=True).clip(1) + 1e-3
    return np.log(smoothed / smoothed.sum(1, keepdims=True))


class TopicRepair:
    """The end-of-epoch topic moves of PoissBPE (needs its fitted ``likelihood_``,
    ``decoder_``, ``prior_``, ``optimizer_``, ``words_per_document_`` and the parameters
    ``reseed_similarity``, ``split_moves``, ``split_min_gain``)."""

    def _restart_topics(self, X) -> dict:
        """Restart dead and duplicated topics (docs/model.md: 2 to 5 of 20 topics died or
        duplicated) in the first half of training, and make split moves until 90% of it
        (with split moves: at epochs 1, 1 + s, 1 + 2s, ..., s = :meth:`check_stride`).

        On a seeded sample of max(1,000, 50 T) documents: a topic is *dead* when its total mixture
        weight is under a tenth of the average, *duplicated* when its word distribution
        has cosine similarity above ``reseed_similarity`` with a more used topic. With
        ``split_moves`` such a topic, or one that is no sampled document's top topic (at
        every check, not only in the first half: a secondary component that no document
        is mostly about), takes half of the topic worth splitting most, whatever that
        split gains (:func:`~bpetopics.models.poissbpe.topic_split.plan_moves`), and
        other split moves are made where they gain (:meth:`_split_topics`); a restarted
        topic that no split serves (or all, without ``split_moves``) is started again
        from the 5 documents the model explains worst (lowest data term per token), and
        takes over the decoder's output row of the most used topic, so that the two share
        that topic's documents until the data pull them apart. The Adam state of what was
        reset is cleared.
        """
        early = self.epoch_ <= self.total_epochs() // 2
        late = self.split_moves and self.epoch_ <= int(LAST_MOVE * self.total_epochs())
        if self.reseed_similarity is None or not (early or late) or (self.epoch_ - 1) % self.check_stride():
            return {"restarted_topics": 0}
        gen = torch.Generator().manual_seed(int(self.random_state) * 7919 + self.epoch_)
        n_check = max(1000, CHECK_DOCS_PER_TOPIC * self.current_topics_)
        sample = torch.randperm(X.shape[0], generator=gen)[:n_check].numpy()
        with torch.no_grad():
            beta = self.likelihood_.topic_word()                            # once
            batch, codes = self._check_codes(X[sample], beta)
            out = self.decoder_(codes.float())
            mixes = self.likelihood_.link(out)                              # (n_check, T)
            usage = mixes.sum(0).cpu().numpy()                              # (T,)
            never_top = np.bincount(mixes.argmax(1).cpu().numpy(), minlength=mixes.shape[1]) == 0
            unit = beta / beta.norm(dim=0, keepdim=True)
            cos = (unit.t() @ unit).cpu().numpy()
        np.fill_diagonal(cos, 0)
        dead = usage < 0.1 * usage.mean()
        dup = (cos > self.reseed_similarity) & (usage[:, None] < usage[None, :])
        if self.split_moves:        # every check: dead, duplicated and never-top topics
            restart = np.flatnonzero(dead | dup.any(1) | never_top)
        else:
            restart = np.flatnonzero(dead | dup.any(1)) if early else np.zeros(0, dtype=int)
        freq = corpus_frequencies(X)                                    # once a check
        moved = []
        if self.split_moves:
            moved = self._split_topics(X, sample, freq, restart, beta.cpu().numpy().astype(np.float64),
                                       mixes.cpu().numpy().astype(np.float64), codes.cpu().numpy())
        rest = [t for t in restart if t not in moved] if early else []
        if rest:                    # the documents explained worst (lowest data term per token)
            with torch.no_grad():
                per_token = (self.likelihood_.data_term(out, batch, beta)
                             / batch.totals().clamp_min(1)).cpu().numpy()
            worst = np.argsort(per_token, kind="stable")
        by_use = np.argsort(-usage, kind="stable")
        donors = [d for d in by_use if d not in set(restart) | set(moved)] or list(by_use)
        for i, t in enumerate(rest):
            docs = sample[worst[5 * i:5 * (i + 1)]]
            self._restart_topic(int(t), int(donors[i % len(donors)]), X[docs].sum(0), freq)
        return {"restarted_topics": len(rest) + len(moved)}

    def check_stride(self) -> int:
        """s, the epochs from one topic check to the next: with split moves
        max(CHECK_STRIDE, ceil(epochs / CHECKS_PER_RUN)) (4 for 15 epochs, 8 for 30); 1
        without them, and for documents of fewer than EVERY_EPOCH_WORDS distinct words on
        average (``words_per_document_``).

        A document of a few words switches on about one bit, and between checks those bits
        die: a bit that loses its documents gets no gradient and never wins one back, and
        the topics it led lead no document. A check gives the topics it restarts a bit of
        their own and costs little on such documents, so they are checked every epoch.
        Sentences of 8-9 words gained nothing from it (docs/defaults.md measures both)."""
        if not self.split_moves or getattr(self, "words_per_document_", EVERY_EPOCH_WORDS) < EVERY_EPOCH_WORDS:
            return 1
        return max(CHECK_STRIDE, -(-self.total_epochs() // CHECKS_PER_RUN))

    def _check_codes(self, X_sample, beta):
        """The sample's batch and codes under the full prior: the compiled pursuit from
        the CSR rows where it serves the model (as training's; shared with the helper thread
        when torch has two), else greedy_pursuit."""
        if fused_pursuit.usable(self.decoder_, self.device_) and sp.issparse(X_sample):
            batch, codes, _ = rows_pursuit.pursue(X_sample, rows_pursuit.ThetaCopy.of_model(self, beta),
                                                  kernel_threads())
            return batch, codes
        batch = self.likelihood_.batch(X_sample, self.device_)
        return batch, greedy_pursuit(self.decoder_, self.likelihood_, batch, self.prior_.bit_log_odds(),
                                     self.max_bits, params=beta, **self._pursuit_options())

    def _split_topics(self, X, sample, freq, restart, beta, mix, codes) -> list:
        """Make the split moves that :func:`~bpetopics.models.poissbpe.topic_split.plan_moves` plans
        on the sample's documents: the split topic starts again from its kept half, the
        taker from the other (replace) or keeps its own words (hand over); the taker gets
        the split topic's decoder row (replace) and a bit of its own (the least used bit,
        +SPLIT_BIT_STRENGTH on it, - on the split topic), so that the pursuit can tell
        the halves' documents apart. Returns the topics changed."""
        moves, halves = plan_moves(X[sample], beta, mix, restart, self.split_min_gain,
                                   self.reseed_similarity)
        bits = np.argsort(codes.sum(0), kind="stable")
        for i, (t, half, taker, replace) in enumerate(moves):
            if replace:
                self._restart_topic(taker, t, halves[t, half], freq, weight=SPLIT_SMOOTHING)
            self._restart_topic(t, t, halves[t, 1 - half], freq, weight=SPLIT_SMOOTHING)
            self._own_bit(int(bits[i % len(bits)]), taker, t)
        return sorted({t for move in moves for t in (move[0], move[2])})

    def _own_bit(self, k, up, down):
        """Bit k (linear decoder only) raises topic ``up`` and lowers ``down`` by
        ``SPLIT_BIT_STRENGTH`` and nothing else (its Adam state cleared)."""
        if len(self.decoder_.head):
            return
        first = self.decoder_.first
        with torch.no_grad():
            first.weight[:, k] = 0
            first.weight[up, k] = SPLIT_BIT_STRENGTH
            first.weight[down, k] = -SPLIT_BIT_STRENGTH
            self.optimizer_.reset_moments(first.weight, (slice(None), k))

    def _restart_topic(self, t, donor, counts, freq, weight=1.0):
        """Topic t <- smoothed counts (1, W) (``freq``: :func:`corpus_frequencies`);
        decoder output row t <- row ``donor``."""
        log_topic = smoothed_log_topics(np.asarray(counts, dtype=np.float64).reshape(1, -1), freq, weight)[0]
        logits = self.likelihood_.topic_logits
        last = self.decoder_.head[-1] if len(self.decoder_.head) else self.decoder_.first
        with torch.no_grad():
            logits[t] = torch.as_tensor(log_topic, dtype=logits.dtype, device=logits.device)
            last.weight[t] = last.weight[donor]
            last.bias[t] = last.bias[donor]
            for param in (logits, last.weight, last.bias):
                self.optimizer_.reset_moments(param, t)
