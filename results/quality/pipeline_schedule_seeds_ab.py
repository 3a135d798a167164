"""Seeds of PoissBPE on 20 Newsgroups: `reference` = the steps in order with the torch theta
step (session 12's start), `current` = the defaults. Usage: python ... reference|current T SEEDS."""
import sys, json, time, numpy as np, torch
torch.set_num_threads(1)
from bpetopics import PoissBPE
from bpetopics.models import poissbpe
from bpetopics.evaluation.coherence import npmi_coherence, top_word_ids
from bpetopics.evaluation.diversity import topic_diversity
from bpetopics.evaluation.perplexity import completion_perplexity
from bpetopics.text import prepare_corpus
mode = sys.argv[1]; T = int(sys.argv[2]); seeds = [int(s) for s in sys.argv[3].split(",")]
if mode == "reference":          # the session's start: steps in order, torch theta step
    poissbpe.PoissBPE.fused_theta = False
    params = {"pipeline": False}
else:
    params = {}
c = prepare_corpus("20newsgroups"); train, test = c["train"], c["test"]
rows = []
for s in seeds:
    m = PoissBPE(n_topics=T, random_state=s, progress=False, **params).fit(train.counts)
    npmi = float(np.mean(npmi_coherence(top_word_ids(m.topic_word_, 10), test.texts, train.vocabulary).per_topic))
    rows.append((npmi, topic_diversity(m.topic_word_), completion_perplexity(m, test.counts).perplexity))
    print(mode, T, s, [round(x, 4) for x in rows[-1]], flush=True)
r = np.array(rows); print(mode, T, "mean", r.mean(0).round(4), "std", r.std(0, ddof=1).round(4))
