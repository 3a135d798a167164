"""PoissBPE parameter sweep (experiment), 20 Newsgroups, compare_models as `bpetopics compare`, PoissBPE only."""
import sys, json, torch
torch.set_num_threads(1)
from bpetopics.text import prepare_corpus
from bpetopics.experiments.text_comparison import compare_models
T = int(sys.argv[1]); params = json.loads(sys.argv[2]); seeds = tuple(int(s) for s in sys.argv[3].split(","))
splits = prepare_corpus("20newsgroups", vocab_size=2000)
df = compare_models(splits["train"], splits["test"], T, seeds=seeds, gensim_measures=(), models=("PoissBPE",), bpe_params=params)
m, s = df.mean(numeric_only=True), df.std(numeric_only=True)
keys = ["npmi", "npmi_corpus", "diversity", "perplexity", "accuracy", "purity", "unused_topics"]
print(f"T={T} {json.dumps(params)} seeds={seeds}: " + ", ".join(f"{k} {m[k]:.4f}±{s[k]:.4f}" for k in keys), flush=True)
