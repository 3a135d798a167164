"""Prototype (session 14): an always-on background topic, topic 0 fixed at the corpus's
smoothed word frequencies (never trained or moved), beside T trained topics; topics 1..T
evaluated. Usage: python results/quality/background_topic_prototype.py T MAX_DOCS SEEDS [JSON]
(JSON may hold "bg_bias": the decoder's initial bias towards topic 0; "background": false
runs the defaults through the same evaluation)."""
import sys, json, numpy as np, torch
torch.set_num_threads(1)
from bpetopics.experiments.text_setup import comparison_data
from bpetopics.experiments.text_comparison import choose_reference
from bpetopics.evaluation.evaluate import evaluate_topic_model
from bpetopics.evaluation.cooccurrence import encode_texts
from bpetopics.evaluation.coherence import npmi_coherence
from bpetopics.evaluation.diversity import topic_diversity
from bpetopics.topwords import top_word_ids
from bpetopics.models.poissbpe import PoissBPE
T = int(sys.argv[1]); md = int(sys.argv[2]); seeds = [int(s) for s in sys.argv[3].split(",")]
params = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
bg = params.pop("background", True); init_bias = params.pop("bg_bias", 0.0)
d = comparison_data("20newsgroups", {"vocab_size": 2000, "max_docs": md or None})
tr, te = d.train, d.test; voc = list(tr.vocabulary)
used = choose_reference("auto", te.counts.shape[0])
corpus = encode_texts(list(tr.texts) + list(te.texts), voc)
ref = corpus if used == "corpus" else encode_texts(te.texts, voc)
orig_init, orig_step, orig_end = PoissBPE._init_params, PoissBPE._theta_step, PoissBPE._end_of_epoch
def init(self, X, gen):
    orig_init(self, X, gen)
    freq = np.asarray(X.sum(0)).ravel() + 0.5
    self._bg = torch.from_numpy(np.log(freq / freq.sum())).to(self.likelihood_.topic_logits.dtype)
    with torch.no_grad():
        self.likelihood_.topic_logits[0] = self._bg
        self.decoder_.first.bias[0] += init_bias
def restore(self):
    with torch.no_grad():
        self.likelihood_.topic_logits[0] = self._bg
def step(self, *a, **k):
    orig_step(self, *a, **k); restore(self)
def end(self, X):
    info = orig_end(self, X); restore(self); return info
if bg:
    PoissBPE._init_params, PoissBPE._theta_step, PoissBPE._end_of_epoch = init, step, end
rows = []
for seed in seeds:
    m = PoissBPE(T + (1 if bg else 0), random_state=seed, progress=False, **params).fit(tr.counts)
    r = evaluate_topic_model(m, tr.counts, te.counts, ref, voc, tr.labels, te.labels, seed=seed, gensim_measures=(), corpus_texts=corpus)
    tw = m.topic_word_[1:] if bg else m.topic_word_
    npmi = npmi_coherence(top_word_ids(tw, 10), ref, voc).mean
    div = topic_diversity(tw, 25)
    mix = m.doc_topic(tr.counts)
    rows.append([npmi, div, r["perplexity"], r["accuracy"], float(mix[:, 0].mean()) if bg else 0.0])
    print(f"seed {seed}: npmi {npmi:.4f} div {div:.3f} ppl {r['perplexity']:.1f} acc {r['accuracy']:.3f} bg share {rows[-1][-1]:.3f}", flush=True)
a = np.array(rows)
print(f"T={T} max_docs={md} bg={bg} bias={init_bias} {params}: npmi {a[:,0].mean():.4f}±{a[:,0].std(ddof=1):.4f} div {a[:,1].mean():.3f} ppl {a[:,2].mean():.1f} acc {a[:,3].mean():.3f} bg share {a[:,4].mean():.3f}")
