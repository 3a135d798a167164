"""Fixtures for the image tests: the shared offline data, loaded once per session."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _shared_data_root():
    for cand in (os.environ.get("BPETOPICS_DATA"), REPO.parent / "shared" / "data",
                 REPO / "shared" / "data"):
        if cand and (Path(cand) / "mnist" / "MNIST" / "raw").is_dir():
            return Path(cand)
    return None


@pytest.fixture(scope="session")
def data_root():
    root = _shared_data_root()
    if root is None:
        pytest.skip("shared offline data (shared/data) not found; set BPETOPICS_DATA")
    return root


@pytest.fixture(scope="session")
def mnist_train(data_root):
    from bpetopics.images import load_mnist

    return load_mnist("train", data_root)


@pytest.fixture(scope="session")
def mnist_test(data_root):
    from bpetopics.images import load_mnist

    return load_mnist("test", data_root)
