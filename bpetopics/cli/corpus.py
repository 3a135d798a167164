"""``bpetopics corpus SOURCE --out DIR``: materialise a corpus on disk and summarise it."""

from __future__ import annotations

import re
from pathlib import Path

import click

from bpetopics.cli import corpus_errors, main, vocabulary_options


def _default_out(source: str) -> Path:
    name = Path(source.rstrip("/\\")).name or "corpus"
    return Path("corpora") / re.sub(r"[^\w.-]+", "_", name)


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
        n_dropped = sum(len(ids) for reason, ids in corpus.dropped.items() if reason != "not a text file")
        rows.append((
            name,
            _fmt_int(s["documents"] + n_dropped),
            _fmt_int(s["documents"]),
            "-" if s["labels"] is None else _fmt_int(s["labels"]),
            _fmt_int(s["vocabulary"]),
            _fmt_int(s["tokens"]),
            f"{s['mean_length']:.1f}",
            _fmt_int(sum(s["dropped"].values())),
        ))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        for r in [header, *rows]
    ]
    lines.append("dropped documents:")
    for name, corpus in splits.items():
        reasons = ", ".join(f"{len(ids):,} {reason}" for reason, ids in corpus.dropped.items()) or "none"
        lines.append(f"  {name}: {reasons}")
    first = next(iter(splits.values()))
    if first.pipeline is not None:
        p = first.pipeline
        spec = p.stopwords if isinstance(p.stopwords, str) else "custom"
        lines.append(
            f"vocabulary: {first.n_words:,} words (vocab_size={p.vocab_size}, min_df={p.min_df}, "
            f"max_df={p.max_df}); stop words: {spec} ({len(p.stop_words):,} words)"
        )
    return "\n".join(lines)


@main.command()
@click.argument("source")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="Folder to write the corpus to [default: corpora/<SOURCE name>].")
@vocabulary_options
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --max-docs draw.")
@click.option("--overwrite", is_flag=True, help="Replace a saved corpus already at --out.")
def corpus(source, out, vocab_size, min_df, max_df, stopwords, data_home, categories, max_docs, seed, overwrite):
    """Materialise a corpus on disk and print a summary.

    SOURCE is 20newsgroups (the by-date train/test split, through scikit-learn), a
    folder of text files (one document per file; a first-level subfolder names the
    label), or a saved corpus folder (summarised, and copied if --out is given).

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
    """
    from bpetopics.text import check_destination, prepare_corpus, save_splits
    from bpetopics.text.sources import SAVED, corpus_settings, source_kind

    saved = source_kind(source) == SAVED
    if out is None and not saved:
        out = _default_out(source)
    with corpus_errors():
        if out is not None:
            check_destination(out, overwrite)
        splits = prepare_corpus(source, **corpus_settings(vocab_size, min_df, max_df, stopwords,
                                                          data_home, categories, max_docs, seed))
        if out is not None:
            save_splits(splits, out, overwrite=overwrite)
    if out is None:
        click.echo(f"Corpus {source} (saved; nothing written)")
    else:
        click.echo(f"Saved {source} to {out}")
    click.echo(format_summary(splits))
