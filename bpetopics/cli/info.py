"""``bpetopics info RUN``: parameters, corpus, training history and library versions of a run."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bpetopics.cli import main, open_run


def format_info(run) -> str:
    """The text printed by ``bpetopics info``."""
    from bpetopics.runs import library_versions

    cfg, s = run.config, run.summary
    lines = [f"Run {run.path}: {cfg['model']} (format {cfg['format']} version {cfg['format_version']})", "",
             "Parameters:"]
    lines += [f"  {name:<18} {value!r}" for name, value in cfg["params"].items()]
    corpus = cfg.get("corpus") or {}
    lines += ["", f"Corpus: {corpus.get('source')}"]
    for name, split in (corpus.get("splits") or {"train": corpus.get("summary")}).items():
        if split:
            lines.append(f"  {name:<6} {split['documents']:,} documents, {split['vocabulary']:,} words, "
                         f"{split['tokens']:,} tokens, mean length {split['mean_length']:.1f}")
    settings = corpus.get("settings") or {}
    if settings:
        lines.append("  settings: " + ", ".join(f"{k}={v}" for k, v in settings.items() if v is not None))
    if s:
        lines += ["", f"Result: {s['documents']:,} documents, {s['n_topics']} topics, mean active bits "
                      f"{s['mean_active_bits']:.2f}, bits used {s['bits_used']} of {s['n_bits']}, "
                      f"{s['train_seconds']:.1f} s of training"]
    lines += ["", "Training history:", "  epoch     objective  active bits  topic overlap  seconds"]
    lines += [f"  {h['epoch']:>5}  {h['objective']:>12.3f}  {h['active_bits']:>11.3f}  "
              f"{_cell(h.get('topic_overlap'), 13)}  {h['seconds']:>7.2f}" for h in run.model.history_]
    now = library_versions()
    lines += ["", "Library versions (saved / now):"]
    lines += [f"  {name:<13} {saved} / {now.get(name)}" for name, saved in (cfg.get("versions") or {}).items()]
    return "\n".join(lines)


def _cell(value, width) -> str:
    """A number to 3 decimals, or '-' where older runs did not record it."""
    return f"{value:>{width}.3f}" if value is not None else f"{'-':>{width}}"


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True,
              help="text, or json (config.json and summary.json together).")
def info(run, fmt):
    """Show what a run is: its parameters, corpus, training history and library versions.

    \b
    Examples:
      bpetopics info runs/20ng
      bpetopics info runs/20ng --format json
    """
    loaded = open_run(run)
    if fmt == "json":
        click.echo(json.dumps({"config": loaded.config, "summary": loaded.summary}, indent=1, ensure_ascii=False))
    else:
        click.echo(format_info(loaded))
