import sys, json, numpy as np, torch
torch.set_num_threads(1)
from bpetopics.text import prepare_corpus
from bpetopics.experiments.text_comparison import compare_models
T = int(sys.argv[1]); configs = [json.loads(a) for a in sys.argv[2:]]
import os; CORPUS = os.environ.get("CORPUS", "20newsgroups")
from bpetopics.experiments.text_setup import comparison_data
_d = comparison_data(CORPUS, {"vocab_size": 2000, "max_docs": int(os.environ.get("MAXDOCS", "0")) or None}); s = {"train": _d.train, "test": _d.test}
for cfg in configs:
    df = compare_models(s["train"], s["test"], T, seeds=tuple(int(x) for x in os.environ.get("SEEDS", "0,1,2").split(",")), bpe_params=cfg, gensim_measures=(), models=tuple(os.environ.get("MODELS", "PoissBPE").split(",")))
    cols = [c for c in ["npmi", "npmi_corpus", "diversity", "diversity_top10", "exclusive_diversity", "purity", "perplexity", "accuracy", "active_bits", "unused_topics", "infer_seconds", "fit_cpu_seconds"] if c in df.columns]
    for mname, g in df.groupby("model"): print(CORPUS, T, mname, json.dumps(cfg), " | ".join(f"{c} {g[c].mean():.4f}±{g[c].std():.4f}" for c in cols), flush=True)
print(list(df.columns))
