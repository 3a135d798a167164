"""Forced split moves off (FORCE=0) or on (FORCE=1, the default): PoissBPE only, compare_models as
`bpetopics compare`. Usage: FORCE=0|1 CORPUS=20newsgroups|abc|state_union|lee python forced_moves_sweep.py T JSON SEEDS"""
import os, sys, json, torch
torch.set_num_threads(1)
from bpetopics.core import topic_split
topic_split.FORCE_ANY_GAIN = os.environ.get("FORCE", "1") == "1"
from bpetopics.text import prepare_corpus
from bpetopics.experiments.text_comparison import compare_models
T = int(sys.argv[1]); params = json.loads(sys.argv[2]); seeds = tuple(int(s) for s in sys.argv[3].split(","))
corpus = os.environ.get("CORPUS", "20newsgroups")
from bpetopics.experiments.text_setup import comparison_data
_d = comparison_data(corpus, {"vocab_size": 2000, "max_docs": int(os.environ.get("MAXDOCS", "0")) or None})
df = compare_models(_d.train, _d.test, T, seeds=seeds, gensim_measures=(), models=("PoissBPE",), bpe_params=params)
print(df[["seed", "npmi", "npmi_corpus", "diversity", "perplexity", "accuracy", "unused_topics"]].to_string())
m, s = df.mean(numeric_only=True), df.std(numeric_only=True)
keys = [k for k in ["npmi", "npmi_corpus", "diversity", "perplexity", "accuracy", "purity", "unused_topics"] if df[k].notna().any()]
print(f"{corpus} FORCE={topic_split.FORCE_ANY_GAIN} T={T} {json.dumps(params)} seeds={seeds}: " + ", ".join(f"{k} {m[k]:.4f}±{s[k]:.4f}" for k in keys), flush=True)
