"""The all-reduce through shared memory of processes on one machine
(runs/shared_memory_sum.py): every rank gets the same sums, bit for bit, those of the
ranks' vectors added in rank order, whatever the vector's length against a slot's; a rank
that stops answering is given up with one line; where one rank cannot map the buffer (on
another machine) none uses it; nothing is left in the shared directory."""

from __future__ import annotations

import glob
import os
import time

import numpy as np
import torch

from bpetopics.runs.launch import launch


def _vectors(rank: int):
    rng = np.random.default_rng(rank)
    return [rng.standard_normal(1000).astype(np.float32),        # fits a slot
            rng.standard_normal(5000),                            # float64, five slots' worth
            np.zeros(0, np.float32)]


def _sum_rank(out_dir: str) -> None:
    import torch.distributed as dist

    from bpetopics.runs.distributed import TorchGroup
    from bpetopics.runs.shared_memory_sum import open_shared_sum

    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    shared = open_shared_sum(rank, size, timeout=60, slot_bytes=8192)
    assert shared is not None
    results = {}
    for call in range(7):             # calls alternate between the two buffers
        for i, vector in enumerate(_vectors(rank)):
            tensor = torch.from_numpy(vector * (call + 1))
            assert shared.sum_(tensor) is tensor
            results[f"{call}_{i}"] = tensor.numpy().copy()
    shared.close()
    os.environ["BPETOPICS_DIST_SUM"] = "gloo"
    results["off"] = np.array([open_shared_sum(rank, size, timeout=60) is None])
    del os.environ["BPETOPICS_DIST_SUM"]
    from bpetopics.runs import shared_memory_sum

    attach = shared_memory_sum._attach_buffer
    if rank == size - 1:                # as a rank on another machine: rank 0's folder is not there
        shared_memory_sum._attach_buffer = lambda directory, token: None
    results["elsewhere"] = np.array([open_shared_sum(rank, size, timeout=60) is None])
    shared_memory_sum._attach_buffer = attach
    group = TorchGroup(shared=True)
    results["transport"] = np.array([group.transport == "shared memory"])
    group.close()
    np.savez(os.path.join(out_dir, f"rank{rank}.npz"), **results)
    dist.destroy_process_group()


def _silent_rank() -> None:
    import torch.distributed as dist

    from bpetopics.runs.shared_memory_sum import open_shared_sum

    dist.init_process_group("gloo")
    shared = open_shared_sum(dist.get_rank(), dist.get_world_size(), timeout=1)
    if dist.get_rank() == 1:
        time.sleep(4)                 # never sums: rank 0 must give up by itself
        return
    shared.sum_(torch.ones(10))


def test_every_rank_gets_the_rank_order_sums(tmp_path):
    before = set(glob.glob("/dev/shm/bpetopics-sum-*")) | set(glob.glob("/tmp/bpetopics-sum-*"))
    outcome = launch(_sum_rank, (str(tmp_path),), nproc=3, threads=1)
    assert outcome.ok, outcome.error()
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(3)]
    for call in range(7):
        for i in range(3):
            parts = [v * (call + 1) for v in (_vectors(r)[i] for r in range(3))]
            expected = (parts[0] + parts[1]) + parts[2]
            for r in range(3):
                got = ranks[r][f"{call}_{i}"]
                assert got.dtype == expected.dtype
                assert np.array_equal(got, expected), (call, i, r)
    assert all(bool(ranks[r]["off"][0]) for r in range(3))        # BPETOPICS_DIST_SUM=gloo
    assert all(bool(ranks[r]["elsewhere"][0]) for r in range(3))  # one rank cannot see the buffer: none use it
    assert all(bool(ranks[r]["transport"][0]) for r in range(3))
    after = set(glob.glob("/dev/shm/bpetopics-sum-*")) | set(glob.glob("/tmp/bpetopics-sum-*"))
    assert after <= before                                        # the directory is gone


def test_a_silent_rank_is_given_up_with_one_line():
    start = time.monotonic()
    outcome = launch(_silent_rank, (), nproc=2, threads=1)
    assert not outcome.ok
    assert outcome.messages[0].endswith("RankLostError: rank 0 of 2 lost contact with the other training "
                                        "processes (rank 1 did not answer in 1 s)")
    assert time.monotonic() - start < 30


def test_close_while_a_view_of_the_buffer_lives():
    """Ctrl-C in a sum leaves views of the buffer in the traceback's frames: closing the
    group then must not fail (``mmap.close`` refuses while views exist)."""
    import mmap

    from bpetopics.runs.shared_memory_sum import SharedMemorySum

    read_end, write_end = os.pipe()
    buffer = mmap.mmap(-1, 2 * 2 * 64)
    shared = SharedMemorySum(0, 2, buffer, {1: read_end}, {1: write_end}, timeout=1)
    held = np.frombuffer(buffer, dtype=np.uint8)          # as a frame of the traceback holds one
    shared.close()
    for fd in (read_end, write_end):                     # the pipes are closed all the same
        try:
            os.fstat(fd)
            raise AssertionError(f"fd {fd} still open")
        except OSError:
            pass
    assert held.shape == (256,)
