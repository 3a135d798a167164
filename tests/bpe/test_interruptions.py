"""Ctrl-C while a compiled kernel returns: CPython reports a SystemError raised from the
KeyboardInterrupt; training and ``stop_on_signals`` give the KeyboardInterrupt back."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from bpetopics.bpe.interruptions import interruption_behind, interruptions_kept
from bpetopics.models.poissbpe import PoissBPE
from bpetopics.runs.launch import Stopped, stop_on_signals


def _returned_with_interrupt_set(interrupt):
    """What CPython raises when a C function returns while a signal handler's exception
    is set (``_Py_CheckFunctionResult``): a SystemError whose cause is that exception."""
    raise SystemError("CPUDispatcher(<function kernel>) returned a result with an exception set") from interrupt


def test_the_interruption_is_found_behind_causes_and_contexts():
    interrupt = KeyboardInterrupt()
    try:
        _returned_with_interrupt_set(interrupt)
    except SystemError as exc:
        assert interruption_behind(exc) is interrupt
        try:
            raise RuntimeError("while cleaning up")        # context, not cause
        except RuntimeError as later:
            assert interruption_behind(later) is interrupt
    assert interruption_behind(SystemError("a real one")) is None


def test_a_real_system_error_is_left_alone():
    with pytest.raises(SystemError, match="a real one"), interruptions_kept():
        raise SystemError("a real one")


@pytest.fixture
def own_handlers():
    """Python's own SIGINT and SIGTERM handlers within the test (another may have left
    one ignored), this process's put back after it."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    for s, handler in before.items():
        signal.signal(s, handler)


def test_stop_on_signals_gives_back_the_stop_with_its_exit_code(own_handlers):
    with pytest.raises(Stopped) as caught, stop_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)                                   # the handler raises at once
            raise AssertionError("no Stopped")              # pragma: no cover
        except Stopped as stopped:
            _returned_with_interrupt_set(stopped)
    assert caught.value.exit_code == 130
    # stopped: a second signal (torchrun's after a Ctrl-C) cannot cut the cleanup short
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN and signal.getsignal(signal.SIGTERM) is signal.SIG_IGN


def test_stop_on_signals_restores_the_handlers_when_not_stopped(own_handlers):
    with stop_on_signals():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_fit_gives_back_the_interruption(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(60, 30)).astype(np.float64)
    model = PoissBPE(3, n_bits=8, epochs=5, batch_size=20, random_state=0, device="cpu", progress=False)
    interrupt = KeyboardInterrupt()
    epochs = []

    def interrupted_second_epoch(self, batches):
        if epochs:
            _returned_with_interrupt_set(interrupt)
        epochs.append(1)
        return real(self, batches)

    real = PoissBPE._epoch_steps
    monkeypatch.setattr(PoissBPE, "_epoch_steps", interrupted_second_epoch)
    with pytest.raises(KeyboardInterrupt) as caught:
        model.fit(X)
    assert caught.value is interrupt and model.epoch_ == 1
