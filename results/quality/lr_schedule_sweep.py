"""Learning-rate schedules for PoissBPE (experiment): constant (default) against decays,
20 Newsgroups, compare_models as `bpetopics compare` runs it, PoissBPE only."""
import sys, math, torch
torch.set_num_threads(1)
import numpy as np
from bpetopics import PoissBPE
from bpetopics.text import prepare_corpus
from bpetopics.experiments.text_comparison import compare_models
import bpetopics.experiments.text_comparison as tc

T = int(sys.argv[1]); variant = sys.argv[2]; seeds = tuple(int(s) for s in sys.argv[3].split(","))
orig = PoissBPE._learning_rate
def sched(self):
    E = self.total_epochs(); e = self.epoch_
    if variant == "const": return self.lr
    if variant == "sqrt": return self.lr / math.sqrt(1 + e)
    if variant == "cos10": return self.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * e / max(E - 1, 1))))
    if variant == "last3": return self.lr * (0.2 if e >= E - 3 else 1.0)
    if variant == "last3h": return self.lr * (0.5 if e >= E - 3 else 1.0)
    if variant == "last2": return self.lr * (0.2 if e >= E - 2 else 1.0)
    if variant == "lin_half": return self.lr * (1.0 if e < E // 2 else max(0.1, 1 - (e - E // 2 + 1) / (E - E // 2 + 1)))
    raise ValueError(variant)
PoissBPE._learning_rate = sched
splits = prepare_corpus("20newsgroups", vocab_size=2000)
df = compare_models(splits["train"], splits["test"], T, seeds=seeds, gensim_measures=(), models=("PoissBPE",))
cols = [c for c in df.columns if any(k in c for k in ("npmi", "diversity", "perplexity", "accuracy", "unused", "never", "purity"))]
print(variant, T, seeds)
print(df[cols].agg(["mean", "std"]).round(4).to_string())
