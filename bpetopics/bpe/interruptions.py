"""Ctrl-C during a compiled kernel: the interruption itself, not a SystemError.

A signal handler (Python's own for Ctrl-C, or :func:`bpetopics.runs.launch.stop_on_signals`)
runs between bytecodes, which can be inside the C code that converts a numba kernel's
arguments or results to Python objects. The handler's KeyboardInterrupt is then set
while the kernel returns a result, and CPython reports ``SystemError: CPUDispatcher(...)
returned a result with an exception set``, the KeyboardInterrupt only as its cause. Code
that cleans up after Ctrl-C (keeps the last checkpoint, exits with 130) catches
KeyboardInterrupt, so :func:`interruptions_kept` gives it the original back.
"""

from __future__ import annotations

from contextlib import contextmanager


def interruption_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt that ``exc`` (a SystemError) was raised from, or None: the
    first one in its chain of causes and contexts."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


@contextmanager
def interruptions_kept():
    """Within, a SystemError raised from a KeyboardInterrupt leaves as that
    KeyboardInterrupt (a :class:`~bpetopics.runs.launch.Stopped` keeps its exit code)."""
    try:
        yield
    except SystemError as exc:
        interruption = interruption_behind(exc)
        if interruption is None:
            raise
        raise interruption from None
