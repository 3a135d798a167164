"""GaussBPE's held-out MSE on MNIST for settings side by side (the gap to the paper's 8.51;
``--dataset scaled_mnist``: 9.18).

Each argument is a JSON object of GaussBPE parameters plus ``epochs``; the model trains on
the small budget's class-balanced 2,000 training images and is scored on 1,000 test
images after epoch 4 and after its last epoch (one thread, CPU seconds). Run:

    python benchmarks/bench_gauss_gap.py --data-root ../shared/data \\
        '{"sigma": 0.25, "epochs": 8}' '{"sigma": 0.3, "epochs": 8}'
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from bpetopics.experiments.image_table import evaluate_bpe, load_split
from bpetopics.models import GaussBPE


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("settings", nargs="+", help='JSON, e.g. {"sigma": 0.25, "epochs": 8}')
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--dataset", default="mnist", choices=["mnist", "scaled_mnist", "cifar10"],
                        help="a Table 1 data set GaussBPE models (scaled MNIST: s_max = 2, as the table)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, _ = load_split(args.dataset, "train", args.data_root, args.train)
    Xt, _ = load_split(args.dataset, "test", args.data_root, args.test)
    print("| settings | epoch | MSE | Hoyer | bits/img | CPU s |")
    print("|---|---|---|---|---|---|")
    for spec in args.settings:
        kw = json.loads(spec)
        epochs = kw.pop("epochs")
        params = dict(n_bits=200, batch_size=32, lr=3e-3, random_state=0, device="cpu", progress=False)
        model = GaussBPE(epochs=epochs, **{**params, **kw})
        start = time.process_time()
        for e in range(epochs):
            model.partial_fit(X)
            if e + 1 in (4, epochs):
                row, _ = evaluate_bpe(model, "gauss", Xt)
                print(f"| {spec} | {e + 1} | {row['value']:.2f} | {row['sparsity']:.3f} | "
                      f"{row['active_bits']:.2f} | {time.process_time() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
