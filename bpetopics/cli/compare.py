"""``bpetopics compare CORPUS --topics T --out DIR``: PoissBPE against gensim LDA over seeds."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import Choice, IntRange, UserError, corpus_errors, main, vocabulary_options


def _lda_description(lda_params: dict) -> str:
    import inspect

    from bpetopics.baselines import LDABaseline

    params = {n: p.default for n, p in inspect.signature(LDABaseline.__init__).parameters.items()
              if n not in ("self", "n_topics", "random_state")}
    params.update(lda_params)
    return "gensim LdaModel via LDABaseline(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + \
        "); eta=None is the symmetric 1/T prior, alpha='auto' is learnt"


@main.command()
@click.argument("corpus")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Folder for comparison.csv, comparison.md and comparison.png.")
@click.option("--topics", "n_topics", type=IntRange(min=1), required=True, help="T, for both models.")
@click.option("--seeds", type=IntRange(min=1), default=3, show_default=True,
              help="Fits per model, with seeds 0, 1, ..., SEEDS-1.")
@click.option("--epochs", type=IntRange(min=1), default=None,
              help="PoissBPE's passes over the corpus [default: PoissBPE's own].")
@click.option("--bits", type=IntRange(min=1), default=None,
              help="PoissBPE's code length K [default: PoissBPE's own].")
@click.option("--device", default="auto", show_default=True, help="PoissBPE's device: cpu, cuda or auto.")
@click.option("--lda-passes", type=IntRange(min=1), default=None,
              help="LDA's passes over the corpus [default: LDABaseline's own, 10].")
@click.option("--reference", type=Choice(("auto", "test", "train", "corpus")), default="auto", show_default=True,
              help="Reference texts for NPMI and gensim's measures: auto is the test split unless it "
                   "has fewer than 1,000 documents, then the whole corpus (train and test). NPMI with "
                   "the whole corpus (the OCTIS protocol) is always reported too.")
@click.option("--gensim/--no-gensim", default=True, show_default=True,
              help="Also compute gensim's c_npmi (the reference for ours), C_V, UMass and UCI (slower).")
@click.option("--overwrite", is_flag=True, help="Replace a comparison already in --out.")
@click.option("--models", default="PoissBPE,LDA", show_default=True,
              help="The models compared, comma-separated, any case: PoissBPE, LDA (gensim LdaModel), "
                   "Tomotopy (LDA by collapsed Gibbs sampling), NMF, ProdLDA "
                   "(bpetopics.experiments.text_comparison.TEXT_MODELS).")
@vocabulary_options
@click.option("--corpus-seed", type=int, default=0, show_default=True,
              help="Seed of the --max-docs draw (and of the held-out draw for a folder).")
def compare(corpus, out, n_topics, seeds, epochs, bits, device, lda_passes, reference, gensim, overwrite, models,
            vocab_size, min_df, max_df, stopwords, data_home, categories, max_docs, corpus_seed):
    """Compare PoissBPE with gensim LDA on CORPUS, over several seeds.

    Both models are fitted on the same bag-of-words (the train split, one vocabulary)
    and measured the same way on the same held-out documents (the test split; for a
    folder of texts, 20% of its documents drawn with --corpus-seed): NPMI (ours and
    gensim's c_npmi, on the --reference texts; topics with non-finite NPMI are counted),
    gensim's C_V, UMass and UCI, topic diversity, completion perplexity, code sparsity
    (PoissBPE), accuracy of a logistic regression on the document-topic mixtures,
    training and inference time.

    LDA is LDABaseline with its documented defaults (online variational Bayes, 10
    passes, 50 iterations, alpha learnt, eta 1/T); PoissBPE uses its own defaults.

    CORPUS is 20newsgroups, a folder of text files, or a corpus saved by
    `bpetopics corpus` (then the corpus options are ignored).

    \b
    Writes to --out:
      comparison.csv   one row per model and seed, every measure
      comparison.md    mean ± std over seeds, the setting, the topics of the first seed
      comparison.png   the main measures side by side

    \b
    Examples:
      bpetopics compare 20newsgroups --topics 20 --out results/20ng-T20
      bpetopics compare corpora/20ng --topics 50 --seeds 5 --epochs 30 --lda-passes 20 --out results/T50
      bpetopics compare 20newsgroups --categories sci.space,rec.autos --max-docs 500 \\
          --topics 5 --seeds 1 --epochs 2 --lda-passes 2 --out /tmp/quick
    """
    from bpetopics.evaluation.coherence import GENSIM_MEASURES
    from bpetopics.experiments.text_comparison import (FILES, TEXT_MODELS, choose_reference, compare_models,
                                                       holdout_split, model_names, write_comparison)
    from bpetopics.text import prepare_corpus
    from bpetopics.text.sources import corpus_settings

    try:
        names = model_names(models)
    except ValueError:
        raise UserError(f"unknown --models {models!r}; choose from {', '.join(TEXT_MODELS)}") from None
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file: give a folder")
    if not overwrite and any((out / f).exists() for f in FILES):
        raise UserError(f"{out} already holds a comparison: pass --overwrite to replace it, or choose another --out")
    if device not in ("cpu", "auto") and not device.startswith("cuda"):
        raise UserError(f"--device must be cpu, cuda or auto; got {device!r}")
    settings = corpus_settings(vocab_size, min_df, max_df, stopwords, data_home, categories, max_docs,
                               corpus_seed)
    with corpus_errors():
        splits = prepare_corpus(corpus, **settings)
    train = splits["train"]
    test = splits.get("test")
    heldout = "the test split"
    if test is None or test.n_docs == 0:
        try:
            train, test = holdout_split(train, 0.2, corpus_seed)
        except ValueError as exc:
            raise UserError(f"the corpus {corpus}: {exc}") from None
        heldout = f"20% of the documents, drawn with seed {corpus_seed}"
        click.echo(f"Note: {corpus} has no test split: holding out {heldout}", err=True)
    if train.n_docs == 0:
        raise UserError(f"the corpus {corpus} has no training document with a word of its vocabulary")
    for split in splits.values():
        if split.dropped_note():
            click.echo(f"Note: {split.dropped_note()}", err=True)

    bpe_params = {"device": device}
    if epochs is not None:
        bpe_params["epochs"] = epochs
    if bits is not None:
        bpe_params["n_bits"] = bits
    lda_params = {} if lda_passes is None else {"passes": lda_passes}
    click.echo(f"Comparing on {corpus}: {train.n_docs:,} training and {test.n_docs:,} held-out documents, "
               f"{train.n_words:,} words, {n_topics} topics, {seeds} seed(s)", err=True)
    used = choose_reference(reference, test.n_docs)
    try:
        results = compare_models(train, test, n_topics, range(seeds), bpe_params=bpe_params, lda_params=lda_params,
                                 reference=reference, gensim_measures=GENSIM_MEASURES if gensim else (),
                                 log=lambda m: click.echo(m, err=True), models=names)
    except ValueError as exc:
        raise UserError(str(exc).strip().splitlines()[0]) from None
    described = {
        "corpus": f"{corpus} ({', '.join(f'{k}={v}' for k, v in settings.items() if v is not None)})",
        "held-out documents": heldout,
        "coherence reference": (f"{'the whole corpus' if used == 'corpus' else f'the {used} split'}'s texts "
                                f"(top 10 words, sliding windows of 10); NPMI (whole corpus) uses train and test texts"),
        **({"PoissBPE": "its defaults, with " + ", ".join(f"{k}={v!r}" for k, v in
                                                           {"n_topics": n_topics, **bpe_params}.items())}
           if "PoissBPE" in names else {}),
        **({"LDA": _lda_description(lda_params)} if "LDA" in names else {}),
        **({"Tomotopy": "tomotopy LDAModel by collapsed Gibbs sampling via TomotopyLDA(): 1,000 "
                        "iterations, alpha 0.1 optimised every 10, eta 0.01, one worker"}
           if "Tomotopy" in names else {}),
        **({"NMF": "scikit-learn NMF via NMFTopics(): KL loss on counts, multiplicative updates, "
                   "nndsvda start, 200 iterations"} if "NMF" in names else {}),
        **({"ProdLDA": "ProdLDA() (Srivastava and Sutton 2017): encoder 2 x 100 softplus, dropout "
                       "0.2, Dirichlet(1) prior in softmax basis, Adam lr 2e-3 beta1 0.99, batch 200, "
                       "100 epochs"} if "ProdLDA" in names else {}),
        "timing": "wall time of fit (after one untimed warm-up fit of each model) and of doc_topic "
                  "on the held-out documents",
    }
    paths = write_comparison(results, out, settings=described)
    click.echo(Path(paths["md"]).read_text(encoding="utf-8").split("\n## Topics")[0].rstrip())
    click.echo(f"Wrote {paths['csv']}, {paths['md']}, {paths['png']}", err=True)
