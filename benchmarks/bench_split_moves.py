"""CPU cost of PoissBPE's split moves (issue #14), one thread, in one process.

Times the end-of-epoch restart check (``_restart_topics``: pursuit of a 1,000-document
sample, and with ``split_moves`` the split gains and deletion losses) on a model fitted
for a few epochs, with split moves on and off, next to the CPU time of one epoch.

    python benchmarks/bench_split_moves.py corpora/20ng --topics 50
"""

from __future__ import annotations

import argparse
import time

import torch

from bpetopics import PoissBPE
from bpetopics.text import load_splits


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    X = load_splits(args.corpus)["train"].counts
    model = PoissBPE(n_topics=args.topics, epochs=args.epochs, device="cpu", progress=False,
                     split_moves=False)
    start = time.process_time()
    model.fit(X)
    epoch = (time.process_time() - start) / args.epochs
    model.epochs = 30                                   # the check runs only early in training
    rows = []
    for moves in (False, True):
        model.split_moves = moves
        start = time.process_time()
        model._restart_topics(X)
        rows.append((moves, time.process_time() - start))
    print(f"| T | split_moves | end-of-epoch check, CPU s | one epoch ({X.shape[0]:,} docs), CPU s |")
    print("|---|---|---:|---:|")
    for moves, seconds in rows:
        print(f"| {args.topics} | {moves} | {seconds:.2f} | {epoch:.2f} |")


if __name__ == "__main__":
    main()
