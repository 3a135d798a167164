"""``bpetopics info RUN``: parameters, corpus, training history and library versions of a run."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bpetopics.cli import Choice, main, open_run


def format_info(run) -> str:
    """The text printed by ``bpetopics info`` (text or image run)."""
    cfg, s = run.config, run.summary
    lines = [f"Run {run.path}: {cfg['model']} (format {cfg['format']} version {cfg['format_version']})", "",
             "Parameters:"]
    lines += _parameter_lines(run)
    if run.is_image_run:
        return "\n".join(lines + _image_lines(run) + _version_lines(cfg))
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
    compiled = sum(h.get("compile_seconds", 0.0) for h in run.model.history_)
    if compiled:
        lines.append(f"  (and {compiled:.1f} s compiling the CPU kernels, not counted above: a machine's first run)")
    return "\n".join(lines + _version_lines(cfg))


def _parameter_lines(run) -> list[str]:
    """One line a parameter: the value the run trained with; a default computed from
    the data (None in config.json) is shown computed, and marked so."""
    given, lines = run.config["params"], []
    for name, value in run.resolved_params().items():
        if given.get(name) is None and value is not None:
            shown = f"{value:.4g}" if isinstance(value, float) else repr(value)
            lines.append(f"  {name:<18} {shown}  (default, computed for this run)")
        else:
            lines.append(f"  {name:<18} {value!r}")
    return lines


def _version_lines(cfg) -> list[str]:
    from bpetopics.runs import library_versions

    now = library_versions()
    lines = ["", "Library versions (saved / now):"]
    lines += [f"  {name:<13} {saved} / {now.get(name)}" for name, saved in (cfg.get("versions") or {}).items()]
    machine = cfg.get("machine")
    if machine:   # which reproducibility promise a rerun gets (docs/reproducibility.md)
        lines += ["", f"Trained on: {machine.get('cpu')} ({machine.get('architecture')}, "
                      f"{machine.get('vector_unit')}, {machine.get('cores')} cores)"]
    backend = (cfg.get("training") or {}).get("backend")
    if backend:   # where the speed paths ran: numba's compiled kernels or their torch twins
        lines += [f"Backend: {backend}"]
    return lines


def _image_lines(run) -> list[str]:
    """Data, sizes, result and per-epoch history of an image run (GaussBPE, BernBPE, the VAEs)."""
    cfg, s, data = run.config, run.summary, run.data or {}
    shape = "x".join(str(v) for v in data.get("image_shape", []))
    what = data.get("source")
    if data.get("split") and data.get("split") != "folder":
        what = f"{what}, {data['split']} split"
    if data.get("limit"):
        what += f", class-balanced subset of {data['limit']:,} (seed {data.get('seed')})"
    lines = ["", f"Images: {what}",
             f"  {data.get('n_images', cfg['n_data']):,} images of {shape} = {cfg['n_features']:,} values in "
             f"[{data.get('min', float('nan')):.3g}, {data.get('max', float('nan')):.3g}]"
             + (f", from {data['data_root']}" if data.get("data_root") else "")]
    if s:
        if cfg["model"].endswith("BPE"):
            code = (f"codes of {s['code_size']} bits, mean active bits {s['mean_active_bits']:.2f}, bits used "
                    f"{s['bits_used']} of {s['code_size']}")
        else:
            code = (f"codes of {s['code_size']} values, mean non-zero {s['mean_active_bits']:.2f}, "
                    f"{s['bits_used']} of {s['code_size']} ever non-zero")
        result = (f"Result: {s['images']:,} training images, {code}, {s['epochs']} epochs, "
                  f"{s['train_seconds']:.1f} s of training")
        if s.get("final_objective") is not None:
            label = "objective" if cfg["model"].endswith("BPE") else "loss"
            result += f"; final {label} {s['final_objective']:.4g}"
        lines += ["", result]
    history = run.model.history_
    columns = [c for c in dict.fromkeys(k for h in history for k in h) if c != "epoch"]
    lines += ["", "Training history:", "  epoch" + "".join(f"  {c.replace('_', ' '):>12}" for c in columns)]
    lines += [f"  {h['epoch']:>5}" + "".join(f"  {_cell(h.get(c), 12)}" for c in columns) for h in history]
    return lines


def _cell(value, width) -> str:
    """A number to 3 decimals, or '-' where older runs did not record it."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:>{width}.3f}"
    return f"{'-' if value is None else str(value):>{width}}"


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=Choice(("text", "json")), default="text", show_default=True,
              help="text, or json (config.json and summary.json together, and resolved_params: the "
                   "parameters with the defaults computed from the data filled in).")
def info(run, fmt):
    """Show what a run is: its parameters, corpus (or images), training history and library versions.

    \b
    Examples:
      bpetopics info runs/20ng
      bpetopics info runs/20ng --format json
      bpetopics info runs/mnist
    """
    loaded = open_run(run, images=None)
    if fmt == "json":
        click.echo(json.dumps({"config": loaded.config, "summary": loaded.summary,
                               "resolved_params": loaded.resolved_params()}, indent=1, ensure_ascii=False))
    else:
        click.echo(format_info(loaded))
