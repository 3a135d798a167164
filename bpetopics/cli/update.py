"""``bpetopics update RUN DOCUMENTS --out RUN2``: train a run further on new documents.

The library's :mod:`bpetopics.runs.update` (the job of ``train``, :mod:`bpetopics.runs.job`:
a checkpoint after every epoch in ``RUN2.partial/``, resume, RUN2 written when training
has finished); RUN itself is never written.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from bpetopics.cli import (IntRange, UserError, corpus_errors, describe_os_error, device_option, main, run_errors,
                           record_options)

def _check_arguments(run, documents, out, resume: bool, overwrite: bool) -> None:
    """Refuse, before importing torch, what cannot work: a missing argument, RUN2 being
    RUN, RUN not a finished run, a finished run at --out."""
    from bpetopics.runs.run import check_run_destination, is_run

    if not resume:
        if run is None or documents is None:
            raise UserError("give the RUN to update and the new DOCUMENTS (or --resume with --out)")
        if Path(out).resolve() == Path(run).resolve():
            raise UserError(f"--out {out} is the run being updated: write the update to another folder "
                            "(the run is never overwritten)")
        if not is_run(run):
            raise UserError(f"{run} is not a finished run (no config.json): give a run folder written by "
                            "`bpetopics train`")
    with run_errors():
        check_run_destination(out, overwrite)


@main.command()
@click.argument("run", type=click.Path(path_type=Path), required=False)
@click.argument("documents", required=False)
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="The new run folder to write (created when training has finished).")
@click.option("--epochs", type=IntRange(min=1), default=1, show_default=True,
              help="Passes over the new documents.")
@click.option("--resume", is_flag=True, help="Continue the interrupted update of --out from its last checkpoint.")
@click.option("--overwrite", is_flag=True, help="Replace a finished run (or an interrupted update) at --out.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@device_option()
@record_options
@click.pass_context
def update(ctx, run, documents, out, epochs, resume, overwrite, quiet, device, text_field, id_field, label_field,
           time_field, skip_bad_lines):
    """Train RUN further on new DOCUMENTS and save the result to --out.

    DOCUMENTS is a folder of text files, a .jsonl or .csv file (see --text-field)
    or a named corpus. They are counted with RUN's cleaning and vocabulary (and split
    into paragraphs or sentences if RUN's documents were, --passages): words outside
    it are dropped and counted, and documents without a word of it are left out and
    reported. Training goes on from RUN's weights for --epochs passes over the
    new documents, keeping RUN's topics (none is restarted or split), so that topic t
    of the new run is topic t of RUN; at the end each topic's cosine similarity to its
    old word distribution is printed and recorded in the new run's config.json
    (corpus.update). The new run's documents are the new ones.

    A checkpoint is kept after every epoch in OUT.partial/; after Ctrl-C, continue
    with --resume. RUN is never written.

    \b
    Examples:
      bpetopics update runs/20ng new_docs/ --out runs/20ng-2
      bpetopics update runs/20ng news.jsonl --text-field body --epochs 3 --out runs/20ng-3
      bpetopics update --out runs/20ng-2 --resume
    """
    _check_arguments(run, documents, out, resume, overwrite)
    from bpetopics.runs import job as jobs
    from bpetopics.runs import update as updates

    lock = None
    with run_errors():
        lock = jobs.lock_job(out)
    ctx.call_on_close(lock.release)
    fields = {"text_field": text_field, "id_field": id_field, "label_field": label_field,
              "time_field": time_field, "skip_bad_lines": skip_bad_lines}
    device = device if ctx.get_parameter_source("device") is click.core.ParameterSource.COMMANDLINE else None
    resume_hint = f"bpetopics update --out {shlex.quote(str(out))} --resume"
    if resume:
        with run_errors():
            job = updates.resume_update(out, device=device, lock=lock)
        if not quiet:
            click.echo(f"Resuming the update of {out} at epoch {job.training.model.epoch_}", err=True)
    else:
        with run_errors():
            jobs.check_job_destination(out, overwrite, lock=lock)
        with run_errors(), corpus_errors():
            job, corpus, dropped_tokens = updates.start_update(run, documents, out, epochs=epochs,
                                                               overwrite=overwrite, fields=fields, device=device,
                                                               lock=lock)
        click.echo(f"Updating {run} on {documents}: {corpus.n_docs:,} documents, {corpus.n_tokens:,} tokens in "
                   f"the run's vocabulary, {dropped_tokens:,} outside it (dropped)", err=True)
        if corpus.dropped_note():
            left = [i for ids in corpus.dropped.values() for i in ids][:3]
            click.echo(f"Note: {corpus.dropped_note()}: {', '.join(map(str, left))}"
                       f"{' ...' if sum(map(len, corpus.dropped.values())) > 3 else ''}", err=True)
    _train(job, quiet, resume_hint, ctx)
    try:
        with run_errors():
            _, movement = updates.finish_update(job, overwrite=overwrite)
    except OSError as exc:
        raise UserError(describe_os_error(exc, f"save the updated model from its checkpoint, which is kept: "
                                               f"{resume_hint}", out)) from None
    _print_movement(out, movement)


def _train(job, quiet: bool, resume_hint: str, ctx) -> None:
    """Run the update's epochs with a progress bar; Ctrl-C or SIGTERM leaves the last
    checkpoint and exits with 130 or 143, saying how to resume."""
    from tqdm import tqdm

    from bpetopics.runs import job as jobs
    from bpetopics.runs.launch import stop_on_signals

    model = job.training.model
    bar = tqdm(total=model.total_epochs(), initial=model.epoch_, desc="updating", unit="epoch", disable=quiet,
               dynamic_ncols=True)
    try:
        with stop_on_signals():
            jobs.run_job(job.training, lambda m, info: bar.update(1))
    except OSError as exc:
        raise UserError(describe_os_error(exc, f"continue from the last checkpoint, which is kept: {resume_hint}",
                                          job.training.checkpoint)) from None
    except KeyboardInterrupt as exc:
        bar.close()
        click.echo(f"\nInterrupted: {jobs.interrupted_note(job.out)}. Resume with:\n  {resume_hint}", err=True)
        ctx.exit(getattr(exc, "exit_code", 130))
    finally:
        bar.close()


def _print_movement(out, movement) -> None:
    from bpetopics.runs.folder import load_run

    run = load_run(out)
    top = run.model.top_words(run.vocabulary, 5)
    click.echo(f"Saved the updated run to {out}: {len(movement)} topics, mean cosine to the old topics "
               f"{movement.mean():.3f} (min {movement.min():.3f}, topic {int(movement.argmin())})")
    click.echo("topic  cosine  top words now")
    for t in range(len(movement)):
        click.echo(f"{t:>5}  {movement[t]:.3f}   {' '.join(top[t])}")
