"""Prototype (session 16): a fixed background share in PoissBPE's word rates.

    rate_nw  =  lambda_n [ (1 - rho) sum_t beta_wt f_t(z_n) + rho b_w ]

with b the corpus's word frequencies (add-one smoothed, fixed) and rho a fixed share.
Because sum_t f_t = 1 this is the model's own rate with every topic replaced by
beta'_t = (1 - rho) beta_t + rho b, so the pursuit, the posterior and the split moves
run unchanged on beta'; the theta step's data gradient reaches beta as (1 - rho) times
its gradient on beta', and the priors (diversity, Dirichlet) act on beta, the topics
reported (``topic_word_``). Completion perplexity scores with beta' (the model's
predictive). The generic words need not be in any topic: the topics' top words should
be their own.

Usage: CORPUS=20newsgroups MAXDOCS=0 python results/quality/background_share_prototype.py
T SEEDS RHO[,RHO...] ['{json PoissBPE params}']   (RHO 0: the defaults, same evaluation)
"""
import json
import os
import sys

import numpy as np
import torch

torch.set_num_threads(1)

from bpetopics.core import fused_theta
from bpetopics.core.poisson import PoissonLikelihood
from bpetopics.evaluation.cooccurrence import encode_texts
from bpetopics.evaluation.evaluate import evaluate_topic_model
from bpetopics.evaluation.perplexity import heldout_log_likelihood
from bpetopics.experiments.text_comparison import choose_reference
from bpetopics.experiments.text_setup import comparison_data
from bpetopics.models.poissbpe import PoissBPE

STATE = {"rho": 0.0, "background": None}


class BackgroundLikelihood(PoissonLikelihood):
    """beta' = (1 - rho) softmax(logits) + rho b as the rate's topics."""

    def sharp(self):
        return torch.softmax(self.topic_logits, dim=1).t()

    def topic_word(self):
        rho, b = STATE["rho"], STATE["background"]
        return (1 - rho) * self.sharp() + rho * b.to(self.topic_logits.dtype)[:, None]


_orig_set_gradients = fused_theta.set_gradients


def set_gradients(decoder, likelihood, batch, codes, beta, repulsion, smoothing):
    """fused_theta.set_gradients with the data gradient taken from beta' to beta."""
    rho = STATE["rho"]
    sharp_t = torch.softmax(likelihood.topic_logits.detach(), 1).contiguous()      # (T, W)
    words, local = batch.vocabulary(sharp_t.shape[1])
    beta_u = batch.topic_rows(beta.detach())                                       # beta' (U, T)
    sharp_u = batch.topic_rows(sharp_t.t())                                        # beta (U, T)
    weight, bias = decoder.first.weight.detach(), decoder.first.bias.detach()
    tokens = max(float(batch.vals.sum()), 1.0)
    grad_w, grad_b, d_beta_u, usage = fused_theta._decoder_and_data(
        codes.numpy().view(np.uint8), weight.numpy(), bias.numpy(), batch.rows.numpy(),
        local.numpy(), batch.vals.float().numpy(), beta_u.numpy(), np.float32(1.0 / tokens))
    d_beta_u *= np.float32(1 - rho)
    logits_grad = np.empty(sharp_t.shape, dtype=np.float32)
    fused_theta._topic_logits_grad(sharp_t.numpy(), usage, np.float32(repulsion), np.float32(smoothing),
                                   words.numpy(), np.ascontiguousarray(sharp_u.numpy()), d_beta_u, logits_grad)
    decoder.first.weight.grad = torch.from_numpy(grad_w)
    decoder.first.bias.grad = torch.from_numpy(grad_b)
    likelihood.topic_logits.grad = torch.from_numpy(logits_grad)


class BackgroundPoissBPE(PoissBPE):
    def _make_likelihood(self, shape):
        return BackgroundLikelihood(shape[1], self._n_out(shape))

    @property
    def topic_word_(self):
        with torch.no_grad():
            return self.likelihood_.sharp().t().double().cpu().numpy()

    def heldout_log_likelihood(self, observed, heldout):
        with torch.no_grad():
            rate_topics = self.likelihood_.topic_word().t().double().cpu().numpy()
        return heldout_log_likelihood(self.doc_topic(observed), rate_topics, heldout)


def main():
    T = int(sys.argv[1])
    seeds = [int(s) for s in sys.argv[2].split(",")]
    rhos = [float(r) for r in sys.argv[3].split(",")]
    params = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    corpus_name = os.environ.get("CORPUS", "20newsgroups")
    d = comparison_data(corpus_name, {"vocab_size": 2000, "max_docs": int(os.environ.get("MAXDOCS", "0")) or None})
    train, test = d.train, d.test
    vocabulary = list(train.vocabulary)
    corpus = encode_texts(list(train.texts) + list(test.texts), vocabulary)
    used = choose_reference("auto", test.counts.shape[0])
    reference = corpus if used == "corpus" else encode_texts(test.texts, vocabulary)
    freq = np.asarray(train.counts.sum(0), dtype=np.float64).ravel() + 1.0
    STATE["background"] = torch.from_numpy(freq / freq.sum()).float()
    fused_theta.set_gradients = set_gradients
    keys = ["npmi", "npmi_corpus", "diversity", "diversity_top10", "perplexity", "accuracy", "purity", "unused_topics"]
    for rho in rhos:
        STATE["rho"] = rho
        rows = []
        for seed in seeds:
            m = BackgroundPoissBPE(T, random_state=seed, progress=False, **params).fit(train.counts)
            r = evaluate_topic_model(m, train.counts, test.counts, reference, vocabulary, train.labels,
                                     test.labels, seed=seed, gensim_measures=(), corpus_texts=corpus)
            rows.append([r[k] for k in keys])
            print(f"{corpus_name} T={T} rho={rho} seed {seed}: " + " ".join(f"{k} {r[k]:.4f}" for k in keys), flush=True)
        a = np.array(rows)
        std = a.std(0, ddof=1) if len(a) > 1 else np.zeros(a.shape[1])
        print(f"== {corpus_name} T={T} rho={rho} {json.dumps(params)} seeds={seeds}: "
              + ", ".join(f"{k} {mu:.4f}±{s:.4f}" for k, mu, s in zip(keys, a.mean(0), std)), flush=True)


if __name__ == "__main__":
    main()
