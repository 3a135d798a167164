"""Growth rounds over a fraction FRAC of the epochs (default a third) instead of the first third (session 16): FRAC=0.5 CORPUS=state_union python results/quality/growth_timing_sweep.py 50 '{\"pipeline\": false}' 0,1,2"""
import os, sys, json, math, torch
torch.set_num_threads(1)
from bpetopics.models import topic_growth
from bpetopics.models.poissbpe import PoissBPE
FRAC = float(os.environ.get("FRAC", "0.3333"))
def growth_schedule(self):
    counts = self.topic_counts()[1:]
    part = max(1, int(self.total_epochs() * FRAC))
    return [(max(1, math.ceil(i * part / len(counts))), n) for i, n in enumerate(counts, 1)]
PoissBPE.growth_schedule = growth_schedule
from bpetopics.experiments.text_setup import comparison_data
from bpetopics.experiments.text_comparison import compare_models
T = int(sys.argv[1]); params = json.loads(sys.argv[2]); seeds = tuple(int(s) for s in sys.argv[3].split(","))
corpus = os.environ.get("CORPUS", "20newsgroups")
d = comparison_data(corpus, {"vocab_size": 2000, "max_docs": None})
df = compare_models(d.train, d.test, T, seeds=seeds, gensim_measures=(), models=("PoissBPE",), bpe_params=params)
m = df.mean(numeric_only=True)
print(corpus, "FRAC", FRAC, " ".join(f"{k} {m[k]:.4f}" for k in ["npmi", "diversity", "perplexity", "accuracy"]), flush=True)
