"""Writing safely: build beside the target, then rename into place (one helper for all).

* :func:`atomic_path` / :func:`write_bytes_atomic` / :func:`write_text_atomic`: one file
  (a temporary file in the destination folder, then ``os.replace``: a reader sees the
  old file or the complete new one, never half of one);
* :func:`staging_folder` / :func:`replace_folder`: a whole folder (a run, a saved corpus);
* :func:`scratch_folder` / :func:`place_files`: a set of files written all or nothing
  (each built in a temporary folder beside its target, then moved into place).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Iterator


def unique_tag() -> str:
    """A tag unique to this process and call, for temporary sibling names."""
    return f"{os.getpid()}-{uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success rename it onto ``path``.

    The temporary file lives in the destination folder, so ``os.replace`` is an atomic
    rename on POSIX: a reader sees either the old file or the complete new one, never a
    half-written file. On error the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    os.chmod(tmp, 0o644)  # mkstemp makes 0600; give the final file ordinary permissions
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and return the path."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def replace_folder(tmp: Path, out: Path, tag: str) -> None:
    """Move the finished folder ``tmp`` to ``out``.

    An existing ``out`` is first moved aside (``.NAME.old-TAG``) and deleted only once
    ``tmp`` is in place, so a crash never leaves ``out`` half written or missing.
    """
    if out.exists():
        old = out.parent / f".{out.name}.old-{tag}"
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)


@contextlib.contextmanager
def staging_folder(out: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``out``; on success it replaces ``out``
    (:func:`replace_folder`); on error it is deleted and ``out`` is untouched."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tag = unique_tag()
    tmp = out.parent / f".{out.name}.tmp-{tag}"
    try:
        tmp.mkdir()
        yield tmp
        replace_folder(tmp, out, tag)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def scratch_folder(beside: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``beside`` (on its file system, so that
    moving a file out of it is a rename, which needs no space); it is removed, with
    whatever is left in it, when the block ends, whether it succeeded or failed."""
    beside = Path(beside)
    beside.parent.mkdir(parents=True, exist_ok=True)
    tmp = beside.parent / f".{beside.name}.tmp-{unique_tag()}"
    try:
        tmp.mkdir()
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def place_files(moves: dict) -> list[Path]:
    """Move each finished file (key) onto its target (value), once all are written:
    with :func:`scratch_folder`, a set of files appears whole or not at all (a write
    that fails, e.g. on a full disk, leaves the targets as they were). A target on
    another file system is copied beside it first, then renamed into place."""
    placed = []
    for source, target in moves.items():
        target = Path(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(source, target)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            with atomic_path(target) as tmp:
                shutil.copyfile(source, tmp)
        placed.append(target)
    return placed


def canonical_safetensors(data: bytes) -> bytes:
    """The same safetensors file with its header's keys in sorted order.

    safetensors writes ``__metadata__`` from a hash map, so its key order (and the
    file's bytes) changes from one call to the next; sorting the keys makes identical
    models give identical files. The header is JSON after an 8-byte little-endian
    length and is padded with spaces: the sorted header has the same length, so the
    tensor data (addressed by offsets relative to the header's end) is untouched.
    """
    import json

    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if len(text) > n:  # cannot happen for a header safetensors wrote; keep the file as it is
        return data
    return data[:8] + text + b" " * (n - len(text)) + data[8 + n:]
