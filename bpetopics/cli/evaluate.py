"""``bpetopics evaluate RUN``: coherence, diversity, perplexity, sparsity and accuracy of a run.

The run's corpus is rebuilt by :func:`bpetopics.runs.corpus.run_splits` from what
``bpetopics train`` recorded in ``config.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from bpetopics.cli import Choice, IntRange, UserError, main, open_run, option, run_errors



def format_metrics(result: dict) -> str:
    """The scalar measures as aligned ``name  value`` lines."""
    rows = [(k, v) for k, v in result.items() if not isinstance(v, (list, dict))]
    width = max(len(k) for k, _ in rows)
    out = []
    for k, v in rows:
        if isinstance(v, float):
            v = f"{v:.6g}"
        out.append(f"{k:<{width}}  {'-' if v is None else v}")
    return "\n".join(out)


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--reference", type=Choice(("test", "train")), default="test", show_default=True,
              help="Split whose texts are the reference corpus for coherence (NPMI).")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="Also write every measure (with per-topic NPMI and top words) to this JSON file.")
@click.option("--top-n", type=IntRange(min=2), default=10, show_default=True,
              help="Top words per topic for coherence.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the completion split and of the classifier.")
@click.option("--gensim/--no-gensim", default=True, show_default=True,
              help="Also compute gensim's c_npmi (the reference for ours), C_V, UMass and UCI (slower).")
@option("--max-docs", "sample", type=IntRange(min=1), default=10_000, show_default=True, old=("--sample",),
        help="Runs trained on a sharded corpus: measure on at most this many of the training documents, "
             "drawn at random with --seed (such a corpus has no test split).")
def evaluate(run, reference, out, top_n, seed, gensim, sample):
    """Measure a trained run on its corpus's held-out documents.

    \b
    Prints, and with --out writes as JSON:
      npmi, gensim_c_npmi   coherence of the top words (and topics with non-finite NPMI)
      npmi_corpus           the same on the whole corpus, train and test (the OCTIS protocol)
      gensim_c_v, gensim_u_mass, gensim_c_uci   gensim's other coherence measures
      diversity             share of unique words among the topics' top 25
      perplexity            document completion on the test split
      accuracy              logistic regression on the doc-topic mixtures
      code_*                sparsity of the held-out documents' codes
      fit_seconds, infer_seconds, infer_docs_per_second

    The corpus is rebuilt from what the run recorded (20 Newsgroups with the same
    settings, the same folder, or the saved corpus); a change since training is an
    error. A run trained on a sharded corpus is measured on a seeded sample of its
    training documents read from the shards (--max-docs; coherence counts words sharing
    a document, as the shards keep no word order; no gensim measures, no accuracy),
    and the output says so.

    \b
    Examples:
      bpetopics evaluate runs/20ng
      bpetopics evaluate runs/20ng --out runs/20ng/metrics.json
      bpetopics evaluate runs/20ng --reference train --no-gensim
    """
    from bpetopics.files import write_text_atomic

    if out is not None and out.is_dir():
        raise UserError(f"--out {out} is a folder: give a file name such as {out / 'metrics.json'}")
    from bpetopics.runs.explore import evaluate_run, json_safe

    from bpetopics.runs.corpus import unchecked_corpus_note

    loaded = open_run(run)
    note = unchecked_corpus_note(loaded)
    if note:
        click.echo(f"Note: {note}", err=True)
    with run_errors():
        result = evaluate_run(loaded, reference=reference, top_n=top_n, seed=seed, gensim=gensim,
                              echo=lambda m: click.echo(m, err=True), sample=sample)
    if out is not None:
        write_text_atomic(out, json.dumps(json_safe(result), indent=1, ensure_ascii=False) + "\n")
    if "sample" in result:      # a sharded run: which documents were measured
        click.echo(result["sample"]["note"][0].upper() + result["sample"]["note"][1:])
    click.echo(format_metrics(result))
    if out is not None:
        click.echo(f"Wrote {out}", err=True)
