"""PoissBPE's likelihood: word counts, x_n ~ Poisson(lambda_n * beta f(z_n)).

beta (W x T) has every column on the simplex, beta = softmax over words of the free
logits; f(z) = softmax of the decoder's T outputs. Because sum_w [beta f(z)]_w = 1,
q(lambda_n) = Gamma(a + sum_w x_nw, b + 1) does not depend on z or theta, and the score
of a code is the multinomial term sum_w x_nw ln [beta f(z_n)]_w over the document's
non-zero words only (docs/model.md, "The score of a code").

The logits are stored topic by topic, (T, W): the softmax over words then runs along
contiguous rows, several times faster than over the first axis of a (W, T) matrix
(docs/defaults.md). Saved weights keep the (W, T) layout of earlier versions (``state_dict``
transposes).

The theta step's gradient is written out (:meth:`PoissonLikelihood.theta_backward`)
rather than left to autograd, whose graph cost more than the arithmetic: with
c the batch's tokens, i = 1..nnz the batch's non-zeros (document n_i, word w_i, count
v_i) and phi_i = sum_t beta[w_i, t] f_t(z_{n_i}),

    loss = -(1/c) sum_i v_i ln phi_i,          g_i = d loss / d phi_i = -v_i / (c phi_i)
    d loss / d f_t(z_n)  = sum_{i in n} g_i beta[w_i, t]
    d loss / d beta[w, t] = sum_{i: w_i = w} g_i f_t(z_{n_i})     (only the batch's words)

then through the two softmaxes, d/d out = f (d/d f - <f, d/d f>) and
d/d logits[t] = beta_t (d/d beta_t - <beta_t, d/d beta_t>) (:meth:`add_topic_word_grad`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from bpetopics.models.poissbpe.compiled import fused_gradient
from bpetopics.bpe.batches import RowStore
from bpetopics.models.poissbpe.packed import PackedCounts, PaddedCounts
from bpetopics.models.poissbpe.table_pursuit import table_pursuit


class PoissonLikelihood(nn.Module):
    """x_n ~ Poisson(lambda_n * beta f(z_n)), lambda_n ~ Gamma(scale_shape, scale_rate).

    Parameters
    ----------
    n_words : int
        W, vocabulary size.
    n_topics : int
        T.
    scale_shape, scale_rate : float
        Gamma prior (shape a, rate b) of the document scale lambda_n.

    Attributes
    ----------
    topic_logits : torch.nn.Parameter, shape (T, W)
        beta^T = softmax of each row (topic t's logits over the words).
    """

    def __init__(self, n_words: int, n_topics: int, scale_shape=1.0, scale_rate=0.01):
        super().__init__()
        self.topic_logits = nn.Parameter(torch.zeros(n_topics, n_words))
        self.scale_shape, self.scale_rate = scale_shape, scale_rate

    @property
    def n_words(self) -> int:
        return self.topic_logits.shape[1]

    # ------------------------------------------------------------- saved (W, T) layout
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        key = prefix + "topic_logits"
        destination[key] = destination[key].t() if keep_vars else destination[key].t().contiguous()

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        key = prefix + "topic_logits"
        if key in state_dict and state_dict[key].dim() == 2:
            state_dict = dict(state_dict, **{key: state_dict[key].t()})
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    # ----------------------------------------------------------------------- topics
    def topic_word(self) -> torch.Tensor:
        """beta, shape (W, T), columns sum to 1: a transposed view of the (T, W) softmax
        (not contiguous), with autograd when it is enabled."""
        return torch.softmax(self.topic_logits, dim=1).t()

    def own_pursuit(self, decoder, batch, log_odds, max_bits, budget, return_score,
                    params=None, mixture_entropy=0.0, **unused):
        """The greedy pursuit of a packed batch by :func:`table_pursuit` (``params``: the
        topics beta when computed; ``mixture_entropy``: the mixtures' entropy prior);
        None for a padded batch (the generic pursuit)."""
        if not isinstance(batch, PackedCounts):
            return None
        return table_pursuit(decoder, self, batch, log_odds, max_bits, budget, return_score,
                             beta=params, mixture_entropy=mixture_entropy)

    def minibatch_params(self) -> torch.Tensor:
        """What one minibatch step shares between the pursuit and the theta step: beta
        (W, T), computed once, without autograd (the theta step's gradient is analytic);
        the one the last theta step made with its Adam step (``next_topics``) if it did."""
        beta, self.next_topics = self.next_topics, None
        if beta is not None:
            return beta
        with torch.no_grad():
            return self.topic_word()

    #: The topics the last theta step made after its Adam step (:mod:`bpetopics.models.poissbpe.compiled.topic_step`),
    #: for :meth:`minibatch_params` to take; set and cleared within an epoch's steps only
    #: (``PoissBPE._epoch_steps``), so nothing that changes the logits between epochs
    #: leaves a stale one.
    next_topics = None

    @staticmethod
    def batch(X, device) -> PackedCounts:
        return PackedCounts.from_csr(X, device)

    @staticmethod
    def batch_order(X) -> np.ndarray:
        """Encode documents in order of length (groups documents of similar size)."""
        lengths = X.getnnz(axis=1) if isinstance(X, RowStore) else np.diff(sp.csr_matrix(X).indptr)
        return np.argsort(lengths, kind="stable")

    @staticmethod
    def link(out: torch.Tensor) -> torch.Tensor:
        """f(z): mixture over topics, softmax of the decoder's outputs (..., T)."""
        return torch.softmax(out, dim=-1)

    # ------------------------------------------------------------------ data term
    def log_phi(self, out: torch.Tensor, batch: PaddedCounts, beta=None) -> torch.Tensor:
        """ln [beta f(z)]_w at each document's non-zero words (padded batch).

        out (P, C, T) -> (P, L, C): phi_nlc = sum_t beta[w_nl, t] f_c(z)_t.
        """
        beta = self.topic_word() if beta is None else beta
        beta_nz = beta[batch.cols]                          # (P, L, T): beta[w_nl, :]
        mix = self.link(out)                                # (P, C, T)
        phi = torch.bmm(beta_nz, mix.transpose(1, 2))       # (P, L, C)
        if torch.is_grad_enabled():
            return torch.log(phi.clamp_min(1e-30))
        return phi.clamp_min_(1e-30).log_()                 # the pursuit: no copies

    def data_term(self, out: torch.Tensor, batch, beta=None) -> torch.Tensor:
        """sum_w x_nw ln [beta f(z_n)]_w, shape (P,) or (P, C).

        ``batch`` is PackedCounts (the default) or PaddedCounts; ``beta`` (W, T) the
        minibatch's topics when already computed.
        """
        single = out.dim() == 2
        if single:
            out = out.unsqueeze(1)
        if isinstance(batch, PackedCounts):
            term = self._packed_term(out, batch, beta)
        else:
            log_phi = self.log_phi(out, batch, beta)
            term = torch.einsum("pl,plc->pc", batch.vals.to(log_phi.dtype), log_phi)
        return term[:, 0] if single else term

    def _packed_term(self, out, batch: PackedCounts, beta=None) -> torch.Tensor:
        """out (P, C, T) -> (P, C), over the real non-zeros only:
        phi_ic = sum_t beta[w_i, t] f_c(z_{n_i})_t for non-zero i of document n_i."""
        beta = self.topic_word() if beta is None else beta
        mix = self.link(out)                                # (P, C, T)
        beta_nz = beta[batch.cols]                          # (nnz, T)
        if mix.shape[1] == 1:
            phi = (beta_nz * mix[batch.rows, 0]).sum(-1, keepdim=True)       # (nnz, 1)
        else:
            phi = torch.bmm(mix[batch.rows], beta_nz.unsqueeze(-1))[..., 0]  # (nnz, C)
        log_phi = torch.log(phi.clamp_min(1e-30))
        return batch.row_sum(batch.vals.to(log_phi.dtype)[:, None] * log_phi)

    # ------------------------------------------------------------------ theta step
    def theta_loss(self, out: torch.Tensor, batch, params=None, normaliser=None) -> torch.Tensor:
        """Negative data term per token of the batch (maximises sum x ln beta f(z)), with
        autograd to the topics (``params`` is used only without autograd);
        ``normaliser`` replaces the batch's token count (a shared step: the whole
        minibatch's). :meth:`theta_backward` gives its gradient faster."""
        tokens = batch.vals.sum().clamp_min(1.0) if normaliser is None else normaliser
        beta = self.topic_word() if torch.is_grad_enabled() or params is None else params
        return -self.data_term(out, batch, beta).sum() / tokens

    def theta_backward(self, out: torch.Tensor, batch, params=None, normaliser=None) -> None:
        """Add the gradient of :meth:`theta_loss` to ``topic_logits.grad`` and, through
        ``out`` (P, T) (``out.backward``), to the decoder's parameters; analytic (module
        docstring) for packed batches, autograd otherwise. ``params``: this step's
        :meth:`minibatch_params` when already computed."""
        if not isinstance(batch, PackedCounts):
            self.theta_loss(out, batch, normaliser=normaliser).backward()
            return
        out.backward(self.theta_gradient(out, batch, params, normaliser).to(out.dtype))

    def theta_gradient(self, out: torch.Tensor, batch: PackedCounts, params=None,
                       normaliser=None) -> torch.Tensor:
        """:meth:`theta_backward` for a packed batch without the decoder's part: adds the
        topics' gradient to ``topic_logits.grad`` and returns d loss / d out (P, T), for the
        caller to take through the decoder."""
        with torch.no_grad():
            beta = self.minibatch_params() if params is None else params.detach()   # (W, T)
            mix = self.link(out.detach())                                          # (P, T)
            words, local = batch.vocabulary(self.n_words)                          # (U,), (nnz,)
            beta_u = batch.topic_rows(beta)                                        # (U, T)
            tokens = batch.vals.sum().clamp_min(1.0) if normaliser is None else normaliser
            if fused_gradient.usable(mix) and beta_u.dtype == mix.dtype:           # one pass
                d_mix, d_beta_u = fused_gradient.data_gradient(batch.rows, local, batch.vals,
                                                               beta_u, mix, float(tokens))
            else:
                beta_nz = beta_u.index_select(0, local)                            # (nnz, T)
                mix_nz = mix.index_select(0, batch.rows)                           # (nnz, T)
                phi = (beta_nz * mix_nz).sum(-1).clamp_min_(1e-30)                 # (nnz,)
                g = (batch.vals.to(phi.dtype) / tokens).div_(phi).neg_()           # d loss/d phi_i
                d_mix = torch.zeros_like(mix).index_add_(0, batch.rows, beta_nz.mul_(g[:, None]))
                d_beta_u = torch.zeros_like(beta_u).index_add_(0, local, mix_nz.mul_(g[:, None]))
            d_out = mix * (d_mix - (mix * d_mix).sum(-1, keepdim=True))            # (P, T)
        self.add_topic_word_grad(d_beta_u.t(), beta, words, beta_u.t())
        return d_out

    def add_topic_word_grad(self, grad: torch.Tensor, beta: torch.Tensor, words=None,
                            beta_at_words=None, inner=None) -> None:
        """Chain a gradient with respect to beta through beta = softmax(logits) into
        ``topic_logits.grad``: d/d logits[t] = beta_t (grad_t - <beta_t, grad_t>).

        Parameters
        ----------
        grad : torch.Tensor, shape (T, W), or (T, U) at the columns ``words``
            d loss / d beta^T (zero at the other words when ``words`` is given); a dense
            ``grad`` is overwritten.
        beta : torch.Tensor, shape (W, T)
            This step's topics (:meth:`minibatch_params`).
        words : torch.LongTensor, shape (U,), optional
        beta_at_words : torch.Tensor, shape (T, U), optional
            beta^T at the columns ``words`` when already gathered.
        inner : torch.Tensor, shape (T,), optional
            <beta_t, grad_t> when already known (dense ``grad`` only).
        """
        logits = self.topic_logits
        with torch.no_grad():
            beta_t = beta.t()                                                      # (T, W)
            if words is None:
                if inner is None:
                    inner = (beta_t * grad).sum(1)
                grad.sub_(inner[:, None])
                if logits.grad is None:
                    logits.grad = grad.mul_(beta_t)
                else:
                    logits.grad.addcmul_(grad, beta_t)
                return
            beta_cols = beta_t.index_select(1, words) if beta_at_words is None else beta_at_words
            at_words = beta_cols * grad                                            # (T, U)
            minus_inner = at_words.sum(1, keepdim=True).neg_()
            if logits.grad is None:
                logits.grad = beta_t * minus_inner
            else:
                logits.grad.addcmul_(beta_t, minus_inner)
            logits.grad.index_add_(1, words, at_words)

    @staticmethod
    def theta_normaliser(batch) -> torch.Tensor:
        """The batch's tokens, sum_n sum_w x_nw (0-d)."""
        return batch.vals.sum()

    @staticmethod
    def data_upper_bound(batch) -> torch.Tensor:
        """sum_w x_nw ln(x_nw / n_n): the multinomial at its maximum-likelihood phi."""
        vals = batch.vals
        if isinstance(batch, PackedCounts):
            n = batch.totals()[batch.rows].clamp_min(1e-30)
            return batch.row_sum(vals * torch.log(vals.clamp_min(1e-30) / n))
        n = vals.sum(1, keepdim=True).clamp_min(1e-30)
        return torch.where(vals > 0, vals * torch.log(vals.clamp_min(1e-30) / n), 0.0).sum(1)

    def scale_posterior(self, doc_lengths) -> tuple[np.ndarray, np.ndarray]:
        """q(lambda_n) = Gamma(a + sum_w x_nw, b + 1): (shape, rate), each (N,)."""
        doc_lengths = np.asarray(doc_lengths, dtype=np.float64)
        return self.scale_shape + doc_lengths, np.full_like(doc_lengths, self.scale_rate + 1.0)

