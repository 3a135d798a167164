"""Held-out error of GaussBPE or BernBPE as training goes on: how many epochs close the gap?

Trains one image model with the Table 1 `full` budget's settings (K = 200, batch 128,
lr 1e-3 divided by sqrt(1 + epoch), sigma 0.1, the exact pursuit; '{"shortlist": 32}' for the models' default shortlist
pursuit) on a data set's training split and scores
it on the test split after the epochs named by ``--report`` (MSE for GaussBPE, NLL for
BernBPE, with the codes' Hoyer sparsity and bits per image). ``--deadline`` (wall seconds)
stops before an epoch that would not finish in time and scores the model there, so a
short run on a GPU still returns a row. Extra JSON overrides model parameters.
Run, on a GPU (each process one model; several can share the card):

    python benchmarks/bench_image_epochs.py --data-root ../shared/data --dataset mnist \\
        --epochs 30 --report 5,10,15,20,25,30 --device cuda
    python benchmarks/bench_image_epochs.py --data-root ../shared/data --dataset binary_mnist \\
        --epochs 20 --report 5,10,15,20 --device cuda '{"lr": 3e-4}'
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from bpetopics.experiments.image_table import BUDGETS, evaluate_bpe, load_split
from bpetopics.models import BernBPE, GaussBPE


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("overrides", nargs="?", default="{}", help='JSON, e.g. {"sigma": 0.25}')
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--dataset", default="mnist",
                        choices=["mnist", "scaled_mnist", "binary_mnist", "cifar10"])
    parser.add_argument("--train", type=int, default=None, help="training images (default all)")
    parser.add_argument("--test", type=int, default=None, help="test images (default all)")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--report", default="5,10,15,20,25,30", help="epochs to score after")
    parser.add_argument("--deadline", type=float, default=None, help="wall seconds in all")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true",
                        help="profile the last epoch (torch.profiler): the top operators by self "
                             "device time and by self CPU time, and the host synchronisations")
    args = parser.parse_args()
    start = time.perf_counter()
    full = BUDGETS["full"]
    kind = "bern" if args.dataset == "binary_mnist" else "gauss"
    X, _ = load_split(args.dataset, "train", args.data_root, args.train, args.seed, full.s_max)
    Xt, _ = load_split(args.dataset, "test", args.data_root, args.test, args.seed, full.s_max)
    overrides = json.loads(args.overrides)
    params = dict(n_bits=full.n_bits, batch_size=full.bpe_batch_size, lr=full.bpe_lr,
                  epochs=args.epochs, random_state=args.seed, device=args.device, progress=False,
                  shortlist=full.shortlist)
    if kind == "gauss":
        params["sigma"] = full.sigma
    model = (GaussBPE if kind == "gauss" else BernBPE)(**{**params, **overrides})
    report = {int(e) for e in args.report.split(",")} | {args.epochs}
    pursuit = f"shortlist {model.shortlist}" if model.shortlist else "exact pursuit"
    label = f"{args.dataset} {json.dumps(overrides)} ({pursuit})"
    print(f"{label}: {len(X)} train / {len(Xt)} test images, device {args.device}, "
          f"{torch.cuda.get_device_name() if torch.cuda.is_available() else 'cpu'}", flush=True)
    print("| data, overrides | epoch | metric | value | Hoyer | bits/img | s/epoch | wall s |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    epoch_seconds = []
    for epoch in range(1, args.epochs + 1):
        t = time.perf_counter()
        if args.profile and epoch == args.epochs:
            _profiled(lambda: model.partial_fit(X))
        else:
            model.partial_fit(X)
        epoch_seconds.append(time.perf_counter() - t)
        elapsed = time.perf_counter() - start
        # stop while one more epoch and a scoring pass still fit before the deadline
        last = (args.deadline is not None
                and elapsed + 1.5 * max(epoch_seconds) > args.deadline)
        if epoch in report or last:
            row, _ = evaluate_bpe(model, kind, Xt)
            print(f"| {label} | {epoch} | {row['metric']} | {row['value']:.2f} | "
                  f"{row['sparsity']:.3f} | {row['active_bits']:.2f} | "
                  f"{sum(epoch_seconds) / len(epoch_seconds):.1f} | "
                  f"{time.perf_counter() - start:.0f} |", flush=True)
        if last:
            print(f"stopped after epoch {epoch}: the deadline ({args.deadline:.0f} s) is near")
            break


def _profiled(run, rows=25):
    """Run ``run()`` under torch.profiler and print where its time went."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=activities) as prof:
        run()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    events = prof.key_averages()
    if torch.cuda.is_available():
        print(events.table(sort_by="self_cuda_time_total", row_limit=rows, max_name_column_width=60))
    print(events.table(sort_by="self_cpu_time_total", row_limit=rows, max_name_column_width=60))
    syncs = {e.key: e.count for e in events
             if any(k in e.key for k in ("Synchronize", "_local_scalar_dense", "cudaMemcpy", "nonzero"))}
    print("host synchronisations and copies:", syncs, flush=True)


if __name__ == "__main__":
    main()
