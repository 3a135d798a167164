"""``bpetopics topics RUN``: the topics of a trained run, their top words and shares."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import click

from bpetopics.cli import UserError, main

FORMATS = ("table", "csv", "json")


def open_run(path, device="cpu"):
    """:func:`bpetopics.io.load_run`, with its one-line errors turned into :class:`UserError`."""
    from bpetopics.io import RunError, load_run

    try:
        return load_run(path, device=device)
    except RunError as exc:
        raise UserError(str(exc)) from None


def topic_shares(run):
    """Each topic's share of the corpus's tokens (from summary.json), or None when unknown."""
    share = run.summary.get("topic_share")
    if share is None:
        try:
            share = run.doc_topics()[1].mean(0).tolist()
        except (OSError, KeyError, ValueError):
            return None
    return [float(s) for s in share]


def topic_rows(run, top: int = 10) -> list[dict]:
    """One dict per topic: ``topic``, ``share``, ``words`` and ``weights`` (top ``top``)."""
    import numpy as np

    topic_word = run.model.topic_word_
    shares = topic_shares(run)
    order = np.argsort(-topic_word, axis=1, kind="stable")[:, :top]
    return [{"topic": t, "share": None if shares is None else shares[t],
             "words": [run.vocabulary[j] for j in row],
             "weights": [round(float(topic_word[t, j]), 6) for j in row]}
            for t, row in enumerate(order)]


def format_table(rows: list[dict]) -> str:
    """Topics as aligned text: topic, share of the corpus, top words with their weights."""
    lines = ["topic   share  top words (weight)"]
    for row in rows:
        share = "     -" if row["share"] is None else f"{row['share']:6.1%}"
        words = "  ".join(f"{w} {p:.3f}" for w, p in zip(row["words"], row["weights"]))
        lines.append(f"{row['topic']:>5}  {share}  {words}")
    return "\n".join(lines)


def format_rows(rows: list[dict], fmt: str) -> str:
    """``rows`` in ``fmt``: table, csv (long: topic, share, rank, word, weight) or json."""
    if fmt == "table":
        return format_table(rows)
    if fmt == "json":
        return json.dumps(rows, indent=1, ensure_ascii=False)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["topic", "share", "rank", "word", "weight"])
    for row in rows:
        share = "" if row["share"] is None else f"{row['share']:.6g}"
        writer.writerows([row["topic"], share, rank, w, p]
                         for rank, (w, p) in enumerate(zip(row["words"], row["weights"])))
    return buf.getvalue().rstrip("\n")


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--top", "-n", type=int, default=10, show_default=True, help="Words shown per topic.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table (for people), csv (one row per topic and word) or json.")
def topics(run, top, fmt):
    """Print the topics of a trained run: top words, their weights, each topic's share.

    A topic's share is the fraction of the training corpus's words that its mixture
    weights f(z_n) account for. A word's weight is its probability in the topic.

    \b
    Examples:
      bpetopics topics runs/20ng
      bpetopics topics runs/20ng --top 20
      bpetopics topics runs/20ng --format csv > topics.csv
      bpetopics topics runs/20ng --format json
    """
    if top < 1:
        raise UserError(f"--top must be a positive integer; got {top}")
    click.echo(format_rows(topic_rows(open_run(run), top), fmt))
