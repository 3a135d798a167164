"""Start P training processes on this machine and watch them (``bpetopics train --nproc P``).

What ``torchrun --nproc-per-node P`` does for one machine, in-process: each process gets
the environment torchrun would give it (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT on a free local port) and ``threads`` torch threads, then runs
``target(*args)``. The launcher waits for all of them; when one dies (a signal, an
exception) the others lose their connections and stop at their next collective
(:class:`~bpetopics.runs.distributed.RankLostError`); any still running after a grace
period is terminated. A process ending with an error leaves its one-line message for the
launcher, which reports the first failure.

SIGTERM or SIGINT (Ctrl-C) to the launcher is passed on to the processes, which stop as
after Ctrl-C (:class:`Stopped`: the run's lock released, the last checkpoint kept); the
launcher waits for them (killing any still running after :data:`STOP_GRACE_S`) and returns
with ``Outcome.stopped`` set. A process whose launcher dies without a word (``kill -9``)
gets SIGTERM from the kernel (Linux) and stops the same way: none is left behind.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path

from bpetopics.bpe.interruptions import interruptions_kept

#: Seconds the others get to stop by themselves after one process failed.
GRACE_S = 60.0
#: Seconds the processes get to stop (and release the run's lock) after the launcher passed
#: on a SIGTERM or SIGINT, before they are killed.
STOP_GRACE_S = 30.0
#: The signals that stop a training cleanly.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGINT asked this process to stop: a KeyboardInterrupt, so that what
    cleans up after Ctrl-C runs; ``exit_code`` is 128 + the signal's number (143, 130)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextlib.contextmanager
def handled(handler, restore=True):
    """Within, SIGTERM and SIGINT call ``handler`` (in the main thread; elsewhere nothing
    changes), except a signal this process was started ignoring; ``restore=False`` (or a
    function that returns False on the way out) leaves the handlers (or what they set)
    in place."""
    before = {}
    try:
        for s in STOP_SIGNALS:
            if signal.getsignal(s) is not signal.SIG_IGN:
                before[s] = signal.signal(s, handler)
    except ValueError:
        pass
    try:
        yield
    finally:
        for s, previous in before.items() if (restore() if callable(restore) else restore) else ():
            signal.signal(s, previous if previous is not None else signal.SIG_DFL)


@contextlib.contextmanager
def stop_on_signals(once: bool = True, restore: bool = True):
    """Within, SIGTERM and SIGINT raise :class:`Stopped` in the main thread; with ``once``
    the signals after the first are ignored, so that the cleanup it starts runs to its end.
    A signal this process was started ignoring stays ignored; outside the main thread,
    nothing changes. The handlers before are restored on the way out, unless ``restore``
    is False (a process that ends there: a second signal, e.g. the launcher's after a
    Ctrl-C, stays ignored to its end). With ``once``, a process that was stopped keeps
    ignoring them after the block too, so that the cleanup after it (the interruption's
    message, leaving a torch.distributed job) is not cut short by a second signal, e.g.
    torchrun's after a Ctrl-C. A Stopped that a compiled kernel's return turned into a
    SystemError leaves as the Stopped (:mod:`bpetopics.bpe.interruptions`)."""
    stopped = []

    def stop(signum, frame):
        if once:
            stopped.append(signum)
            for s in STOP_SIGNALS:
                with contextlib.suppress(ValueError, OSError):
                    signal.signal(s, signal.SIG_IGN)
        raise Stopped(signum)

    with handled(stop, lambda: restore and not stopped), interruptions_kept():
        yield


def free_port() -> int:
    """A TCP port free on this machine now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: Words in the message of a process that stopped because another one failed.
CONSEQUENCE = "lost contact"


#: Global minibatch under which data-parallel processes on one machine's CPUs gain little
#: or lose: most of a small step is work every process repeats (the topics' softmax and
#: gradient, the priors, Adam), and it grows with W x T (docs/results/scale.md measures
#: where processes pay).
SMALL_BATCH = 1024


def small_batch_note(batch_size, nproc: int, device) -> str | None:
    """The note ``--nproc`` prints when its minibatch is too small for processes to pay
    on CPUs, or None."""
    if nproc < 2 or batch_size is None or int(batch_size) >= SMALL_BATCH or str(device).startswith("cuda"):
        return None
    return (f"Note: with --batch-size {batch_size} most of each step is work every one of the {nproc} "
            f"processes repeats (the topics' softmax and gradient, Adam), so on one machine's CPUs this "
            f"trains little faster than one process, or slower; --batch-size {2 * SMALL_BATCH} or more pays "
            "(docs/scale.md)")


class RankLostError(RuntimeError):
    """A collective failed: another rank died or stopped answering (one-line message).
    Defined here, without torch, so that one-process training need not import
    torch.distributed to catch it."""


def world_from_env() -> tuple[int, int, int] | None:
    """(rank, world size, local rank) that torchrun (or ``--nproc``) set in the
    environment (RANK, WORLD_SIZE, LOCAL_RANK), or None outside a distributed launch."""
    if "WORLD_SIZE" not in os.environ or "RANK" not in os.environ:
        return None
    try:
        world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
        local = int(os.environ.get("LOCAL_RANK", rank))
    except ValueError:
        raise ValueError("RANK, WORLD_SIZE and LOCAL_RANK must be integers (set by torchrun)") from None
    return (rank, world, local) if world > 1 else None


@dataclass
class Outcome:
    """How the P processes ended: ``exitcodes`` (negative: killed by that signal),
    ``messages`` (rank -> its one-line error), ``failed`` (the ranks that ended with a
    non-zero code, in the order the launcher saw them end), ``stopped`` (the signal,
    SIGTERM or SIGINT, that stopped the job through the launcher, or None)."""

    exitcodes: list
    messages: dict = field(default_factory=dict)
    failed: list = field(default_factory=list)
    stopped: int | None = None

    @property
    def ok(self) -> bool:
        return not self.failed

    def describe(self, rank: int) -> str:
        code = self.exitcodes[rank]
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"training process {rank} of {len(self.exitcodes)} was killed ({name})"
        if rank in self.messages:
            return self.messages[rank]
        return f"training process {rank} of {len(self.exitcodes)} stopped with exit code {code}"

    def error(self) -> str:
        """One line naming the cause: a process killed by a signal, else the first
        error that is not another process's lost connection, else the first failure."""
        if self.ok:
            return ""
        for rank in self.failed:
            if self.exitcodes[rank] is not None and self.exitcodes[rank] < 0:
                return self.describe(rank)
        for rank in self.failed:
            if rank in self.messages and CONSEQUENCE not in self.messages[rank]:
                return self.messages[rank]
        return self.describe(self.failed[0])


def _die_with(parent: int) -> None:
    """Ask the kernel for SIGTERM when the launcher ``parent`` dies (Linux; elsewhere
    nothing), and stop now if it already has."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)    # PR_SET_PDEATHSIG
    except (OSError, AttributeError):                   # pragma: no cover - not Linux
        return
    if os.getppid() != parent:                          # it died before the request
        raise Stopped(signal.SIGTERM)


def _worker(rank, nproc, port, threads, errors, target, args, parent=None):
    try:
        with stop_on_signals(restore=False):
            if parent is not None:
                _die_with(parent)
            _run_rank(rank, nproc, port, threads, errors, target, args)
    except Stopped as exc:                  # before or after the target: quietly, the launcher reports it
        sys.exit(exc.exit_code)


def _run_rank(rank, nproc, port, threads, errors, target, args):
    os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(nproc), "LOCAL_RANK": str(rank),
                       "LOCAL_WORLD_SIZE": str(nproc), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    import threading

    import torch
    from tqdm.std import tqdm

    torch.set_num_threads(threads)
    # tqdm's default lock holds a multiprocessing semaphore, which a killed process
    # leaves behind (the resource tracker then warns); a thread lock serves one process
    tqdm.set_lock(threading.RLock())
    from bpetopics.models.poissbpe.compiled.kernels import set_kernel_threads

    set_kernel_threads(threads)
    try:
        with interruptions_kept():
            target(*args)
    except Stopped as exc:                          # the launcher reports it
        sys.exit(exc.exit_code)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            _leave(errors, rank, str(exc.code))
        sys.exit(code)
    except BaseException as exc:   # noqa: BLE001 - everything is reported as one line
        code = getattr(exc, "exit_code", None)
        if hasattr(exc, "format_message"):          # click's errors: their own line
            _leave(errors, rank, exc.format_message())
            sys.exit(code or 2)
        if isinstance(code, int):                   # click's Exit (e.g. 130 after Ctrl-C)
            sys.exit(code)
        message = str(exc).strip() or type(exc).__name__
        _leave(errors, rank, f"training process {rank}: {type(exc).__name__}: {message.splitlines()[0]}")
        sys.exit(2)
    sys.exit(0)


def _leave(errors: str, rank: int, message: str) -> None:
    Path(errors, f"rank{rank}").write_text(message, encoding="utf-8")


def launch(target, args: tuple, nproc: int, threads: int | None = None, grace_s: float = GRACE_S,
           stop_grace_s: float = STOP_GRACE_S) -> Outcome:
    """Run ``target(*args)`` in ``nproc`` spawned processes forming one torch.distributed
    job on this machine; returns their :class:`Outcome`. ``target`` must be importable
    (a module-level function) and its arguments picklable. A process reports a failure
    by raising (its message is kept) or exiting non-zero. SIGTERM or SIGINT meanwhile is
    passed on to the processes, given ``stop_grace_s`` to stop (a second one: killed at
    once) and recorded in ``Outcome.stopped``; none outlives the call."""
    threads = threads or max(1, (os.cpu_count() or 1) // nproc)
    ctx = mp.get_context("spawn")
    port = free_port()
    signals = []

    def note(signum, frame):            # handled in the loop below, between waits
        signals.append(signum)

    with tempfile.TemporaryDirectory(prefix="bpetopics-launch-") as errors, handled(note):
        procs = [ctx.Process(target=_worker, args=(r, nproc, port, threads, errors, target, args, os.getpid()),
                             name=f"bpetopics-rank{r}") for r in range(nproc)]
        try:
            for p in procs:
                p.start()
            failed, stopped = _watch(procs, signals, grace_s, stop_grace_s)
        finally:
            for p in procs:                 # whatever happened, none is left behind
                if p.pid is not None and p.is_alive():
                    p.kill()
            for p in procs:
                if p.pid is not None:
                    p.join()
        messages = {int(f.name[4:]): f.read_text(encoding="utf-8") for f in Path(errors).glob("rank*")}
    return Outcome([p.exitcode for p in procs], messages, failed, stopped)


#: Seconds between looks at the signals received while waiting for the processes.
_POLL_S = 0.2


def _watch(procs, signals: list, grace_s: float, stop_grace_s: float):
    """Wait for the started ``procs``: (the ranks that failed, in order; the stop signal or
    None). After a failure the others get ``grace_s``; after a signal in ``signals`` (the
    launcher's, appended by its handler) they get it passed on and ``stop_grace_s``; a
    second signal, or the end of a grace period, kills those still running."""
    failed, deadline, stopped, seen = [], None, None, 0
    running = {p.sentinel: r for r, p in enumerate(procs)}
    while running:
        if len(signals) > seen:
            seen = len(signals)
            if stopped is None:
                stopped = signals[0]
                for sentinel, r in running.items():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(procs[r].pid, stopped)
                deadline = time.monotonic() + stop_grace_s
            else:
                deadline = time.monotonic()
        timeout = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
        ready = wait(list(running), timeout)
        if not ready and deadline is not None and time.monotonic() >= deadline:   # the grace period is over
            for sentinel, r in running.items():
                if stopped is not None:
                    procs[r].kill()
                else:
                    procs[r].terminate()
            deadline = time.monotonic() + 3600
            continue
        for sentinel in ready:
            r = running.pop(sentinel)
            procs[r].join()
            if procs[r].exitcode != 0:
                failed.append(r)
                if deadline is None:
                    deadline = time.monotonic() + grace_s
    return failed, stopped
