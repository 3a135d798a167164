"""Fixtures of the model tests: the image tests' offline data root."""

from tests.images.conftest import data_root  # noqa: F401
from tests.bpe.conftest import kind  # noqa: F401
