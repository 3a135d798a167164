"""The helper thread that takes part in training's pursuits (:mod:`~bpetopics.models.poissbpe.compiled.rows_pursuit`, :mod:`bpetopics.models.poissbpe.pipelined_steps`): a plain thread fed by a queue, one
per process."""

from __future__ import annotations

import atexit
import os
import queue
import threading


class PursuitHelper:
    """A second thread that takes part in the pursuits handed to it (:meth:`hand`: it
    calls their ``run``). Whoever reads a result calls the pursuit's ``finish``, which
    does whatever the helper has not taken, so nothing waits on the helper's Python: a
    helper that starts late, or not at all, only leaves more to the other thread. One
    per process (:func:`helper`)."""

    def __init__(self):
        self._jobs = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="bpetopics-pursuit-helper", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job.run()

    def stop(self, timeout: float = 10.0) -> None:
        """End the thread once its current job is done (waits up to ``timeout`` s)."""
        self._jobs.put(None)
        self._thread.join(timeout)

    def hand(self, job) -> None:
        """Queue ``job`` (a :class:`~bpetopics.models.poissbpe.compiled.rows_pursuit.RowsPursuit`) for the
        helper thread."""
        self._jobs.put(job)


_helper = None                  # (pid, PursuitHelper)


def helper() -> PursuitHelper:
    """This process's :class:`PursuitHelper`, started on first use (and again in a forked
    child: threads do not survive a fork)."""
    global _helper
    if _helper is None or _helper[0] != os.getpid():
        _helper = (os.getpid(), PursuitHelper())
        atexit.register(_stop, _helper)
    return _helper[1]


def _stop(entry) -> None:
    """At exit: let the helper end its job and stop, before the interpreter shuts down
    (a daemon thread still inside a compiled call then would abort the process)."""
    pid, pursuit_helper = entry
    if pid == os.getpid():
        pursuit_helper.stop()
