"""``bpetopics evaluate RUN``: coherence, diversity, perplexity, sparsity and accuracy of a run.

Also home of :func:`run_splits`, which rebuilds a run's corpus (train and test splits)
from what ``bpetopics train`` recorded in ``config.json`` (``corpus.source``,
``corpus.settings``, ``corpus.pipeline``), and of :func:`run_train_counts`, the saved
training counts (``counts.npz``; rebuilt only for runs saved before it existed), which
``graph`` and ``ldavis`` use.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import click

from bpetopics.cli import Choice, IntRange, UserError, main


def run_splits(run) -> dict:
    """The corpus a run was trained on, rebuilt: ``{"train": Corpus, "test": Corpus}``.

    A saved corpus (``bpetopics corpus``) is read back as it is; 20 Newsgroups or a folder
    of texts is loaded again with the recorded settings (categories, ``max_docs`` draw)
    and cleaned with the run's saved text pipeline (its stop words; the vocabulary is
    fitted again on the train split, exactly as in training). The result is checked
    against the run: the same vocabulary and, when known, the same training documents
    in the same order; otherwise a :class:`UserError` says why.
    """
    from bpetopics.text import (
        CorpusError,
        CorpusWarning,
        TextPipeline,
        corpus_from_documents,
        is_saved_corpus,
        load_source,
        load_splits,
    )
    from bpetopics.text.loaders import is_newsgroups

    cfg = run.config.get("corpus") or {}
    source = cfg.get("source")
    where = f"{run.path}/config.json"
    if not source:
        raise UserError(f"{where} does not record the corpus the run was trained on (corpus.source), "
                        "so its documents cannot be rebuilt")
    settings = cfg.get("settings")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CorpusWarning)
            if not is_newsgroups(source) and Path(source).is_dir() and is_saved_corpus(source):
                splits = load_splits(source)
            else:
                if settings is None or cfg.get("pipeline") is None:
                    raise UserError(f"{where} does not record how the corpus was prepared (corpus.settings and "
                                    "corpus.pipeline): retrain with `bpetopics train`, or from a saved corpus")
                if not is_newsgroups(source) and not Path(source).exists():
                    raise UserError(f"the run's corpus {source} is not there any more (runs of older bpetopics "
                                    "record paths relative to where `bpetopics train` ran): run from that "
                                    "folder, or restore it")
                pipeline = TextPipeline.from_dict(cfg["pipeline"])
                raw = load_source(source, data_home=settings.get("data_home"),
                                  categories=settings.get("categories"))
                raw = {name: docs.sample(settings.get("max_docs"), settings.get("random_state", 0))
                       for name, docs in raw.items()}
                splits = corpus_from_documents(raw, pipeline)
    except CorpusError as exc:
        raise UserError(f"cannot rebuild the corpus of {run.path}: {exc}") from None
    train = splits["train"]
    if list(train.vocabulary) != list(run.vocabulary):
        raise UserError(f"the corpus {source} no longer gives the run's vocabulary ({len(train.vocabulary)} words "
                        f"vs {len(run.vocabulary)}): its documents or settings changed since training")
    try:
        ids, _ = run.doc_topics()
    except (OSError, KeyError, ValueError):
        ids = None
    if ids is not None and list(map(str, train.ids)) != ids:
        raise UserError(f"the corpus {source} no longer gives the run's {len(ids):,} training documents "
                        f"(it gives {train.n_docs:,}): its documents or settings changed since training")
    return splits


def run_train_counts(run):
    """The training counts of a run (CSR, N x W, rows in the order of its ids).

    Read from ``counts.npz``; a run saved before that file existed has its corpus rebuilt
    with :func:`run_splits` instead. A damaged file is a :class:`UserError`.
    """
    from bpetopics.io import RunError

    if not run.has_counts():
        return run_splits(run)["train"].counts
    try:
        return run.counts()
    except RunError as exc:
        raise UserError(str(exc)) from None


def _json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item"):
        return _json_safe(value.item())
    return value


def evaluate_run(run, reference: str = "test", top_n: int = 10, seed: int = 0, gensim: bool = True,
                 echo=None) -> dict:
    """All the measures of :func:`bpetopics.evaluation.evaluate_topic_model` for a run.

    Held-out documents are the test split, rebuilt with :func:`run_splits` (for a source
    without one, the training documents, which flatters perplexity; ``heldout`` says
    which). The training counts are the run's saved ones (``counts.npz``) when it has
    them. ``reference`` is the split whose texts score coherence. ``fit_seconds`` is the
    recorded training time.
    """
    from bpetopics.evaluation import evaluate_topic_model
    from bpetopics.evaluation.coherence import GENSIM_MEASURES

    splits = run_splits(run)
    train = splits["train"]
    train_counts = run_train_counts(run) if run.has_counts() else train.counts
    test = splits.get("test")
    heldout = "test"
    if test is None or test.n_docs == 0:
        if reference == "test":
            raise UserError(f"the corpus of {run.path} has no test split: use --reference train "
                            "(held-out measures are then computed on the training documents)")
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
        gensim_measures=GENSIM_MEASURES if gensim else ())
    seconds = run.summary.get("train_seconds")
    if seconds is None:
        seconds = sum(h.get("seconds", 0.0) for h in model.history_)
    return {"run": str(run.path), "model": run.config.get("model"), "reference": reference, "heldout": heldout,
            "n_train": train_counts.shape[0], "n_heldout": test_counts.shape[0], "n_words": len(run.vocabulary),
            **res, "fit_seconds": float(seconds)}


def format_metrics(result: dict) -> str:
    """The scalar measures as aligned ``name  value`` lines."""
    rows = [(k, v) for k, v in result.items() if not isinstance(v, (list, dict))]
    width = max(len(k) for k, _ in rows)
    out = []
    for k, v in rows:
        if isinstance(v, float):
            v = f"{v:.6g}"
        out.append(f"{k:<{width}}  {'-' if v is None else v}")
    return "\n".join(out)


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--reference", type=Choice(("test", "train")), default="test", show_default=True,
              help="Split whose texts are the reference corpus for coherence (NPMI).")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="Also write every measure (with per-topic NPMI and top words) to this JSON file.")
@click.option("--top-n", type=IntRange(min=2), default=10, show_default=True,
              help="Top words per topic for coherence.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the completion split and of the classifier.")
@click.option("--gensim/--no-gensim", default=True, show_default=True,
              help="Also compute gensim's c_npmi (the reference for ours), C_V, UMass and UCI (slower).")
def evaluate(run, reference, out, top_n, seed, gensim):
    """Measure a trained run on its corpus's held-out documents.

    \b
    Prints, and with --out writes as JSON:
      npmi, gensim_c_npmi   coherence of the top words (and topics with non-finite NPMI)
      gensim_c_v, gensim_u_mass, gensim_c_uci   gensim's other coherence measures
      diversity             share of unique words among the topics' top 25
      perplexity            document completion on the test split
      accuracy              logistic regression on the doc-topic mixtures
      code_*                sparsity of the held-out documents' codes
      fit_seconds, infer_seconds, infer_docs_per_second

    The corpus is rebuilt from what the run recorded (20 Newsgroups with the same
    settings, the same folder, or the saved corpus); a change since training is an
    error.

    \b
    Examples:
      bpetopics evaluate runs/20ng
      bpetopics evaluate runs/20ng --out runs/20ng/metrics.json
      bpetopics evaluate runs/20ng --reference train --no-gensim
    """
    from bpetopics.cli.topics import open_run
    from bpetopics.viz._files import write_text_atomic

    if out is not None and out.is_dir():
        raise UserError(f"--out {out} is a folder: give a file name such as {out / 'metrics.json'}")
    loaded = open_run(run)
    result = evaluate_run(loaded, reference=reference, top_n=top_n, seed=seed, gensim=gensim,
                          echo=lambda m: click.echo(m, err=True))
    if out is not None:
        write_text_atomic(out, json.dumps(_json_safe(result), indent=1, ensure_ascii=False) + "\n")
    click.echo(format_metrics(result))
    if out is not None:
        click.echo(f"Wrote {out}", err=True)
