"""Time spent compiling the CPU kernels, kept apart from training time.

numba compiles a kernel on its first call for each argument type and keeps the machine
code in its on-disk cache, so only a machine's first run pays for it (tens of CPU
seconds for every kernel a training uses; a later run loads them in well under a second).
Training must not report that time as an epoch's: :class:`CompileClock` listens to
numba's ``numba:compile`` events (fired only when a kernel is really compiled, never
for a cache load) and sums the wall time of the outermost compilations, so that
``seconds`` in a model's history is training alone and ``compile_seconds`` beside it
says what compiling cost. The first compilation of a process announces itself once,
through the first listening clock given an ``announce`` function (a progress bar's
writer), so that a first run does not look stuck.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

#: What a first compilation says (once per process).
ANNOUNCEMENT = ("Compiling the CPU kernels for this machine (once: later runs load them "
                "from numba's cache)...")


class CompileClock:
    """Sums the wall seconds of numba's outermost compilations while it listens.

    Compilations nest (a kernel compiles the kernels it calls); only the outermost
    counts, so nothing is counted twice. numba compiles under one global lock, so the
    depth needs no more than a lock of its own for the helper threads' calls.

    Only numba compiles at run time, and only a model's ``compiled/`` package imports it:
    when numba is not loaded there is nothing to count, so this module never imports it.
    """

    _announced = False

    def __init__(self, announce=None):
        self.seconds = 0.0
        self.announce = announce
        self._depth = 0
        self._started = 0.0
        self._lock = threading.Lock()

    # called at a compilation's start and end
    def on_start(self, event):
        with self._lock:
            self._depth += 1
            first = self._depth == 1 and self.announce is not None and not CompileClock._announced
            if self._depth == 1:
                self._started = time.perf_counter()
            if first:
                CompileClock._announced = True
        if first:
            self.announce(ANNOUNCEMENT)

    def on_end(self, event):
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._started

    @contextmanager
    def listening(self):
        """Count the compilations made inside the block (nothing while numba is not
        loaded)."""
        event = sys.modules.get("numba.core.event")
        if event is None:
            yield self
            return
        # numba's Listener interface: ``notify`` calls on_start and on_end
        listener = type("CompileListener", (event.Listener,),
                        {"on_start": lambda _, e: self.on_start(e), "on_end": lambda _, e: self.on_end(e)})()
        event.register("numba:compile", listener)
        try:
            yield self
        finally:
            event.unregister("numba:compile", listener)
