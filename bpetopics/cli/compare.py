"""``bpetopics compare CORPUS --topics T[,T...] --out DIR``: PoissBPE against the baselines over
seeds, at one T or several (the work is :mod:`bpetopics.experiments.text_comparison`,
``text_setup`` and ``topic_sweep``)."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import (Choice, FloatRange, IntRange, IntTuple, UserError, corpus_errors, cuda_batch_note,
                           device_option, main, record_options, vocabulary_options)


#: The options of their own that set a PoissBPE or LDA parameter (``--params`` must not too).
OWN_OPTIONS = {"device": "--device", "pipeline": "--no-pipeline", "epochs": "--epochs", "n_bits": "--bits",
               "mixture_entropy": "--mixture-entropy", "passes": "--lda-passes"}


@main.command()
@click.argument("corpus")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Folder for comparison.csv, comparison.md and comparison.png.")
@click.option("--topics", "n_topics", type=IntTuple(), required=True, metavar="T[,T...]",
              help="T, for every model; several (10,20,50) compare the models at each: one comparison "
                   "a T in --out/T<T>/, and the measures over T in --out/by-topics.md and .csv.")
@click.option("--seeds", type=IntRange(min=1), default=3, show_default=True,
              help="Fits per model, with seeds 0, 1, ..., SEEDS-1.")
@click.option("--epochs", type=IntRange(min=1), default=None,
              help="PoissBPE's passes over the corpus [default: PoissBPE's own].")
@click.option("--bits", type=IntRange(min=1), default=None,
              help="PoissBPE's code length K [default: PoissBPE's own].")
@click.option("--mixture-entropy", type=FloatRange(min=0), default=None,
              help="PoissBPE's prior for spread mixtures, as train's --mixture-entropy [default: "
                   "PoissBPE's own, 0: none].")
@device_option("PoissBPE's device: auto (CUDA when present, else the CPU), cpu or cuda.")
@click.option("--pipeline/--no-pipeline", default=True, show_default=True,
              help="PoissBPE's schedule: each minibatch's codes pursued during the previous step's "
                   "update (the default), or the steps in order (the comparison tables of docs/results/text-comparison.md).")
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
                   "Tomotopy (LDA by collapsed Gibbs sampling, 1,000 iterations), NMF, ProdLDA, "
                   "Tomotopy-200 (200 iterations) "
                   "(bpetopics.experiments.text_comparison.TEXT_MODELS).")
@click.option("--params", "model_params", multiple=True, metavar="MODEL=JSON",
              help="Other parameters of one compared model, as a JSON object of its constructor's "
                   "arguments, e.g. 'Tomotopy={\"iterations\": 2000}' or 'PoissBPE={\"topic_smoothing\": -0.2}'; "
                   "repeat for other models.")
@vocabulary_options
@click.option("--corpus-seed", type=int, default=0, show_default=True,
              help="Seed of the --max-docs and --test-size draws (and of the held-out draw for a corpus without a test split).")
@record_options
def compare(corpus, out, n_topics, seeds, epochs, bits, mixture_entropy, device, pipeline, lda_passes, reference,
            gensim, overwrite, models, model_params, vocab_size, min_df, max_df, stopwords, data_home, categories, max_docs,
            test_size, passages, corpus_seed, text_field, id_field, label_field, time_field, skip_bad_lines):
    """Compare PoissBPE with baseline topic models on CORPUS, over several seeds.

    Every model of --models (PoissBPE and gensim LDA by default; also Tomotopy, LDA
    by collapsed Gibbs sampling, NMF and ProdLDA) is fitted on the same bag of words
    (the train split, one vocabulary) for each seed and measured the same way on the
    same held-out documents (the test split, or --test-size of the documents; for a
    corpus without one, 20% of its documents drawn with --corpus-seed, whole documents
    with their passages under --passages): NPMI on the
    --reference texts and on the whole corpus, gensim's c_npmi, C_V, UMass and UCI
    (topics with non-finite scores are counted), topic diversity (top 10, top 25, words
    in exactly one topic),
    completion perplexity, code sparsity (PoissBPE), accuracy of a logistic
    regression on the mixtures, purity and NMI of the top-topic clusters against the
    labels, training wall and CPU time, inference time.

    LDA is LDABaseline with its documented defaults (online variational Bayes,
    10 passes, 50 iterations, alpha learnt, eta 1/T); each model uses its own
    defaults otherwise, or what --params gives it.

    CORPUS is 20newsgroups, abc, state_union, lee, abc-sentences,
    state_union-sentences or 20newsgroups-subjects (named corpora), a folder of text files, a .jsonl or .csv
    file (compressed or not), or a corpus saved by `bpetopics corpus` (then the corpus
    options are ignored).

    Writes to --out:
      comparison.csv   one row per model and seed, every measure
      comparison.md    mean ± std over seeds, the setting, the topics of the first seed
      comparison.png   the main measures side by side

    With several --topics, those three files for each T in --out/T<T>/, and:
      by-topics.csv    mean and std over seeds of the main measures, a row per T and model
      by-topics.md     the same as a table, the best of each T in bold: to choose T on your
                       corpus by held-out perplexity, coherence and diversity

    \b
    Examples:
      bpetopics compare 20newsgroups --topics 20 --out results/20ng-T20
      bpetopics compare abc --topics 20 --models poissbpe,lda,tomotopy,nmf,prodlda --out results/abc
      bpetopics compare corpora/20ng --topics 50 --seeds 5 --epochs 30 --lda-passes 20 --out results/T50
      bpetopics compare path/to/texts --test-size 0.2 --topics 10,20,50 --out results/mine
      bpetopics compare path/to/texts --test-size 0.2 --topics 20 --models poissbpe,tomotopy \\
          --mixture-entropy 0.1 --out results/mine-spread
      bpetopics compare path/to/texts --test-size 0.2 --topics 100 --models poissbpe,tomotopy \\
          --params 'PoissBPE={"topic_smoothing": -0.2, "mixture_entropy": 0}' \\
          --params 'Tomotopy={"iterations": 2000}' --out results/mine-sparse
      bpetopics compare 20newsgroups --categories sci.space,rec.autos --max-docs 500 \\
          --topics 5 --seeds 1 --epochs 2 --lda-passes 2 --out /tmp/quick
    """
    from bpetopics.evaluation.coherence import GENSIM_MEASURES
    from bpetopics.experiments.text_comparison import (FILES, TEXT_MODELS, choose_reference, compare_models,
                                                       model_names, model_params as parse_params, write_comparison)
    from bpetopics.experiments.text_setup import comparison_data, describe_comparison
    from bpetopics.experiments.topic_sweep import SWEEP_FILES, sweep_folder, write_topic_sweep
    from bpetopics.text.settings import CorpusSettings

    if not n_topics or min(n_topics) < 1 or len(set(n_topics)) < len(n_topics):
        raise UserError(f"--topics takes one number of topics or several different ones, each 1 or more, "
                        f"such as 20 or 10,20,50; got {','.join(map(str, n_topics)) or 'none'}")
    sweep = len(n_topics) > 1
    folders = [sweep_folder(out, t) for t in n_topics] if sweep else [out]

    try:
        names = model_names(models)
    except ValueError:
        raise UserError(f"unknown --models {models!r}; choose from {', '.join(TEXT_MODELS)}") from None
    try:
        params = parse_params(model_params, names, min(n_topics))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    bpe_params = {"device": device}
    if not pipeline:
        bpe_params["pipeline"] = False
    if epochs is not None:
        bpe_params["epochs"] = epochs
    if bits is not None:
        bpe_params["n_bits"] = bits
    if mixture_entropy is not None:
        bpe_params["mixture_entropy"] = mixture_entropy
    lda_params = {} if lda_passes is None else {"passes": lda_passes}
    for name, own in (("PoissBPE", bpe_params), ("LDA", lda_params)):
        for key in sorted(set(own) & set(params.get(name, {}))):
            raise UserError(f"--params sets {name}'s {key}, which {OWN_OPTIONS[key]} sets: give it once")
        own.update(params.pop(name, {}))
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file: give a folder")
    if not overwrite and (any((folder / f).exists() for folder in folders for f in FILES)
                          or sweep and any((out / f).exists() for f in SWEEP_FILES)):
        raise UserError(f"{out} already holds a comparison: pass --overwrite to replace it, or choose another --out")
    if device not in ("cpu", "auto") and not device.startswith("cuda"):
        raise UserError(f"--device must be cpu, cuda or auto; got {device!r}")
    cuda_note = None
    if "PoissBPE" in names:
        from bpetopics.bpe.device import resolve_device
        from bpetopics.models import PoissBPE

        try:
            cuda_note = cuda_batch_note(resolve_device(device), bpe_params.get("batch_size", PoissBPE().batch_size))
        except ValueError as exc:
            raise UserError(str(exc)) from None
    settings = CorpusSettings.from_options(
        vocab_size=vocab_size, min_df=min_df, max_df=max_df, stopwords=stopwords, data_home=data_home,
        categories=categories, max_docs=max_docs, seed=corpus_seed, test_size=test_size, passages=passages,
        text_field=text_field, id_field=id_field,
        label_field=label_field, skip_bad_lines=skip_bad_lines, time_field=time_field).keywords()
    with corpus_errors():
        try:
            data = comparison_data(corpus, settings, corpus_seed)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    for note in data.notes:
        click.echo(f"Note: {note}", err=True)
    if cuda_note:
        click.echo(cuda_note, err=True)

    train, test = data.train, data.test
    used_reference = choose_reference(reference, test.n_docs)
    by_topics = {}
    for topics, folder in zip(n_topics, folders):
        click.echo(f"Comparing on {corpus}: {train.n_docs:,} training and {test.n_docs:,} held-out documents, "
                   f"{train.n_words:,} words, {topics} topics, {seeds} seed(s)", err=True)
        try:
            results = compare_models(train, test, topics, range(seeds), bpe_params=bpe_params,
                                     lda_params=lda_params, reference=reference,
                                     gensim_measures=GENSIM_MEASURES if gensim else (),
                                     log=lambda m: click.echo(m, err=True), models=names, params=params)
        except (ValueError, TypeError) as exc:
            raise UserError(str(exc).strip().splitlines()[0]) from None
        described = describe_comparison(corpus, settings, data, used_reference, names, topics, bpe_params,
                                        lda_params, params)
        paths = write_comparison(results, folder, settings=described)
        by_topics[topics] = results
        if not sweep:
            click.echo(Path(paths["md"]).read_text(encoding="utf-8").split("\n## Topics")[0].rstrip())
        click.echo(f"Wrote {paths['csv']}, {paths['md']}, {paths['png']}", err=True)
    if sweep:
        paths = write_topic_sweep(by_topics, corpus, out, data.heldout, used_reference)
        click.echo(Path(paths["md"]).read_text(encoding="utf-8").rstrip())
        click.echo(f"Wrote {paths['csv']}, {paths['md']}", err=True)
