"""Same seed, same outputs: ``bpetopics train`` on the CLI tests' small corpus writes the
topics.csv and doc_codes.npz captured in tests/data/golden (by make_golden.py), and
with ``--no-pipeline`` (the steps in order) those of tests/data/golden/in_order."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # end-to-end: in `make test`, left out by `make test-quick`
import scipy.sparse as sp

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"


def _make_golden():
    spec = importlib.util.spec_from_file_location("make_golden", GOLDEN / "make_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("extra, golden_dir", [((), GOLDEN), (("--no-pipeline",), GOLDEN / "in_order")])
def test_train_writes_the_golden_topics_and_codes(shared_data, tmp_path, extra, golden_dir):
    run = _make_golden().train_run(tmp_path, shared_data, extra)
    assert (run / "topics.csv").read_text() == (golden_dir / "topics.csv").read_text()
    codes, golden = sp.load_npz(run / "doc_codes.npz"), sp.load_npz(golden_dir / "doc_codes.npz")
    assert codes.shape == golden.shape == (300, 8)
    np.testing.assert_array_equal(codes.toarray(), golden.toarray())
