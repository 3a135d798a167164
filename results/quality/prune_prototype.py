"""Prototype (session 15): train T + E topics, then keep the T most used and train a few
more epochs with those alone (an overcomplete model pruned to T topics).

Usage: python results/quality/prune_prototype.py T EXTRA FINETUNE SEEDS [JSON]
  EXTRA 0 and FINETUNE 0: T topics throughout (no growth) through the same evaluation.
  Every model here trains its topics from the start (initial_topics = its topics).
  JSON: PoissBPE parameters of both stages; "prune_at" (an epoch) prunes during training
  instead of after it (then FINETUNE is ignored: training runs its epochs in all);
  "rank": "use" (default, total mixture weight on the training documents) or "top" (the
  number of training documents whose top topic it is).
"""
import json
import sys

import numpy as np
import torch

torch.set_num_threads(1)
from bpetopics.models.poissbpe import PoissBPE  # noqa: E402
from prototype_bench import Newsgroups  # noqa: E402

T, extra, finetune = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
seeds = [int(s) for s in sys.argv[4].split(",")]
params = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
prune_at = params.pop("prune_at", None)
rank = params.pop("rank", "use")
data = Newsgroups()
X = data.X
params.setdefault("n_bits", PoissBPE(T).code_length())
params.setdefault("cooldown_epochs", 0)     # the runs of topic_growth.md predate the cooldown
epochs = params.pop("epochs", 15)


def pruned(big, seed, total_epochs):
    """A T-topic model holding ``big``'s T most used topics, at its epoch and step."""
    mix = big.doc_topic(X)
    score = mix.sum(0) if rank == "use" else np.bincount(mix.argmax(1), minlength=big.n_topics)
    keep = np.sort(np.argsort(-score, kind="stable")[:T])
    small = PoissBPE(T, random_state=seed, progress=False, epochs=total_epochs, initial_topics=T, **params)
    small._setup(X)
    with torch.no_grad():
        small.decoder_.first.weight.copy_(big.decoder_.first.weight[keep])
        small.decoder_.first.bias.copy_(big.decoder_.first.bias[keep])
        small.likelihood_.topic_logits.copy_(big.likelihood_.topic_logits[keep])
    small.prior_.load_state_dict(big.prior_.state_dict())
    small.epoch_, small.step_ = big.epoch_, big.step_
    return small, score[keep].min() / score.mean(), np.sort(score)[:extra] / score.mean()


for seed in seeds:
    if extra == 0:
        model = PoissBPE(T, random_state=seed, progress=False, epochs=epochs, initial_topics=T, **params).fit(X)
        info = ""
    else:
        stage = prune_at if prune_at is not None else epochs
        big = PoissBPE(T + extra, random_state=seed, progress=False, epochs=stage if prune_at is None else epochs,
                       initial_topics=T + extra,
                       **params)
        big._setup(X)
        big._train(X, stage)
        total = epochs if prune_at is not None else epochs + finetune
        model, kept_min, dropped = pruned(big, seed, total)
        model.continue_fit(X)
        info = f" kept min use {kept_min:.2f} dropped {np.round(dropped, 2).tolist()}"
    data.evaluate(model, seed, info)
data.summary(f"T={T} extra={extra} finetune={finetune} prune_at={prune_at} rank={rank} {params} epochs={epochs}")
