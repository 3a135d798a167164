"""Put one model's rows, from a new `bpetopics compare --models NAME` run, in place of
that model's rows in a comparison folder, keeping the other models' rows, settings and
topics (how the comparison tables of docs/results/text-comparison.md are updated when only PoissBPE changed).

Usage: python benchmarks/merge_model_rows.py NEW_FOLDER TABLE_FOLDER [MODEL]
  e.g. bpetopics compare 20newsgroups --topics 50 --seeds 3 --models poissbpe --no-pipeline --out /tmp/new
       python benchmarks/merge_model_rows.py /tmp/new results/20ng-T50
"""
import re
import sys
from pathlib import Path

import pandas as pd

from bpetopics.experiments.comparison_report import write_comparison

new_dir, table_dir = Path(sys.argv[1]), Path(sys.argv[2])
model = sys.argv[3] if len(sys.argv) > 3 else "PoissBPE"


def settings_and_topics(md: str):
    """The "- key: value" settings lines and each model's topic lines of a comparison.md."""
    head, _, topics = md.partition("\n## Topics")
    settings = dict(re.findall(r"^- ([^:]+): (.*)$", head, flags=re.M))
    by_model, name = {}, None
    for line in topics.splitlines()[1:]:
        if re.fullmatch(r"\S+:", line.strip()):
            name = line.strip()[:-1]
            by_model[name] = []
        elif name and re.match(r"\d+\. ", line):
            by_model[name].append(line.split(". ", 1)[1].split())
    return settings, by_model


old = pd.read_csv(table_dir / "comparison.csv")
new = pd.read_csv(new_dir / "comparison.csv")
if set(new["model"]) != {model}:
    raise SystemExit(f"{new_dir} holds {sorted(set(new['model']))}, expected only {model}")
if sorted(new["seed"]) != sorted(old.loc[old["model"] == model, "seed"]):
    raise SystemExit(f"{new_dir} has seeds {sorted(new['seed'])}, the table {model}'s "
                     f"{sorted(old.loc[old['model'] == model, 'seed'])}")
by_seed = {int(row["seed"]): row for _, row in new.iterrows()}        # rows in the table's order
merged = pd.DataFrame([by_seed[int(row["seed"])] if row["model"] == model else row for _, row in old.iterrows()])
merged = merged.reset_index(drop=True)
old_settings, old_topics = settings_and_topics((table_dir / "comparison.md").read_text())
new_settings, new_topics = settings_and_topics((new_dir / "comparison.md").read_text())
topics = dict(old_topics, **{model: new_topics[model]})
first_seed = int(merged["seed"].min())
merged["top_words"] = [topics.get(m) if int(s) == first_seed else None
                       for m, s in zip(merged["model"], merged["seed"])]
settings = {k: new_settings.get(k, v) if k.startswith(model) else v for k, v in old_settings.items()}
paths = write_comparison(merged, table_dir, settings)
print("wrote", *paths.values())
