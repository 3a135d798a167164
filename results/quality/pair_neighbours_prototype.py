"""doc_topic's posterior over the code and its one-bit neighbours, plus the codes that flip
two of the M best single flips; completion perplexity against the library's. Usage:
python results/quality/pair_neighbours_prototype.py T M (M = 1: the library's own)."""
import sys, numpy as np, torch, itertools
torch.set_num_threads(1)
from bpetopics import PoissBPE
from bpetopics.text import prepare_corpus
from bpetopics.evaluation.perplexity import completion_perplexity
T = int(sys.argv[1]); M = int(sys.argv[2])
splits = prepare_corpus("20newsgroups", vocab_size=2000)
bpe = PoissBPE(n_topics=T, random_state=0, device="cpu", progress=False).fit(splits["train"].counts)
Xt = splits["test"].counts.tocsr()
base = completion_perplexity(bpe, Xt, seed=0).perplexity
W = bpe.decoder_.bit_columns.detach().double().numpy()       # (K, T)
b = bpe.decoder_.first.bias.detach().double().numpy()
beta = bpe.likelihood_.topic_word().detach().double().numpy()  # (V, T)
lo = bpe.prior_.bit_log_odds().double().numpy()
maxb = bpe.max_bits
def softmax(a):
    a = a - a.max(-1, keepdims=True); e = np.exp(a); return e / e.sum(-1, keepdims=True)
class Wrapped:
    def doc_topic(self, X):
        X = X.tocsr(); codes = bpe.transform(X).astype(bool)
        out = np.zeros((X.shape[0], T))
        for d in range(X.shape[0]):
            s, e = X.indptr[d], X.indptr[d + 1]
            z = codes[d]; pre = b + W[z].sum(0); prior = lo[z].sum(); nb = z.sum()
            if e == s:
                out[d] = softmax(pre); continue
            cols, x = X.indices[s:e], X.data[s:e].astype(float)
            sign = np.where(z, -1.0, 1.0)
            pres = [pre] + [pre + sign[j] * W[j] for j in range(len(z))]
            pri = [prior] + [prior + sign[j] * lo[j] for j in range(len(z))]
            bits = [nb] + [nb + sign[j] for j in range(len(z))]
            P = np.array(pres); mix = softmax(P)
            L = (x[:, None] * np.log(np.maximum(beta[cols] @ mix.T, 1e-30))).sum(0) + np.array(pri)
            L[np.array(bits) > (maxb if maxb else 10**9)] = -np.inf
            if M > 1:
                top = np.argsort(-L[1:])[:M]
                extra_p, extra_pri, extra_b = [], [], []
                for i, j in itertools.combinations(top, 2):
                    extra_p.append(pre + sign[i] * W[i] + sign[j] * W[j]); extra_pri.append(prior + sign[i] * lo[i] + sign[j] * lo[j]); extra_b.append(nb + sign[i] + sign[j])
                P2 = np.array(extra_p); mix2 = softmax(P2)
                L2 = (x[:, None] * np.log(np.maximum(beta[cols] @ mix2.T, 1e-30))).sum(0) + np.array(extra_pri)
                L2[np.array(extra_b) > (maxb if maxb else 10**9)] = -np.inf
                mix = np.vstack([mix, mix2]); L = np.concatenate([L, L2])
            q = np.exp(L - L.max()); q /= q.sum()
            out[d] = q @ mix
        return out
    def __getattr__(self, k): return getattr(bpe, k)
w = Wrapped()
check = completion_perplexity(w, Xt, seed=0).perplexity if M == 1 else None
ppl = completion_perplexity(w, Xt, seed=0).perplexity
print(f"T={T} M={M}: library {base:.1f}, prototype {ppl:.1f}" + (f" (M=1 check {check:.1f})" if check else ""))

if len(sys.argv) > 3:                       # accuracy of the classifier on the mixtures
    from bpetopics.evaluation.classification import classification_accuracy
    tr, te = splits["train"], splits["test"]
    for name, model in (("library", bpe), ("prototype", w)):
        acc = classification_accuracy(np.asarray(model.doc_topic(tr.counts)), tr.labels,
                                      np.asarray(model.doc_topic(te.counts)), te.labels, seed=0)
        print(f"T={T} M={M}: accuracy {name} {acc:.4f}")
