"""Codes of images under any image model: the one place that knows how each model encodes.

=================  ==========================================  ======================
model              code of an image (N x K)                    decoded mean f(code)
=================  ==========================================  ======================
GaussBPE, BernBPE  the pursued binary code z (uint8)           f(z) (sigmoid)
GaussianVAE        the posterior mean mu(x) (float32)          f(mu) (linear)
GumbelSoftmaxVAE   the one-hot posterior argmax, N*K (uint8)   sigmoid(f(y))
=================  ==========================================  ======================

The empty code (all zeros) decodes to each model's "background" image; a bit's
contribution is what switching it on alone adds to it (:func:`bit_contributions`).
"""

from __future__ import annotations

import numpy as np
import torch


def _kind(model) -> str:
    name = type(model).__name__
    if name in ("GaussBPE", "BernBPE"):
        return "bpe"
    if name in ("GaussianVAE", "GumbelSoftmaxVAE"):
        return name
    raise TypeError(f"{name} is not an image model (GaussBPE, BernBPE, GaussianVAE, GumbelSoftmaxVAE)")


def encode_images(model, X) -> np.ndarray:
    """Codes of the images X (N, D) float32, shape (N, K): uint8 for binary codes,
    float32 posterior means for the Gaussian VAE."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    kind = _kind(model)
    if kind == "bpe":
        return np.asarray(model.transform(X), dtype=np.uint8)
    if kind == "GaussianVAE":
        return model.encode(X).astype(np.float32)
    return model.encode(X, code="argmax").astype(np.uint8)


def decode_codes(model, codes) -> np.ndarray:
    """The mean image of each code, (N, D) float32 (GaussBPE: f(z), before the scale)."""
    codes = np.asarray(codes)
    kind = _kind(model)
    if kind == "bpe":
        return np.asarray(model.decode(codes.astype(np.uint8)), dtype=np.float32)
    if kind == "GaussianVAE":
        return model.decode(codes.astype(np.float32)).astype(np.float32)
    with torch.no_grad():
        y = torch.as_tensor(codes.astype(np.float32), device=model.device_)
        return torch.sigmoid(model.net_.decode(y)).cpu().numpy().astype(np.float32)


def reconstruct_images(model, X) -> np.ndarray:
    """Each model's reconstruction of X (N, D): GaussBPE E[lambda] f(z), BernBPE f(z),
    the VAEs their decoded posterior mean / argmax."""
    return np.asarray(model.reconstruct(np.ascontiguousarray(X, dtype=np.float32)), dtype=np.float32)


def bit_contributions(model, codes, max_bits=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What each used bit adds to the empty code's image, ordered by use.

    codes : (N, K) the training codes (from the run). Binary codes: bit k is used when
    some image has it on, its use is the number of such images, and its contribution is
    f(e_k) - f(0). Gaussian VAE: latent k's use is the spread (standard deviation) of
    the training means mu_k, "used" when above 0.05, and its contribution is
    f(2 sd_k e_k) - f(0).

    Returns (empty (D,), contributions (B, D), bits (B,) int, most used first), at most
    ``max_bits`` bits.
    """
    codes = np.asarray(codes)
    K = codes.shape[1]
    empty = decode_codes(model, np.zeros((1, K), dtype=codes.dtype))[0]
    if codes.dtype == np.uint8:
        use = (codes != 0).sum(0).astype(float)
        order = [k for k in np.argsort(-use, kind="stable") if use[k] > 0]
        scale = np.ones(K)
    else:
        use = codes.std(0) if len(codes) else np.zeros(K)
        order = [k for k in np.argsort(-use, kind="stable") if use[k] > 0.05]
        scale = 2.0 * use
    order = np.asarray(order[:max_bits] if max_bits else order, dtype=np.int64)
    units = np.zeros((len(order), K), dtype=codes.dtype if codes.dtype == np.uint8 else np.float32)
    units[np.arange(len(order)), order] = scale[order] if codes.dtype != np.uint8 else 1
    if len(order) == 0:
        return empty, np.zeros((0, empty.size), dtype=np.float32), order
    return empty, decode_codes(model, units) - empty[None, :], order
