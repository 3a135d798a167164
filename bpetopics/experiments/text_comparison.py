"""PoissBPE against the baselines on the same documents, over seeds: one table, one figure.

:func:`compare_models` fits every model on the identical bag-of-words matrix (the train
split's counts on one vocabulary), once per seed, and measures each with the same call
to :func:`~bpetopics.evaluation.evaluate_topic_model` on the same held-out documents and
the same coherence reference. :func:`write_comparison` writes ``comparison.csv`` (one row
per model and seed), ``comparison.md`` (mean +- std over seeds) and ``comparison.png``.

Fairness, by construction:

* the same ``counts`` (train split) for both fits and the same held-out ``counts`` (test
  split) for completion perplexity, inference time and the classifier's test features;
* the same reference texts for NPMI (ours and gensim's ``c_npmi``), the same top-N words,
  the same completion split and classifier seed (the run's seed);
* LDA is :class:`~bpetopics.baselines.LDABaseline` with its documented defaults (online
  variational Bayes, 10 passes, 50 E-step iterations, ``alpha="auto"``, ``eta`` = 1/T,
  chunks of 2,000), a setting chosen on 20 Newsgroups in that class's docstring; only
  ``passes`` is usually changed (``--lda-passes``);
* PoissBPE uses its own defaults; ``n_topics`` and the seed are shared;
* ``fit_seconds`` is the wall time of ``fit`` measured here for every model (and
  ``fit_cpu_seconds`` its CPU time, which a busy machine does not inflate), after one untimed
  warm-up fit of each model on a few documents (the first fit in a process pays for
  lazy imports and library initialisation, which would otherwise count against seed 0);
  ``infer_seconds`` is ``doc_topic`` on the held-out documents;
* topics whose coherence is non-finite are scored at -1 and counted for both models
  (``npmi_nonfinite``, ``gensim_c_npmi_nonfinite``).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from bpetopics.evaluation.coherence import MIN_REFERENCE_DOCS
from bpetopics.evaluation.cooccurrence import encode_texts
from bpetopics.evaluation.evaluate import evaluate_topic_model
# The tables and figure of a comparison (re-exported: they were defined here before).
from bpetopics.experiments.comparison_report import (FIGURE_METRICS, FILES, METRICS, plot_comparison, summarize,
                                                     summary_markdown, write_comparison)
__all__ = ["TEXT_MODELS", "TextModel", "MODEL_NAMES", "METRICS", "FILES", "FIGURE_METRICS", "choose_reference", "compare_models",
           "holdout_split", "model_names", "model_params", "summarize", "summary_markdown", "plot_comparison",
           "write_comparison"]


@dataclass(frozen=True)
class TextModel:
    """A named model factory of the comparison.

    make : (n_topics, seed, params) -> an unfitted topic model (``fit(X)``,
        ``topic_word_``, ``doc_topic(X)``; docs/design.md)
    warm_up : parameters of the small untimed warm-up fit (e.g. one epoch)
    has_codes : True when ``transform(X)`` gives binary codes (their sparsity is measured)
    """

    make: Callable
    warm_up: dict
    has_codes: bool = False


def _poissbpe(n_topics: int, seed: int, params: dict):
    from bpetopics.models import PoissBPE

    return PoissBPE(**{"progress": False, **params, "n_topics": n_topics, "random_state": seed})


def _lda(n_topics: int, seed: int, params: dict):
    from bpetopics.baselines.lda import LDABaseline

    return LDABaseline(**{**params, "n_topics": n_topics, "random_state": seed})


def _tomotopy(n_topics: int, seed: int, params: dict):
    from bpetopics.baselines.tomotopy_lda import TomotopyLDA

    return TomotopyLDA(**{**params, "n_topics": n_topics, "random_state": seed})


def _tomotopy_200(n_topics: int, seed: int, params: dict):
    return _tomotopy(n_topics, seed, {"iterations": 200, **params})


def _nmf(n_topics: int, seed: int, params: dict):
    from bpetopics.baselines.nmf import NMFTopics

    return NMFTopics(**{**params, "n_topics": n_topics, "random_state": seed})


def _prodlda(n_topics: int, seed: int, params: dict):
    from bpetopics.baselines.prodlda import ProdLDA

    return ProdLDA(**{**params, "n_topics": n_topics, "random_state": seed})


#: Every model the comparison knows, in table order. A new baseline is one entry here
#: (and its class in :mod:`bpetopics.baselines`).
TEXT_MODELS = {
    "PoissBPE": TextModel(_poissbpe, {"epochs": 1}, has_codes=True),
    "LDA": TextModel(_lda, {"passes": 1}),
    "Tomotopy": TextModel(_tomotopy, {"iterations": 5}),
    "NMF": TextModel(_nmf, {"max_iter": 5}),
    "ProdLDA": TextModel(_prodlda, {"epochs": 1}),
    "Tomotopy-200": TextModel(_tomotopy_200, {"iterations": 5}),
}
#: The models compared when none are named.
MODEL_NAMES = ("PoissBPE", "LDA")



def model_names(names) -> list:
    """Registry names for ``names`` (a comma-separated string or a sequence), matched
    without regard to case; ValueError naming the unknown ones."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    by_lower = {k.lower(): k for k in TEXT_MODELS}
    unknown = [n for n in names if n.lower() not in by_lower]
    if unknown or not names:
        raise ValueError(f"unknown models {unknown or names}; choose from {', '.join(TEXT_MODELS)}")
    return [by_lower[n.lower()] for n in names]


#: What the comparison sets for every model itself (``--topics``, ``--seeds``).
SHARED_PARAMS = ("n_topics", "random_state")


def model_params(specs: Sequence[str], models: Sequence[str], n_topics: int = 20) -> dict:
    """Keyword arguments per model from ``NAME=JSON`` strings, such as
    ``'Tomotopy={"iterations": 2000}'`` (``compare --params``).

    Parameters
    ----------
    specs : sequence of str
        ``NAME=JSON``: a model of ``models`` (any case) and a JSON object of its
        constructor's parameters; a model named twice has its objects merged.
    models : sequence of str
        The registry names compared (:func:`model_names`).
    n_topics : int
        T, to build each model once and check the names (and PoissBPE's values).

    Returns
    -------
    dict
        {registry name: {parameter: value}}.

    Raises
    ------
    ValueError
        One line naming the spec at fault: no ``=``, a model not compared, JSON that is
        not an object, a parameter the model does not have or that the comparison sets
        (:data:`SHARED_PARAMS`), the same parameter twice, or (PoissBPE) a value its
        rules refuse.
    """
    import inspect
    import json

    by_lower = {name.lower(): name for name in models}
    params: dict = {}
    for spec in specs:
        name, sep, text = spec.partition("=")
        if not sep:
            raise ValueError(f"--params {spec!r} needs the form MODEL=JSON, such as 'Tomotopy={{\"iterations\": 2000}}'")
        name = by_lower.get(name.strip().lower())
        if name is None:
            raise ValueError(f"--params {spec.partition('=')[0]!r} is not among the compared models "
                             f"({', '.join(models)}): add it to --models or correct the name")
        try:
            given = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--params for {name} is not valid JSON ({exc.msg} at character {exc.pos}): "
                             f"give an object such as {{\"iterations\": 2000}}") from None
        if not isinstance(given, dict):
            raise ValueError(f"--params for {name} must be a JSON object of its parameters, such as "
                             f"{{\"iterations\": 2000}}; got {text.strip()!r}")
        known = [p for p in inspect.signature(type(TEXT_MODELS[name].make(n_topics, 0, {})).__init__).parameters
                 if p not in ("self", *SHARED_PARAMS)]
        for key in given:
            if key in SHARED_PARAMS:
                raise ValueError(f"--params sets {key} for {name}, which the comparison sets for every model "
                                 f"(--topics, --seeds): leave it out")
            if key not in known:
                raise ValueError(f"{name} has no parameter {key!r}; its parameters: {', '.join(known)}")
            if key in params.get(name, {}):
                raise ValueError(f"--params gives {name}'s {key} twice: give it once")
        params.setdefault(name, {}).update(given)
    for name, given in params.items():
        model = TEXT_MODELS[name].make(n_topics, 0, given)
        if hasattr(model, "validate"):
            model.validate(label=lambda key: f"{name}'s {key}")
    return params


def choose_reference(reference: str, n_test: int) -> str:
    """The coherence reference actually used: ``"auto"`` is ``"test"`` when the held-out
    split has at least :data:`MIN_REFERENCE_DOCS` documents, else ``"corpus"``."""
    if reference not in ("auto", "test", "train", "corpus"):
        raise ValueError(f"reference must be 'auto', 'test', 'train' or 'corpus'; got {reference!r}")
    if reference == "auto":
        return "test" if n_test >= MIN_REFERENCE_DOCS else "corpus"
    return reference

def holdout_split(corpus, fraction: float = 0.2, seed: int = 0):
    """Split one Corpus into (train, held-out) at random, for sources without a test split."""
    from bpetopics.text import Corpus

    n = corpus.n_docs
    n_test = int(round(n * fraction))
    if n_test < 1 or n - n_test < 1:
        raise ValueError(f"{n} documents are too few to hold out {fraction:.0%} of them")
    order = np.random.default_rng(seed).permutation(n)
    parts = []
    for name, idx in (("train", np.sort(order[n_test:])), ("test", np.sort(order[:n_test]))):
        parts.append(Corpus(counts=corpus.counts[idx], vocabulary=list(corpus.vocabulary),
                            texts=[corpus.texts[i] for i in idx], ids=[corpus.ids[i] for i in idx],
                            split=name, labels=None if corpus.labels is None else corpus.labels[idx],
                            label_names=corpus.label_names, pipeline=corpus.pipeline, source=corpus.source))
    return parts[0], parts[1]


def warm_up_models(n_topics: int, X, models: Sequence[str], params: dict) -> None:
    """One small untimed fit of each model (lazy imports, thread pools, allocators): on 64
    documents, or on T when there are more topics (a model refuses more topics than
    documents). Their warnings are not shown: a warm-up stops early on purpose (NMF's
    "maximum number of iterations reached")."""
    small = X[: min(max(64, n_topics), X.shape[0])]
    for name in models:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            TEXT_MODELS[name].make(n_topics, 0, {**params[name], **TEXT_MODELS[name].warm_up}).fit(small)


def compare_models(train, test, n_topics: int, seeds: Sequence[int] = (0, 1, 2), *,
                   bpe_params: dict | None = None, lda_params: dict | None = None, reference: str = "auto",
                   top_n: int = 10, gensim_measures: Sequence[str] = ("c_npmi",), warm_up: bool = True,
                   log: Callable[[str], None] | None = None, models: Sequence[str] = MODEL_NAMES,
                   params: dict | None = None) -> pd.DataFrame:
    """Fit each of ``models`` (PoissBPE and LDA by default) on ``train.counts`` for each
    seed and evaluate them all the same way.

    Parameters
    ----------
    train, test : Corpus
        Same vocabulary. ``counts`` (csr), ``texts`` and ``labels`` are used; the
        classifier's accuracy needs labels on both.
    n_topics : int
        T, for both models.
    seeds : sequence of int
        One fit of each model per seed (``random_state``); the seed also fixes the
        completion split and the classifier.
    bpe_params, lda_params : dict, optional
        Other keyword arguments of ``PoissBPE`` (e.g. ``epochs``, ``n_bits``, ``device``)
        and of ``LDABaseline`` (e.g. ``passes``); defaults otherwise.
    reference : {"auto", "test", "train", "corpus"}
        Whose texts are the coherence reference of ``npmi`` and gensim's measures
        (``"auto"``: see :func:`choose_reference`, which never picks a held-out split
        smaller than :data:`MIN_REFERENCE_DOCS`). ``npmi_corpus`` always uses the whole
        corpus (train and test texts).
    top_n : int
        Top words per topic for coherence.
    gensim_measures : sequence of str
        gensim coherence measures added to ours (empty: skip gensim).
    warm_up : bool
        Do one small untimed fit of each model first (see the module docstring).
    log : callable, optional
        Called with one line per fitted model.
    models : sequence of str
        Names in :data:`TEXT_MODELS`, in table order.
    params : dict, optional
        Keyword arguments per model name (``bpe_params`` and ``lda_params`` are those of
        "PoissBPE" and "LDA").

    Returns
    -------
    pandas.DataFrame
        One row per (model, seed): ``model``, ``seed``, ``n_train``, ``n_test``,
        ``n_words`` and every scalar of :func:`evaluate_topic_model` (``fit_seconds``
        measured here), plus ``top_words`` (list of T lists).
    """
    if list(train.vocabulary) != list(test.vocabulary):
        raise ValueError("train and test must share one vocabulary")
    used = choose_reference(reference, test.counts.shape[0])
    if log is not None and reference == "auto" and used != "test":
        log(f"coherence reference: the whole corpus, since the held-out split has only "
            f"{test.counts.shape[0]} documents (fewer than {MIN_REFERENCE_DOCS})")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("give at least one seed")
    models = model_names(models)
    params = {name: dict((params or {}).get(name, {})) for name in models}
    if "PoissBPE" in params:
        params["PoissBPE"].update(bpe_params or {})
    if "LDA" in params:
        params["LDA"].update(lda_params or {})
    vocabulary = list(train.vocabulary)
    corpus = encode_texts(list(train.texts) + list(test.texts), vocabulary)
    encoded = (corpus if used == "corpus"
               else encode_texts((test if used == "test" else train).texts, vocabulary))
    labels = train.labels is not None and test.labels is not None
    if warm_up:
        warm_up_models(n_topics, train.counts, models, params)
    rows = []
    for seed in seeds:
        for name in models:
            model = TEXT_MODELS[name].make(n_topics, seed, params[name])
            t0, c0 = time.perf_counter(), time.process_time()
            model.fit(train.counts)
            fit_seconds = time.perf_counter() - t0
            fit_cpu_seconds = time.process_time() - c0
            codes = model.transform(test.counts) if TEXT_MODELS[name].has_codes else None
            res = evaluate_topic_model(
                model, train.counts, test.counts, encoded, vocabulary,
                train_labels=train.labels if labels else None, test_labels=test.labels if labels else None,
                codes=codes, top_n=top_n, seed=seed, gensim_measures=tuple(gensim_measures),
                corpus_texts=corpus)
            res.pop("npmi_per_topic", None)
            res["fit_seconds"] = fit_seconds
            res["fit_cpu_seconds"] = fit_cpu_seconds
            rows.append({"model": name, "seed": seed, "reference": used, "n_train": train.counts.shape[0],
                         "n_test": test.counts.shape[0], "n_words": len(vocabulary), **res})
            if log is not None:
                acc = "-" if res["accuracy"] is None else f"{res['accuracy']:.3f}"
                log(f"{name} seed {seed}: fit {fit_seconds:.1f} s, NPMI {res['npmi']:.3f}, "
                    f"diversity {res['diversity']:.2f}, perplexity {res['perplexity']:.1f}, accuracy {acc}")
    return pd.DataFrame(rows)
