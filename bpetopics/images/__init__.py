"""Images: data sets (MNIST, binarised and scaled MNIST, CIFAR-10) and the Table 1
metrics (MSE, Bernoulli NLL, Hoyer). The VAE baselines are in :mod:`bpetopics.baselines`,
the table in :mod:`bpetopics.experiments.image_table`.

The loaders and metrics need only numpy (and PIL for CIFAR-10 images).
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
]

