"""Which path each part of PoissBPE's training step takes (:class:`StepPaths`).

The step is the shared one (:class:`bpetopics.bpe.training_step.TrainingStep`: pursuit,
q(pi)'s step, theta's step); PoissBPE runs each part in compiled passes where they serve
the model (:mod:`bpetopics.models.poissbpe.compiled`: CPU, a linear decoder, numba) and
on the torch path elsewhere, with the same values (docs/design.md, "Which pursuit runs
when"). With ``pipeline`` an epoch's steps overlap (:mod:`~bpetopics.models.poissbpe.pipelined_steps`);
with ``soft_codes`` M > 1 the theta step fits each document's M most probable codes.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bpetopics.bpe.threads import kernel_threads, torch_on_one_thread
from bpetopics.models.poissbpe import pipelined_steps
from bpetopics.models.poissbpe.code_posterior import soft_codes
from bpetopics.models.poissbpe.compiled import fused_pursuit, fused_theta, rows_pursuit, topic_step
from bpetopics.models.poissbpe.compiled import prior as compiled_prior
from bpetopics.models.poissbpe.packed import PackedCounts, PaddedCounts


class StepPaths:
    """The parts of PoissBPE's training step, each on its path (a part of PoissBPE,
    before the shared estimator in its bases: each falls back on
    :class:`~bpetopics.bpe.training_step.TrainingStep`'s where no faster path serves)."""

    #: The topics' softmax shift (T,) that each theta step of an epoch hands the next
    #: (:mod:`bpetopics.models.poissbpe.compiled.topic_step`); None outside an epoch's steps.
    _softmax_shift = None
    #: :meth:`_theta_constants` for the epoch's steps (they change only between epochs,
    #: as the topics grow); None outside an epoch's steps.
    _epoch_constants = None

    def _epoch_steps(self, batches):
        """The steps with torch's CPU operations on one thread (all are small at text
        sizes); the pursuit's compiled kernels still use every thread given. The theta
        steps hand each next one its topics and softmax shift within the epoch only. With
        ``pipeline``, the next minibatch's pursuit runs during this one's theta step
        (:mod:`~bpetopics.models.poissbpe.pipelined_steps`) where :meth:`_pipelined` allows."""
        self.likelihood_.next_topics = None
        logits = self.likelihood_.topic_logits
        if self._compiled_theta(logits):
            self._softmax_shift = topic_step.row_shift(logits)
            self._epoch_constants = self._theta_constants()
        try:
            with torch_on_one_thread(self.device_):
                if self._pipelined():
                    return pipelined_steps.run_epoch(self, batches, kernel_threads())
                return super()._epoch_steps(batches)
        finally:
            self.likelihood_.next_topics, self._softmax_shift, self._epoch_constants = None, None, None

    def _pipelined(self) -> bool:
        """``pipeline``, where the compiled pursuit serves the model (CPU, linear decoder,
        numba), one process trains and ``soft_codes=1``."""
        return (bool(self.pipeline) and self.soft_codes == 1 and self.step_group.size == 1
                and fused_pursuit.usable(self.decoder_, self.device_))

    def _pursue(self, X_batch, params, weight):
        """The minibatch's pursuit in compiled calls from its CSR rows where they serve the
        model (:mod:`bpetopics.models.poissbpe.compiled.rows_pursuit`: CPU, linear decoder, numba), with a
        second thread on large minibatches; else :meth:`BPEBase._pursue`."""
        if not (fused_pursuit.usable(self.decoder_, self.device_) and sp.issparse(X_batch)):
            return super()._pursue(X_batch, params, weight)
        return rows_pursuit.pursue(X_batch, rows_pursuit.ThetaCopy.of_model(self, params, self.step_),
                                   kernel_threads())

    def _prior_step(self, codes) -> None:
        """q(pi)'s step in one compiled pass where it serves (the same values)."""
        if compiled_prior.usable(self.prior_, codes):
            return compiled_prior.natural_step(self.prior_, codes)
        return super()._prior_step(codes)

    def _theta_step(self, X_batch, batch, codes, params, weight) -> None:
        """:meth:`BPEBase._theta_step`; with a linear decoder and the pursued codes alone
        (``soft_codes=1``) its gradients are written out (the same values as autograd's,
        without its graph: a third of the step's decoder cost)."""
        if self.soft_codes > 1 or not self.decoder_.is_linear or not isinstance(batch, PackedCounts):
            return super()._theta_step(X_batch, batch, codes, params, weight)
        self.optimizer_.zero_grad()
        if self._softmax_shift is not None:   # within an epoch: compiled passes, Adam, the next topics
            repulsion, strength, floor, entropy = self._epoch_constants
            self.likelihood_.next_topics = fused_theta.take_step(
                self.decoder_, self.likelihood_, self.optimizer_, batch, codes, params,
                repulsion, strength, self._softmax_shift, floor, entropy)
            self.step_ += 1
            return
        if self._compiled_theta(params):   # compiled passes
            repulsion, strength, _, entropy = self._theta_constants()
            fused_theta.set_gradients(self.decoder_, self.likelihood_, batch, codes, params,
                                      repulsion, strength, entropy)
        else:
            z = codes.float()
            out = self.decoder_.linear_forward(z)
            d_out = self.likelihood_.theta_gradient(out, batch, params)
            prior_grad = self._output_prior_grad(out, batch)
            self.decoder_.set_linear_grad(z, d_out if prior_grad is None else d_out + prior_grad)
            self._penalty_backward(out, params)
        self._adam_step()

    def _share_gradients(self, batch, codes, params):
        """:meth:`TrainingStep._share_gradients` (processes sharing a step) in the
        compiled passes where they serve the step, as :meth:`_theta_step` (the same
        values up to float rounding); returns the share's summed mixtures when the
        diversity prior reads them, else None."""
        if (self.soft_codes > 1 or not isinstance(batch, PackedCounts) or codes.shape[0] == 0
                or not self._compiled_theta(params)):
            return super()._share_gradients(batch, codes, params)
        self.optimizer_.zero_grad()
        summed = fused_theta.share_gradients(self.decoder_, self.likelihood_, batch, codes, params,
                                             self.mixture_entropy_in_use())
        return summed if self.topic_repulsion else None

    def _shared_penalty_backward(self, params, usage) -> None:
        """:meth:`TrainingStep._shared_penalty_backward` (the topics' priors, once, on
        the summed gradients) in one compiled call where the theta step's passes serve."""
        if self.soft_codes > 1 or not self._compiled_theta(params):
            return super()._shared_penalty_backward(params, usage)
        repulsion, strength, _, _ = self._theta_constants()
        fused_theta.add_prior_gradients(self.likelihood_, params, usage, repulsion, strength)

    def _theta_constants(self) -> tuple:
        """What the compiled theta step reads of the model besides theta: (the diversity
        prior's weight, the Dirichlet prior's s, the logits' floor, epsilon)."""
        repulsion = self._penalty_weight() if self.topic_repulsion else 0.0
        return repulsion, self._smoothing_strength(), self._logit_floor(), self.mixture_entropy_in_use()

    def _theta_data(self, X_batch, batch, codes, out, weight, params):
        """With ``soft_codes`` M > 1, each document's M most probable nearby codes (rows
        repeated, counts weighted by the codes' probabilities); else the pursued codes."""
        if self.soft_codes <= 1:
            return out, batch
        padded = PaddedCounts.from_csr(X_batch, self.device_)
        near, weights = soft_codes(self.decoder_, self.likelihood_, padded, codes,
                                   weight * self.prior_.bit_log_odds(), self.soft_codes,
                                   self.max_bits, params)                 # (P, M, K), (P, M)
        n_docs, n_codes, n_bits = near.shape
        rows = np.repeat(np.arange(n_docs), n_codes)
        weighted = sp.diags(weights.reshape(-1).double().cpu().numpy()) @ sp.csr_matrix(X_batch)[rows]
        return (self.decoder_(near.reshape(n_docs * n_codes, n_bits).float()),
                self.likelihood_.batch(sp.csr_matrix(weighted), self.device_))

    def _compiled_theta(self, params) -> bool:
        """Whether the theta step runs its compiled passes (:mod:`~bpetopics.models.poissbpe.compiled.fused_theta`):
        where they serve the decoder and ``params``, and without seed words (their prior
        term is on the torch path alone, :mod:`~bpetopics.models.poissbpe.topic_seeds`)."""
        return fused_theta.usable(self.decoder_, params) and not self.has_seed_words()
