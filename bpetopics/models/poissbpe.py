"""PoissBPE: the text model, a thin variant of the shared estimator with the Poisson
likelihood (GaussBPE and BernBPE, for images, are in :mod:`bpetopics.models.images`)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, TransformerMixin

from bpetopics.core import kernels
from bpetopics.core import params as P
from bpetopics.core.batches import RowStore
from bpetopics.core.poisson import PoissonLikelihood
from bpetopics.core.model import BPEBase
from bpetopics.core.pursuit import greedy_pursuit
from bpetopics.core.topic_prior import topic_overlap, topic_overlap_grad
from bpetopics.core.topic_split import plan_moves
from bpetopics.topwords import top_word_ids

#: A split's halves start from their counts plus this share of as many pseudo-counts
#: spread like the corpus (a restart from a few documents uses 1: half corpus).
SPLIT_SMOOTHING = 0.1
#: The bit a split move gives the topic that takes the documents: +this on its logit,
#: -this on the split topic's (e^4 = 55 times the split topic's weight).
SPLIT_BIT_STRENGTH = 2.0


class PoissBPE(BPEBase, TransformerMixin, BaseEstimator):
    """Poisson BPE topic model: x_n ~ Poisson(lambda_n beta f(z_n)).

    A document's sparse binary code z_n (K bits) is found by greedy pursuit; the
    decoder maps it to a mixture f(z_n) over T topics; each topic is a column of
    beta (W x T), a distribution over words.

    Parameters
    ----------
    n_topics : int
        T, number of topics.
    n_bits : int or None
        K, length of the binary codes. ``None`` (the default): 64, or 2.5 T rounded up
        to a multiple of 8 when that is more (128 at T = 50; :meth:`code_length`): with
        too few bits there are too few distinct codes for every topic to lead one
        (README, "Every topic some document's top topic").
    hidden : tuple of int
        Decoder hidden sizes. The default ``()`` is a linear map from the code to the
        topic logits, f(z) = softmax(b + W z): on 20 Newsgroups hidden layers gave
        peakier mixtures, fewer distinct codes and lower topic diversity (README).
    activation : {"relu", "tanh", "softplus", "sigmoid", "elu", "leaky_relu", "gelu"}
        The decoder's activation between hidden layers (unused without hidden layers).
    alpha, gamma : float or None
        Beta-process prior Beta(alpha gamma / K, alpha (1 - gamma / K)): prior mean
        gamma / K, strength alpha. ``None`` gives alpha = N and gamma = K / 4: a prior
        as strong as the data with mean 1/4, so a bit that no document uses costs
        ln 7 = 1.9 nats instead of ~ln(N K / (alpha gamma)) (README: it raised NPMI,
        diversity and accuracy on 20 Newsgroups and matches planted sparsity).
    tau, kappa : float
        Step size of the natural-gradient update of q(pi): rho_t = (t + tau)^-kappa,
        with delay tau > 0 and forgetting rate kappa in (0.5, 1].
    epochs, batch_size, lr : int or None, int, float
        Training schedule: passes over the data, documents per minibatch, Adam's
        learning rate. ``epochs=None`` (the default) runs enough epochs for 2,000
        minibatch steps, at least 15 and at most 150 (:meth:`total_epochs`): 15 on 20
        Newsgroups, more on small corpora, whose few steps per epoch would leave the
        topics half-trained (README).
    max_bits : int or None
        At most this many active bits per code (None: the pursuit stops only when no
        bit improves the objective).
    topic_init_docs : int
        Each topic starts from the smoothed word counts of this many random training
        documents (0: start from uniform topics).
    topic_repulsion : float
        lambda of the diversity prior on the topics (:mod:`bpetopics.core.topic_prior`):
        the theta step minimises the negative data term per token plus lambda times the
        cosine similarities between topics summed over all pairs (each pair weighted by
        the two topics' use in the minibatch, weights averaging 1). 0 is maximum
        likelihood (README measures the default against it).
    reseed_similarity : float or None
        In the first half of training, dead topics and topics whose cosine similarity to
        a more used one exceeds this are restarted (None: never, and no split moves
        either); see ``_restart_topics``.
    split_moves : bool
        Restart topics by split moves (:mod:`bpetopics.core.topic_split`), until 90% of
        training: a restarted topic takes half of the topic worth splitting most, a
        topic that holds two themes is split when that gains more than the least needed
        topic costs, or hands one half to a topic like it. False: restarted topics start
        from the documents explained worst (the behaviour before issue #14).
    split_min_gain : float
        A split is worth making (other than for a dead or duplicated topic) only when it
        gains at least this many nats per token the topic explains (two merged themes
        gain about ln 2 = 0.69; noise gains under 0.01 on planted data).
    flat_start, prior_ramp_epochs :
        q(pi) starts at Beta(1, 1) and the prior's weight in the pursuit ramps from 0 to
        1 over the first ``prior_ramp_epochs`` epochs (see MODEL.md's last section: a
        literal start at the prior collapses every code to the empty one).
    random_state : int
        Seed of the initialisation and of the minibatch order: the same seed (and, on
        CPU, the same torch thread count) gives the same model.
    device : 'auto', 'cpu' or 'cuda'
        Where the model trains; 'auto' is CUDA when present.
    progress : bool
        Show a progress bar over the epochs.
    callback : callable or None
        Called as ``callback(model, info)`` after each epoch, ``info`` being that
        epoch's ``history_`` entry (the CLI saves its checkpoints this way).

    Attributes
    ----------
    topic_word_ : np.ndarray, shape (T, W)
        beta transposed; rows sum to 1.
    codes_ : np.ndarray of uint8, shape (N, K)
        Codes of the training documents.
    prior_ : BetaProcessPrior
        q(pi) = Beta(a, b).
    history_ : list of dict
        Per epoch: objective (mean score per document), active_bits, topic_overlap
        (mean cosine between topics), restarted_topics, seconds.
    """

    _parameter_rules = {**BPEBase._parameter_rules, "n_topics": P.POSITIVE_INT,
                        "n_bits": P.POSITIVE_INT_OR_NONE, "topic_init_docs": P.Rule("int", low=0),
                        "topic_repulsion": P.NON_NEGATIVE, "reseed_similarity": P.NON_NEGATIVE_OR_NONE,
                        "split_moves": P.BOOL, "split_min_gain": P.NON_NEGATIVE}

    def __init__(self, n_topics=20, *, n_bits=None, hidden=(), activation="relu", alpha=None,
                 gamma=None, tau=1.0, kappa=0.7, epochs=None, batch_size=64, lr=0.05,
                 max_bits=None, flat_start=True, prior_ramp_epochs=1.0, topic_init_docs=5,
                 topic_repulsion=0.0025, reseed_similarity=0.7, split_moves=True,
                 split_min_gain=0.1, random_state=0, device="auto", progress=True, callback=None):
        super().__init__(n_bits=n_bits, hidden=hidden, activation=activation, alpha=alpha,
                         gamma=gamma, tau=tau, kappa=kappa, epochs=epochs,
                         batch_size=batch_size, lr=lr, max_bits=max_bits,
                         flat_start=flat_start, prior_ramp_epochs=prior_ramp_epochs,
                         random_state=random_state, device=device, progress=progress,
                         callback=callback)
        self.n_topics = n_topics
        self.topic_init_docs = topic_init_docs
        self.topic_repulsion = topic_repulsion
        self.reseed_similarity = reseed_similarity
        self.split_moves = split_moves
        self.split_min_gain = split_min_gain

    def code_length(self) -> int:
        """K: ``n_bits``, or when None max(64, 2.5 T rounded up to a multiple of 8)."""
        if self.n_bits is not None:
            return int(self.n_bits)
        return max(64, 8 * math.ceil(2.5 * self.n_topics / 8))

    def _check_X(self, X):
        if isinstance(X, RowStore):   # rows on disk (a sharded corpus): read as training goes
            self._check_width(X.shape[1])
            return X
        if not sp.issparse(X):
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"X must be a 2-D document-term matrix; got shape {X.shape}")
        X = sp.csr_matrix(X)
        if X.nnz and (X.data < 0).any():
            raise ValueError("X holds negative counts; a document-term matrix counts words")
        self._check_width(X.shape[1])
        return X

    def _check_width(self, n_words: int) -> None:
        if hasattr(self, "likelihood_") and n_words != self.likelihood_.n_words:
            raise ValueError(f"X has {n_words} words but the model was fitted on "
                             f"{self.likelihood_.n_words}; use the model's vocabulary")

    def check_sizes(self, n_data: int, n_features: int) -> None:
        """As :meth:`BPEBase.check_sizes`, and refuse more topics than documents or words
        (a topic needs documents to explain and words to spread over)."""
        self._validate_params()
        from bpetopics.core.sizes import SizeError

        if self.n_topics > n_data:
            raise SizeError("n_topics", self.n_topics, f"is more than the {n_data:,} documents")
        if self.n_topics > n_features:
            raise SizeError("n_topics", self.n_topics, f"is more than the {n_features:,} words of the vocabulary")
        super().check_sizes(n_data, n_features)

    def _n_out(self, shape):
        return self.n_topics

    def _make_likelihood(self, shape):
        return PoissonLikelihood(shape[1], self.n_topics)

    def _init_params(self, X, generator):
        """Seed each topic from the smoothed word counts of a few random documents."""
        if self.topic_init_docs <= 0:
            return
        picks = torch.randint(X.shape[0], (self.n_topics, self.topic_init_docs),
                              generator=generator).numpy()
        # (T, W): summed counts of each topic's documents (the picked rows gathered, then
        # summed by topic: integer sums, exact), smoothed towards the corpus
        group = sp.csr_matrix((np.ones(picks.size), (np.repeat(np.arange(self.n_topics), picks.shape[1]),
                                                     np.arange(picks.size))), shape=(self.n_topics, picks.size))
        counts = np.asarray((group @ X[picks.ravel()]).todense(), dtype=np.float64)
        with torch.no_grad():
            self.likelihood_.topic_logits.copy_(torch.from_numpy(_smoothed_log_topics(counts, X)))

    def _train_step(self, X_batch):
        """The shared step with torch's CPU operations on one thread (all are small at
        text sizes); the pursuit's compiled kernels still use every thread given."""
        with kernels.torch_on_one_thread(self.device_):
            return super()._train_step(X_batch)

    def _theta_penalty(self, out, params=None, usage=None):
        """lambda * R(beta): the use-weighted cosines summed over all ordered pairs of
        topics, T (T - 1) times their weighted mean (topic_prior.py); ``params`` is the
        minibatch's beta when already computed, ``usage`` the topics' mean use in the
        minibatch when processes share it (else from ``out``)."""
        if not self.topic_repulsion:
            return 0.0
        if usage is None:
            usage = self.likelihood_.link(out).detach().mean(0)         # (T,)
        beta = self.likelihood_.topic_word() if params is None else params
        overlap = topic_overlap(beta, usage)
        return self.topic_repulsion * self.n_topics * (self.n_topics - 1) * overlap

    def _penalty_backward(self, out, params=None, usage=None) -> None:
        """The gradient of :meth:`_theta_penalty`, written out (topic_prior.py), into
        ``topic_logits.grad``."""
        if not self.topic_repulsion:
            return
        if usage is None:
            usage = self.likelihood_.link(out).detach().mean(0)         # (T,)
        beta = self.likelihood_.minibatch_params() if params is None else params
        _, grad, inner = topic_overlap_grad(beta, usage)                # (T, W), (T,)
        weight = self.topic_repulsion * self.n_topics * (self.n_topics - 1)
        self.likelihood_.add_topic_word_grad(grad.mul_(weight), beta, inner=inner.mul_(weight))

    def _penalty_statistics(self, out):
        """The summed mixtures sum_n f(z_n) (T,) that the diversity prior's use reads."""
        return self.likelihood_.link(out).detach().sum(0) if self.topic_repulsion else None

    def _end_of_epoch(self, X) -> dict:
        info = self._restart_topics(X)
        with torch.no_grad():
            info["topic_overlap"] = float(topic_overlap(self.likelihood_.topic_word()))
        return info

    def _restart_topics(self, X) -> dict:
        """Restart dead and duplicated topics (MODEL.md: 2 to 5 of 20 topics died or
        duplicated) in the first half of training, and make split moves until 90% of it
        (with split moves: at epochs 1, 1 + s, 1 + 2s, ..., s = max(4, epochs // 20)).

        On a seeded sample of 1,000 documents: a topic is *dead* when its total mixture
        weight is under a tenth of the average, *duplicated* when its word distribution
        has cosine similarity above ``reseed_similarity`` with a more used topic. With
        ``split_moves`` such a topic, or one that is no sampled document's top topic (at
        every check, not only in the first half: a secondary component that no document
        is mostly about), takes half of the topic worth splitting most, and
        other split moves are made where they gain (:meth:`_split_topics`); a restarted
        topic that no split serves (or all, without ``split_moves``) is started again
        from the 5 documents the model explains worst (lowest data term per token), and
        takes over the decoder's output row of the most used topic, so that the two share
        that topic's documents until the data pull them apart. The Adam state of what was
        reset is cleared.
        """
        early = self.epoch_ <= self.total_epochs() // 2
        late = self.split_moves and self.epoch_ <= int(0.9 * self.total_epochs())
        # with split moves the check runs about 20 times in all, so that on a small corpus
        # with 150 short epochs it costs little, and at most every fourth epoch: on 20
        # Newsgroups (15 epochs of 0.35 CPU s) a check costs 0.13 s
        stride = max(4, self.total_epochs() // 20) if self.split_moves else 1
        if self.reseed_similarity is None or not (early or late) or (self.epoch_ - 1) % stride:
            return {"restarted_topics": 0}
        gen = torch.Generator().manual_seed(int(self.random_state) * 7919 + self.epoch_)
        sample = torch.randperm(X.shape[0], generator=gen)[:1000].numpy()
        batch = self.likelihood_.batch(X[sample], self.device_)
        with torch.no_grad():
            beta = self.likelihood_.topic_word()                            # once
            codes, score = greedy_pursuit(self.decoder_, self.likelihood_, batch,
                                          self.prior_.bit_log_odds(), self.max_bits,
                                          return_score=True, params=beta)
            out = self.decoder_(codes.float())
            mixes = self.likelihood_.link(out)                              # (1000, T)
            usage = mixes.sum(0).cpu().numpy()                              # (T,)
            never_top = np.bincount(mixes.argmax(1).cpu().numpy(), minlength=self.n_topics) == 0
            per_token = (self.likelihood_.data_term(out, batch, beta)
                         / batch.totals().clamp_min(1)).cpu().numpy()
            unit = beta / beta.norm(dim=0, keepdim=True)
            cos = (unit.t() @ unit).cpu().numpy()
        np.fill_diagonal(cos, 0)
        dead = usage < 0.1 * usage.mean()
        dup = (cos > self.reseed_similarity) & (usage[:, None] < usage[None, :])
        if self.split_moves:        # every check: dead, duplicated and never-top topics
            restart = np.flatnonzero(dead | dup.any(1) | never_top)
        else:
            restart = np.flatnonzero(dead | dup.any(1)) if early else np.zeros(0, dtype=int)
        moved = []
        if self.split_moves:
            moved = self._split_topics(X, sample, restart, beta.cpu().numpy().astype(np.float64),
                                       mixes.cpu().numpy().astype(np.float64), codes.cpu().numpy())
        rest = [t for t in restart if t not in moved] if early else []
        worst = np.argsort(per_token, kind="stable")
        by_use = np.argsort(-usage, kind="stable")
        donors = [d for d in by_use if d not in set(restart) | set(moved)] or list(by_use)
        for i, t in enumerate(rest):
            docs = sample[worst[5 * i:5 * (i + 1)]]
            self._restart_topic(int(t), int(donors[i % len(donors)]), X[docs].sum(0), X)
        return {"restarted_topics": len(rest) + len(moved)}

    def _split_topics(self, X, sample, restart, beta, mix, codes) -> list:
        """Make the split moves that :func:`~bpetopics.core.topic_split.plan_moves` plans
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
                self._restart_topic(taker, t, halves[t, half], X, weight=SPLIT_SMOOTHING)
            self._restart_topic(t, t, halves[t, 1 - half], X, weight=SPLIT_SMOOTHING)
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
            for value in self.optimizer_.state.get(first.weight, {}).values():
                if torch.is_tensor(value) and value.shape == first.weight.shape:
                    value[:, k] = 0

    def _restart_topic(self, t, donor, counts, X, weight=1.0):
        """Topic t <- smoothed counts (1, W); decoder output row t <- row ``donor``."""
        log_topic = _smoothed_log_topics(np.asarray(counts, dtype=np.float64).reshape(1, -1), X, weight)[0]
        logits = self.likelihood_.topic_logits
        last = self.decoder_.head[-1] if len(self.decoder_.head) else self.decoder_.first
        with torch.no_grad():
            logits[t] = torch.as_tensor(log_topic, dtype=logits.dtype, device=logits.device)
            last.weight[t] = last.weight[donor]
            last.bias[t] = last.bias[donor]
            for param in (logits, last.weight, last.bias):
                for value in self.optimizer_.state.get(param, {}).values():
                    if torch.is_tensor(value) and value.shape == param.shape:
                        value[t] = 0

    # ------------------------------------------------------------------ text outputs
    @property
    def topic_word_(self) -> np.ndarray:
        """(T, W) topic-word distributions, rows sum to 1 (beta transposed)."""
        self._check_fitted()
        with torch.no_grad():
            return self.likelihood_.topic_word().t().double().cpu().numpy()

    def code_topic(self, codes) -> np.ndarray:
        """Topic mixtures f(z) for codes (N, K) -> (N, T)."""
        return self.decode(codes)

    def doc_topic(self, X) -> np.ndarray:
        """Topic mixtures f(z_n) of documents, (N, W) counts -> (N, T)."""
        return self.code_topic(self.transform(X))

    def fit_transform(self, X, y=None):
        """``fit(X)``, then the codes of X (the same as ``transform(X)``): (N, K) uint8."""
        return self.fit(X).codes_

    def top_words(self, vocabulary, n=10):
        """The n most probable words of each topic (ties in vocabulary order): list of T
        lists of str."""
        vocabulary = np.asarray(vocabulary)
        return [[str(w) for w in vocabulary[row]] for row in top_word_ids(self.topic_word_, n)]

    def perplexity(self, X) -> float:
        """exp(-sum_n sum_w x_nw ln [beta f(z_n)]_w / sum x), with codes pursued on X.

        The codes see the words they are scored on, so this is optimistic; for a held-out
        figure use document completion (:mod:`bpetopics.evaluation`).
        """
        X = self._check_X(X)
        codes = self.transform(X)
        with torch.no_grad():
            total = 0.0
            for begin in range(0, X.shape[0], 1024):
                batch = self.likelihood_.batch(X[begin:begin + 1024], self.device_)
                z = torch.as_tensor(codes[begin:begin + 1024], dtype=torch.float32,
                                    device=self.device_)
                total += float(self.likelihood_.data_term(self.decoder_(z), batch).sum())
        return float(np.exp(-total / max(X.sum(), 1)))


def _smoothed_log_topics(counts, X, weight=1.0) -> np.ndarray:
    """ln of word distributions from summed document counts (T, W), each smoothed with
    as many pseudo-counts, spread like the corpus's word frequencies, as it has tokens."""
    corpus_freq = np.asarray(X.sum(0)).ravel() + 1.0
    corpus_freq /= corpus_freq.sum()
    smoothed = counts + weight * corpus_freq * counts.sum(1, keepdims=True).clip(1) + 1e-3
    return np.log(smoothed / smoothed.sum(1, keepdims=True))

