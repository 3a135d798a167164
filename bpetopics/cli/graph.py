"""``bpetopics graph RUN --out graph.png``: the topic co-activation graph of a run, and its bits."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import (Choice, FloatRange, IntRange, UserError, describe_os_error, main, open_run, option,
                           refuse_existing, run_errors)

RULES = ("threshold", "top_mass")


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="The PNG to draw; NAME.graphml, NAME.gexf and NAME.bits.csv are written beside it.")
@click.option("--rule", type=Choice(RULES), default="threshold", show_default=True,
              help="When a code switches a topic on: its mixture weight >= --threshold, or the topic is in "
                   "the smallest set covering --mass of the mixture.")
@click.option("--threshold", type=FloatRange(0, 1, min_open=True), default=0.1, show_default=True,
              help="Mixture weight at which a topic counts as on (--rule threshold).")
@click.option("--mass", type=FloatRange(0, 1, min_open=True), default=0.8, show_default=True,
              help="Share of the mixture the active topics cover (--rule top_mass).")
@click.option("--min-weight", type=FloatRange(min=0), default=None,
              help="Leave out of the drawing edges shared by fewer documents (the files keep them all) "
                   "[default: 1% of the documents, at least 1].")
@click.option("--top-n", type=IntRange(min=1), default=10, show_default=True,
              help="Top words per topic stored with each node.")
@option("--bits-out", "bits_path", type=click.Path(path_type=Path), default=None, old=("--bits",),
        help="Where to write the table of bits [default: NAME.bits.csv beside --out].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the layout.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an earlier graph at --out.")
def graph(run, out, rule, threshold, mass, min_weight, top_n, bits_path, seed, overwrite):
    """Draw the topic co-activation graph of a run: one node per topic (area: its share
    of the corpus), an edge between two topics switched on by the same documents' codes
    (width: how many documents).

    Writes the PNG (--out), the same graph as GraphML and GEXF beside it (for networkx,
    Gephi, Cytoscape), and NAME.bits.csv: for each bit of the code, how many documents
    use it and which topics switching it on raises most. Files already there are kept
    unless --overwrite is given.

    \b
    Examples:
      bpetopics graph runs/20ng --out runs/20ng/graph.png
      bpetopics graph runs/20ng --out figs/graph.png --threshold 0.2 --min-weight 5
      bpetopics graph runs/20ng --out figs/mass.png --rule top_mass --mass 0.9
    """
    if out.suffix.lower() != ".png":
        raise UserError(f"--out must be a .png file (graph.graphml and graph.gexf go beside it); got {out}")
    if out.is_dir():
        raise UserError(f"--out {out} is a folder: give a file name such as {out / 'graph.png'}")
    bits_path = out.with_suffix(".bits.csv") if bits_path is None else bits_path
    refuse_existing([out, out.with_suffix(".graphml"), out.with_suffix(".gexf"), bits_path], overwrite)
    from bpetopics.files import place_files, scratch_folder
    from bpetopics.runs.explore import run_bit_table, run_graph
    from bpetopics.viz import draw_graph, write_graph

    loaded = open_run(run)
    with run_errors():
        G = run_graph(loaded, rule=rule, threshold=threshold, mass=mass, top_n=top_n)
    table = run_bit_table(loaded, labels=[G.nodes[t]["label"] for t in sorted(G.nodes)])
    if min_weight is None:
        # On 20 Newsgroups (T = 20) 175 of the 190 possible edges carry a document; a third
        # of them fewer than 10 of 11k. Drawing them all hides the groups in a blob.
        min_weight = max(1.0, round(0.01 * loaded.config.get("n_data", 0)))
    # two different cuts, each named by what it cuts: when a topic counts as on (the title)
    # and which edges are drawn (the footer and the summary line: documents, not weights)
    setting = (f"a topic is on at mixture weight >= {threshold:g}" if rule == "threshold"
               else f"on: the topics covering {mass:.0%} of the mixture")
    graphml, gexf = out.with_suffix(".graphml"), out.with_suffix(".gexf")
    try:
        with scratch_folder(out) as tmp:     # the four files appear together or not at all (a full disk)
            staged_graphml, staged_gexf = write_graph(G, tmp / "graph")
            table.to_csv(tmp / "bits.csv", index=False)
            draw_graph(G, tmp / "graph.png", min_weight=min_weight, seed=seed,
                       title=f"{loaded.path.name}: topics switched on together ({setting})")
            place_files({staged_graphml: graphml, staged_gexf: gexf, tmp / "bits.csv": bits_path,
                         tmp / "graph.png": out})
    except OSError as exc:
        raise UserError(describe_os_error(exc, "run the command again (no file of the graph was written)",
                                          path=out.parent)) from None
    shown = sum(1 for *_, w in G.edges(data="weight") if w >= min_weight)
    click.echo(f"{G.number_of_nodes()} topics ({setting}), {G.number_of_edges()} edges ({shown} drawn: those "
               f"shared by {min_weight:g} documents or more)")
    click.echo(f"Wrote {out}, {graphml}, {gexf}, {bits_path}")
