"""The step's all-reduce for training processes on one machine, through shared memory.

A gloo ``all_reduce`` over TCP costs about a millisecond whatever its size (gloo's threads
wake each other several times a call), as much as a small training step
(``benchmarks/bench_allreduce.py``; docs/scale.md).
Processes on one machine can instead meet in memory they share, the way NCCL does
between the GPUs of one node. Each of the P ranks copies its vector
into its own slot of a shared buffer, tells every other rank so by a byte through a named
pipe, waits for the others' bytes, and sums the P slots in rank order, 0 to P-1: every
rank computes the same sums, bit for bit (the ranks must keep the same model).

Ordering. A pipe's write and read are system calls that take the pipe's lock, so what a
rank stored before writing its byte is visible to the rank that has read that byte, on
any processor. Two buffers alternate by call: a rank that writes call g + 1 into buffer
(g + 1) mod 2 has read every rank's byte of call g, sent after that rank finished reading
call g - 1 from the same buffer.

Failures. Each ordered pair of ranks has its own pipe, so a rank that dies closes the
write ends of its pipes and its peers read end-of-file at once (the gloo path stops the
others the same way, through its closed connections); a rank that stops answering
without dying is given up after the job's timeout. Either raises
:class:`~bpetopics.runs.launch.RankLostError`.

:func:`open_shared_sum` is collective (every rank calls it, through the job's
torch.distributed group) and returns None when the ranks are not all on this machine (a
token rank 0 writes must be readable by all) or the shared buffer cannot be had: the
group then sums through torch.distributed as before. ``BPETOPICS_DIST_SUM=gloo`` turns
it off.
"""

from __future__ import annotations

import mmap
import os
import secrets
import select
import shutil
import tempfile
import time

import numpy as np
import torch

from bpetopics.runs.launch import RankLostError

#: Bytes of one rank's slot; longer vectors are summed a slot's length at a time.
SLOT_BYTES = 2 << 20
#: Seconds between checks of the timeout while waiting for the other ranks.
POLL_S = 1.0


def _shared_directory() -> str:
    """A fresh directory in memory-backed /dev/shm where there is one, else the temp dir."""
    parent = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.mkdtemp(prefix="bpetopics-sum-", dir=parent)


class SharedMemorySum:
    """Sums of a vector across the P ranks of one machine (see the module's text).

    Parameters
    ----------
    rank, size : int
    buffer : mmap.mmap
        2 x P equal slots (:data:`SLOT_BYTES` each), shared by all ranks.
    readers, writers : dict
        Read end of the pipe from each other rank, write end of the pipe to each.
    timeout : float
        Seconds to wait for the others before giving up.
    """

    def __init__(self, rank: int, size: int, buffer: mmap.mmap, readers: dict, writers: dict,
                 timeout: float):
        self.rank, self.size, self.timeout = rank, size, float(timeout)
        self._buffer = buffer
        self._slots = np.frombuffer(buffer, dtype=np.uint8).reshape(2, size, -1)
        self._readers, self._writers = readers, writers
        self._calls = 0
        self._received = {peer: 0 for peer in readers}          # bytes read from each rank
        self._closed = set()                                    # ranks whose pipe has ended
        self._poll = select.poll()
        self._peer_of_fd = {}
        for peer, fd in readers.items():
            self._poll.register(fd, select.POLLIN)
            self._peer_of_fd[fd] = peer

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        """In place: ``tensor`` (a contiguous CPU tensor, the same shape and dtype on every
        rank) becomes the sum of all ranks' tensors. Returns it."""
        flat = tensor.detach().view(-1).numpy()
        step = self._slots.shape[2] // flat.itemsize
        for begin in range(0, flat.size, step):
            self._sum_part(flat[begin:begin + step])
        return tensor

    def _sum_part(self, part: np.ndarray) -> None:
        self._calls += 1
        slots = self._slots[self._calls % 2, :, :part.nbytes].view(part.dtype)    # (P, n)
        slots[self.rank] = part
        for peer, fd in self._writers.items():
            try:
                os.write(fd, b"\1")
            except BrokenPipeError:
                raise self._lost(f"rank {peer} closed its connection") from None
        self._wait_for_all(self._calls)
        np.add(slots[0], slots[1], out=part)      # every rank: the same sums in rank order
        for other in range(2, self.size):
            np.add(part, slots[other], out=part)

    def _wait_for_all(self, calls: int) -> None:
        start = time.monotonic()
        while True:
            late = [peer for peer, n in self._received.items() if n < calls]
            if not late:
                return
            gone = [peer for peer in late if peer in self._closed]
            if gone:
                raise self._lost(f"rank {gone[0]} closed its connection")
            events = self._poll.poll(POLL_S * 1000)
            for fd, _ in events:
                peer = self._peer_of_fd[fd]
                got = os.read(fd, 4096)
                self._received[peer] += len(got)
                if not got:                      # end of file: that rank has closed its end
                    self._closed.add(peer)
                    self._poll.unregister(fd)
            if not events and time.monotonic() - start > self.timeout:
                raise self._lost(f"rank {late[0]} did not answer in {self.timeout:.0f} s")

    def _lost(self, why: str) -> RankLostError:
        return RankLostError(f"rank {self.rank} of {self.size} lost contact with the other training "
                             f"processes ({why})")

    def close(self) -> None:
        for fd in list(self._readers.values()) + list(self._writers.values()):
            os.close(fd)
        self._readers, self._writers = {}, {}
        self._slots = None
        try:
            self._buffer.close()
        except BufferError:
            # views of it live on in an interruption's traceback (Ctrl-C in a sum): the
            # mapping ends with the process, and its file was removed once all had mapped it
            pass


def _pipe(directory: str, sender: int, receiver: int) -> str:
    return os.path.join(directory, f"{sender}-to-{receiver}")


def open_shared_sum(rank: int, size: int, timeout: float,
                    slot_bytes: int = SLOT_BYTES) -> SharedMemorySum | None:
    """Collective: the job's :class:`SharedMemorySum`, or None where it cannot be used
    (ranks on several machines, no room for the buffer, ``BPETOPICS_DIST_SUM=gloo``, one
    rank). Uses the initialised torch.distributed default group to agree."""
    import torch.distributed as dist

    if size < 2 or os.environ.get("BPETOPICS_DIST_SUM", "").lower() == "gloo":
        return None
    place = [None]
    if rank == 0:
        place[0] = _prepare(size, slot_bytes)
    dist.broadcast_object_list(place, src=0)
    directory, token = place[0] if place[0] is not None else (None, None)
    mine = _attach_buffer(directory, token)
    answers = [None] * size
    dist.all_gather_object(answers, mine is not None)
    if not all(answers):
        if mine is not None:
            mine.close()
        if rank == 0 and directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        return None
    peers = [r for r in range(size) if r != rank]
    # read ends first (a FIFO opened for writing needs a reader), then the write ends
    readers = {p: os.open(_pipe(directory, p, rank), os.O_RDONLY | os.O_NONBLOCK) for p in peers}
    dist.barrier()
    writers = {p: os.open(_pipe(directory, rank, p), os.O_WRONLY | os.O_NONBLOCK) for p in peers}
    dist.barrier()
    if rank == 0:           # everything is open or mapped: the names are no longer needed
        shutil.rmtree(directory, ignore_errors=True)
    return SharedMemorySum(rank, size, mine, readers, writers, timeout)


def _prepare(size: int, slot_bytes: int):
    """Rank 0: the directory with the buffer, the pipes and a token; None when it fails."""
    directory = None
    try:
        directory = _shared_directory()
        with open(os.path.join(directory, "buffer"), "wb") as f:
            os.posix_fallocate(f.fileno(), 0, 2 * size * slot_bytes)   # no room: fail now, not later
        for sender in range(size):
            for receiver in range(size):
                if sender != receiver:
                    os.mkfifo(_pipe(directory, sender, receiver))
        token = secrets.token_hex(16)
        with open(os.path.join(directory, "token"), "w") as f:
            f.write(token)
        return directory, token
    except (OSError, AttributeError):        # AttributeError: no posix_fallocate / mkfifo here
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        return None


def _attach_buffer(directory, token) -> mmap.mmap | None:
    """The shared buffer, mapped, when this rank sees rank 0's directory and token."""
    if directory is None:
        return None
    try:
        with open(os.path.join(directory, "token")) as f:
            if f.read() != token:
                return None
        with open(os.path.join(directory, "buffer"), "r+b") as f:
            return mmap.mmap(f.fileno(), 0)
    except OSError:
        return None
