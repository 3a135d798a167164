"""doc_topic with the pairs of 8 / 12 / 16 / 20 best flips (session 16): completion perplexity and the
posterior's CPU s, the same models (steps in order). Usage: python results/quality/pair_flips_sweep.py CORPUS T SEEDS
(e.g. 20newsgroups 20 0,1,2; offline data as in README)."""
import sys, time, numpy as np, torch
torch.set_num_threads(1)
from bpetopics import PoissBPE
from bpetopics.core import code_posterior
from bpetopics.models import topic_outputs
from bpetopics.evaluation.perplexity import completion_perplexity
from bpetopics.experiments.text_setup import comparison_data
corpus = sys.argv[1]; T = int(sys.argv[2]); seeds = [int(s) for s in sys.argv[3].split(",")]
d = comparison_data(corpus, {"vocab_size": 2000, "max_docs": None})
X, Xt = d.train.counts.tocsr(), d.test.counts.tocsr()
orig = code_posterior.local_mean
res = {}
for seed in seeds:
    m = PoissBPE(n_topics=T, random_state=seed, device="cpu", progress=False, pipeline=False).fit(X)
    for nf in (8, 12, 16, 20):
        def lm(*a, _nf=nf, **k):
            k["n_flips"] = _nf; return orig(*a, **k)
        topic_outputs.local_mean = lm
        p = completion_perplexity(m, Xt, seed=seed).perplexity
        codes = m.transform(Xt)
        t = time.process_time(); mt = m.posterior_topic(Xt, codes); tt = time.process_time() - t
        res.setdefault(nf, []).append((p, tt))
        print(seed, nf, round(p, 2), "posterior s", round(tt, 3), flush=True)
    topic_outputs.local_mean = orig
for nf, v in res.items(): print("n_flips", nf, "mean ppl", round(np.mean([x[0] for x in v]), 2), "posterior s", round(np.mean([x[1] for x in v]), 3))
