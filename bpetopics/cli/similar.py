"""``bpetopics similar RUN DOC``: the training documents most like a document or a text
(the work is :mod:`bpetopics.runs.search`: the documents ranked by their posterior
mixtures and their words together)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import click

from bpetopics.cli import IntRange, UserError, main, open_run, run_errors


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.argument("doc", required=False)
@click.option("--text", default=None, help="Find documents like this text instead of a training document.")
@click.option("--top-docs", "-k", "k", type=IntRange(min=1), default=10, show_default=True, help="Documents shown.")
@click.option("--word-weight", type=click.FloatRange(0.0, 1.0), default=None,
              help="The words' share of the score, from 0 (topic mixtures alone: the documents sharing an "
                   "active bit, by their mixtures) to 1 (TF-IDF alone).  [default: 0.7]")  # WORD_WEIGHT
@click.option("--pool", type=IntRange(min=0), default=None,
              help="0: rank by the Hamming distance of the codes alone. A positive number (deprecated) "
                   "re-ranks that many Hamming-nearest documents by their topic mixtures instead.")
@click.option("--show-text", is_flag=True,
              help="Also show each document's first words after cleaning (rebuilds the run's corpus: a few "
                   "seconds on a large one).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table (for people) or json.")
def similar(run, doc, text, k, word_weight, pool, show_text, fmt):
    """List the training documents of RUN most like DOC: a document id of the run (as in
    `bpetopics encode` output and doc_topics.npz, e.g. sci.space/61422) or its index
    (0, 1, ...), or, with --text, like a text encoded as a document.

    Each training document is scored by the cosine similarity of its topic mixture with
    the query's and that of their TF-IDF vectors, blended by --word-weight; ties by the
    lower index. With --word-weight 0, the documents sharing an active bit with the
    query's binary code (all of them when fewer than -k do), ranked by their mixtures.
    The training documents' mixtures are computed once a call.

    \b
    Examples:
      bpetopics similar runs/20ng 0
      bpetopics similar runs/20ng sci.space/61422 -k 5 --show-text
      bpetopics similar runs/20ng --text "the shuttle launch was delayed"
      bpetopics similar runs/20ng 0 --word-weight 0
      bpetopics similar runs/20ng 42 --pool 0 --format json
    """
    if (doc is None) == (text is None):
        raise UserError("give a DOC (an id or index of the run's training documents) or --text, not both"
                        if doc is not None else "give a DOC (an id or index of the run's training documents) "
                        "or --text \"...\"")
    if text is not None and not text.strip():
        raise UserError("--text is empty: give some words")
    if pool is not None and word_weight:
        raise UserError("--word-weight blends words into the default search only: leave --pool out, or give "
                        "--word-weight 0")
    from bpetopics.runs.labels import topic_labels
    from bpetopics.runs.search import DocumentSearch, EmptyQueryError

    loaded = open_run(run)
    with run_errors():
        found = DocumentSearch.from_run(loaded)
        try:
            if pool:
                click.echo("Note: --pool N is deprecated and will be removed: leave it out for the default "
                           "search.", err=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                rows, scores = found.similar(doc, text=text, k=k, pool="shared" if pool is None else pool,
                                             word_weight=word_weight)
        except EmptyQueryError as exc:
            raise UserError(f"--text: {exc}") from None
        except ValueError as exc:
            if type(exc) is not ValueError:
                raise
            raise UserError(str(exc)) from None
        labels = topic_labels(loaded)
        topics = found.mixtures_of(rows).argmax(axis=1) if len(rows) else []
    pool = "shared" if pool is None else pool
    score = "similarity" if pool else "hamming"
    out = [{"rank": r + 1, "index": int(i), "id": found.ids[i], score: round(float(s), 6) if pool else int(s),
            "topic": int(t), "label": labels[t]} for r, (i, s, t) in enumerate(zip(rows, scores, topics))]
    if show_text:
        _add_texts(loaded, out)
    if fmt == "json":
        click.echo(json.dumps({"run": str(run), "query": text if text is not None else doc, "documents": out},
                              indent=1, ensure_ascii=False))
        return
    width = max([len("id")] + [len(d["id"]) for d in out])
    click.echo(f"rank  {'index':>6}  {'id':<{width}}  {score:>10}  topic  label")
    for d in out:
        value = f"{d[score]:10.4f}" if pool else f"{d[score]:>10}"
        click.echo(f"{d['rank']:>4}  {d['index']:>6}  {d['id']:<{width}}  {value}  {d['topic']:>5}  {d['label']}")
        if d.get("text"):
            click.echo(f"{'':>12}{d['text']}")


def _add_texts(loaded, out: list[dict]) -> None:
    """Give each listed document ``text``: its first words after cleaning, from the run's
    corpus rebuilt (as ``bpetopics topics --documents`` shows them); a note instead when
    the corpus cannot be rebuilt."""
    from bpetopics.runs.corpus import run_train_split
    from bpetopics.runs.topics import SNIPPET_WORDS

    train, note = run_train_split(loaded)
    if train is None:
        click.echo(f"Note: {note}", err=True)
        return
    for d in out:
        d["text"] = " ".join(train.texts[d["index"]][:SNIPPET_WORDS])
