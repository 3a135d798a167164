"""The compile clock counts numba's compilations, outermost only, announces the first
once, and a training's history keeps compiling apart from its epochs."""

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from bpetopics.bpe.compile_clock import ANNOUNCEMENT, CompileClock  # noqa: E402


def _fresh_kernels():
    """Two new numba functions (never compiled in this process), the outer calling the inner."""
    @numba.njit
    def inner(x):
        return x * 2.0

    @numba.njit
    def outer(x):
        total = 0.0
        for v in x:
            total += inner(v)
        return total

    return outer


def test_the_clock_counts_a_compilation_and_announces_it_once(monkeypatch):
    monkeypatch.setattr(CompileClock, "_announced", False)
    said = []
    with CompileClock(said.append).listening() as clock:
        assert _fresh_kernels()(np.arange(4.0)) == 12.0
        first = clock.seconds
        _fresh_kernels()(np.arange(3.0))          # another compilation: counted, not announced
    assert first > 0 and clock.seconds > first
    assert said == [ANNOUNCEMENT]


def test_a_compiled_call_adds_nothing():
    kernel = _fresh_kernels()
    kernel(np.arange(4.0))
    with CompileClock().listening() as clock:
        kernel(np.arange(5.0))                     # the same types: no compilation
    assert clock.seconds == 0.0


def test_nested_compilations_count_once():
    """The outer kernel compiles the inner inside its own compilation: the clock's time
    is at most the wall time of the call."""
    import time

    kernel = _fresh_kernels()
    with CompileClock().listening() as clock:
        start = time.perf_counter()
        kernel(np.arange(4.0))
        wall = time.perf_counter() - start
    assert 0 < clock.seconds <= wall
