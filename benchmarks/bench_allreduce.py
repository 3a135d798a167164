"""The floor under data-parallel training on one machine: one all-reduce a step.

Two processes (CPU, one torch thread each) sum a float32 vector of each size given, 200
times after 20 warm-up calls, through gloo's ``all_reduce`` (TCP) and through the shared
memory the training processes of one machine use (:mod:`bpetopics.runs.shared_memory_sum`),
and print a markdown table of the wall and CPU milliseconds per call on each rank.
`bpetopics train --nproc P` makes one such call a minibatch step (gradients, prior
statistics and totals in one vector), so a step must cost well above this for processes
to pay.

Run: ``python benchmarks/bench_allreduce.py [SIZE ...]`` (default 1000 50000 200000).
"""

from __future__ import annotations

import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

CALLS, WARM_UP = 200, 20


def _rank(rank: int, size: int, port: int, results) -> None:
    from bpetopics.runs.distributed import TorchGroup

    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    group = TorchGroup(shared=True)
    assert group.transport == "shared memory"
    x = torch.randn(size)
    for transport, call in (("gloo", dist.all_reduce), ("shared memory", group.sum_)):
        for _ in range(WARM_UP):
            call(x)
        dist.barrier()
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(CALLS):
            call(x)
        results[transport, rank] = ((time.perf_counter() - wall) / CALLS * 1e3,
                                    (time.process_time() - cpu) / CALLS * 1e3)
    group.close()
    dist.destroy_process_group()


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 50_000, 200_000]
    print("| floats | sum through | rank 0 wall ms | rank 0 CPU ms | rank 1 wall ms | rank 1 CPU ms |")
    print("|---:|---|---:|---:|---:|---:|")
    with mp.Manager() as manager:
        for i, size in enumerate(sizes):
            results = manager.dict()
            mp.spawn(_rank, args=(size, 29533 + i, results), nprocs=2)
            for transport in ("gloo", "shared memory"):
                (w0, c0), (w1, c1) = results[transport, 0], results[transport, 1]
                print(f"| {size:,} | {transport} | {w0:.3f} | {c0:.3f} | {w1:.3f} | {c1:.3f} |", flush=True)


if __name__ == "__main__":
    main()
