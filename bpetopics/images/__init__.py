"""Images: data sets (MNIST, binarised and scaled MNIST, CIFAR-10), the Gaussian VAE and
Gumbel-Softmax VAE baselines, and the Table 1 metrics (MSE, Bernoulli NLL, Hoyer).

The loaders and metrics need only numpy (and PIL for CIFAR-10 images); the VAEs import
torch, lazily, when first used.
"""

from bpetopics.images.datasets import (
    CIFAR10_CLASSES,
    balanced_subset,
    binarize,
    default_data_root,
    load_binarized_mnist,
    load_cifar10,
    load_mnist,
    load_scaled_mnist,
    read_idx,
    scale_images,
)
from bpetopics.images.metrics import (
    bernoulli_nll,
    hoyer_sparsity,
    mean_hoyer,
    reconstruction_mse,
)

__all__ = [
    "CIFAR10_CLASSES", "balanced_subset", "binarize", "default_data_root",
    "load_binarized_mnist", "load_cifar10", "load_mnist", "load_scaled_mnist", "read_idx",
    "scale_images", "bernoulli_nll", "hoyer_sparsity", "mean_hoyer", "reconstruction_mse",
    "GaussianVAE", "GumbelSoftmaxVAE",
]


def __getattr__(name):
    if name == "GaussianVAE":
        from bpetopics.images.vae import GaussianVAE

        return GaussianVAE
    if name == "GumbelSoftmaxVAE":
        from bpetopics.images.gsvae import GumbelSoftmaxVAE

        return GumbelSoftmaxVAE
    raise AttributeError(f"module 'bpetopics.images' has no attribute {name!r}")
