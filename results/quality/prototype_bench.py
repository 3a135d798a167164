"""What the session-15 prototypes share (growth_prototype.py, prune_prototype.py): 20
Newsgroups with both NPMI references, and each model's evaluation printed per seed and
summed up as `bpetopics compare` measures it."""
import numpy as np

from bpetopics.evaluation.cooccurrence import encode_texts
from bpetopics.evaluation.evaluate import evaluate_topic_model
from bpetopics.text import prepare_corpus

KEYS = ["npmi", "npmi_corpus", "diversity", "perplexity", "accuracy", "purity", "unused_topics"]
NAMES = ["npmi", "corpus", "div", "ppl", "acc", "purity", "unused"]


class Newsgroups:
    """20 Newsgroups (2,000 words): train/test splits, the test split's and the whole
    corpus's texts as NPMI references; ``scores`` collects each evaluated model's row."""

    def __init__(self):
        splits = prepare_corpus("20newsgroups", vocab_size=2000)
        self.train, self.test = splits["train"], splits["test"]
        self.X = self.train.counts
        self.vocabulary = list(self.train.vocabulary)
        self.reference = encode_texts(self.test.texts, self.vocabulary)
        self.corpus = encode_texts(list(self.train.texts) + list(self.test.texts), self.vocabulary)
        self.scores = []

    def evaluate(self, model, seed, info=""):
        """Evaluate a fitted model, keep its row and print it."""
        r = evaluate_topic_model(model, self.X, self.test.counts, self.reference, self.vocabulary,
                                 self.train.labels, self.test.labels, seed=seed, gensim_measures=(),
                                 corpus_texts=self.corpus)
        self.scores.append([r[k] for k in KEYS])
        print(f"seed {seed}: npmi {r['npmi']:.4f} corpus {r['npmi_corpus']:.4f} div {r['diversity']:.3f} "
              f"ppl {r['perplexity']:.1f} acc {r['accuracy']:.3f} purity {r['purity']:.3f} "
              f"unused {r['unused_topics']:.2f}{info}", flush=True)

    def summary(self, setting):
        """Print the mean +/- standard deviation over the seeds evaluated."""
        a = np.array(self.scores)
        std = a.std(0, ddof=1) if len(a) > 1 else np.zeros(a.shape[1])
        print(f"{setting}: " + ", ".join(f"{n} {m:.4f}±{s:.4f}" for n, m, s in zip(NAMES, a.mean(0), std)),
              flush=True)
