"""CPU cost of PoissBPE's split moves (issue #14), one thread, in one process.

Times the end-of-epoch restart check (``_restart_topics``: pursuit of the check's
sample, and with ``split_moves`` the split gains and deletion losses) on a model fitted
for a few epochs, with split moves on and off, next to the CPU time of one epoch. Then
the 2-means that cuts each topic's documents in two (the largest part of a check), for
each power-iteration tolerance of ``--tolerances``: its CPU time over the topics, how
many documents land in the other half than at the first tolerance, and the summed
log-likelihood gain of the splits.

    python benchmarks/bench_split_moves.py corpora/20ng --topics 50
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics import PoissBPE
from bpetopics.models.poissbpe.topic_split import explained_counts, split_gain
from bpetopics.models.poissbpe.two_means import two_means
from bpetopics.text import load_splits


def two_means_rows(X, model, tolerances, n_docs=2500):
    """Each tolerance's row: (tolerance, CPU s of the 2-means over every topic, documents in
    the other half than at the first tolerance, summed split gain in nats), on the explained
    counts of the first ``n_docs`` training documents under their codes' mixtures."""
    X_sample = X[:n_docs]
    mix = np.asarray(model.decode(model.transform(X_sample)), dtype=np.float64)      # (n, T)
    beta = np.asarray(model.topic_word_, dtype=np.float64).T                         # (W, T)
    explained = explained_counts(X_sample, beta, mix)                                # (nnz, T)
    topics = []
    for t in range(beta.shape[1]):
        R = sp.csr_matrix((explained[:, t], X_sample.indices, X_sample.indptr), shape=X_sample.shape)
        keep = np.flatnonzero(np.asarray(R.sum(1)).ravel() >= 1.0)    # as the check keeps them
        if keep.size >= 2:
            topics.append(R[keep])
    rows, first = [], None
    for tolerance in tolerances:
        two_means(topics[0], tolerance=tolerance)                     # compiled before timing
        start = time.process_time()
        halves = [two_means(R, tolerance=tolerance) for R in topics]
        seconds = time.process_time() - start
        first = halves if first is None else first
        moved = sum(int(min((a != b).sum(), (a == b).sum())) for a, b in zip(halves, first))
        gain = sum(split_gain(np.asarray(R[~second].sum(0)).ravel(), np.asarray(R[second].sum(0)).ravel())
                   for R, second in zip(topics, halves))
        rows.append((tolerance, seconds, moved, sum(R.shape[0] for R in topics), gain))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--tolerances", default="1e-6,1e-3",
                        help="power-iteration tolerances of the 2-means, compared with the first")
    args = parser.parse_args()
    torch.set_num_threads(1)
    X = load_splits(args.corpus)["train"].counts
    model = PoissBPE(n_topics=args.topics, epochs=args.epochs, device="cpu", progress=False,
                     split_moves=False)
    start = time.process_time()
    model.fit(X)
    epoch = (time.process_time() - start) / args.epochs
    model.epochs = 30                                   # the check runs only early in training,
    fitted_epochs, model.epoch_ = model.epoch_, 1       # and at the epochs of its stride
    rows = []
    for moves in (False, True):
        model.split_moves = moves
        start = time.process_time()
        model._restart_topics(X)
        rows.append((moves, time.process_time() - start))
    model.epoch_ = fitted_epochs
    print(f"| T | split_moves | end-of-epoch check, CPU s | one epoch ({X.shape[0]:,} docs), CPU s |")
    print("|---|---|---:|---:|")
    for moves, seconds in rows:
        print(f"| {args.topics} | {moves} | {seconds:.2f} | {epoch:.2f} |")
    tolerances = [float(t) for t in args.tolerances.split(",")]
    print()
    print("| power-iteration tolerance | 2-means over the topics, CPU s | documents in the other half "
          "| summed split gain, nats |")
    print("|---|---:|---:|---:|")
    for tolerance, seconds, moved, total, gain in two_means_rows(X, model, tolerances):
        print(f"| {tolerance:g} | {seconds:.3f} | {moved:,} of {total:,} | {gain:,.1f} |")


if __name__ == "__main__":
    main()
