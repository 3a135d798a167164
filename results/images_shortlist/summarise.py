"""The shortlist pursuit against the exact one on Table 1's small budget: one markdown
table from the JSON lines that ``train_eval.py`` (beside this file) appends.

    python results/images_shortlist/summarise.py results/images_shortlist/runs.jsonl
"""

import json
import sys
from collections import defaultdict

import numpy as np

DATA = {"gauss": "MNIST (GaussBPE, K = 800)", "scaled": "scaled MNIST (GaussBPE, K = 800)",
        "bern": "binarised MNIST (BernBPE, K = 200)"}


def label(row):
    if row["shortlist"] == "none":
        return "exact greedy pursuit"
    stop = "exact stop" if row["stop_exactly"] else "stops at once"
    return f"shortlist {row['shortlist']}, {stop}"


def main(path):
    groups = defaultdict(list)
    for line in open(path, encoding="utf-8"):
        row = json.loads(line)
        sigma = "-" if row["kind"] == "bern" else (row.get("sigma") or 0.3)
        key = (row["kind"], sigma, row["epochs"], label(row))
        groups[key].append(row)
    print("| data | sigma | epochs | pursuit | seeds | MSE / NLL | Hoyer | bits/img | training CPU s | later epochs' CPU s | encoding 1,000 test images, wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    order = {"gauss": 0, "scaled": 1, "bern": 2}
    for key in sorted(groups, key=lambda k: (order[k[0]], str(k[1]), k[2], k[3] != "exact greedy pursuit", k[3])):
        rows = groups[key]
        seeds = ",".join(str(r.get("seed", 0)) for r in rows)

        def stat(name):
            v = np.array([r[name] for r in rows], dtype=float)
            return f"{v.mean():.2f}" if len(v) == 1 else f"{v.mean():.2f} +/- {v.std(ddof=1):.2f}"

        later = np.mean([np.mean(r["epoch_cpu"][1:]) for r in rows])
        print(f"| {DATA[key[0]]} | {key[1]} | {key[2]} | {key[3]} | {seeds} | {stat('value')} | "
              f"{np.mean([r['sparsity'] for r in rows]):.3f} | {np.mean([r['active_bits'] for r in rows]):.2f} | "
              f"{np.mean([r['fit_cpu'] for r in rows]):.0f} | {later:.1f} | "
              f"{np.mean([r['encode_seconds'] for r in rows]):.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
