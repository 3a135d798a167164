"""The command line's one-line errors: what a user can fix is printed as one line
(``Error: ...``) with exit code 2 and no traceback (:class:`UserError`), and the library's
errors (a corpus's, a run's, a failed read or write) are turned into such lines.

This module imports nothing from the package at import time: :mod:`bpetopics.cli`
re-exports it for the commands.
"""

import contextlib
import errno
import re
import warnings
from pathlib import Path

import click


class UserError(click.ClickException):
    """A problem with the user's input: printed as one line, exit code 2."""

    exit_code = 2

    def show(self, file=None):
        click.echo(f"Error: {self.format_message()}", err=True, file=file)


def refuse_existing(paths, overwrite: bool, option: str = "--out") -> None:
    """Stop with one line when one of ``paths`` (files a command would write) exists and
    ``overwrite`` is false: nothing written is ever replaced silently."""
    if overwrite:
        return
    found = [Path(p) for p in paths if Path(p).exists()]
    if found:
        also = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise UserError(f"{found[0]}{also} already exists: pass --overwrite to replace it, or choose another {option}")


@contextlib.contextmanager
def corpus_errors():
    """Run corpus work: a CorpusError becomes a one-line UserError, and each CorpusWarning
    (e.g. files skipped as not text) is printed as a 'Warning:' line."""
    from bpetopics.text.errors import CorpusError, CorpusWarning

    # The warnings are shown after ``catch_warnings`` has exited: re-emitting one while
    # recording would append it to the list being read, and the loop would never end.
    # Other libraries' warnings are dropped when the work failed (the error line says
    # what went wrong; e.g. scikit-learn's "Retry downloading" before a failed download).
    caught, failed = [], False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CorpusWarning)
            try:
                yield
            except CorpusError as exc:
                failed = True
                raise UserError(str(exc)) from None
            except BaseException:
                failed = True
                raise
    finally:
        for w in caught:
            if issubclass(w.category, CorpusWarning):
                click.echo(f"Warning: {w.message}", err=True)
            elif not failed:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def is_full_disk(exc: OSError) -> bool:
    """True for a write that failed for want of space: ENOSPC or EDQUOT, or numpy's
    short write (``ndarray.tofile``, used by ``np.save``: "N requested and M written",
    without an errno)."""
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return True
    return exc.errno is None and re.search(r"\d+ requested and \d+ written", str(exc)) is not None


def describe_os_error(exc: OSError, then: str = "run the command again (nothing finished was replaced)",
                      path=None) -> str:
    """One line for a failed read or write: what, where (``path`` when the error has no
    file name), and what to do ``then``."""
    where = exc.filename if exc.filename is not None else path if path is not None else "a file"
    if is_full_disk(exc):       # where: the folder written (``path``) rather than a temporary file in it
        where = path if path is not None else where
        return f"no space left on the device (or over quota) writing {where}: free some space and {then}"
    reason = exc.strerror or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"cannot read or write {where} ({reason}): {then}"


@contextlib.contextmanager
def run_errors(suffix: str = ""):
    """Run library work on runs: a RunError (one line) becomes a UserError."""
    from bpetopics.runs.run import RunError   # not runs.folder: it imports torch

    try:
        yield
    except RunError as exc:
        raise UserError(f"{exc}{suffix}") from None


def open_run(path, device="cpu", images: bool | None = False):
    """:func:`bpetopics.runs.load_run`, with its one-line errors turned into :class:`UserError`;
    a text command (``images`` false) refuses an image run, an ``images`` command a text run
    (``images=None``: either kind)."""
    from bpetopics.runs.folder import load_run

    with run_errors():
        run = load_run(path, device=device)
    if images is None:
        return run
    if run.is_image_run and not images:
        raise UserError(f"{path} is an image run ({run.config['model']}): use `bpetopics images encode` or "
                        "`bpetopics images show`")
    if images and not run.is_image_run:
        raise UserError(f"{path} is a text run: give a run written by `bpetopics images train`")
    return run
