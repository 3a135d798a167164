"""topics.csv (save_run) and `bpetopics topics` (topic_rows) order tied words alike."""

import csv

import numpy as np
import torch

from bpetopics import PoissBPE
from bpetopics.runs import load_run, save_run
from bpetopics.runs.topics import topic_rows


def test_tied_words_are_in_vocabulary_order_in_topics_csv_and_topic_rows(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(40, 60))
    model = PoissBPE(n_topics=3, n_bits=4, epochs=1, device="cpu", progress=False).fit(X)
    levels = torch.as_tensor(np.random.default_rng(0).integers(0, 3, size=60), dtype=torch.float32)
    with torch.no_grad():  # topic 1: three levels of weight, many words tied on each
        model.likelihood_.topic_logits[1] = levels
    vocabulary = [f"w{j:02d}" for j in range(60)]
    out = save_run(tmp_path / "run", model, vocabulary=vocabulary, counts=X)
    with open(out / "topics.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["topic"] == "1"]
    expected = [vocabulary[j] for j in np.argsort(-levels.numpy(), kind="stable")[:20]]  # ties: lower index first
    assert expected != [vocabulary[j] for j in np.argsort(-levels.numpy())[:20]]  # an unstable sort differs here
    assert [r["word"] for r in rows] == expected
    assert topic_rows(load_run(out), top=20)[1]["words"] == expected
