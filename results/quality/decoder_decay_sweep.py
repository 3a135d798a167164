"""Decoupled weight decay on the decoder's bit columns (experiment, session 14): after
each Adam step W1 <- (1 - lr * decay) W1 (AdamW's form; a Gaussian prior on the decoder
that shrinks rarely used bits most, whose updates come seldom). 20 Newsgroups, PoissBPE
otherwise at its defaults (or with the JSON parameters given), ``compare_models``.

Usage: python results/quality/decoder_decay_sweep.py T DECAY SEEDS [JSON]
       e.g.  python results/quality/decoder_decay_sweep.py 50 0.1 0,1,2
"""
import json
import sys

import torch

torch.set_num_threads(1)
from bpetopics.experiments.text_comparison import compare_models  # noqa: E402
from bpetopics.models.poissbpe import PoissBPE  # noqa: E402
from bpetopics.text import prepare_corpus  # noqa: E402

T, decay = int(sys.argv[1]), float(sys.argv[2])
seeds = tuple(int(s) for s in sys.argv[3].split(","))
params = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
theta_step = PoissBPE._theta_step


def decayed_step(self, *args, **kwargs):
    theta_step(self, *args, **kwargs)
    with torch.no_grad():
        self.decoder_.first.weight.mul_(1.0 - self.lr * decay)


PoissBPE._theta_step = decayed_step
splits = prepare_corpus("20newsgroups", vocab_size=2000)
df = compare_models(splits["train"], splits["test"], T, seeds=seeds, gensim_measures=(),
                    models=("PoissBPE",), bpe_params=params)
m, s = df.mean(numeric_only=True), df.std(numeric_only=True)
keys = ["npmi", "npmi_corpus", "diversity", "perplexity", "accuracy", "purity", "unused_topics"]
print(f"T={T} decay={decay} {params} seeds={seeds}: "
      + ", ".join(f"{k} {m[k]:.4f}±{s[k]:.4f}" for k in keys), flush=True)
