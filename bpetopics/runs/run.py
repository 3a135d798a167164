"""A run folder's format and files' names, the one error runs raise, and the small
readers and writers every kind of run shares.

:mod:`bpetopics.runs.folder` writes and reads text runs (its docstring lists the files),
:mod:`bpetopics.runs.image_folder` image runs, :mod:`bpetopics.runs.checkpoints`
checkpoints; :class:`~bpetopics.runs.loaded_run.Run` is what a loaded run offers. All of
them import this module, which imports none of them (nor torch).
"""

from __future__ import annotations

import csv
import functools
import io
import json
import tokenize
import zipfile
import zlib
from pathlib import Path

FORMAT = "bpetopics.run"
FORMAT_VERSION = 1
CONFIG_FILE, WEIGHTS_FILE, VOCABULARY_FILE = "config.json", "model.safetensors", "vocabulary.txt"
TOPICS_FILE, HISTORY_FILE, SUMMARY_FILE = "topics.csv", "history.csv", "summary.json"
HISTORY_COLUMNS = ("epoch", "objective", "active_bits", "topic_overlap", "restarted_topics",
                   "topics", "seconds")
DOC_CODES_FILE, DOC_TOPICS_FILE, COUNTS_FILE = "doc_codes.npz", "doc_topics.npz", "counts.npz"
LABELS_FILE = "labels.json"
#: An image run's codes (bpetopics.runs.image_folder), instead of doc_codes.npz.
CODES_FILE = "codes.npz"


class RunError(ValueError):
    """A run folder or checkpoint that cannot be used; the message is one line."""


#: What reading a damaged file raises from numpy, scipy, zipfile, zlib, json, safetensors
#: and torch, besides our own RunError (numpy parses a .npy header with ast.literal_eval:
#: a damaged one raises SyntaxError or tokenize.TokenError).
_DAMAGE = (ValueError, TypeError, KeyError, IndexError, AttributeError, OSError, EOFError, OverflowError,
           MemoryError, RuntimeError, SyntaxError, tokenize.TokenError, zipfile.BadZipFile, zlib.error)


def partial_path(path: str | Path) -> Path:
    """Where training of ``path`` keeps its checkpoint until it finishes: ``PATH.partial``."""
    return Path(path).with_name(Path(path).name + ".partial")


def is_run(path: str | Path) -> bool:
    """True when ``path`` is a finished run folder (it has ``config.json``)."""
    return (Path(path) / CONFIG_FILE).is_file()


def check_run_destination(out: str | Path, overwrite: bool = False) -> Path:
    """Check that :func:`~bpetopics.runs.folder.save_run` may write to ``out``; call it before slow work.

    Raises RunError when ``out`` holds a finished run and ``overwrite`` is false, or is
    a file or a non-empty folder that is not a run (such a path is never deleted).
    """
    out = Path(out)
    if out.exists():
        if is_run(out) and not overwrite:
            raise RunError(f"{out} already holds a finished run: pass --overwrite to replace it, or choose another --out")
        elif not is_run(out) and (not out.is_dir() or any(out.iterdir())):
            raise RunError(f"{out} exists and is not a run folder: choose another --out (it is never deleted)")
    return out


def damage_is_run_error(read):
    """Let ``read`` (a loader of runs or checkpoints) raise only RunError: any other error
    while reading its files means a damaged file, and becomes one line naming the path."""
    @functools.wraps(read)
    def wrapper(*args, **kwargs):
        try:
            return read(*args, **kwargs)
        except RunError:
            raise
        except _DAMAGE as exc:
            where = getattr(args[0], "path", args[0]) if args else kwargs.get("path")
            raise RunError(f"{where} is damaged ({type(exc).__name__}: {first_line(exc)}): "
                           "train the run again") from None
    return wrapper


def first_line(exc) -> str:
    """The first line of an error's message (its type's name when it has none)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def json_bytes(obj) -> bytes:
    """``obj`` as indented UTF-8 JSON, the way run files are written."""
    return (json.dumps(obj, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def csv_bytes(header, rows) -> bytes:
    """A CSV file's bytes: the ``header`` row, then ``rows``."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *rows])
    return buf.getvalue().encode("utf-8")


def read_json(path: Path):
    """The JSON file ``path`` of a run; RunError (one line) when missing or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"{path.parent} is not a complete run ({path.name} is missing)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunError(f"{path} is corrupted (not valid JSON: {exc}); train the run again") from None
