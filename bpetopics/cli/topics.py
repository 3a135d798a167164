"""``bpetopics topics RUN``: the topics of a trained run, their labels, top words and shares."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import Choice, IntRange, UserError, main, open_run, option, run_errors

FORMATS = ("table", "csv", "json")


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@option("--top-n", "-n", "top", type=IntRange(min=1), default=10, show_default=True, old=("--top",),
        help="Top words per topic shown.")
@click.option("--format", "fmt", type=Choice(FORMATS), default="table", show_default=True,
              help="table (for people), csv (one row per topic and word) or json.")
@click.option("--set-label", "set_labels", multiple=True, metavar="TOPIC=LABEL",
              help="Label a topic by hand (saved in the run's labels.json); repeat for several.")
@click.option("--documents", "n_docs", type=IntRange(min=1), default=None, metavar="N",
              help="Under each topic, the N training documents that give it the most weight: their weight, id "
                   "and first words (table and json formats).")
@click.option("--relabel", is_flag=True,
              help="Compute the automatic labels again from the run's corpus and save them "
                   "(labels set by hand stay).")
def topics(run, top, fmt, set_labels, n_docs, relabel):
    """Print the topics of a trained run: label, top words, their weights, each topic's share.

    A topic's share is the fraction of the training corpus's words that its mixture
    weights f(z_n) account for. A word's weight is its probability in the topic. A
    topic's label is the collocation (a word pair) most relevant to it, or its top two
    words, unless one was set by hand with --set-label.

    \b
    Examples:
      bpetopics topics runs/20ng
      bpetopics topics runs/20ng --top-n 20
      bpetopics topics runs/20ng --documents 3
      bpetopics topics runs/20ng --format csv > topics.csv
      bpetopics topics runs/20ng --format json
      bpetopics topics runs/20ng --set-label 3="space flight" --set-label 7=hockey
      bpetopics topics runs/20ng --relabel
    """
    from bpetopics.labels import parse_label_assignment

    if n_docs is not None and fmt == "csv":
        raise UserError("--documents shows in the table and json formats, not csv (one row per topic and word): "
                        "give --format json, or read every document's mixture in the run's doc_topics.npz")
    try:
        assignments = dict(parse_label_assignment(text) for text in set_labels)
    except ValueError as exc:
        raise UserError(f"--set-label: {exc}") from None
    from bpetopics.runs.labels import relabel_topics, set_topic_labels, topic_labels
    from bpetopics.runs.topics import add_topic_documents, format_rows, topic_rows

    loaded = open_run(run)
    with run_errors():
        try:
            if relabel:
                relabel_topics(loaded)
            labels = set_topic_labels(loaded, assignments) if assignments else topic_labels(loaded)
        except ValueError as exc:
            if type(exc) is not ValueError:
                raise
            raise UserError(f"--set-label: {exc}") from None
    rows = topic_rows(loaded, top, labels)
    if n_docs is not None:
        with run_errors():
            note = add_topic_documents(rows, loaded, n_docs)
        if note:
            click.echo(f"Note: {note}", err=True)
    click.echo(format_rows(rows, fmt))
