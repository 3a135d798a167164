"""The decoder f_theta: an MLP from a binary code z in {0,1}^K to unconstrained outputs.

The likelihood applies its own link to the outputs (softmax over T topics for text,
sigmoid over pixels for images), so the decoder ends in a linear layer.

The first layer is linear in z, which the pursuit exploits: with
``pre(z) = W1 z + b1``, switching bit j on gives ``pre(z + e_j) = pre(z) + W1[:, j]``,
so the first layer of all K candidate codes costs one broadcast add.
"""

from __future__ import annotations

import torch
from torch import nn

#: The one activation table of the package (BPE decoders and the VAE baselines).
ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "softplus": nn.Softplus, "sigmoid": nn.Sigmoid,
               "elu": nn.ELU, "leaky_relu": nn.LeakyReLU, "gelu": nn.GELU}


class CodeDecoder(nn.Module):
    """MLP decoder ``K -> hidden[0] -> ... -> hidden[-1] -> n_out``.

    Parameters
    ----------
    n_bits : int
        K, length of the binary code.
    n_out : int
        Output size (T topics, or D pixels).
    hidden : tuple of int
        Hidden layer sizes; ``()`` makes the decoder linear in z.
    activation : str
        One of ``ACTIVATIONS``.
    """

    def __init__(self, n_bits: int, n_out: int, hidden=(128,), activation="relu"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; choose from {sorted(ACTIVATIONS)}")
        sizes = [n_bits, *hidden, n_out]
        self.first = nn.Linear(sizes[0], sizes[1])
        layers = []
        for n_in, n_next in zip(sizes[1:-1], sizes[2:]):
            layers += [ACTIVATIONS[activation](), nn.Linear(n_in, n_next)]
        self.head = nn.Sequential(*layers)

    @property
    def bit_columns(self) -> torch.Tensor:
        """W1 transposed: row j is what bit j adds to the first layer, shape (K, H1)."""
        return self.first.weight.t()

    def first_layer(self, codes: torch.Tensor) -> torch.Tensor:
        """pre = W1 z + b1.  codes (N, K) -> (N, H1)."""
        return self.first(codes)

    def forward_from_first(self, pre: torch.Tensor) -> torch.Tensor:
        """The rest of the network from first-layer pre-activations, (..., H1) -> (..., n_out)."""
        return self.head(pre)

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        """Decoder outputs for codes, (N, K) -> (N, n_out)."""
        return self.head(self.first(codes))

    @property
    def is_linear(self) -> bool:
        """No hidden layer: the outputs are W1 z + b1."""
        return len(self.head) == 0

    def linear_forward(self, codes: torch.Tensor) -> torch.Tensor:
        """W1 z + b1 without autograd (a linear decoder), (N, K) float -> (N, n_out); with
        :meth:`set_linear_grad` the same values and gradients as ``forward`` and
        ``backward``, without autograd's graph (most of a small step's cost)."""
        with torch.no_grad():
            return torch.addmm(self.first.bias, codes, self.first.weight.t())

    def set_linear_grad(self, codes: torch.Tensor, d_out: torch.Tensor) -> None:
        """The gradients of a linear decoder at ``codes`` (N, K) given d loss / d out
        (N, n_out): dW1 = d_out^T z, db1 = sum_n d_out (replacing any earlier ones)."""
        with torch.no_grad():
            self.first.weight.grad = d_out.t().mm(codes)
            self.first.bias.grad = d_out.sum(0)
