"""Prototype (session 15): after each growth round, each split parent's children get a bit of their own
(the least used bits by q(pi): +S on the first child, -S on the second), as split moves do.
Usage: python results/quality/growth_own_bits_prototype.py T SEEDS [S]"""
import sys, json, numpy as np, torch
torch.set_num_threads(1)
from bpetopics.models import topic_growth as G
from bpetopics.models.poissbpe import PoissBPE
from bpetopics.text import prepare_corpus
from bpetopics.experiments.text_comparison import compare_models
T = int(sys.argv[1]); seeds = tuple(int(s) for s in sys.argv[2].split(","))
strength = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
orig = G.TopicGrowth._replace_topics
def patched(self, parents, log_topics):
    orig(self, parents, log_topics)
    if len(self.decoder_.head):
        return
    pairs = [i for i in range(len(parents) - 1) if parents[i] == parents[i + 1]]
    sample = torch.randperm(self.n_data_, generator=torch.Generator().manual_seed(0))[:1000]
    # the least used bits: by q(pi)'s mean
    order = np.argsort(self.prior_.mean().cpu().numpy(), kind="stable")
    W = self.decoder_.first.weight
    with torch.no_grad():
        for k, i in zip(order, pairs):
            W[:, k] = 0
            W[i, k] = strength
            W[i + 1, k] = -strength
G.TopicGrowth._replace_topics = patched
splits = prepare_corpus("20newsgroups", vocab_size=2000)
df = compare_models(splits["train"], splits["test"], T, seeds=seeds, gensim_measures=(), models=("PoissBPE",))
m, s = df.mean(numeric_only=True), df.std(numeric_only=True)
keys = ["npmi", "npmi_corpus", "diversity", "perplexity", "accuracy", "purity", "unused_topics"]
print(f"own bits {strength} T={T} seeds={seeds}: " + ", ".join(f"{k} {m[k]:.4f}±{s[k]:.4f}" for k in keys), flush=True)
