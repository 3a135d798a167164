"""BernBPE's held-out NLL after each epoch, for learning-rate schedules side by side.

Made to show why GaussBPE/BernBPE decay Adam's learning rate (docs/results/images.md): with a
constant rate BernBPE's held-out NLL on binarised MNIST stalls and later drifts up. Prints
one table row per schedule and epoch. Run (a GPU makes it minutes rather than hours):

    python benchmarks/bench_bernbpe_epochs.py --data-root ../shared/data \
        --train 30000 --test 5000 --epochs 8 --schedules constant,decay,lr3e-4
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bpetopics import BernBPE
from bpetopics.images.metrics import bernoulli_nll
from bpetopics.experiments.image_table import bpe_logits, load_split

SCHEDULES = {  # name -> (lr, lr_decay)
    "constant": (1e-3, False),
    "decay": (1e-3, True),
    "lr3e-4": (3e-4, False),
}


def run(schedule, X, Xt, epochs, n_bits, device, seed):
    lr, decay = SCHEDULES[schedule]
    model = BernBPE(n_bits=n_bits, epochs=epochs, batch_size=128, lr=lr, lr_decay=decay,
                    random_state=seed, device=device, progress=False)
    for _ in range(epochs):
        model.partial_fit(X)
        codes = model.transform(Xt)
        nll = bernoulli_nll(Xt, logits=bpe_logits(model, codes))
        h = model.history_[-1]
        print(f"| {schedule} | {h['epoch']} | {nll:.2f} | {codes.sum(1).mean():.2f} | "
              f"{h['objective']:.2f} | {h['seconds']:.1f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--train", type=int, default=30000)
    parser.add_argument("--test", type=int, default=5000)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--bits", type=int, default=200)
    parser.add_argument("--schedules", default="constant,decay,lr3e-4")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    X, _ = load_split("binary_mnist", "train", args.data_root, args.train, args.seed)
    Xt, _ = load_split("binary_mnist", "test", args.data_root, args.test, args.seed)
    print(f"binarised MNIST, {len(X)} train / {len(Xt)} test images, K = {args.bits}")
    print("| schedule | epoch | held-out NLL | bits per image | training objective | s |")
    print("|---|---|---|---|---|---|")
    start = time.perf_counter()
    for name in args.schedules.split(","):
        run(name.strip(), X, Xt, args.epochs, args.bits, args.device, args.seed)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
