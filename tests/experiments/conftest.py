"""Fixtures of the experiment tests: the image tests' offline data root."""

from tests.images.conftest import data_root  # noqa: F401
