"""The prior weight a0 of the documents' own mixtures (``document_concentration``).

``doc_topic`` refines each document's code posterior mean by its own words, the MAP
under a Dirichlet prior of a0 pseudo-tokens centred on it
(:mod:`bpetopics.models.poissbpe.document_mixture`). How far to trust the code depends
on how much it says against the document's words. For documents of dozens of words 10
pseudo-tokens serve every corpus and T measured (docs/defaults.md). For short texts the
best a0 falls as T grows: with about one bit a document a code's posterior spreads over
many topics at T = 200 and says less than a subject line's three words, while at T = 20
it says more.

So with ``document_concentration=None`` (the default) a model trained on short texts
(``short_texts()``) picks a0 for itself at the end of training: of
:data:`SHORT_TEXT_CONCENTRATIONS`, the value whose mixtures best complete a seeded sample
of its training documents (half of each document's tokens give the mixture, the other
half is scored, as in :mod:`bpetopics.evaluation.perplexity`). Training documents are
biased towards a larger a0 than new ones: their codes were fitted to them. The bias runs
one way, so the choice is only ever to lower a0 from 10: when even the training
documents prefer less weight on their codes, new documents prefer it more. (Chosen from
larger values too, the training documents of longer texts asked for several times the
a0 that completed new documents of the same corpora best: docs/defaults.md.) Any other
model keeps 10, and a number given as ``document_concentration`` is used as it is.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics.evaluation.perplexity import heldout_log_likelihood, split_documents
from bpetopics.models.poissbpe.document_mixture import document_mixtures

#: a0 of every model but one trained on short texts with ``document_concentration=None``.
CONCENTRATION = 10.0
#: The values a short-text model picks from (at most CONCENTRATION: see the module).
SHORT_TEXT_CONCENTRATIONS = (0.3, 1.0, 3.0, 10.0)
#: Training documents (a seeded sample) that pick it.
CONCENTRATION_SAMPLE = 2000
#: The saved model's entry for the picked value.
STATE_KEY = "document_concentration"

__all__ = ["best_concentration", "DocumentConcentration"]


def best_concentration(X, topic_word: np.ndarray, local_mixtures, candidates, seed: int = 0) -> float:
    """The a0 of ``candidates`` whose document mixtures best complete the documents X.

    Parameters
    ----------
    X : scipy.sparse matrix, shape (N, W), integer counts
    topic_word : np.ndarray, shape (T, W)
    local_mixtures : callable
        (n, W) counts -> (n, T) code posterior mean mixtures (``doc_topic(.,
        posterior="local")``).
    candidates : sequence of float
    seed : int
        Seeds the split of each document's tokens in two halves.

    Returns
    -------
    float
        The candidate of largest held-out log-likelihood, sum_d sum_w x^held_dw ln
        sum_t theta_dt(a0) beta_tw (the first of equals); the largest candidate when no
        document has two tokens.
    """
    observed, heldout = split_documents(X, seed=seed)
    both = (np.asarray(observed.sum(1)).ravel() > 0) & (np.asarray(heldout.sum(1)).ravel() > 0)
    if not both.any():
        return float(max(candidates))
    observed, heldout = observed[both], heldout[both]
    local = local_mixtures(observed)
    scores = [heldout_log_likelihood(document_mixtures(observed, topic_word, local, a), topic_word, heldout)
              for a in candidates]
    return float(candidates[int(np.argmax(scores))])


class DocumentConcentration:
    """The a0 a PoissBPE model uses (see the module): picked at the end of training,
    saved with the model. A mixin of :class:`~bpetopics.models.poissbpe.PoissBPE` (needs
    ``document_concentration``, ``random_state``, ``short_texts()`` and ``doc_topic``)."""

    def concentration_in_use(self) -> float:
        """a0 of ``doc_topic``'s document mixtures: ``document_concentration``, or for
        None the value picked in training (``document_concentration_``;
        :data:`CONCENTRATION` for a model saved before models picked one)."""
        if self.document_concentration is not None:
            return float(self.document_concentration)
        return float(getattr(self, "document_concentration_", None) or CONCENTRATION)

    def _pick_concentration(self, X) -> None:
        """Set ``document_concentration_`` at the end of training on X (N, W): for None
        and short texts with integer counts, :func:`best_concentration` of
        :data:`SHORT_TEXT_CONCENTRATIONS` on a seeded sample of X; else
        ``document_concentration`` or :data:`CONCENTRATION`."""
        value = CONCENTRATION if self.document_concentration is None else float(self.document_concentration)
        if self.document_concentration is None and self.short_texts() and X.shape[0]:
            seed = 0 if self.random_state is None else int(self.random_state)
            rows = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:CONCENTRATION_SAMPLE])
            sample = sp.csr_matrix(X[rows])
            if np.array_equal(sample.data, np.round(sample.data)):   # counts: their tokens split in two
                value = best_concentration(sample, self.topic_word_,
                                           lambda counts: self.doc_topic(counts, posterior="local"),
                                           SHORT_TEXT_CONCENTRATIONS, seed)
        self.document_concentration_ = value

    def state_dict(self) -> dict:
        """The saved tensors, with the picked a0 (once training has ended)."""
        state = super().state_dict()
        if getattr(self, "document_concentration_", None) is not None:
            state[STATE_KEY] = torch.tensor(float(self.document_concentration_), dtype=torch.float64)
        return state

    def load_state(self, state: dict, n_data: int, n_features: int, training=None):
        """Rebuild from saved tensors; the picked a0 when saved (None else: a checkpoint
        taken during training, or a model saved before models picked one)."""
        value = state.get(STATE_KEY)
        super().load_state({k: v for k, v in state.items() if k != STATE_KEY}, n_data, n_features, training)
        self.document_concentration_ = None if value is None else float(value)
        return self
