"""``bpetopics topics RUN``: the topics of a trained run, their top words and shares."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import Choice, IntRange, main, open_run, option

FORMATS = ("table", "csv", "json")


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@option("--top-n", "-n", "top", type=IntRange(min=1), default=10, show_default=True, old=("--top",),
        help="Top words per topic shown.")
@click.option("--format", "fmt", type=Choice(FORMATS), default="table", show_default=True,
              help="table (for people), csv (one row per topic and word) or json.")
def topics(run, top, fmt):
    """Print the topics of a trained run: top words, their weights, each topic's share.

    A topic's share is the fraction of the training corpus's words that its mixture
    weights f(z_n) account for. A word's weight is its probability in the topic.

    \b
    Examples:
      bpetopics topics runs/20ng
      bpetopics topics runs/20ng --top-n 20
      bpetopics topics runs/20ng --format csv > topics.csv
      bpetopics topics runs/20ng --format json
    """
    from bpetopics.runs.topics import format_rows, topic_rows

    click.echo(format_rows(topic_rows(open_run(run), top), fmt))
