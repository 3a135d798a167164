"""PoissBPE's ``backend``: the compiled kernels and their torch twins train the same model."""

import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics import PoissBPE
from bpetopics.models.poissbpe.compiled import kernels


def _corpus(seed=0):
    rng = np.random.default_rng(seed)
    themes = rng.dirichlet(np.full(40, 0.1), size=4)
    docs = [rng.multinomial(30, themes[i % 4]) for i in range(120)]
    return sp.csr_matrix(np.array(docs, dtype=np.float64))


def test_the_torch_backend_trains_the_numba_backends_model():
    if not kernels.available("cpu"):
        pytest.skip("numba is not installed")
    X = _corpus()
    # the steps in order on both sides (the pipelined schedule needs the compiled pursuit)
    params = dict(n_topics=4, n_bits=12, epochs=3, batch_size=40, random_state=0, device="cpu",
                  progress=False, pipeline=False)
    fast = PoissBPE(**params).fit(X)
    slow = PoissBPE(backend="torch", **params).fit(X)
    assert fast.backend_ == "numba" and slow.backend_ == "torch"
    np.testing.assert_allclose(slow.topic_word_, fast.topic_word_, atol=1e-3)
    assert (slow.codes_ != fast.codes_).mean() < 0.02
    for a, b in zip(slow.history_, fast.history_):
        assert abs(a["objective"] - b["objective"]) < 1e-3 * abs(b["objective"])


def test_auto_resolves_where_the_model_runs():
    assert kernels.resolve_backend("auto", "cpu") == ("numba" if kernels.numba is not None else "torch")
    assert kernels.resolve_backend("auto", "cuda") == "torch"
    assert kernels.resolve_backend("torch", "cpu") == "torch"


def test_numba_where_it_cannot_run_is_one_clear_error(monkeypatch):
    with pytest.raises(ValueError, match="backend='numba' cannot run here .*device is cuda"):
        kernels.resolve_backend("numba", "cuda")
    monkeypatch.setattr(kernels, "numba", None)
    with pytest.raises(ValueError, match="numba is not installed"):
        kernels.resolve_backend("numba", "cpu")
    with pytest.raises(ValueError, match="backend"):
        PoissBPE(backend="fortran", progress=False).fit(_corpus())
