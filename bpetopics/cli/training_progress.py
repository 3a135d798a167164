"""Training at the terminal (``bpetopics train``): a progress bar over the epochs, and
what an interruption leaves and prints: Ctrl-C or SIGTERM ends with exit code 130 or
143 and the last checkpoint kept, with the command that resumes it; a lost training
process or a failed checkpoint write (a full disk) is one line.

This module imports nothing from the package at import time: :mod:`bpetopics.cli`
re-exports it for the command.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


def planned_epochs(model):
    """The epochs training will run, once the model is built; before, ``epochs`` (None:
    decided from the corpus size, see ``BPEBase.total_epochs``)."""
    return model.total_epochs() if hasattr(model, "n_data_") else model.epochs


def interruption_message(saved, planned, partial, resume_hint: str) -> str:
    """What ``train`` prints when it was stopped: where the checkpoint stands (``saved``,
    the epoch it holds, None for none) and how to resume."""
    where = ("no epoch had finished; resuming starts from the beginning" if saved is None
             else f"the checkpoint after epoch {saved} of {planned} is in {partial}")
    return f"\nInterrupted: {where}. Resume with:\n  {resume_hint}"


def launcher_interruption_message(out, resume_hint: str) -> str:
    """What ``--nproc``'s launcher prints once its processes stopped on its SIGTERM or
    SIGINT: as one process after Ctrl-C, from what ``RUN.partial`` holds."""
    from bpetopics.runs import job as jobs
    from bpetopics.runs.folder import RunError, partial_path

    partial = partial_path(out)
    if not (partial / jobs.JOB_FILE).is_file():
        return ("\nInterrupted after the run was saved" if Path(out, "config.json").is_file() and not partial.exists()
                else "\nInterrupted before training started: nothing to resume")
    try:
        progress = jobs.checkpoint_progress(out)
    except RunError as exc:
        return f"\nInterrupted, and the checkpoint is unusable ({exc}): start again with --overwrite"
    saved, planned = progress or (None, None)
    return interruption_message(saved, planned, partial, resume_hint)


def warn_threads(saved) -> None:
    """One warning line when the checkpoint was written with another torch thread count."""
    import torch

    if isinstance(saved, int) and saved != torch.get_num_threads():
        click.echo(f"Warning: the checkpoint was trained with {saved} torch threads and this process uses "
                   f"{torch.get_num_threads()}: on CPU the result may differ from an uninterrupted run "
                   f"(set OMP_NUM_THREADS={saved} to match)", err=True)


def fit_with_progress(job, quiet: bool, resume_hint: str, ctx, launched: bool = False) -> None:
    """Run the job with a progress bar after every epoch; Ctrl-C or SIGTERM leaves the
    last checkpoint and exits with 130 or 143 (a process ``launched`` by ``--nproc``
    leaves the report to the launcher); a failed checkpoint write (a full disk) is one
    line."""
    import contextlib

    from tqdm import tqdm

    from bpetopics.cli import UserError, describe_os_error   # the package, which imports this module first
    from bpetopics.runs import job as jobs
    from bpetopics.runs.folder import RunError
    from bpetopics.runs.launch import stop_on_signals

    model = job.model
    bar = tqdm(total=planned_epochs(model), initial=getattr(model, "epoch_", 0), desc="training", unit="epoch", disable=quiet,
               dynamic_ncols=True)

    def after_epoch(m, info):
        bar.total = m.total_epochs()           # known once the model is built (epochs=None)
        bar.set_postfix_str(f"objective {info['objective']:.2f}, mean active bits {info['active_bits']:.2f}",
                            refresh=False)
        bar.update(1)

    from bpetopics.runs.launch import RankLostError

    from bpetopics.bpe.compile_clock import CompileClock

    announce = None if quiet else (lambda message: tqdm.write(message, file=sys.stderr))
    try:
        with contextlib.nullcontext() if launched else stop_on_signals(), CompileClock(announce).listening():
            jobs.run_job(job, after_epoch)
    except RankLostError as exc:   # another training process died: the last checkpoint is kept
        raise UserError(f"{exc}; {jobs.interrupted_note(job.out)}: resume with `{resume_hint}`") from None
    except OSError as exc:  # e.g. a full disk: the previous checkpoint is intact, the temp file gone
        raise UserError(describe_os_error(exc, f"continue from the last checkpoint, which is kept: "
                                               f"{resume_hint}", job.checkpoint)) from None
    except KeyboardInterrupt as exc:
        if launched:
            raise
        bar.close()
        code = getattr(exc, "exit_code", 130)       # 143 after SIGTERM
        try:  # check that the last checkpoint loads, and say how far it got
            saved = jobs.checkpoint_epoch(job)
        except RunError as error:
            click.echo(f"\nInterrupted, and the checkpoint is unusable ({error}): start again with --overwrite",
                       err=True)
            ctx.exit(code)
        click.echo(interruption_message(saved, planned_epochs(model), job.partial, resume_hint), err=True)
        ctx.exit(code)
    finally:
        bar.close()
