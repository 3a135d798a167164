"""``bpetopics corpus SOURCE --out DIR``: materialise a corpus on disk and summarise it."""

from __future__ import annotations

import re
from pathlib import Path

import click

from bpetopics.cli import (Choice, IntRange, UserError, corpus_errors, describe_os_error, main, option,
                           record_options, vocabulary_options)


def _default_out(source: str) -> Path:
    name = Path(source.rstrip("/\\")).name or "corpus"
    if Path(source).is_file():      # reviews.csv -> reviews, and reviews.csv.gz too
        from bpetopics.text.records import COMPRESSIONS

        name = Path(name).stem
        if Path(source).suffix.lower() in COMPRESSIONS:
            name = Path(name).stem
    return Path("corpora") / re.sub(r"[^\w.-]+", "_", name)


#: Files of a folder skipped as not text (bpetopics.text.loaders.NOT_TEXT): not documents.
NOT_TEXT = "not a text file"


def _fmt_int(n) -> str:
    return f"{n:,}"


def format_summary(splits: dict) -> str:
    """The table printed by ``bpetopics corpus``: one row per split, then why documents went.

    Parameters
    ----------
    splits : dict of str to Corpus

    Returns
    -------
    str
        Several lines, no trailing newline.
    """
    header = ("split", "loaded", "documents", "labels", "vocabulary", "tokens", "mean length", "dropped")
    rows = []
    for name, corpus in splits.items():
        s = corpus.summary()
        n_dropped = sum(len(ids) for reason, ids in corpus.dropped.items() if reason != NOT_TEXT)
        rows.append((
            name,
            _fmt_int(s["documents"] + n_dropped),
            _fmt_int(s["documents"]),
            "-" if s["labels"] is None else _fmt_int(s["labels"]),
            _fmt_int(s["vocabulary"]),
            _fmt_int(s["tokens"]),
            f"{s['mean_length']:.1f}",
            _fmt_int(n_dropped),
        ))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        for r in [header, *rows]
    ]
    lines.append("loaded: documents read; documents: those kept; dropped: loaded - documents, by reason:")
    for name, corpus in splits.items():
        reasons = ", ".join(f"{len(ids):,} {reason}" for reason, ids in corpus.dropped.items()
                            if reason != NOT_TEXT) or "none"
        skipped = len(corpus.dropped.get(NOT_TEXT, []))
        lines.append(f"  {name}: {reasons}" + (f"; and {skipped:,} {NOT_TEXT}, skipped (not a document: not "
                                               "loaded)" if skipped else ""))
    first = next(iter(splits.values()))
    if first.pipeline is not None:
        p = first.pipeline
        spec = p.stopwords if isinstance(p.stopwords, str) else "custom"
        lines.append(
            f"vocabulary: {first.n_words:,} words (vocab_size={p.vocab_size}, min_df={p.min_df}, "
            f"max_df={p.max_df}); stop words: {spec} ({len(p.stop_words):,} words)"
        )
    return "\n".join(lines)


def format_sharded(manifest: dict, summary: dict) -> str:
    """The lines printed after a sharded build: sizes, shards, dropped documents."""
    dropped = ", ".join(f"{n:,} {reason}" for reason, n in manifest["dropped"].items() if n) or "none"
    p = manifest["pipeline"]["params"]
    return (f"documents {summary['documents']:,}, vocabulary {summary['vocabulary']:,}, tokens "
            f"{summary['tokens']:,} (mean length {summary['mean_length']:.1f}), non-zeros {manifest['nnz']:,}, "
            f"{len(manifest['shards'])} shard(s), labels {summary['labels'] or '-'}\n"
            f"dropped: {dropped}\n"
            f"vocabulary: vocab_size={p['vocab_size']}, min_df={p['min_df']}, max_df={p['max_df']}, "
            f"stop words: {p['stopwords'] if isinstance(p['stopwords'], str) else 'custom'}")


def _build_sharded(source, out, settings, jobs, shard_docs, overwrite, quiet):
    """Build the sharded corpus of ``source`` with ``settings`` (CorpusSettings) in ``out``."""
    from bpetopics.text import TextPipeline
    from bpetopics.text.sharded import open_sharded
    from bpetopics.text.streaming import build_sharded, usable_cpus

    unused = [flag for flag, key in (("--data-home", "data_home"), ("--categories", "categories"),
                                     ("--max-docs", "max_docs"), ("--test-size", "test_size"),
                                     ("--passages", "passages")) if getattr(settings, key) is not None]
    if unused:
        raise UserError(f"{', '.join(unused)} {'does' if len(unused) == 1 else 'do'} not apply to --format sharded: "
                        "leave it out")
    if jobs > usable_cpus():        # more workers than CPUs only wait for each other
        click.echo(f"Note: --nproc {jobs} is more than the {usable_cpus()} CPUs this process may use; using "
                   f"{usable_cpus()}", err=True)
        jobs = usable_cpus()
    pipeline = TextPipeline(vocab_size=settings.vocab_size, min_df=settings.min_df,
                            max_df=settings.max_df, stopwords=settings.stopwords)
    with corpus_errors():
        try:
            manifest = build_sharded(source, out, pipeline, jobs=jobs, shard_docs=shard_docs,
                                     text_field=settings.text_field, id_field=settings.id_field,
                                     label_field=settings.label_field, skip_bad_lines=settings.skip_bad_lines,
                                     overwrite=overwrite, progress=not quiet)
        except OSError as exc:  # e.g. a full disk: the build's temporary folder is removed, --out untouched
            raise UserError(describe_os_error(exc, "build again, or choose another --out (nothing was written)",
                                              path=out)) from None
        summary = open_sharded(out).summary()
    click.echo(f"Saved {source} to {out} (sharded)")
    click.echo(format_sharded(manifest, summary))


@main.command()
@click.argument("source")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="Folder to write the corpus to [default: corpora/<SOURCE name>].")
@vocabulary_options
@option("--corpus-seed", "seed", type=int, default=0, show_default=True, old=("--seed",),
        help="Seed of the --max-docs and --test-size draws.")
@click.option("--overwrite", is_flag=True, help="Replace a saved corpus already at --out.")
@click.option("--format", "format_", type=Choice(["memory", "sharded"]), default=None,
              help="memory: one .npz per split, loaded whole; sharded: memory-mapped shards built in two "
                   "streaming passes, for corpora larger than memory (a folder, .jsonl or .csv SOURCE) "
                   "[default: sharded when --nproc or --shard-docs is given, else memory].")
@option("--nproc", "jobs", type=IntRange(min=1), default=None, old=("--jobs",),
        help="Processes on this machine cleaning and tokenising (a sharded build; at most one a "
              "CPU and one a chunk of 1,000 documents) [default: 1].")
@click.option("--shard-docs", type=IntRange(min=1), default=None,
              help="Documents per shard (a sharded build) [default: 100000].")
@record_options
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def corpus(source, out, vocab_size, min_df, max_df, stopwords, data_home, categories, max_docs, test_size, passages,
           seed, overwrite, format_, jobs, shard_docs, text_field, id_field, label_field, time_field, skip_bad_lines, quiet):
    """Materialise a corpus on disk and print a summary.

    SOURCE is 20newsgroups (the by-date train/test split, through scikit-learn), abc,
    state_union, lee, abc-sentences or state_union-sentences (named corpora, one train
    split; the last two are abc's stories and state_union's paragraphs split into
    sentences, short-text corpora), 20newsgroups-subjects (each
    post's subject line, a short-text corpus with the by-date split), a folder of text
    files (one document per file; .html pages give their visible text; a first-level
    subfolder names the label), a .jsonl file (one
    JSON object a line) or a .csv file (a header row), either compressed or not (.gz,
    .bz2, .xz, .zst), or a saved corpus folder (summarised, and copied if --out is given; a
    sharded one is summarised after its checksums are verified). With --format
    sharded (the default with --nproc or --shard-docs), SOURCE is a folder, a .jsonl
    or a .csv file, of any size: it is read twice in chunks (vocabulary, then
    counts) by --nproc processes, and written as memory-mapped shards that
    `bpetopics train` reads as it trains.

    Headers, signatures, quoted replies and encoded attachments are stripped; stop
    words, numbers, punctuation and tokens under 3 letters dropped; the vocabulary is
    fitted on the train split. Documents left empty are dropped and counted.

    \b
    Examples:
      bpetopics corpus 20newsgroups --out corpora/20ng
      bpetopics corpus 20newsgroups --vocab-size 5000 --stopwords sklearn --out corpora/20ng-5k
      bpetopics corpus 20newsgroups --categories sci.space,rec.autos --max-docs 500 --out /tmp/small
      bpetopics corpus path/to/texts --min-df 2 --max-df 0.9 --out corpora/mytexts
      bpetopics corpus corpora/20ng
      bpetopics corpus posts.jsonl.gz --label-field group --out corpora/posts
      bpetopics corpus big.jsonl --nproc 2 --out corpora/big
      bpetopics corpus reviews.csv --format sharded --text-field review --label-field stars --out corpora/reviews
    """
    from bpetopics.text import check_destination, prepare_corpus, save_splits
    from bpetopics.text.settings import CorpusSettings
    from bpetopics.text.sources import SAVED, SHARDED, source_kind

    settings = CorpusSettings.from_options(
        vocab_size=vocab_size, min_df=min_df, max_df=max_df, stopwords=stopwords, data_home=data_home,
        categories=categories, max_docs=max_docs, seed=seed, test_size=test_size, passages=passages,
        text_field=text_field, id_field=id_field,
        label_field=label_field, skip_bad_lines=skip_bad_lines, time_field=time_field)
    sharded_only = [flag for flag, value in (("--nproc", jobs), ("--shard-docs", shard_docs)) if value is not None]
    if format_ is None:     # --nproc and --shard-docs only apply to a sharded build: they ask for one
        format_ = "sharded" if sharded_only else "memory"
    elif format_ == "memory" and sharded_only:
        one = len(sharded_only) == 1
        raise UserError(f"{' and '.join(sharded_only)} {'applies' if one else 'apply'} only to a sharded build: "
                        f"leave {'it' if one else 'them'} out, or use --format sharded")
    if source_kind(source) == SHARDED and out is None:   # summarise it, after checking every file
        from bpetopics.text.sharded import open_sharded

        with corpus_errors():
            sharded = open_sharded(source, verify=True)
        click.echo(f"Sharded corpus {source} (checksums verified; nothing written)")
        click.echo(format_sharded(sharded.manifest, sharded.summary()))
        return
    if format_ == "sharded" and time_field is not None:
        raise UserError("--time-field applies to an in-memory corpus: leave out --format sharded (and --nproc, "
                        "--shard-docs)")
    if format_ == "sharded":
        _build_sharded(source, out or _default_out(source), settings, jobs or 1, shard_docs or 100_000, overwrite,
                       quiet)
        return
    saved = source_kind(source) == SAVED
    if out is None and not saved:
        out = _default_out(source)
    with corpus_errors():
        if out is not None:
            check_destination(out, overwrite)
        splits = prepare_corpus(source, **settings.keywords())
        if out is not None:
            save_splits(splits, out, overwrite=overwrite)
    if out is None:
        click.echo(f"Corpus {source} (saved; nothing written)")
    else:
        click.echo(f"Saved {source} to {out}")
    click.echo(format_summary(splits))
    if settings.passages is not None and not saved:
        from bpetopics.text.passages import source_documents

        counts = ", ".join(f"{source_documents(list(c.ids) + [i for ids in c.dropped.values() for i in ids]):,} "
                           f"({name})" for name, c in splits.items())
        click.echo(f"passages: each row counts {settings.passages} (ids DOC#k), cut from {counts} documents")
