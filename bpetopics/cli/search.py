"""``bpetopics search RUN QUERY``: the topics of a query, encoded like a document
(the work is :mod:`bpetopics.runs.search`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bpetopics.cli import IntRange, UserError, main, open_run, run_errors


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.argument("query")
@click.option("--top-topics", "top", type=IntRange(min=1), default=5, show_default=True, help="Topics shown.")
@click.option("--top-n", "-n", "words", type=IntRange(min=0), default=6, show_default=True,
              help="Top words shown per topic.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table (for people) or json.")
def search(run, query, top, words, fmt):
    """Find the topics of QUERY: its words are counted with the run's pipeline and
    encoded like a document; the topics are those of its mixture (the posterior mean
    of f(z)), heaviest first. Words outside the run's vocabulary are ignored.

    \b
    Examples:
      bpetopics search runs/20ng "space shuttle launch"
      bpetopics search runs/20ng "graphics card drivers" --top 3
      bpetopics search runs/20ng "gun control" --format json
    """
    if not query.strip():
        raise UserError("the query is empty: give some words, e.g. \"space shuttle launch\"")
    from bpetopics.runs.labels import topic_labels
    from bpetopics.runs.search import DocumentSearch, EmptyQueryError

    loaded = open_run(run)
    with run_errors():
        try:
            topics, weights = DocumentSearch(loaded.model, loaded.pipeline, None).find_topics(query, top)
        except EmptyQueryError as exc:
            raise UserError(str(exc)) from None
        labels = topic_labels(loaded)
    top_words = loaded.model.top_words(loaded.vocabulary, words) if words else [[] for _ in labels]
    rows = [{"topic": t, "weight": round(w, 6), "label": labels[t], "words": top_words[t]}
            for t, w in zip(topics, weights)]
    if fmt == "json":
        click.echo(json.dumps({"query": query, "topics": rows}, indent=1, ensure_ascii=False))
        return
    width = max(len("label"), *(len(r["label"]) for r in rows))
    click.echo(f"topic  weight  {'label':<{width}}  top words")
    for r in rows:
        click.echo(f"{r['topic']:>5}  {r['weight']:6.3f}  {r['label']:<{width}}  {' '.join(r['words'])}")
