"""A prior on PoissBPE's mixtures that favours spread ones (``mixture_entropy``).

With a document's code holding one or two bits, maximum likelihood drives the decoder to
near one-hot mixtures: each document then lies in one topic, the topics become clusters
of documents, and every topic carries the generic words of its own documents. A document
whose mixture is spread lets one topic take the words it shares with many documents and
another its own theme, as an admixture's topics do. The theta step's loss gains the
entropy of each document's mixture, weighed by its tokens,

    loss_S += -epsilon sum_{n in S} (L_n / L_S) H(f(z_n)),    H(f) = -sum_t f_t ln f_t,

over the minibatch S, L_n document n's tokens and L_S the minibatch's: epsilon nats per
token at most ln T. With f = softmax(out) its gradient at the decoder's outputs is

    d / d out_nt = epsilon (L_n / L_S) f_nt (ln f_nt + H(f_n)).

The term belongs to the objective of the codes as well as to the decoder's: the pursuit
scores a candidate code c of document n by its data term, its bits' log-odds and
epsilon L_n H(f(c)) (:mod:`bpetopics.models.poissbpe.table_pursuit` and the compiled
kernels), so that both steps of a minibatch climb the same objective. A pursuit that
ignores it (as this prior's first form did) picks codes whose mixtures the decoder is
being pushed away from, and codes then gain bits to rebuild peaked mixtures, each bit a
pursuit step. docs/defaults.md measures epsilon over the quality grid.
"""

from __future__ import annotations

import torch

from bpetopics.models.poissbpe.packed import PackedCounts

#: ``mixture_entropy=None``: epsilon = PSEUDO_DOCUMENTS T / N, the prior
#: as strong as this many documents a topic (few documents a topic overfit their
#: clusters; many need little push), at most MAX_ENTROPY (stronger priors cost the smallest
#: corpora their completion perplexity: docs/defaults.md).
PSEUDO_DOCUMENTS = 5.0
MAX_ENTROPY = 0.2


def entropy_for(n_topics: int, n_docs: int) -> float:
    """epsilon of ``mixture_entropy=None`` for T topics on N training documents."""
    return min(MAX_ENTROPY, PSEUDO_DOCUMENTS * n_topics / max(int(n_docs), 1))


def document_tokens(batch) -> torch.Tensor:
    """L_n, each document's tokens, shape (P,), of a PackedCounts (flat non-zeros) or a
    PaddedCounts ((P, L) counts)."""
    return batch.totals() if isinstance(batch, PackedCounts) else batch.vals.sum(1)


def token_shares(batch) -> torch.Tensor:
    """L_n / L_S, each document's share of the minibatch's tokens, shape (P,)."""
    totals = document_tokens(batch)
    return totals / totals.sum().clamp_min(1.0)


def mixture_entropies(mix: torch.Tensor) -> torch.Tensor:
    """H(f) = -sum_t f_t ln f_t of mixtures (..., T) -> (...,), 0 ln 0 taken as 0."""
    return torch.special.entr(mix).sum(-1)


def entropy_gradient(out: torch.Tensor, shares: torch.Tensor, strength: float) -> torch.Tensor:
    """The entropy prior's gradient at the decoder's outputs (module docstring).

    Parameters
    ----------
    out : torch.Tensor, shape (P, T)
        The decoder's outputs; the mixtures are their softmax.
    shares : torch.Tensor, shape (P,)
        Each document's share of the minibatch's tokens (:func:`token_shares`).
    strength : float
        epsilon.

    Returns
    -------
    torch.Tensor, shape (P, T)
        d loss / d out of the prior's term.
    """
    with torch.no_grad():
        log_mix = torch.log_softmax(out.detach(), dim=-1)
        mix = log_mix.exp()
        entropy = -(mix * log_mix).sum(-1, keepdim=True)                        # H(f_n)
        return (strength * shares.to(out.dtype)[:, None]) * mix * (log_mix + entropy)


class MixturePrior:
    """The entropy prior's hook for :class:`~bpetopics.models.poissbpe.PoissBPE` (reads
    ``mixture_entropy``, ``n_topics`` and the fitted ``n_data_``): the shared estimator's
    theta steps join its gradient to the data term's at the decoder's outputs; the
    compiled step adds it in its own pass
    (:mod:`bpetopics.models.poissbpe.compiled.fused_theta`)."""

    def mixture_entropy_in_use(self) -> float:
        """epsilon in use: ``mixture_entropy``, or for None :func:`entropy_for` T and N."""
        if self.mixture_entropy is not None:
            return float(self.mixture_entropy)
        if not hasattr(self, "n_data_"):
            raise RuntimeError(f"mixture_entropy=None sets the prior's strength from the corpus's size: fit this "
                               f"{type(self).__name__} first, or give mixture_entropy a number")
        return entropy_for(self.n_topics, self.n_data_)   # N: the corpus's documents

    def _pursuit_options(self, training: bool = False) -> dict:
        """The pursuit scores the prior too (``mixture_entropy`` of
        :func:`~bpetopics.bpe.pursuit.greedy_pursuit`), in training and encoding alike."""
        strength = self.mixture_entropy_in_use()
        return {"mixture_entropy": strength} if strength else {}

    def _output_prior_grad(self, out, batch, normaliser=None):
        """The entropy prior's d loss / d out (P, T), or None without it; with
        ``normaliser`` (processes sharing a step: 1, their sum divided later) each
        document's share is L_n / normaliser instead of L_n / L_S."""
        strength = self.mixture_entropy_in_use()
        if not strength:
            return None
        shares = token_shares(batch) if normaliser is None else document_tokens(batch) / normaliser
        return entropy_gradient(out, shares, strength)
