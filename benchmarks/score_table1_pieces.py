"""Score the BPE models of Table 1 runs on the CPU: unfinished ones at their last checkpoint, finished ones.

The ``full`` Table 1 is trained in pieces on GPUs (``benchmarks/table1_gpu.sh``):
between runs each BPE model is a checkpoint of a partly trained run
(``<parts>/<data set>/runs/<data set>-<model>.partial/checkpoint.safetensors``). This script
loads each checkpoint on the CPU (loading executes no code: safetensors plus JSON), encodes
the data set's test images and prints the test metric the table reports (GaussBPE: MSE,
BernBPE: NLL), the codes' Hoyer sparsity and bits per image, next to the epochs done, so
that the trend over epochs can be read between runs. Finished BPE runs
(``<parts>/<output>/runs/<data set>-<model>/``, e.g. a table trained on the CPU from more
images than its 1,000 test images) are scored the same way, on the test images asked for.
``--shortlist N`` encodes them with another pursuit than the run's own (0: the exact greedy
pursuit), e.g. to score GPU-trained runs with the shortlist pursuit. One thread, CPU seconds.

Run (offline data as in docs/getting-started.md):

    python benchmarks/score_table1_pieces.py --parts .gpu/table1-full-parts \\
        --data-root ../shared/data [--test 10000] [--datasets mnist,binary_mnist]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from bpetopics.experiments.image_table import evaluate_bpe, load_split
from bpetopics.runs.checkpoints import load_checkpoint
from bpetopics.runs.folder import load_run

PAPER = {"mnist": 8.51, "scaled_mnist": 9.18, "binary_mnist": 82.16, "cifar10": 75.88}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=".gpu/table1-full-parts",
                        help="folder with one Table 1 output folder per data set")
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--test", type=int, default=None,
                        help="test images (class-balanced subset; default: all)")
    parser.add_argument("--datasets", default=None, help="comma-separated (default: all found)")
    parser.add_argument("--shortlist", type=int, default=None,
                        help="encode the test images with this pursuit instead of the run's own: a "
                             "shortlist of N bits with the exact stop, 0 the exact greedy pursuit")
    args = parser.parse_args()
    torch.set_num_threads(1)
    wanted = None if args.datasets is None else set(args.datasets.split(","))
    # (run folder, model loader): unfinished runs at their checkpoint, then finished runs
    checkpoints = [(p.parent, lambda p=p: load_checkpoint(p, device="cpu")[0])
                   for p in sorted(Path(args.parts).glob("*/runs/*.partial/checkpoint.safetensors"))]
    finished = [(p.parent, lambda p=p: load_run(p.parent, device="cpu").model)
                for p in sorted(Path(args.parts).glob("*/runs/*bpe/config.json"))]
    if not checkpoints and not finished:
        raise SystemExit(f"Error: no checkpoint under {args.parts}/*/runs/*.partial/ and no finished BPE run "
                         f"under {args.parts}/*/runs/; prepare the pieces first (benchmarks/table1_gpu.sh prepare)")
    print("| data set | model | epochs done / planned | test images | pursuit | metric | ours | paper "
          "| Hoyer | bits/img | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for run, load in checkpoints + finished:
        dataset = run.name.removesuffix(".partial").rsplit("-", 1)[0]
        if wanted is not None and dataset not in wanted:
            continue
        model = load()
        if args.shortlist is not None:
            model.set_params(shortlist=args.shortlist or None)
        pursuit = f"shortlist {model.shortlist}" if model.shortlist else "exact greedy"
        Xt, _ = load_split(dataset, "test", args.data_root, args.test)
        start = time.process_time()
        row, _ = evaluate_bpe(model, "bern" if dataset == "binary_mnist" else "gauss", Xt)
        print(f"| {dataset} | {type(model).__name__} (K = {model.n_bits}) | {model.epoch_} / "
              f"{model.total_epochs()} | {len(Xt):,} | {pursuit} | {row['metric']} | {row['value']:.2f} | "
              f"{PAPER.get(dataset, float('nan')):.2f} | {row['sparsity']:.3f} | "
              f"{row['active_bits']:.2f} | {time.process_time() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
