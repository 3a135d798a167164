"""``bpetopics encode RUN INPUT [--out FILE]``: codes and topic mixtures of new documents,
to a file or, without ``--out``, as a table on the terminal (the work is
:mod:`bpetopics.runs.encode`)."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import Choice, IntRange, UserError, corpus_errors, device_option, main, open_run, run_errors

EXTENSIONS = (".csv", ".npz", ".json")   # as bpetopics.runs.encode.EXTENSIONS (no torch import here)


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="Output file: .csv, .npz or .json (the extension picks the format). Without it, a table "
                   "of each document's active bits and top topics is printed.")
@click.option("--top-topics", type=IntRange(min=1), default=3, show_default=True, help="Top topics listed per document.")
@click.option("--mixture", type=Choice(["document", "posterior", "code"]), default="document", show_default=True,
              help="Topic mixture written: each document's own mixture, the posterior one refined by "
                   "its words (the best prediction of the document's words); the posterior mean over "
                   "each code and the codes near it; or f(z) at the code alone (what the training "
                   "run's doc_topics.npz holds).")
@click.option("--passages", type=Choice(["paragraphs", "sentences"]), default=None,
              help="Encode each document's paragraphs or sentences (ids DOC#1, DOC#2, ...), cut as `train "
                   "--passages` cuts them [default: whole documents].")
@device_option()
@click.option("--overwrite", is_flag=True, help="Replace --out if it exists.")
def encode(run, input_path, out, top_topics, mixture, passages, device, overwrite):
    """Encode new documents with a trained run: binary codes and topic mixtures.

    INPUT is a text file (one document) or a folder of text files (one document per
    file). The documents are cleaned and counted with the run's own settings and
    vocabulary; words outside the vocabulary are ignored.

    Without --out each document's words, active bits and top topics (label and weight)
    are printed as a table.

    \b
    Output by the extension of --out:
      .csv   doc_id, n_words, active_bits (bit indices), top_topics (topic:weight),
             then one column per topic (the mixture, see --mixture)
      .npz   scipy.sparse.load_npz(FILE) gives the codes (CSR, N x K);
             numpy.load(FILE) also holds doc_topic (N x T), ids and n_words
      .json  {"documents": [{"id", "n_words", "active_bits", "top_topics", "mixture"}]}

    \b
    Examples:
      bpetopics encode runs/20ng new_posts/                 # a table on the terminal
      bpetopics encode runs/20ng new_posts/ --out codes.csv
      bpetopics encode runs/20ng message.txt --out message.json
      bpetopics encode runs/20ng archive/ --out archive.npz --device cpu
      bpetopics encode runs/speeches new_speech.txt --passages paragraphs --out paragraphs.csv
    """
    if out is not None:
        if out.suffix.lower() not in EXTENSIONS:
            raise UserError(f"--out {out} must end in .csv, .npz or .json (the extension picks the format)")
        if out.is_dir() or (out.exists() and not overwrite):
            raise UserError(f"{out} already exists: pass --overwrite to replace it, or choose another --out")
    from bpetopics.files import write_bytes_atomic
    from bpetopics.runs.encode import encode_documents, encoded_bytes, encoded_table, read_documents

    trained = open_run(run, device=device)
    with corpus_errors():
        ids, texts = read_documents(input_path)
    with run_errors():
        docs = encode_documents(trained, ids, texts, mixture, passages)
    empty = docs.n_empty
    unit = "document(s)" if passages is None else f"passage(s) of {len(ids):,} document(s)"
    summary = (f"Encoded {len(docs.ids):,} {unit} from {input_path} with {run}"
               + ("" if out is None else f" to {out}") + f": mean active bits {docs.codes.sum(1).mean():.2f}"
               + (f"; {empty:,} had no word of the run's vocabulary" if empty else ""))
    if out is None:
        from bpetopics.runs.labels import topic_labels

        click.echo(encoded_table(docs, top_topics, topic_labels(trained)))
        click.echo(summary, err=True)
        return
    write_bytes_atomic(out, encoded_bytes(out.suffix.lower(), docs, top_topics, run))
    click.echo(summary)
