"""Prototype (session 15): grow the topics by splitting. Train T0 topics for E0 epochs,
split every topic in two by the split moves' 2-means on what it explains of each
training document (the halves seed two children; both start with the parent's decoder
row), keep the T most valuable children (a topic whose split gains least keeps one
child) and train the remaining epochs with T topics.

Usage: python results/quality/growth_prototype.py T T0 E0 SEEDS [JSON]
  JSON: PoissBPE parameters (both stages; "epochs" the total, default 15).
  T0 and E0 may be lists, "13,25" and "3,6": 13 topics to epoch 3, 25 to epoch 6, then T.
"""
import json
import sys

import numpy as np
import torch

torch.set_num_threads(1)
from bpetopics.core.topic_split import split_gains  # noqa: E402
from bpetopics.models.poissbpe import PoissBPE  # noqa: E402
from bpetopics.models.topic_repair import SPLIT_SMOOTHING, corpus_frequencies, smoothed_log_topics  # noqa: E402
from prototype_bench import Newsgroups  # noqa: E402

T = int(sys.argv[1])
stages = [int(t) for t in sys.argv[2].split(",")] + [T]
at = [int(e) for e in sys.argv[3].split(",")]
seeds = [int(s) for s in sys.argv[4].split(",")]
params = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
data = Newsgroups()
X = data.X
params.setdefault("n_bits", PoissBPE(T).code_length())
params.setdefault("cooldown_epochs", 0)     # the runs of topic_growth.md predate the cooldown
epochs = params.pop("epochs", 15)
freq = corpus_frequencies(X)


def grown(parent, seed, T):
    """A T-topic model whose topics are the children of ``parent``'s topics."""
    T0 = parent.n_topics
    beta = parent.topic_word_.T.astype(np.float64)                  # (W, T0)
    mix = parent.doc_topic(X).astype(np.float64)
    gains, halves = split_gains(X, beta, mix)
    n_split = T - T0                                                # topics split in two
    split = set(np.argsort(-gains, kind="stable")[:n_split].tolist())
    logits, parents = [], []
    for t in range(T0):
        if t in split:
            logits += [smoothed_log_topics(halves[t, h][None], freq, SPLIT_SMOOTHING)[0] for h in (0, 1)]
            parents += [t, t]
        else:
            logits.append(parent.likelihood_.topic_logits[t].detach().double().numpy())
            parents.append(t)
    child = PoissBPE(T, random_state=seed, progress=False, epochs=epochs, initial_topics=T, **params)
    child._setup(X)
    p = torch.as_tensor(parents)
    with torch.no_grad():
        child.decoder_.first.weight.copy_(parent.decoder_.first.weight[p])
        # two children share the parent's weight: ln 2 off each child's bias keeps the
        # parent's mixture (the other topics' shares) as it was
        twice = torch.as_tensor([parents.count(t) for t in parents], dtype=torch.float32)
        child.decoder_.first.bias.copy_(parent.decoder_.first.bias[p] - torch.log(twice))
        child.likelihood_.topic_logits.copy_(torch.from_numpy(np.stack(logits)))
    child.prior_.load_state_dict(parent.prior_.state_dict())
    child.epoch_, child.step_ = parent.epoch_, parent.step_
    return child, np.sort(gains)[::-1]


for seed in seeds:
    model = PoissBPE(stages[0], random_state=seed, progress=False, epochs=epochs, initial_topics=stages[0],
                     **params)
    model._setup(X)
    model._train(X, at[0])
    for i, size in enumerate(stages[1:]):
        model, gains = grown(model, seed, size)
        model._train(X, (at[i + 1] if i + 1 < len(at) else epochs) - model.epoch_)
    data.evaluate(model, seed, f" gains {np.round(gains[:3]).tolist()}..{np.round(gains[-3:]).tolist()}")
data.summary(f"T={T} stages={stages} at={at} {params} epochs={epochs}")
