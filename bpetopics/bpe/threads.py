"""How many threads the CPU work of a step gets: torch's, numpy's BLAS, and the count the
compiled kernels read (:func:`kernel_threads`)."""

from __future__ import annotations

import sys
from contextlib import contextmanager

import torch

_outer_threads = []        # torch's thread counts set aside by torch_on_one_thread


@contextmanager
def torch_on_one_thread(device="cpu"):
    """Run torch's CPU operations on one thread inside the block; :func:`kernel_threads` still
    reports the count set before, for the compiled kernels. A step of the pursuit or of
    the text theta update is many small operations: waking a second OpenMP thread for
    each costs more than it saves (on a busy machine, each wait is a scheduler slice)."""
    count = torch.get_num_threads()
    if torch.device(device).type != "cpu" or count == 1:
        yield
        return
    _outer_threads.append(count)
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(_outer_threads.pop())


#: Multiply-adds of a training step each torch thread should have at least: below, a
#: thread spends more time waking and waiting (spinning, on a busy machine) than
#: computing. The same reasoning as :func:`torch_on_one_thread`, for models whose steps
#: are large matrix products (the image decoders): one thread for a handful of images,
#: every thread for full minibatches.
TORCH_WORK_PER_THREAD = 2**24


def torch_threads_for(work: float, available: int | None = None) -> int:
    """Torch threads for a step of ``work`` multiply-adds: one per
    :data:`TORCH_WORK_PER_THREAD`, at least 1 and at most ``available`` (torch's count)."""
    available = torch.get_num_threads() if available is None else int(available)
    return int(max(1, min(available, work // TORCH_WORK_PER_THREAD)))


@contextmanager
def torch_threads(count: int, device="cpu"):
    """Run torch's CPU operations on ``count`` threads inside the block (no change on a
    GPU, or when torch already has that many)."""
    before = torch.get_num_threads()
    if torch.device(device).type != "cpu" or count == before:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextmanager
def numpy_blas_on_one_thread():
    """Run numpy's and scipy's BLAS on one thread inside the block (threadpoolctl).

    The end-of-epoch topic moves make thousands of small products over the vocabulary
    (dot products of W-vectors, W x T matrix-vector products); OpenBLAS hands vectors
    past about 10,000 elements to its other threads, and waking them for each costs more
    than it saves (`python -m benchmarks speed` measures it). The libraries are found once
    (a ``ThreadpoolController``, found again after new imports): ``threadpool_limits``
    scans every loaded library on each call, 4 ms in a training process (60 ms of a
    15-epoch fit)."""
    with _blas_controller().limit(limits=1, user_api="blas"):
        yield


_controller: list = []   # [(modules imported when made, ThreadpoolController)]


def _blas_controller():
    """threadpoolctl's view of the loaded thread pools, made again when a module has been
    imported since (it may have loaded another BLAS)."""
    from threadpoolctl import ThreadpoolController

    if not _controller or _controller[0][0] != len(sys.modules):
        _controller[:] = [(len(sys.modules), ThreadpoolController())]
    return _controller[0][1]


def kernel_threads() -> int:
    """Threads for the compiled kernels: torch's count outside any torch_on_one_thread."""
    return _outer_threads[0] if _outer_threads else torch.get_num_threads()
