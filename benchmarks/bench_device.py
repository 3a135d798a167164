"""PoissBPE on CPU and on CUDA (when present), on a planted corpus that needs no data files.

Prints seconds per epoch, encoding speed and whether the two devices agree. Run:
``python benchmarks/bench_device.py [--docs 20000] [--epochs 3]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics import PoissBPE


def planted(n_docs, n_words=2000, n_topics=20, doc_len=60, seed=0):
    """Documents from 20 block topics, each document mixing one or two of them."""
    rng = np.random.default_rng(seed)
    block = n_words // n_topics
    beta = np.full((n_topics, n_words), 0.05 / n_words)
    for t in range(n_topics):
        beta[t, t * block:(t + 1) * block] += rng.dirichlet(np.ones(block)) * 0.95
    beta /= beta.sum(1, keepdims=True)
    first = rng.integers(n_topics, size=n_docs)
    second = np.where(rng.random(n_docs) < 0.4, rng.integers(n_topics, size=n_docs), first)
    mix = (np.eye(n_topics)[first] + np.eye(n_topics)[second]) / 2
    lengths = rng.poisson(doc_len, size=n_docs) + 1
    counts = np.stack([rng.multinomial(n, m @ beta) for n, m in zip(lengths, mix)])
    return sp.csr_matrix(counts)


def run(device, X, epochs):
    model = PoissBPE(epochs=epochs, random_state=0, device=device, progress=False)
    t0 = time.perf_counter()
    model.fit(X)
    if device == "cuda":
        torch.cuda.synchronize()
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    codes = model.transform(X)
    encode = time.perf_counter() - t0
    return model, codes, fit / epochs, X.shape[0] / encode


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    X = planted(args.docs)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    results = {d: run(d, X, args.epochs) for d in devices}
    print(f"| device | seconds per epoch | encoding docs/s | mean active bits |")
    print(f"|---|---|---|---|")
    for d, (model, codes, per_epoch, rate) in results.items():
        name = torch.cuda.get_device_name() if d == "cuda" else f"cpu ({torch.get_num_threads()} threads)"
        print(f"| {name} | {per_epoch:.2f} | {rate:,.0f} | {codes.sum(1).mean():.2f} |")
    if "cuda" in results:
        cpu, gpu = results["cpu"][0], results["cuda"][0]
        diff = np.abs(cpu.topic_word_ - gpu.topic_word_).max()
        same = (results["cpu"][1] == results["cuda"][1]).all(1).mean()
        print(f"\nCPU vs CUDA after {args.epochs} epochs: max |topic_word difference| {diff:.2e}, "
              f"same code for {same:.1%} of documents (float arithmetic differs between devices)")


if __name__ == "__main__":
    main()
