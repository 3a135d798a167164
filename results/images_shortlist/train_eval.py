"""One BPE model of Table 1's small budget (2,000 / 1,000 images, 4 epochs, batch 32,
lr 3e-3; GaussBPE K = 800, BernBPE K = 200) with a given pursuit, scored as the table
scores it; appends one JSON line to results/images_shortlist/runs.jsonl.

    OMP_NUM_THREADS=1 python results/images_shortlist/train_eval.py KIND SHORTLIST EXACT_STOP [EPOCHS [SEED [SIGMA]]]

KIND: gauss (MNIST), scaled (scaled MNIST) or bern (binarised MNIST); SHORTLIST: none (the
exact greedy pursuit) or a number; EXACT_STOP: 1 or 0; EPOCHS: a number or - (the
budget's). The data root is $BPETOPICS_DATA (default ../shared/data).
"""

import json
import os
import sys
import time

import torch

from bpetopics.experiments.image_table import BUDGETS, _evaluate_bpe, load_split
from bpetopics.experiments.image_table_runs import table_models
from bpetopics.models.registry import MODELS

torch.set_num_threads(1)
kind, shortlist, stop = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
epochs = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] != "-" else None
seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0
sigma = float(sys.argv[6]) if len(sys.argv) > 6 else None
root = os.environ.get("BPETOPICS_DATA", "../shared/data")
dataset = {"gauss": "mnist", "scaled": "scaled_mnist", "bern": "binary_mnist"}[kind]
budget = BUDGETS["small"]
name, slug, registry, params = table_models("bern" if kind == "bern" else "gauss", budget, seed, "cpu")[0]
params = {**params, "shortlist": None if shortlist == "none" else int(shortlist), "exact_stop": stop}
if epochs:
    params["epochs"] = epochs
if sigma:
    params["sigma"] = sigma
X, _ = load_split(dataset, "train", root, budget.n_train, seed, budget.s_max)
Xt, _ = load_split(dataset, "test", root, budget.n_test, seed, budget.s_max)
model = MODELS[registry](**params)
start = time.process_time()
model.fit(X, encode=False)
fit = time.process_time() - start
row, _ = _evaluate_bpe(model, "bern" if kind == "bern" else "gauss", Xt)
row.update(sigma=params.get("sigma"), seed=seed, kind=kind, shortlist=shortlist, stop_exactly=stop,
           fit_cpu=fit, epochs=params["epochs"], epoch_cpu=[h["seconds"] for h in model.history_],
           objective=model.history_[-1]["objective"])
print(json.dumps(row))
with open("results/images_shortlist/runs.jsonl", "a", encoding="utf-8") as f:
    f.write(json.dumps(row) + "\n")
