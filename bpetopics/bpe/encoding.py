"""Inference with everything global frozen: codes for new data, their objective, and the
likelihood parameters f(z) of given codes.

:class:`Encoding` is the half of :class:`bpetopics.bpe.model.BPEBase` that a fitted model
needs: the pursuit of each minibatch of new data (longest documents together, as the
likelihood orders them) with the trained decoder and prior, and no parameter update.
"""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.bpe.pursuit import greedy_pursuit


class Encoding:
    """transform / score / decode for a fitted BPE model (a mixin of ``BPEBase``: it reads
    ``decoder_``, ``likelihood_``, ``prior_``, ``device_``, ``max_bits`` and
    ``step_group``)."""

    #: Points pursued together by ``transform`` and ``score`` when no ``batch_size`` is
    #: given (a model class may choose its own: PoissBPE's batches are larger).
    ENCODE_BATCH_SIZE = 1024

    def _check_fitted(self):
        if not hasattr(self, "decoder_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet; call fit(X) first")

    def transform(self, X, batch_size=None):
        """Codes for new data with everything global frozen.

        Parameters
        ----------
        X : array-like, shape (N, D)
        batch_size : int, optional
            Points pursued together (default ``ENCODE_BATCH_SIZE``); the codes do not
            depend on it.

        Returns
        -------
        np.ndarray of uint8, shape (N, K)
        """
        codes, _ = self._encode(self._check_X(X), batch_size)
        return codes

    def score(self, X, y=None, batch_size=None):
        """Mean per-point objective L(z) of the pursued codes (data term + prior term,
        up to the prior's code-independent constant)."""
        _, scores = self._encode(self._check_X(X), batch_size)
        return float(scores.mean())

    def _encode(self, X, batch_size):
        self._check_fitted()
        batch_size = self.ENCODE_BATCH_SIZE if batch_size is None else int(batch_size)
        self.decoder_.eval()
        order = self.likelihood_.batch_order(X)[self.step_group.encoding_rows()]   # shared: a part
        codes = np.zeros((X.shape[0], self.code_length()), dtype=np.uint8)
        scores = np.zeros(X.shape[0])
        log_odds = self.prior_.bit_log_odds()
        for begin in range(0, len(order), batch_size):
            rows = order[begin:begin + batch_size]
            batch = self.likelihood_.batch(X[rows], self.device_)
            z, s = greedy_pursuit(self.decoder_, self.likelihood_, batch, log_odds,
                                  self.max_bits, return_score=True, **self._pursuit_options())
            codes[rows] = z.cpu().numpy()
            scores[rows] = s.cpu().numpy()
        if self.step_group.size > 1:    # each row was encoded by one process: sums assemble them
            codes = self.step_group.sum_(torch.from_numpy(codes)).numpy()
            scores = self.step_group.sum_(torch.from_numpy(scores)).numpy()
        return codes, scores

    def decode(self, codes) -> np.ndarray:
        """Likelihood parameters f(z) for codes (N, K) -> (N, D_out)."""
        self._check_fitted()
        with torch.no_grad():
            z = torch.as_tensor(np.asarray(codes), dtype=torch.float32, device=self.device_)
            return self.likelihood_.link(self.decoder_(z)).cpu().numpy()
