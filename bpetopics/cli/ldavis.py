"""``bpetopics ldavis RUN --out topics.html``: a pyLDAvis page for a run, usable offline."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import Choice, IntRange, UserError, main, open_run, option, refuse_existing, run_errors

MDS_CHOICES = ("pcoa", "mmds", "tsne")


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True, help="The HTML page to write.")
@click.option("--mds", type=Choice(MDS_CHOICES), default="pcoa", show_default=True,
              help="How topics are placed in 2-D from their Jensen-Shannon distances.")
@option("--top-n", "R", type=IntRange(min=1), default=30, show_default=True, old=("--terms",),
        help="Top words per topic listed (pyLDAvis's R).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the layout (mmds, tsne).")
@click.option("--overwrite", is_flag=True, help="Replace a page already at --out.")
def ldavis(run, out, mds, R, seed, overwrite):
    """Write an interactive pyLDAvis page for a run.

    Topic-term distributions come from the model, document-topic mixtures f(z) from
    the training documents' codes, document lengths and term frequencies from the
    training counts saved with the run (for runs saved without them, the run's corpus
    is rebuilt from what the run recorded). For a run trained on a sharded corpus, the
    documents are summed by their distinct codes (the same page, from a small file). The page holds d3, LDAvis and the data, so
    it opens without network access. Topic t + 1 on the page is topic t of
    `bpetopics topics` and node t of `bpetopics graph`; a table under the plot gives
    each topic's label (`bpetopics topics --set-label` sets them by hand).

    \b
    Examples:
      bpetopics ldavis runs/20ng --out runs/20ng/topics.html
      bpetopics ldavis runs/20ng --out topics.html --mds tsne --top-n 20
    """
    if out.is_dir():
        raise UserError(f"--out {out} is a folder: give a file name such as {out / 'topics.html'}")
    if out.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"--out must be an .html file; got {out}")
    refuse_existing([out], overwrite)
    from bpetopics.runs.explore import run_ldavis_inputs
    from bpetopics.runs.labels import topic_labels
    from bpetopics.viz import write_ldavis_html

    loaded = open_run(run)
    with run_errors():
        data = run_ldavis_inputs(loaded)
        labels = topic_labels(loaded)
    write_ldavis_html(data["topic_word"], data["doc_topic"], data["doc_lengths"], data["vocabulary"],
                      data["term_frequency"], out, seed=seed, mds=mds, R=R,
                      title=f"Topics of {loaded.path.name}", labels=labels)
    documents = data.get("note") or f"{len(data['doc_lengths']):,} documents"   # a sharded run: by distinct codes
    click.echo(f"Wrote {out} ({data['topic_word'].shape[0]} topics, {len(data['vocabulary']):,} words, {documents})")
