"""One training step on a minibatch: the half of :class:`bpetopics.bpe.model.BPEBase`
that trains, written once for every schedule that takes it.

One training step on a minibatch S (docs/model.md, "One training step on a minibatch")::

    1. z_S  <- greedy pursuit with the current theta and q(pi)          (_pursue)
    2. q(pi) <- natural-gradient step from z_S                          (_prior_step)
    3. q(lambda) for S (inside the likelihood's theta loss; Poisson's is fixed)
    4. theta <- Adam(theta, grad [loss_S(theta; z_S) + penalty(theta)])  (_theta_step)

:meth:`TrainingStep._train_step` takes the four in order; :meth:`TrainingStep._update`
is steps 2-4 from the codes of step 1, which PoissBPE's pipelined schedule
(:mod:`bpetopics.models.poissbpe.pipelined_steps`) calls with codes pursued ahead; when
processes share the step (``step_group``, :mod:`bpetopics.bpe.step_group`) it sums
their shares first (:meth:`TrainingStep._shared_update`). A model overrides a part (its
compiled pursuit, prior step or theta step) and every schedule takes the override.
"""

from __future__ import annotations

import torch

from bpetopics.bpe.pursuit import greedy_pursuit
from bpetopics.bpe.step_group import sum_shares


class TrainingStep:
    """The training step of a BPE model (a mixin of ``BPEBase``: it reads ``decoder_``,
    ``likelihood_``, ``prior_``, ``optimizer_``, ``device_``, ``max_bits``,
    ``step_group`` and ``step_``, and calls ``prior_weight``, ``_penalty_backward`` and
    ``_pursuit_options``)."""

    def _train_step(self, X_batch):
        """One training step on the minibatch ``X_batch`` (docs/model.md, "One training step
        on a minibatch"): the pursuit (:meth:`_pursue`, step 1), then the update from its codes
        (:meth:`_update`, steps 2-4). Returns (summed score, summed bits), of the whole
        minibatch when processes share the step (``step_group``)."""
        weight = self.prior_weight()
        # What the pursuit and the theta step share (PoissBPE: beta, one softmax per
        # minibatch), computed once with autograd; the pursuit reads it detached.
        params = self.likelihood_.minibatch_params()
        batch, codes, score = self._pursue(X_batch, params, weight)
        return self._update(X_batch, batch, codes, score, params, weight)

    def _update(self, X_batch, batch, codes, score, params, weight, between=None):
        """Steps 2-4 of a training step, from step 1's ``codes`` (P, K) and ``score``
        (P,) of ``X_batch`` (the likelihood's ``batch``): q(pi)'s step
        (:meth:`_prior_step`), then theta's (:meth:`_theta_step`); when processes share
        the step, their sums first (:meth:`_shared_update`). ``between`` (one process),
        if given, is called after q(pi)'s step and before theta's (the pipelined
        schedule hands the next pursuit its log-odds there). Returns (summed score,
        summed bits) of the minibatch."""
        if self.step_group.size > 1:
            return self._shared_update(batch, codes, score, params)
        self._prior_step(codes)
        if between is not None:
            between()
        self._theta_step(X_batch, batch, codes, params, weight)
        return float(score.sum()), float(torch.count_nonzero(codes))     # (a bool sum converts first)

    def _shared_update(self, batch, codes, score, params):
        """Steps 2-4 when ``step_group``'s processes share the step, each with its share
        S_p of the minibatch S: the sums, then the same update in every process.

            grad_p  = grad sum_{n in S_p} l_n                 (each share's summed loss)
            grad    = sum_p grad_p / c_S,  stats(z_S) = sum_p stats(z_{S_p})   (sum_shares)
            q(pi)  <- natural-gradient step from stats(z_S)
            grad   += grad penalty(theta; u = mean_{n in S} f(z_n))            (once)
            theta  <- Adam(theta, grad)

        Returns the summed (score, bits) of S."""
        usage = self._share_gradients(batch, codes, params)       # grad_p; sum_{n in S_p} f(z_n)
        sums = sum_shares(self, codes, score, usage, batch)       # .grad = sum_p grad_p / c_S
        self.prior_.apply(sums.statistics)                        # q(pi) from stats(z_S)
        # the priors on theta (PoissBPE: the diversity prior, from the summed use, and the
        # topics' Dirichlet prior), once, on the summed gradient
        self._shared_penalty_backward(params, sums.mean_usage)
        self._adam_step()
        return sums.score, sums.bits

    def _shared_penalty_backward(self, params, usage) -> None:
        """The priors on theta's gradient in a shared step, added once to the summed
        gradients, from ``usage`` (``_penalty_statistics`` summed over S, divided by |S|;
        None: nothing read): ``_penalty_backward``. A model may compute it otherwise
        (the same values)."""
        self._penalty_backward(None, params, usage=usage)

    def _share_gradients(self, batch, codes, params):
        """A shared step's gradients of this process's share S_p (P, K codes):
        grad_p = grad sum_{n in S_p} l_n in the parameters' ``.grad`` (the data term and
        a prior on the decoder's outputs, each document's term not divided by the
        share's normaliser; no prior on theta: :meth:`_shared_update` adds those once,
        to the sums). Returns what the theta penalty reads of the share
        (``_penalty_statistics``: PoissBPE's summed mixtures (T,)), or None. A model may
        compute them otherwise (the same values)."""
        self.optimizer_.zero_grad()
        out = self.decoder_(codes.float())                        # f(z_n), n in S_p
        self.likelihood_.theta_backward(self._with_output_prior(out, batch, normaliser=1.0), batch, params,
                                        normaliser=1.0)                  # grad_p
        return self._penalty_statistics(out)

    def _pursue(self, X_batch, params, weight):
        """Step 1 of a training step: the likelihood's batch of ``X_batch`` and its codes
        (P, K) and scores (P,) by greedy pursuit, with the prior's log-odds times
        ``weight``. A subclass may pursue otherwise (the same codes)."""
        batch = self.likelihood_.batch(X_batch, self.device_)
        # The decoder has no mode-dependent layer (no dropout, no batch norm): it stays in
        # one mode (toggling eval()/train() on every step cost a measurable share of an epoch).
        codes, score = greedy_pursuit(self.decoder_, self.likelihood_, batch,
                                      weight * self.prior_.bit_log_odds(), self.max_bits,
                                      return_score=True, params=params,
                                      **self._pursuit_options(training=True))
        return batch, codes, score

    def _prior_step(self, codes) -> None:
        """Step 2 of a training step (one process): q(pi)'s natural-gradient step from the
        minibatch's codes."""
        self.prior_.step(codes)

    def _theta_step(self, X_batch, batch, codes, params, weight) -> None:
        """One Adam step on theta at the minibatch's codes (steps 3-4 of a training step,
        one process): the likelihood's data gradient, the penalty's, Adam."""
        self.optimizer_.zero_grad()
        out = self.decoder_(codes.float())                        # f(z_n), n in S
        # grad loss_S = grad sum_{n in S} l_n / c_S, then grad penalty(theta)
        fit_out, fit_batch = self._theta_data(X_batch, batch, codes, out, weight, params)
        self.likelihood_.theta_backward(self._with_output_prior(fit_out, fit_batch), fit_batch, params)
        self._penalty_backward(out, params)
        self._adam_step()

    def _with_output_prior(self, out, batch, normaliser=None):
        """``out`` (the decoder's outputs the theta step fits), with the gradient of a
        prior on them (:meth:`_output_prior_grad`) joined to the gradient that reaches
        them in the backward pass."""
        grad = self._output_prior_grad(out, batch, normaliser)
        if grad is not None and out.requires_grad:
            out.register_hook(lambda reaching: reaching + grad.to(reaching.dtype))
        return out

    def _output_prior_grad(self, out, batch, normaliser=None):
        """d penalty / d out of a prior on the decoder's outputs (P, n_out), each point's
        term divided by ``normaliser`` (None: the batch's own ``theta_normaliser``), or
        None: the shared estimator has none (PoissBPE: the mixtures' entropy prior)."""
        return None

    def _adam_step(self) -> None:
        """The end of every theta step: theta <- Adam(theta, grad theta) with the
        gradients set, and one more step counted (``step_``)."""
        self.optimizer_.step()                                    # theta <- Adam(theta, grad)
        self.step_ += 1

    def _theta_data(self, X_batch, batch, codes, out, weight, params):
        """(decoder outputs, batch) the theta step fits: the pursued codes' (MAP-EM)."""
        return out, batch
