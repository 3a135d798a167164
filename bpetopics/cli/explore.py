"""``bpetopics explore RUN --out explore.html``: one self-contained page to explore a run
in the browser."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import IntRange, UserError, describe_os_error, main, open_run, refuse_existing, run_errors


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True, help="The HTML page to write.")
@click.option("--max-docs", type=IntRange(min=1), default=2000, show_default=True,
              help="Documents shown on the page: the run's first (about 0.5 KB each).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the graph's layout.")
@click.option("--overwrite", is_flag=True, help="Replace a page already at --out.")
def explore(run, out, max_docs, seed, overwrite):
    """Write a page to explore a run in the browser, offline.

    One self-contained HTML file (no network): the topics with their labels and
    word bars; the co-activation graph of `bpetopics graph` to pan, zoom and click;
    the documents with their code (bits), topics, words and nearest neighbours (the
    documents whose codes differ in the fewest bits); a search box (words to topics
    and documents); and topic shares over time when the run has timestamps
    (trained with --time-field). Document words come from the run's corpus,
    rebuilt as `bpetopics evaluate` does; without it the page shows ids only.

    \b
    Examples:
      bpetopics explore runs/20ng --out runs/20ng/explore.html
      bpetopics explore runs/posts --out explore.html --max-docs 5000
    """
    if out.is_dir():
        raise UserError(f"--out {out} is a folder: give a file name such as {out / 'explore.html'}")
    if out.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"--out must be an .html file; got {out}")
    refuse_existing([out], overwrite)
    from bpetopics.runs.explorer import explorer_data
    from bpetopics.viz.explorer import write_explorer_html

    loaded = open_run(run)
    with run_errors():
        data = explorer_data(loaded, max_docs=max_docs, seed=seed)
    try:
        write_explorer_html(data, out)
    except OSError as exc:
        raise UserError(describe_os_error(exc, "run the command again (no page was written)", path=out)) from None
    size = out.stat().st_size
    click.echo(f"Wrote {out} ({len(data['topics'])} topics, {len(data['documents']):,} of "
               f"{data['n_documents']:,} documents, {size / 1e6:.1f} MB)")
    for note in data["notes"]:
        click.echo(f"Note: {note}", err=True)
