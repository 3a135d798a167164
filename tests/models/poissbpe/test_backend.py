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


def _count_compiled_calls(monkeypatch) -> list:
    """Replace every numba function of the compiled package (module attributes, and the
    serial/parallel pairs) by one that records its name, then runs it: the list of names."""
    import importlib
    import pkgutil

    from numba.core.dispatcher import Dispatcher

    calls = []

    def counted(name, function):
        def call(*args, **kwargs):
            calls.append(name)
            return function(*args, **kwargs)
        return call

    package = importlib.import_module("bpetopics.models.poissbpe.compiled")
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, value in list(vars(module).items()):
            if isinstance(value, Dispatcher):
                monkeypatch.setattr(module, name, counted(name, value))
            elif isinstance(value, tuple) and value and all(isinstance(v, Dispatcher) for v in value):
                monkeypatch.setattr(module, name, tuple(counted(name, v) for v in value))
    return calls


def _wait_for_the_helper():
    """The pipelined fit can leave the helper thread a late call on a pursuit this thread
    already finished (it finds no share left): let the helper's queue drain first."""
    import threading

    from bpetopics.models.poissbpe.compiled import pursuit_helper

    drained = threading.Event()

    class Marker:
        def run(self):
            drained.set()

    pursuit_helper.helper().hand(Marker())
    assert drained.wait(30)


def test_the_torch_backend_calls_no_compiled_kernel_anywhere(monkeypatch):
    """backend="torch" is torch in training, encoding and every topic output; the numba
    backend's model calls the compiled functions in the same outputs (the count sees them)."""
    if not kernels.available("cpu"):
        pytest.skip("numba is not installed")
    X = _corpus(1)
    params = dict(n_topics=4, n_bits=12, epochs=2, batch_size=40, random_state=0, device="cpu",
                  progress=False)
    fast = PoissBPE(**params).fit(X)
    _wait_for_the_helper()
    calls = _count_compiled_calls(monkeypatch)
    model = PoissBPE(backend="torch", **params).fit(X)
    codes = model.transform(X)
    model.doc_topic(X)
    model.doc_topic(X, posterior="map")
    model.posterior_topic(X, codes)
    model.perplexity(X)
    model.score(X)
    assert model.backend_ == "torch" and calls == []
    fast.posterior_topic(X, fast.transform(X))
    fast.perplexity(X)
    assert calls                                  # the count does see compiled calls
