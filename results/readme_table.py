"""Print README's table for a comparison folder (the rows README shows, the best mean in bold).

Usage: python results/readme_table.py results/20ng-T50 "20 Newsgroups, T = 50"
"""
import sys

import pandas as pd

from bpetopics.experiments.comparison_report import summarize
folder, title = sys.argv[1], sys.argv[2]
df = pd.read_csv(f"{folder}/comparison.csv")
models = list(dict.fromkeys(df["model"]))
stats = summarize(df)                   # (metric, model) -> mean, std over seeds
ROWS = [("NPMI, top 10 (chosen reference)", "npmi", "+", "pm3"),
        ("NPMI, whole corpus as reference (OCTIS)", "npmi_corpus", "+", "pm3"),
        ("C_V (gensim)", "gensim_c_v", "+", "pm3"),
        ("topic diversity, top 25", "diversity", "+", "pm3"),
        ("topic diversity, top 10", "diversity_top10", "+", "pm3"),
        ("exclusive diversity (TopMost TD), top 25", "exclusive_diversity", "+", "pm3"),
        ("completion perplexity", "perplexity", "-", "pm0"),
        ("accuracy of a classifier on the mixtures", "accuracy", "+", "pm3"),
        ("purity of top-topic clusters", "purity", "+", "pm3"),
        ("NMI of top-topic clusters", "nmi", "+", "pm3"),
        ("share of topics no document's top topic", "unused_topics", "-", "pm2"),
        ("topics with non-finite NPMI", "npmi_nonfinite", "-", "m1"),
        ("training CPU time (s)", "fit_cpu_seconds", "-", "m1"),
        ("inference on the held-out documents, wall s", "infer_seconds", "-", "m3")]


def fmt(x, d):
    return f"{x:,.{d}f}"


print(f"| {title} | " + " | ".join(models) + " |")
print("|---|" + "---:|" * len(models))
for label, col, direction, kind in ROWS:
    if col not in df or df[col].isna().all():
        continue
    mean, std = stats.loc[col, "mean"], stats.loc[col, "std"]
    d = int(kind[-1])
    shown = {m: fmt(mean[m], d) for m in models}
    best_val = (max if direction == "+" else min)(mean[m] for m in models)
    best = shown[[m for m in models if mean[m] == best_val][0]]
    cells = []
    for m in models:
        c = shown[m] + (f" +/- {fmt(std[m], d)}" if kind.startswith("pm") else "")
        cells.append(f"**{c}**" if shown[m] == best else c)
    print(f"| {label} | " + " | ".join(cells) + " |")
