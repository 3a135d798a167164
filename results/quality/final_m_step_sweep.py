"""The topics re-fitted to the final codes by exact M-steps (experiment, session 14).

Fits PoissBPE (defaults) on 20 Newsgroups, then holds each training document's mixture
f(z_n) fixed (z_n its pursued code) and re-fits beta by EM on the theta step's corpus
objective, evaluating after each number of steps given:

    plain:      beta_wt <- (n_wt + eta) / sum_v (n_vt + eta),
                n_wt = sum_n x_nw f_t(z_n) beta_wt / [beta f(z_n)]_w   (Poisson/multinomial EM)
    penalised:  the same with the diversity prior kept: beta_wt = (n_wt + eta) / (mu_t + N_tok g_wt),
                g = d(penalty weight x use-weighted mean cosine)/d beta at the previous beta,
                mu_t by bisection so that each topic sums to 1

Usage: python results/quality/final_m_step_sweep.py T SEED STEPS MODE
       e.g.  python results/quality/final_m_step_sweep.py 50 0 1,2,3 penalised
"""
import sys

import numpy as np
import scipy.sparse as sps
import torch

torch.set_num_threads(1)
from bpetopics.core.topic_prior import topic_overlap  # noqa: E402
from bpetopics.evaluation.cooccurrence import encode_texts  # noqa: E402
from bpetopics.evaluation.evaluate import evaluate_topic_model  # noqa: E402
from bpetopics.experiments.text_comparison import TEXT_MODELS  # noqa: E402
from bpetopics.text import prepare_corpus  # noqa: E402

T, seed = int(sys.argv[1]), int(sys.argv[2])
steps = [int(i) for i in sys.argv[3].split(",")]
penalised = sys.argv[4] == "penalised"
splits = prepare_corpus("20newsgroups", vocab_size=2000)
train, test = splits["train"], splits["test"]
vocabulary = list(train.vocabulary)
reference = encode_texts(test.texts, vocabulary)
corpus = encode_texts(list(train.texts) + list(test.texts), vocabulary)
model = TEXT_MODELS["PoissBPE"].make(T, seed, {})
model.fit(train.counts)


def report(tag):
    r = evaluate_topic_model(model, train.counts, test.counts, reference, vocabulary, train.labels,
                             test.labels, seed=seed, gensim_measures=(), corpus_texts=corpus)
    print(f"T={T} seed={seed} {tag}: npmi {r['npmi']:.4f} corpus {r['npmi_corpus']:.4f} "
          f"div {r['diversity']:.3f} ppl {r['perplexity']:.1f} acc {r['accuracy']:.3f} "
          f"purity {r['purity']:.3f}", flush=True)


report("trained")
X = train.counts.tocoo()
rows, cols, x = X.row, X.col, X.data.astype(np.float64)
theta = np.asarray(model.doc_topic(train.counts, posterior="map"), dtype=np.float64)   # (N, T)
usage = torch.from_numpy(theta.mean(0))
beta = model.topic_word_.T.copy()                                                      # (W, T)
eta, n_tokens, weight = model.topic_smoothing, float(X.data.sum()), model._penalty_weight()
done = 0
for target in steps:
    while done < target:
        rate = np.einsum("nt,nt->n", theta[rows], beta[cols])
        ratio = sps.csr_matrix((x / rate, (rows, cols)), shape=X.shape)
        n = beta * (ratio.T @ theta) + eta                       # expected counts + eta, (W, T)
        if penalised:
            b = torch.from_numpy(beta).requires_grad_(True)
            (weight * topic_overlap(b, usage)).backward()
            g = n_tokens * b.grad.numpy()
            lo = np.maximum(0.0, -g.min(0)) + 1e-12 * n.sum(0)
            hi = lo + n.sum(0) + np.abs(g).max(0)
            for _ in range(100):                                 # sum_w n / (mu + g) = 1
                mid = 0.5 * (lo + hi)
                above = (n / (mid + g)).sum(0) > 1
                lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
            beta = n / (hi + g)
        else:
            beta = n
        beta /= beta.sum(0, keepdims=True)
        done += 1
    with torch.no_grad():
        logits = torch.from_numpy(np.log(np.maximum(beta.T, 1e-30)).copy())
        model.likelihood_.topic_logits.copy_(logits.to(model.likelihood_.topic_logits.dtype))
    report(f"{'penalised' if penalised else 'plain'} M-steps {done}")
