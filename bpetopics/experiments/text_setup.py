"""What ``bpetopics compare`` prepares around :func:`~bpetopics.experiments.text_comparison.compare_models`:
the train and held-out documents of a corpus argument, and a description of the settings
for ``comparison.md``."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

__all__ = ["ComparisonData", "comparison_data", "describe_comparison"]

#: How each baseline is configured, for the description (PoissBPE and LDA are built
#: from their parameters in :func:`describe_comparison`).
BASELINE_SETTINGS = {
    "Tomotopy": "tomotopy LDAModel by collapsed Gibbs sampling via TomotopyLDA(): 1,000 iterations, "
                "alpha 0.1 optimised every 10, eta 0.01, one worker",
    "Tomotopy-200": "as Tomotopy, stopped at 200 iterations",
    "NMF": "scikit-learn NMF via NMFTopics(): KL loss on counts, multiplicative updates, nndsvda "
           "start, 200 iterations",
    "ProdLDA": "ProdLDA() (Srivastava and Sutton 2017): encoder 2 x 100 softplus, dropout 0.2, "
               "Dirichlet(1) prior in softmax basis, Adam lr 2e-3 beta1 0.99, batch 200, 100 epochs",
}


@dataclass
class ComparisonData:
    """The documents of a comparison: ``train`` and ``test`` Corpora on one vocabulary,
    ``heldout`` (what the held-out documents are, in words), ``notes`` (lines to show:
    a drawn hold-out, documents left out) and ``dropped`` (the documents left out, a
    line per split, also recorded in comparison.md)."""

    train: object
    test: object
    heldout: str
    notes: list = field(default_factory=list)
    dropped: list = field(default_factory=list)


def comparison_data(corpus, settings: dict, seed: int = 0, fraction: float = 0.2) -> ComparisonData:
    """Prepare ``corpus`` (any corpus argument) with ``settings`` (``prepare_corpus``
    keyword arguments): its test split as the held-out documents, or, for a source
    without one, ``fraction`` of its documents drawn with ``seed``. With ``passages`` in
    the settings those are whole documents drawn before the split into passages (as
    ``test_size`` draws them), so that no document has passages on both sides.

    Raises CorpusError (from preparing) or ValueError (one line) for a corpus too small
    to hold out from, or without a training document.
    """
    from bpetopics.experiments.text_comparison import holdout_split
    from bpetopics.text import prepare_corpus
    from bpetopics.text.sources import drawn_test_split

    notes = []
    if settings.get("passages") is not None and settings.get("test_size") is None and drawn_test_split(corpus):
        settings = {**settings, "test_size": fraction, "random_state": seed}
        notes.append(f"{corpus} has no test split: holding out {fraction:.0%} of its documents, drawn with seed "
                     f"{seed}, with their passages")
    splits = prepare_corpus(corpus, **settings)
    train, test = splits["train"], splits.get("test")
    heldout = "the test split"
    if settings.get("test_size") is not None and test is not None:
        heldout = (f"{settings['test_size']:.0%} of the documents, held out by test_size with seed "
                   f"{settings.get('random_state', 0)}")
    if test is None or test.n_docs == 0:
        try:
            train, test = holdout_split(train, fraction, seed)
        except ValueError as exc:
            raise ValueError(f"the corpus {corpus}: {exc}") from None
        heldout = f"{fraction:.0%} of the documents, drawn with seed {seed}"
        notes.append(f"{corpus} has no test split: holding out {heldout}")
    if train.n_docs == 0:
        raise ValueError(f"the corpus {corpus} has no training document with a word of its vocabulary")
    dropped = [split.dropped_note() for split in splits.values() if split.dropped_note()]
    return ComparisonData(train, test, heldout, notes + dropped, dropped)


def _lda_setting(lda_params: dict) -> str:
    from bpetopics.baselines import LDABaseline

    params = {n: p.default for n, p in inspect.signature(LDABaseline.__init__).parameters.items()
              if n not in ("self", "n_topics", "random_state")}
    params.update(lda_params)
    return ("gensim LdaModel via LDABaseline(" + ", ".join(f"{k}={v!r}" for k, v in params.items())
            + "); eta=None is the symmetric 1/T prior, alpha='auto' is learnt")


def describe_comparison(corpus, settings: dict, data: ComparisonData, reference: str, models,
                        n_topics: int, bpe_params: dict, lda_params: dict, params: dict | None = None) -> dict:
    """The settings block of ``comparison.md``: corpus, held-out documents, documents
    left out (and why), coherence reference (as used), each model's configuration (the
    baselines' ``params`` after their settings; PoissBPE's and LDA's are in
    ``bpe_params`` and ``lda_params``) and what the times measure."""
    where = "the whole corpus" if reference == "corpus" else f"the {reference} split"
    described = {
        "corpus": f"{corpus} ({', '.join(f'{k}={v}' for k, v in settings.items() if v is not None)})",
        "held-out documents": data.heldout,
        "documents left out": "; ".join(data.dropped) or "none",
        "coherence reference": f"{where}'s texts (top 10 words, sliding windows of 10); NPMI (whole corpus) "
                               "uses train and test texts",
    }
    for name in models:
        if name == "PoissBPE":
            described[name] = "its defaults, with " + ", ".join(
                f"{k}={v!r}" for k, v in {"n_topics": n_topics, **bpe_params}.items())
        elif name == "LDA":
            described[name] = _lda_setting(lda_params)
        elif name in BASELINE_SETTINGS:
            given = (params or {}).get(name)
            with_params = "; with " + ", ".join(f"{k}={v!r}" for k, v in given.items()) if given else ""
            described[name] = BASELINE_SETTINGS[name] + with_params
    described["timing"] = ("wall and CPU time of fit (after one untimed warm-up fit of each model) and "
                           "wall time of doc_topic on the held-out documents")
    return described
