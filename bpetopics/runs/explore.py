"""What the exploring commands compute from a run, as library functions: the
co-activation graph and the bit table (``bpetopics graph``), pyLDAvis's inputs
(``bpetopics ldavis``) and every measure of the run (``bpetopics evaluate``). Problems a
user can fix are one-line :class:`~bpetopics.runs.folder.RunError` s."""

from __future__ import annotations

import math

from bpetopics.runs.corpus import run_splits, run_train_counts
from bpetopics.runs.folder import RunError
from bpetopics.runs.sharded_codes import is_sharded_run


def run_graph(run, rule: str = "threshold", threshold: float | None = None, mass: float | None = None,
              top_n: int = 10):
    """The co-activation graph of a run's training documents (networkx.Graph).

    Mixtures are f(z_n) = ``model.code_topic(codes_)``; documents sharing a code are
    counted once per code. Node ``probability`` is the topic's share of the training
    tokens, from the saved training counts (``counts.npz``); for a run saved without
    them, the share recorded by training (``summary.json``), else the mean mixture. The
    corpus is never rebuilt.
    """
    import numpy as np

    from bpetopics.runs.topics import topic_shares
    from bpetopics.viz import DEFAULT_MASS, DEFAULT_THRESHOLD, coactivation_graph

    if is_sharded_run(run):       # all documents, by their distinct codes
        from bpetopics.runs.sharded_explore import sharded_graph

        return _labelled(run, sharded_graph(run, rule, DEFAULT_THRESHOLD if threshold is None else threshold,
                                            DEFAULT_MASS if mass is None else mass, top_n))
    model = run.model
    codes = getattr(model, "codes_", None)
    if codes is None:
        raise RunError(f"{run.path} has no codes of its training documents (doc_codes.npz): train it again")
    codes = np.asarray(codes, dtype=np.uint8)
    lengths = np.asarray(run_train_counts(run).sum(axis=1)).ravel() if run.has_counts() else None
    G = coactivation_graph(model.code_topic(codes), model.topic_word_, run.vocabulary, codes=codes,
                           rule=rule, threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
                           mass=DEFAULT_MASS if mass is None else mass, top_n=top_n, doc_lengths=lengths)
    shares = topic_shares(run) if lengths is None else None
    if shares is not None and len(shares) == G.number_of_nodes() and sum(shares) > 0:
        total = float(sum(shares))
        for t, s in enumerate(shares):
            G.nodes[t]["probability"] = float(s) / total
    return _labelled(run, G)


def _labelled(run, G):
    """``G`` with each topic node's ``label`` the run's (``labels.json``: set by hand or
    computed by train; the top words for a run without it)."""
    from bpetopics.runs.labels import topic_labels

    for t, label in enumerate(topic_labels(run, rebuild=False)):
        if t in G.nodes:
            G.nodes[t]["label"] = label
    return G


def run_bit_table(run, labels=None):
    """One row per bit (usage, the topics it raises most): :func:`bpetopics.viz.bit_table`."""
    import numpy as np

    from bpetopics.viz import bit_table

    if is_sharded_run(run):
        from bpetopics.runs.sharded_explore import sharded_bit_table

        return sharded_bit_table(run, labels)
    model = run.model
    codes = getattr(model, "codes_", None)
    return bit_table(model.code_topic, model.code_length(), labels=labels,
                     codes=None if codes is None else np.asarray(codes), topic_word=model.topic_word_,
                     vocabulary=run.vocabulary)


def run_ldavis_inputs(run) -> dict:
    """The arrays pyLDAvis needs, from a run and its saved training counts.

    ``topic_word`` = ``model.topic_word_``; ``doc_topic`` = f(z_n) =
    ``model.code_topic(codes_)``; ``doc_lengths`` and ``term_frequency`` = row and
    column sums of the training counts (``counts.npz``; rebuilt from the recorded corpus
    only for runs saved before that file existed). A run trained on a sharded corpus
    gives one row per distinct code (:func:`~bpetopics.runs.sharded_explore.sharded_ldavis_inputs`).
    """
    import numpy as np

    if is_sharded_run(run):     # one row per distinct code, weighted: the same page
        from bpetopics.runs.sharded_explore import sharded_ldavis_inputs

        return sharded_ldavis_inputs(run)
    model = run.model
    codes = getattr(model, "codes_", None)
    if codes is None:
        raise RunError(f"{run.path} has no codes of its training documents (doc_codes.npz): train it again")
    counts = run_train_counts(run)
    return {"topic_word": model.topic_word_, "doc_topic": model.code_topic(np.asarray(codes, dtype=np.uint8)),
            "doc_lengths": np.asarray(counts.sum(axis=1)).ravel(),
            "vocabulary": list(run.vocabulary),
            "term_frequency": np.asarray(counts.sum(axis=0)).ravel()}


def json_safe(value):
    """``value`` with non-finite floats as None and numpy scalars as Python ones (for JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item"):
        return json_safe(value.item())
    return value


def evaluate_run(run, reference: str = "test", top_n: int = 10, seed: int = 0, gensim: bool = True,
                 echo=None, sample: int | None = None) -> dict:
    """All the measures of :func:`bpetopics.evaluation.evaluate_topic_model` for a run.

    Held-out documents are the test split, rebuilt with :func:`run_splits` (for a source
    without one, the training documents, which flatters perplexity; ``heldout`` says
    which). The training counts are the run's saved ones (``counts.npz``) when it has
    them. ``reference`` is the split whose texts score coherence (``npmi``; ``npmi_corpus``
    scores it on the whole corpus, train and test, as ``compare`` does). ``fit_seconds`` is the
    recorded training time. A run trained on a sharded corpus is measured on a seeded
    sample of ``sample`` of its training documents
    (:func:`~bpetopics.runs.sharded_explore.evaluate_sharded_run`; ``reference`` and
    ``gensim`` do not apply).
    """
    from bpetopics.evaluation import evaluate_topic_model
    from bpetopics.evaluation.coherence import GENSIM_MEASURES, MIN_REFERENCE_DOCS

    if is_sharded_run(run):
        from bpetopics.runs.sharded_explore import DEFAULT_SAMPLE, evaluate_sharded_run

        return evaluate_sharded_run(run, DEFAULT_SAMPLE if sample is None else sample, top_n, seed)
    splits = run_splits(run)
    train = splits["train"]
    train_counts = run_train_counts(run) if run.has_counts() else train.counts
    test = splits.get("test")
    heldout = "test"
    if test is None or test.n_docs == 0:
        if reference == "test":
            raise RunError(f"the corpus of {run.path} has no test split: use --reference train "
                            "(held-out measures are then computed on the training documents), or train "
                            "with --test-size 0.2 to hold out documents")
        test, heldout = train, "train"
        if echo is not None:
            echo("Warning: no test split: perplexity, inference time and accuracy use the training documents")
    ref = test if reference == "test" else train
    test_counts = test.counts if heldout == "test" else train_counts
    model = run.model
    res = evaluate_topic_model(
        model, train_counts, test_counts, ref.texts, list(run.vocabulary),
        train_labels=train.labels if heldout == "test" else None,
        test_labels=test.labels if heldout == "test" else None,
        codes=model.transform(test_counts), top_n=top_n, seed=seed,
        gensim_measures=GENSIM_MEASURES if gensim else (),
        corpus_texts=list(train.texts) + (list(test.texts) if heldout == "test" else []))
    if echo is not None and reference == "test" and test.n_docs < MIN_REFERENCE_DOCS:
        echo(f"Note: the test split has {test.n_docs:,} documents, a small coherence reference (word pairs "
             f"that never meet in it score -1, and {res['npmi_nonfinite']} topic(s) had no finite NPMI on it): "
             f"npmi_corpus scores the same topics on the whole corpus")
    seconds = run.summary.get("train_seconds")
    if seconds is None:
        seconds = sum(h.get("seconds", 0.0) for h in model.history_)
    return {"run": str(run.path), "model": run.config.get("model"), "reference": reference, "heldout": heldout,
            "n_train": train_counts.shape[0], "n_heldout": test_counts.shape[0], "n_words": len(run.vocabulary),
            **res, "fit_seconds": float(seconds)}
