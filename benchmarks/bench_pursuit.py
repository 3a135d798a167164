"""Speed and memory of PoissBPE on 20 Newsgroups with the default settings.

Prints: seconds per training epoch, documents per second when encoding (greedy pursuit)
the test split, the same encoding by the slow per-document reference (on a sample, as a
ratio), and peak memory. Run: ``python benchmarks/bench_pursuit.py [--epochs 3]``.
Needs the 20 Newsgroups data (offline: SCIKIT_LEARN_DATA and NLTK_DATA, as `make test` sets).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch

from bpetopics import PoissBPE
from bpetopics.bpe.pursuit import greedy_pursuit, reference_pursuit
from bpetopics.text import prepare_corpus


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=None,
                        help="training epochs (default: the model's default)")
    parser.add_argument("--reference-docs", type=int, default=100,
                        help="documents encoded by the slow reference")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    t0 = time.perf_counter()
    splits = prepare_corpus("20newsgroups")
    train, test = splits["train"].counts, splits["test"].counts
    prep = time.perf_counter() - t0

    kwargs = {} if args.epochs is None else {"epochs": args.epochs}
    model = PoissBPE(random_state=0, device="cpu", progress=False, **kwargs)
    t0 = time.perf_counter()
    model.fit(train)
    fit = time.perf_counter() - t0
    per_epoch = np.mean([h["seconds"] for h in model.history_])

    t0 = time.perf_counter()
    codes = model.transform(test)
    encode = time.perf_counter() - t0

    sample = test[: args.reference_docs]
    batch = model.likelihood_.batch(sample, "cpu")
    log_odds = model.prior_.bit_log_odds()
    t0 = time.perf_counter()
    fast = greedy_pursuit(model.decoder_, model.likelihood_, batch, log_odds, model.max_bits)
    fast_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = reference_pursuit(model.decoder_, model.likelihood_, batch, log_odds, model.max_bits)
    slow_s = time.perf_counter() - t0
    agree = bool(torch.equal(fast, slow))
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    rows = [
        ("corpus", f"{train.shape[0]} train / {test.shape[0]} test docs, W = {train.shape[1]}"),
        ("threads", str(torch.get_num_threads())),
        ("preparing the corpus (s)", f"{prep:.1f}"),
        ("training, total (s)", f"{fit:.1f} ({len(model.history_)} epochs)"),
        ("training, per epoch (s)", f"{per_epoch:.2f}"),
        ("encoding the test split (s)", f"{encode:.2f}"),
        ("encoding, documents per second", f"{test.shape[0] / encode:,.0f}"),
        (f"reference pursuit on {sample.shape[0]} docs (s)", f"{slow_s:.2f}"),
        (f"batched pursuit on the same docs (s)", f"{fast_s:.4f}"),
        ("batched / reference speed-up", f"{slow_s / fast_s:,.0f}x (same codes: {agree})"),
        ("mean active bits (test)", f"{codes.sum(1).mean():.2f}"),
        ("peak memory (MiB)", f"{peak_mib:,.0f}"),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"| {'measure'.ljust(width)} | value |\n|{'-' * (width + 2)}|-------|")
    for name, value in rows:
        print(f"| {name.ljust(width)} | {value} |")


if __name__ == "__main__":
    main()
