"""One BPE model of Table 1's small budget (2,000 / 1,000 images, batch 32, lr 3e-3;
GaussBPE K = 800, BernBPE K = 200; by default 4 epochs and sigma 0.3) with a given
pursuit, scored as the table scores it; appends one JSON line to
results/images_shortlist/runs.jsonl.

    OMP_NUM_THREADS=1 python results/images_shortlist/train_eval.py KIND SHORTLIST EXACT_STOP [EPOCHS [SEED [SIGMA [S_MAX]]]] [--n-train N]

KIND: gauss (MNIST), scaled (scaled MNIST) or bern (binarised MNIST); SHORTLIST: none (the
exact greedy pursuit) or a number; EXACT_STOP: 1 or 0; EPOCHS and SIGMA: a number or - (the
budget's); S_MAX: scaled MNIST's largest scale (default the budget's, 2); --n-train: more
(or fewer) class-balanced training images than the budget's (the test images stay its
1,000); --encode-exact-stop: the model scored a second time with the test images encoded
by the exact stop (a model trained to stop at once); --exact-last N: a model trained to
stop at once takes the exact stop for its last N epochs; --no-widen: the exact stop without the widening lists (rows without a
"widen" field were measured before it existed, without). The data root is $BPETOPICS_DATA (default ../shared/data).
"""

import argparse
import json
import os
import time
from dataclasses import replace

import torch

from bpetopics.experiments.image_table import BUDGETS, _evaluate_bpe, load_split
from bpetopics.experiments.image_table_runs import table_models
from bpetopics.models.registry import MODELS

torch.set_num_threads(1)
parser = argparse.ArgumentParser()
parser.add_argument("kind", choices=["gauss", "scaled", "bern"])
parser.add_argument("shortlist")
parser.add_argument("exact_stop", choices=["0", "1"])
for name in ("epochs", "seed", "sigma", "s_max"):
    parser.add_argument(name, nargs="?", default="-")
parser.add_argument("--n-train", type=int, default=None)
parser.add_argument("--encode-exact-stop", action="store_true",
                    help="also score the model with the test images encoded by the exact stop (training's "
                         "shortlist, exact_stop=True): the row's 'exact_stop_encoding'")
parser.add_argument("--exact-last", type=int, default=0,
                    help="a model trained to stop at once switches to the exact stop for its last N epochs "
                         "(and its encodings)")
parser.add_argument("--no-widen", action="store_true",
                    help="the exact stop without the widening lists (shortlist_pursuit.WIDEN = False: "
                         "the pursuit of session 17)")
args = parser.parse_args()
import bpetopics.core.shortlist_pursuit as shortlist_pursuit  # noqa: E402

if args.no_widen:
    shortlist_pursuit.WIDEN = False
kind, shortlist, stop = args.kind, args.shortlist, args.exact_stop == "1"
epochs = int(args.epochs) if args.epochs != "-" else None
seed = int(args.seed) if args.seed != "-" else 0
sigma = float(args.sigma) if args.sigma != "-" else None
root = os.environ.get("BPETOPICS_DATA", "../shared/data")
dataset = {"gauss": "mnist", "scaled": "scaled_mnist", "bern": "binary_mnist"}[kind]
# the small budget as it stood when these runs began (session 17: 4 epochs, sigma 0.3; since
# session 18 the budget itself is 8 epochs at sigma 0.1), so that "-" keeps meaning the same
budget = replace(BUDGETS["small"], bpe_epochs=4, sigma=0.3)
s_max = float(args.s_max) if args.s_max != "-" else budget.s_max
n_train = args.n_train or budget.n_train
name, slug, registry, params = table_models("bern" if kind == "bern" else "gauss", budget, seed, "cpu")[0]
params = {**params, "shortlist": None if shortlist == "none" else int(shortlist), "exact_stop": stop}
if epochs:
    params["epochs"] = epochs
if sigma:
    params["sigma"] = sigma
X, _ = load_split(dataset, "train", root, n_train, seed, s_max)
if kind == "scaled":   # with its factors s_n, for the error in plain MNIST's units below
    from bpetopics.images.datasets import load_scaled_mnist

    Xt, _, factors = load_scaled_mnist("test", root, s_max=s_max, limit=budget.n_test, random_state=seed)
else:
    Xt, _ = load_split(dataset, "test", root, budget.n_test, seed, s_max)
if args.exact_last:   # the fast stop until epoch E - N, the exact stop after it (and in encoding)
    params = {**params, "exact_stop": True, "fast_stop_epochs": params["epochs"] - args.exact_last}
model = MODELS[registry](**params)
start = time.process_time()
model.fit(X, encode=False)
fit = time.process_time() - start
row, recon = _evaluate_bpe(model, "bern" if kind == "bern" else "gauss", Xt)
if kind == "scaled":
    # scaled MNIST's error in plain MNIST's units: x_n = s_n m_n, so a model that recovers
    # s_n exactly has error s_n^2 times m_n's; divide the MSE by the test images' mean s_n^2
    row["mean_s2"] = float((factors.astype("float64") ** 2).mean())
    row["mse_per_unit_scale"] = row["value"] / row["mean_s2"]
if args.encode_exact_stop:   # the same model, its test images encoded by the exact stop
    model.set_params(exact_stop=True)
    start = time.process_time()
    exact_row, _ = _evaluate_bpe(model, "bern" if kind == "bern" else "gauss", Xt)
    row["exact_stop_encoding"] = {**exact_row, "encode_cpu": time.process_time() - start}
    if kind == "scaled":
        row["exact_stop_encoding"]["mse_per_unit_scale"] = exact_row["value"] / row["mean_s2"]
if args.exact_last:
    row["exact_last"] = args.exact_last
row.update(sigma=params.get("sigma"), seed=seed, s_max=s_max, n_train=n_train, widen=shortlist_pursuit.WIDEN, kind=kind, shortlist=shortlist, stop_exactly=stop,
           fit_cpu=fit, epochs=params["epochs"], epoch_cpu=[h["seconds"] for h in model.history_],
           objective=model.history_[-1]["objective"])
print(json.dumps(row))
with open("results/images_shortlist/runs.jsonl", "a", encoding="utf-8") as f:
    f.write(json.dumps(row) + "\n")
