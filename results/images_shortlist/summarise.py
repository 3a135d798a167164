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
    exact_somewhere = row["stop_exactly"] or row.get("exact_last") or row.get("encoded_exactly")
    if row.get("widen") and exact_somewhere:    # (the lists run only before an exact stop)
        stop = "widening lists, " + stop
    if row.get("exact_last"):        # a warm-up (train_eval.py --exact-last, fast_stop_epochs)
        stop += f" but the exact stop in the last {row['exact_last']} epoch(s)"
    if row.get("encoded_exactly"):   # train_eval.py --encode-exact-stop's second score
        stop += ", test images encoded by the exact stop"
    return f"shortlist {row['shortlist']}, {stop}"


def rows_of(row):
    """The row, and with --encode-exact-stop its second score as a row of its own."""
    yield row
    if "exact_stop_encoding" in row:
        yield {**row, **row["exact_stop_encoding"], "encoded_exactly": True}


def add(groups, row):
    sigma = "-" if row["kind"] == "bern" else (row.get("sigma") or 0.3)
    data = row["kind"]
    if data == "scaled" and row.get("s_max", 2.0) != 2.0:
        data += f", s_max {row['s_max']:.3g}"
    if row.get("n_train", 2000) != 2000:
        data += f", {row['n_train']:,} training images"
    key = (data, sigma, row["epochs"], label(row))
    if all(r.get("seed", 0) != row.get("seed", 0) for r in groups[key]):   # a setting rerun: its first row
        groups[key].append(row)


def main(path):
    groups = defaultdict(list)
    for line in open(path, encoding="utf-8"):
        for row in rows_of(json.loads(line)):
            add(groups, row)
    print("| data | sigma | epochs | pursuit | seeds | MSE / NLL | scaled MNIST: MSE / mean s^2 | Hoyer | bits/img | training CPU s | later epochs' CPU s | encoding 1,000 test images, wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    order = {"gauss": 0, "scaled": 1, "bern": 2}
    for key in sorted(groups, key=lambda k: (order[k[0].split(",")[0]], k[0], str(k[1]), k[2],
                                             k[3] != "exact greedy pursuit", k[3])):
        rows = groups[key]
        seeds = ",".join(str(r.get("seed", 0)) for r in rows)

        def stat(name):
            v = np.array([r[name] for r in rows], dtype=float)
            return f"{v.mean():.2f}" if len(v) == 1 else f"{v.mean():.2f} +/- {v.std(ddof=1):.2f}"

        per_scale = stat("mse_per_unit_scale") if all("mse_per_unit_scale" in r for r in rows) else "-"
        later = np.mean([np.mean(r["epoch_cpu"][1:]) for r in rows])
        kind, _, extra = key[0].partition(", ")
        name = DATA[kind] + (f", {extra}" if extra else "")
        print(f"| {name} | {key[1]} | {key[2]} | {key[3]} | {seeds} | {stat('value')} | {per_scale} | "
              f"{np.mean([r['sparsity'] for r in rows]):.3f} | {np.mean([r['active_bits'] for r in rows]):.2f} | "
              f"{np.mean([r['fit_cpu'] for r in rows]):.0f} | {later:.1f} | "
              f"{np.mean([r['encode_seconds'] for r in rows]):.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
