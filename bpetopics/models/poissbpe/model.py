"""PoissBPE: the text model, a thin variant of the shared estimator with the Poisson
likelihood (GaussBPE and BernBPE, for images, are in :mod:`bpetopics.models.images`)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, TransformerMixin

from bpetopics.bpe import params as P
from bpetopics.bpe.batches import RowStore
from bpetopics.bpe.model import BPEBase
from bpetopics.bpe.threads import numpy_blas_on_one_thread
from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.models.poissbpe.document_concentration import DocumentConcentration
from bpetopics.models.poissbpe.mixture_prior import MixturePrior
from bpetopics.models.poissbpe.poisson import PoissonLikelihood
from bpetopics.models.poissbpe.step_paths import StepPaths
from bpetopics.models.poissbpe.topic_growth import TopicGrowth
from bpetopics.models.poissbpe.topic_merging import TopicMerging
from bpetopics.models.poissbpe.topic_outputs import TopicOutputs
from bpetopics.models.poissbpe.topic_priors import TopicPriors
from bpetopics.models.poissbpe.topic_seeds import TopicSeeds
from bpetopics.models.poissbpe.topic_repair import TopicRepair, corpus_frequencies, smoothed_log_topics
from bpetopics.models.poissbpe.topic_sizes import TopicSizes
from bpetopics.models.poissbpe.topic_prior import topic_overlap


class PoissBPE(TopicMerging, DocumentConcentration, TopicOutputs, TopicSeeds, TopicPriors, MixturePrior,
               TopicRepair, TopicGrowth, TopicSizes, StepPaths, BPEBase, TransformerMixin, BaseEstimator):
    """Poisson BPE topic model: x_n ~ Poisson(lambda_n beta f(z_n)).

    A document's sparse binary code z_n (K bits) is found by greedy pursuit; the
    decoder maps it to a mixture f(z_n) over T topics; each topic is a column of
    beta (W x T), a distribution over words.

    Parameters
    ----------
    n_topics : int
        T, number of topics.
    n_bits : int or None
        K, length of the binary codes. ``None`` (the default): sqrt(20 T) rounded up
        to a multiple of 8, at least 64 (:meth:`code_length`): 64 up to T = 204, 104 at
        T = 500. The pursuit costs O(K T) a word, so K growing as sqrt(T) keeps large T
        affordable; codes of one or two bits out of 64 already tell 2,000 mixtures apart
        (docs/defaults.md measures 64 bits against 2.5 T at T = 50 to 200). Short texts
        (fewer than ``SHORT_TEXT_WORDS`` distinct words a training document on average),
        whose codes hold about one bit, get T bits rounded up to a multiple of 8, one a
        topic (docs/defaults.md).
    hidden : tuple of int
        Decoder hidden sizes. The default ``()`` is a linear map from the code to the
        topic logits, f(z) = softmax(b + W z): on 20 Newsgroups hidden layers gave
        peakier mixtures, fewer distinct codes and lower topic diversity (docs/defaults.md).
    activation : {"relu", "tanh", "softplus", "sigmoid", "elu", "leaky_relu", "gelu"}
        The decoder's activation between hidden layers (unused without hidden layers).
    alpha, gamma : float or None
        Beta-process prior Beta(alpha gamma / K, alpha (1 - gamma / K)): prior mean
        gamma / K, strength alpha. ``None`` gives alpha = N and gamma = K / 4: a prior
        as strong as the data with mean 1/4, so a bit that no document uses costs
        ln 7 = 1.9 nats instead of ~ln(N K / (alpha gamma)) (docs/defaults.md: it raised NPMI,
        diversity and accuracy on 20 Newsgroups and matches planted sparsity).
    tau, kappa : float
        Step size of the natural-gradient update of q(pi): rho_t = (t + tau)^-kappa,
        with delay tau > 0 and forgetting rate kappa in (0.5, 1].
    epochs, batch_size, lr : int or None, int, float
        Training schedule: passes over the data, documents per minibatch, Adam's
        learning rate (a fifth of it in the cooldown, ``cooldown_epochs``).
        ``epochs=None`` (the default) runs enough epochs for 2,000 minibatch steps, at
        least 15 and at most 30 (:meth:`total_epochs`): 15 on 20 Newsgroups, more on
        small corpora, whose few steps per epoch would leave the topics half-trained,
        but no more than 30, past which their codes overfit (docs/defaults.md).
    cooldown_epochs : int
        The last this many epochs (at most a fifth of them) train at ``lr`` / 5, so that
        training ends without the full steps' noise (docs/defaults.md: on
        20 Newsgroups 8-10 lower completion perplexity, NPMI and accuracy no lower). 0:
        ``lr`` throughout.
    max_bits : int or None
        At most this many active bits per code (None: the pursuit stops only when no
        bit improves the objective).
    topic_init_docs : int
        Each topic starts from the smoothed word counts of this many random training
        documents (0: start from uniform topics).
    topic_repulsion : float
        lambda of the diversity prior on the topics (:mod:`bpetopics.models.poissbpe.topic_prior`):
        the theta step minimises the negative data term per token plus lambda times the
        cosine similarities between topics summed over all pairs (each pair weighted by
        the two topics' use in the minibatch, weights averaging 1); above 60 topics, times
        59 / (T - 1), so that no topic is pushed harder than at T = 60, and above 100
        topics times 100 / T besides, so that the push weakens. 0 is maximum
        likelihood (docs/defaults.md measures the default, chosen with the entropy prior
        below, against other values).
    mixture_entropy : float or None
        epsilon of a prior on the mixtures that favours spread ones
        (:mod:`bpetopics.models.poissbpe.mixture_prior`): the theta step's loss gains
        -epsilon times the entropy of each document's mixture f(z_n), weighed by its
        tokens, and the pursuit scores each candidate code with the same term, so that a
        document can draw on a topic of shared words beside its own theme. None (the
        default): min(0.2, 5 T / N) on N training documents, the prior as strong as five
        documents a topic (``mixture_prior.entropy_for``); 0 is none (the model before
        this prior, with ``topic_repulsion=0.0008``). docs/defaults.md measures both
        over the quality grid.
    topic_smoothing : float or None
        eta of a Dirichlet(1 + eta) prior on each topic's word distribution: the theta step
        is MAP with eta pseudo-counts for every word of every topic, weighed against the
        corpus's N_tok tokens (the per-token loss gains -(eta / N_tok) sum_t sum_w
        ln beta_wt), so it matters most on small corpora. 0 is no prior. None (the
        default): 0.1 from 80,000 tokens on, 0.1 x 80,000 / N_tok below, at most 1
        (``topic_priors.smoothing_for``), times 100 / T above 100 topics, so that all
        topics' pseudo-counts together stop growing there (docs/defaults.md measures
        both against other values).
        Between -1 and 0, a sparse prior (a Dirichlet concentration 1 + eta below 1, as
        LDA's usual eta): each topic drops the words it has little evidence for, and on
        long texts at up to about 50 topics they come out more distinct, for a higher
        completion perplexity; on short texts and at many topics it costs coherence too
        (docs/defaults.md measures -0.2 over the quality grid's cells).
    reseed_similarity : float or None
        In the first half of training, dead topics and topics whose cosine similarity to
        a more used one exceeds this are restarted (None: never, and no split moves
        either); see ``_restart_topics``.
    split_moves : bool
        Restart topics by split moves (:mod:`bpetopics.models.poissbpe.topic_split`), until 90% of
        training (about four checks a run, at least four epochs apart; every epoch for
        texts of a few words: :meth:`check_stride`): a restarted topic takes half of the
        topic worth splitting most, a topic that holds two themes is split when that gains
        more than the least needed topic costs, or hands one half to a topic like it.
        False: restarted topics start from the documents explained worst (the behaviour
        before issue #14).
    split_min_gain : float
        A split is worth making (other than for a dead or duplicated topic) only when it
        gains at least this many nats per token the topic explains (two merged themes
        gain about ln 2 = 0.69; noise gains under 0.01 on planted data).
    initial_topics : int or None
        T0 <= T: start with T0 topics and double them, splitting the topics worth
        splitting most in two, in rounds over the first third of the epochs until there
        are T (:mod:`bpetopics.models.poissbpe.topic_growth`). ``None`` (the default): from 40
        topics on about 25 (T / 2^r, r = round(log2(T / 25)) >= 1: 25 at T = 50 and 100;
        at T = 50 on 20 Newsgroups it raised NPMI and accuracy and lowered completion
        perplexity; docs/defaults.md), below 40 T, no growth.
    document_concentration : float or None
        a0 of the documents' own mixtures (``doc_topic``'s default, ``posterior="document"``,
        :mod:`bpetopics.models.poissbpe.document_mixture`): each document's mixture is the MAP
        under a Dirichlet prior centred on its code's posterior mean mixture with this
        many pseudo-tokens, so a long document's words move it further from its code's
        mixture than a short one's. None (the default): 10, or for short texts the value of
        0.3, 1, 3 and 10 that best completes their training documents, picked at the end
        of training (``document_concentration_``,
        :mod:`bpetopics.models.poissbpe.document_concentration`). Reporting and prediction
        only: training does not read it (docs/defaults.md measures the choices).
    soft_codes : int
        How many codes of each document the theta step fits. 1 (the default): the pursued
        code, the MAP-EM of docs/model.md. M > 1: the M most probable of the pursued code and
        its one-bit neighbours under the posterior exp L (:mod:`bpetopics.models.poissbpe.code_posterior`),
        the data term weighted by their renormalised probabilities (a soft E-step; docs/defaults.md
        measures 3 against 1: topics within the seeds' spread, several times the training
        time). One process only.
    pipeline : bool
        True (the default): each minibatch's codes are pursued during the previous
        step's theta update, from the theta before that update (one Adam step stale), on
        a second thread when torch has two (:mod:`bpetopics.models.poissbpe.pipelined_steps`; the
        same model on one thread and on two; docs/defaults.md measures the speed and the topics
        against False). False: the steps strictly in order (docs/model.md's MAP-EM). Only where
        the compiled pursuit runs (CPU, a linear decoder), in one process, with
        ``soft_codes=1``; the steps run in order elsewhere.
    backend : {"auto", "numba", "torch"}
        Where the speed paths run: "numba", the compiled kernels of
        :mod:`bpetopics.models.poissbpe.compiled` (CPU); "torch", their torch twins (any
        device; the same model to float tolerance, slower on a CPU); "auto" (the
        default), "numba" on a CPU when numba imports, else "torch". Resolved at fit
        into ``backend_``; "numba" where it cannot run is a ValueError.
    flat_start, prior_ramp_epochs :
        q(pi) starts at Beta(1, 1) and the prior's weight in the pursuit ramps from 0 to
        1 over the first ``prior_ramp_epochs`` epochs (see docs/model.md, "What bpetopics adds to the model": a
        literal start at the prior collapses every code to the empty one).
    seed_words : list of list of int or None
        Guided topics: topic t's seed words (ids of the vocabulary's words) start with
        extra weight in it and a prior favours them (:mod:`bpetopics.models.poissbpe.topic_seeds`;
        ``TopicModel(seed_topics=...)`` takes the words). With seed words the theta step
        runs the torch operations, not the compiled ones, and the topics do not grow.
    seed_strength : float
        The seed prior's pseudo-counts on each seed word, as a share of an average
        topic's tokens (N_tok / T).
    random_state : int
        Seed of the initialisation and of the minibatch order: the same seed (and, on
        CPU, the same torch thread count) gives the same model.
    device : 'auto', 'cpu' or 'cuda'
        Where the model trains; 'auto' is CUDA when present.
    progress : bool
        Show a progress bar over the minibatches of the epochs.
    callback : callable or None
        Called as ``callback(model, info)`` after each epoch, ``info`` being that
        epoch's ``history_`` entry (the CLI saves its checkpoints this way).

    Attributes
    ----------
    topic_word_ : np.ndarray, shape (T, W)
        beta transposed; rows sum to 1.
    codes_ : np.ndarray of uint8, shape (N, K)
        Codes of the training documents.
    words_per_document_ : float
        The training documents' mean number of distinct words (the first chunk's under
        ``partial_fit``); K depends on it when ``n_bits`` is None.
    current_topics_ : int
        The topics the model has now: T0, more after each round of growth, T at the end.
    document_concentration_ : float or None
        The a0 picked at the end of training for ``document_concentration=None``
        (:meth:`concentration_in_use` says what ``doc_topic`` uses).
    prior_ : BetaProcessPrior
        q(pi) = Beta(a, b).
    history_ : list of dict
        Per epoch: objective (mean score per document), active_bits, topic_overlap
        (mean cosine between topics), restarted_topics, topics (after the epoch),
        seconds.
    """

    _parameter_rules = {**BPEBase._parameter_rules, "n_topics": P.POSITIVE_INT,
                        "n_bits": P.POSITIVE_INT_OR_NONE, "topic_init_docs": P.Rule("int", low=0),
                        "topic_repulsion": P.NON_NEGATIVE, "mixture_entropy": P.NON_NEGATIVE_OR_NONE,
                        "topic_smoothing": P.Rule("real", low=-1, low_open=True, none=True),
                        "reseed_similarity": P.NON_NEGATIVE_OR_NONE,
                        "split_moves": P.BOOL, "split_min_gain": P.NON_NEGATIVE,
                        "initial_topics": P.POSITIVE_INT_OR_NONE,
                        "cooldown_epochs": P.Rule("int", low=0), "soft_codes": P.POSITIVE_INT,
                        "document_concentration": P.POSITIVE_OR_NONE,
                        "pipeline": P.BOOL, "seed_strength": P.NON_NEGATIVE,
                        "backend": P.Rule("choice", choices=kernels.BACKENDS)}

    def __init__(self, n_topics=20, *, n_bits=None, hidden=(), activation="relu", alpha=None,
                 gamma=None, tau=1.0, kappa=0.7, epochs=None, batch_size=64, lr=0.05,
                 max_bits=None, flat_start=True, prior_ramp_epochs=1.0, topic_init_docs=5,
                 topic_repulsion=0.0004, mixture_entropy=None, topic_smoothing=None, reseed_similarity=0.7,
                 split_moves=True, split_min_gain=0.1, initial_topics=None, cooldown_epochs=2, soft_codes=1,
                 document_concentration=None, pipeline=True,
                 seed_words=None, seed_strength=0.02, backend="auto", random_state=0, device="auto",
                 progress=True, callback=None):
        super().__init__(n_bits=n_bits, hidden=hidden, activation=activation, alpha=alpha,
                         gamma=gamma, tau=tau, kappa=kappa, epochs=epochs,
                         batch_size=batch_size, lr=lr, max_bits=max_bits,
                         flat_start=flat_start, prior_ramp_epochs=prior_ramp_epochs,
                         random_state=random_state, device=device, progress=progress,
                         callback=callback)
        self.n_topics = n_topics
        self.topic_init_docs = topic_init_docs
        self.topic_repulsion = topic_repulsion
        self.mixture_entropy = mixture_entropy
        self.topic_smoothing = topic_smoothing
        self.reseed_similarity = reseed_similarity
        self.split_moves = split_moves
        self.split_min_gain = split_min_gain
        self.initial_topics = initial_topics
        self.cooldown_epochs = cooldown_epochs
        self.soft_codes = soft_codes
        self.document_concentration = document_concentration
        self.pipeline = pipeline
        self.seed_words = seed_words
        self.seed_strength = seed_strength
        self.backend = backend

    #: Short texts: training documents with fewer distinct words than this on average
    #: (titles, subject lines, snippets) switch on about one bit each, so ``n_bits=None``
    #: gives them a bit a topic (:meth:`code_length`).
    SHORT_TEXT_WORDS = 10

    def code_length(self) -> int:
        """K: ``n_bits``, or when None max(64, sqrt(20 T) rounded up to a multiple of 8);
        for short texts (once fitted: ``words_per_document_`` < :attr:`SHORT_TEXT_WORDS`)
        T rounded up to a multiple of 8 instead."""
        if self.n_bits is not None:
            return int(self.n_bits)
        # A one-bit code z = e_k has the mixture f(e_k): with about one bit a document the
        # K one-bit codes are K clusters of documents. Fewer than T leave topics that lead
        # no code; more than T share a topic's documents among codes of nearly one mixture.
        if self.short_texts():
            return 8 * math.ceil(self.n_topics / 8)
        return max(64, 8 * math.ceil(math.sqrt(20 * self.n_topics) / 8))

    def short_texts(self) -> bool:
        """Whether the training documents are short texts: fewer than
        :attr:`SHORT_TEXT_WORDS` distinct words a document on average (False before
        fitting). They get a bit a topic (:meth:`code_length`)."""
        return getattr(self, "words_per_document_", self.SHORT_TEXT_WORDS) < self.SHORT_TEXT_WORDS

    def _setup(self, X, n_data=None):
        """Record ``words_per_document_`` (the code length reads it), then build."""
        self.words_per_document_ = self._words_per_document(X)
        super()._setup(X, n_data)

    @staticmethod
    def _words_per_document(X) -> float:
        """The mean number of distinct words a document of X (CSR or RowStore) has."""
        return X.getnnz() / X.shape[0] if X.shape[0] else 0.0

    def _check_X(self, X):
        """X as CSR (or a RowStore as it is), refused (ValueError, one line) unless it
        is a 2-D matrix of finite, non-negative counts of this model's words. A RowStore
        that can read its values (a sharded corpus's ``check_values``) reads them once."""
        if isinstance(X, RowStore):   # rows on disk (a sharded corpus): read as training goes
            self._check_width(X.shape[1])
            check = getattr(X, "check_values", None)
            if check is not None:
                check()
            return X
        if not sp.issparse(X):
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"X must be a 2-D document-term matrix; got shape {X.shape}")
        if not (np.issubdtype(X.dtype, np.integer) or np.issubdtype(X.dtype, np.floating) or X.dtype == np.bool_):
            raise ValueError(f"X holds {X.dtype} values; a document-term matrix holds word counts (real numbers)")
        X = sp.csr_matrix(X)
        if X.nnz and not np.isfinite(X.data).all():
            raise ValueError("X holds NaN or infinite values; a document-term matrix holds finite word counts "
                             "(replace or drop those documents)")
        if X.nnz and (X.data < 0).any():
            raise ValueError("X holds negative counts; a document-term matrix counts words")
        self._check_width(X.shape[1])
        return X

    def _check_width(self, n_words: int) -> None:
        if hasattr(self, "likelihood_") and n_words != self.likelihood_.n_words:
            raise ValueError(f"X has {n_words} words but the model was fitted on "
                             f"{self.likelihood_.n_words}; use the model's vocabulary")

    def _n_out(self, shape):
        """The decoder's outputs: the topics the model has now (T before it is built, for
        the memory estimate)."""
        return self._topics_now()

    def _make_likelihood(self, shape):
        return PoissonLikelihood(shape[1], self._n_out(shape))

    def _init_params(self, X, generator):
        """Seed each topic from the smoothed word counts of a few random documents."""
        self.n_tokens_ = self._corpus_tokens(X)
        if self.topic_init_docs <= 0:
            return
        n_topics = self.current_topics_
        picks = torch.randint(X.shape[0], (n_topics, self.topic_init_docs),
                              generator=generator).numpy()
        # (T, W): summed counts of each topic's documents (the picked rows gathered, then
        # summed by topic: integer sums, exact), smoothed towards the corpus
        group = sp.csr_matrix((np.ones(picks.size), (np.repeat(np.arange(n_topics), picks.shape[1]),
                                                     np.arange(picks.size))), shape=(n_topics, picks.size))
        counts = np.asarray((group @ X[picks.ravel()]).todense(), dtype=np.float64)
        with torch.no_grad():
            self.likelihood_.topic_logits.copy_(torch.from_numpy(smoothed_log_topics(counts, corpus_frequencies(X))))

    #: The cooldown's share of ``lr``.
    COOLDOWN_LR_SCALE = 0.2
    #: ``transform``'s documents pursued together: fewer batches share the first step's
    #: table work and the per-batch overhead (larger batches encode faster; the codes are
    #: the same for every batch size).
    ENCODE_BATCH_SIZE = 4096

    def _learning_rate(self) -> float:
        """Adam's learning rate for the epoch about to run: ``lr``, times
        ``COOLDOWN_LR_SCALE`` in the last min(``cooldown_epochs``, E // 5) of the E epochs
        (a function of ``epoch_`` alone: a resumed run keeps the schedule)."""
        total = self.total_epochs()
        cooldown = min(self.cooldown_epochs, total // 5)
        return self.lr * self.COOLDOWN_LR_SCALE if cooldown and self.epoch_ >= total - cooldown else self.lr

    def _corpus_tokens(self, X) -> float:
        """N_tok, the corpus's tokens: X's (a chunk of the corpus under ``partial_fit``:
        scaled to the corpus's N documents)."""
        return float(X.sum()) * self.n_data_ / max(X.shape[0], 1)

    def _train(self, X, n_epochs):
        if self._topic_smoothing() and getattr(self, "n_tokens_", None) is None:
            self.n_tokens_ = self._corpus_tokens(X)        # a loaded model, trained further
        if getattr(self, "words_per_document_", None) is None:
            # a loaded model (a resumed checkpoint, a run trained further): its K is the
            # saved one, and the check's stride follows the documents it trains on
            self.words_per_document_ = self._words_per_document(X)
        with kernels.model_backend(self):
            result = super()._train(X, n_epochs)
            self._pick_concentration(X)
        return result

    def _encode(self, X, batch_size):
        """Encoding on the model's backend (resolved again for a model loaded from disk)."""
        with kernels.model_backend(self):
            return super()._encode(X, batch_size)

    def _end_of_epoch(self, X) -> dict:
        with numpy_blas_on_one_thread():
            info = self._restart_topics(X)
            self._grow_topics(X)
        info["topics"] = self.current_topics_
        with torch.no_grad():
            info["topic_overlap"] = float(topic_overlap(self.likelihood_.topic_word()))
        return info

    def fit_transform(self, X, y=None):
        """``fit(X)``, then the codes of X (the same as ``transform(X)``): (N, K) uint8."""
        return self.fit(X).codes_
