"""What a fitted PoissBPE says about topics and documents: the topics (``topic_word_``,
``top_words``), documents' mixtures (``code_topic``, ``doc_topic``, ``posterior_topic``)
and perplexity. A mixin of :class:`~bpetopics.models.poissbpe.PoissBPE` (needs its fitted
``likelihood_``, ``decoder_``, ``prior_``, ``current_topics_`` and its ``transform``).
Each output runs on the model's backend (``backend``, :func:`kernels.model_backend`)."""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.models.poissbpe.compiled import fused_pursuit, kernels
from bpetopics.models.poissbpe.code_posterior import PAIR_FLIPS, local_mean
from bpetopics.models.poissbpe.document_mixture import document_mixtures
from bpetopics.models.poissbpe.packed import PackedCounts, PaddedCounts
from bpetopics.topwords import top_word_ids

#: Documents whose posterior mixtures are computed together.
POSTERIOR_BATCH_SIZE = 1024


class TopicOutputs:
    """The text outputs of a fitted PoissBPE (see the module docstring)."""

    @property
    def topic_word_(self) -> np.ndarray:
        """(T, W) topic-word distributions, rows sum to 1 (beta transposed)."""
        self._check_fitted()
        with torch.no_grad():
            return self.likelihood_.topic_word().t().double().cpu().numpy()

    def code_topic(self, codes) -> np.ndarray:
        """Topic mixtures f(z) for codes (N, K) -> (N, T)."""
        return self.decode(codes)

    def doc_topic(self, X, posterior="document", batch_size=None, pair_flips=PAIR_FLIPS) -> np.ndarray:
        """Topic mixtures of documents, (N, W) counts -> (N, T).

        posterior : {'document', 'local', 'map'}
            'document' (the default): each document's own mixture, the MAP under a
            Dirichlet prior of :meth:`concentration_in_use` pseudo-tokens centred on the
            'local' mixture (:mod:`bpetopics.models.poissbpe.document_mixture`): the mixture
            to predict with (document completion, features for a classifier). 'local':
            :meth:`posterior_topic`, the posterior mean of f(z) over the pursued code and
            its neighbours. 'map': f(z_n) at the pursued code alone,
            ``code_topic(transform(X))``, the mixture the run's files and graphs use.
        pair_flips : int
            With 'local' and 'document', the codes flipping two of this many best single
            flips join the neighbourhood
            (:func:`~bpetopics.models.poissbpe.code_posterior.local_mean`).
        """
        _check_posterior(posterior)
        X = self._check_X(X)
        with kernels.model_backend(self):
            return self.topic_mixtures(X, self.transform(X, batch_size), posterior, batch_size, pair_flips)

    def topic_mixtures(self, X, codes, posterior="document", batch_size=None, pair_flips=PAIR_FLIPS) -> np.ndarray:
        """:meth:`doc_topic` for documents already encoded: X (N, W) counts and their
        pursued codes (N, K) -> (N, T), ``posterior`` as there (callers that keep the codes
        too, e.g. ``bpetopics encode``, encode once)."""
        _check_posterior(posterior)
        with kernels.model_backend(self):
            if posterior == "map":
                return self.code_topic(codes)
            mixtures = self.posterior_topic(X, codes, batch_size or POSTERIOR_BATCH_SIZE, pair_flips)
            if posterior == "local":
                return mixtures
            return self.document_topic(X, mixtures)

    def document_topic(self, X, local_mixtures) -> np.ndarray:
        """Each document's own mixture from its 'local' one (:meth:`posterior_topic`): the
        MAP under a Dirichlet prior of :meth:`concentration_in_use` pseudo-tokens centred
        on it (:func:`~bpetopics.models.poissbpe.document_mixture.document_mixtures`).

        Parameters
        ----------
        X : sparse matrix, shape (N, W)
        local_mixtures : np.ndarray, shape (N, T)

        Returns
        -------
        np.ndarray, shape (N, T), float32, rows summing to 1
        """
        self._check_fitted()
        X = self._check_X(X)
        with kernels.model_backend(self):
            return document_mixtures(X, self.topic_word_, local_mixtures, self.concentration_in_use(),
                                     device=self.device_, dtype=np.float32)

    def posterior_topic(self, X, codes, batch_size=POSTERIOR_BATCH_SIZE, pair_flips=PAIR_FLIPS) -> np.ndarray:
        """The posterior mean of f(z) over each document's pursued code, its K one-bit
        neighbours and the codes flipping two of its ``pair_flips`` best single flips,
        weighted by exp L(z) (:mod:`bpetopics.models.poissbpe.code_posterior`).

        Parameters
        ----------
        X : sparse matrix, shape (N, W)
        codes : np.ndarray, shape (N, K)
            The pursued codes of X (``transform(X)``).
        pair_flips : int

        Returns
        -------
        np.ndarray, shape (N, T), rows summing to 1
        """
        self._check_fitted()
        X = self._check_X(X)
        codes = np.asarray(codes)
        if codes.shape != (X.shape[0], self.code_length()):
            raise ValueError(f"codes must be ({X.shape[0]}, {self.code_length()}), one code of each row "
                             f"of X (transform(X)); got {codes.shape}")
        with kernels.model_backend(self):
            return self._posterior_means(X, codes, batch_size, pair_flips)

    def _posterior_means(self, X, codes, batch_size, pair_flips) -> np.ndarray:
        """:meth:`posterior_topic`'s loop over batches, on the backend in use."""
        out = np.zeros((X.shape[0], self.current_topics_), dtype=np.float32)
        order = self.likelihood_.batch_order(X)
        log_odds = self.prior_.bit_log_odds()
        # packed rows for the compiled path (compiled/fused_posterior.py); else padded rows
        # (sorted by length, so little padding): the candidates' rates are then one
        # batched product per document, (L, T) @ (T, K + 1)
        rows_of = (PackedCounts if fused_pursuit.usable(self.decoder_, self.device_)
                   else PaddedCounts).from_csr
        for begin in range(0, len(order), batch_size):     # a loop over batches
            rows = order[begin:begin + batch_size]
            batch = rows_of(X[rows], self.device_)
            z = torch.as_tensor(codes[rows], device=self.device_).bool()
            out[rows] = local_mean(self.decoder_, self.likelihood_, batch, z, log_odds,
                                   self.max_bits, n_flips=pair_flips).cpu().numpy()
        return out

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of ``transform``'s columns, one per bit: ``poissbpe0``, ``poissbpe1``, ...
        (scikit-learn's convention), so that a Pipeline ending in the model names them
        (the words are the vectorizer's: ``pipe[:-1].get_feature_names_out()``)."""
        self._check_fitted()
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{k}" for k in range(self.code_length())], dtype=object)

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
        with kernels.model_backend(self):
            codes = self.transform(X)
            total = 0.0
            with torch.no_grad():
                for begin in range(0, X.shape[0], 1024):
                    batch = self.likelihood_.batch(X[begin:begin + 1024], self.device_)
                    z = torch.as_tensor(codes[begin:begin + 1024], dtype=torch.float32,
                                        device=self.device_)
                    total += float(self.likelihood_.data_term(self.decoder_(z), batch).sum())
        return float(np.exp(-total / max(X.sum(), 1)))


def _check_posterior(posterior) -> None:
    """ValueError unless ``posterior`` is one of doc_topic's."""
    if posterior not in ("document", "local", "map"):
        raise ValueError(f"posterior must be 'document', 'local' or 'map', not {posterior!r}")
