"""Documents read record by record: a folder of texts, a JSONL or a CSV file, the files
optionally compressed (``.gz``, ``.bz2``, ``.xz``: the standard library's; ``.zst``:
:mod:`bpetopics.text.zstd_reader`), in chunks of raw records that :func:`parse_chunk`
turns into texts, ids and labels.

The sharded build streams the chunks (:mod:`bpetopics.text.streaming`, through a pool
of workers); the in-memory loader reads them all
(:func:`bpetopics.text.record_loader.load_records`). The file's kind is its name's:
``.jsonl``/``.ndjson`` or ``.csv``, before the compression's suffix
(``reviews.csv.gz``).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import os
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from bpetopics.text.corpus import is_saved_corpus
import warnings

from bpetopics.text import zstd_reader
from bpetopics.text.decoding import file_text, looks_binary, replace_bad_bytes, writable_name
from bpetopics.text.errors import CorpusError, CorpusWarning
from bpetopics.text.sharded import is_sharded_corpus
from bpetopics.text.timestamps import EXPECTED, parse_time

FOLDER, JSONL, CSV = "folder", "jsonl", "csv"
#: Reason recorded for lines skipped as malformed (``skip_bad_lines``).
MALFORMED = "malformed line"
#: A record file's kind by its suffix (before a compression suffix).
RECORD_SUFFIXES = {".jsonl": JSONL, ".ndjson": JSONL, ".csv": CSV}
#: Compression suffixes read.
COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst")
#: What a damaged or truncated compressed file raises while it is read.
_DECOMPRESSION_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error) + zstd_reader.ERRORS


def record_kind(path) -> str | None:
    """``"jsonl"`` or ``"csv"`` for a file name ending in ``.jsonl``, ``.ndjson`` or
    ``.csv``, optionally followed by a compression suffix; None otherwise."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in COMPRESSIONS:
        suffixes = suffixes[:-1]
    return RECORD_SUFFIXES.get(suffixes[-1]) if suffixes else None


def is_record_file(source) -> bool:
    """True when ``source`` is an existing JSONL or CSV file (compressed or not)."""
    return (isinstance(source, (str, os.PathLike)) and record_kind(source) is not None
            and Path(source).is_file())


def is_compressed(path) -> bool:
    return Path(path).suffix.lower() in COMPRESSIONS


def open_bytes(path):
    """``path`` opened for reading bytes, decompressed by its suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return gzip.open(path, "rb")
    if suffix == ".bz2":
        return bz2.open(path, "rb")
    if suffix == ".xz":
        return lzma.open(path, "rb")
    if suffix == ".zst":
        return zstd_reader.open_zstd(path)
    return open(path, "rb")


def input_kind(source) -> str:
    """``"folder"``, ``"jsonl"`` or ``"csv"``; CorpusError for anything else."""
    path = Path(source)
    if path.is_dir():
        if is_saved_corpus(path) or is_sharded_corpus(path):
            raise CorpusError(f"{path} is a corpus already built: give the texts it was built from "
                              "(a folder of texts, a .jsonl or a .csv file)")
        return FOLDER
    if not path.exists():
        raise CorpusError(f"{path} does not exist: give a folder of texts, a .jsonl or a .csv file")
    kind = record_kind(path)
    if kind is None:
        raise CorpusError(f"{path} is neither a folder, a .jsonl nor a .csv file (either may end in "
                          f"{', '.join(COMPRESSIONS)}): give one of those")
    return kind


@dataclass
class Fields:
    """Which fields hold the text, the id, the label and the timestamp (JSONL keys,
    CSV columns)."""

    text: str = "text"
    id: str | None = None
    label: str | None = None
    time: str | None = None


@dataclass
class Records:
    """A parsed chunk: ``labels`` a str or None per document, ``times`` a parsed
    timestamp (:func:`~bpetopics.text.timestamps.parse_time`) or None, ``bad`` ``[(where,
    reason)]`` malformed lines, ``not_text`` files skipped as not text, ``replaced`` the
    invalid bytes replaced by U+FFFD and ``replaced_in`` the documents holding them."""

    texts: list = field(default_factory=list)
    ids: list = field(default_factory=list)
    labels: list = field(default_factory=list)
    times: list = field(default_factory=list)
    bad: list = field(default_factory=list)
    not_text: list = field(default_factory=list)
    replaced: int = 0
    replaced_in: list = field(default_factory=list)


def chunks(source, kind: str, fields: Fields, chunk_docs: int):
    """The input in chunks of raw records (what a worker parses), with their sizes for
    a progress bar: ``(chunk, units)`` (files, bytes of JSONL, CSV rows)."""
    path = Path(source)
    if kind == FOLDER:
        files = []
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            files.extend(Path(dirpath).relative_to(path) / f for f in sorted(filenames) if not f.startswith("."))
        if not files:
            raise CorpusError(f"folder {path} is empty: put text files in it (one document per file)")
        files.sort(key=lambda p: p.parts)
        for begin in range(0, len(files), chunk_docs):
            part = [p.as_posix() for p in files[begin:begin + chunk_docs]]
            yield (FOLDER, str(path), part), len(part)
        return
    try:
        with open_bytes(path) as f:
            if kind == JSONL:
                yield from _jsonl_chunks(f, path, chunk_docs)
            else:
                yield from _csv_chunks(f, path, fields, chunk_docs)
    except _DECOMPRESSION_ERRORS as exc:
        if not is_compressed(path):
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CorpusError(f"{path} cannot be decompressed ({reason}): it is damaged or truncated, or not "
                          f"{path.suffix} data; compress it again") from None


def _jsonl_chunks(f, path: Path, chunk_docs: int):
    lines, first, size = [], 1, 0
    for number, line in enumerate(f, 1):
        lines.append(line)
        size += len(line)
        if len(lines) == chunk_docs:
            yield (JSONL, str(path), first, lines), size
            lines, first, size = [], number + 1, 0
    if lines:
        yield (JSONL, str(path), first, lines), size


def _csv_chunks(f, path: Path, fields: Fields, chunk_docs: int):
    """CSV rows parsed here (a quoted field may span lines), sent on as (line, values)."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    # invalid bytes kept as surrogates, replaced by U+FFFD and counted in parse_chunk
    reader = csv.reader(io.TextIOWrapper(f, encoding="utf-8-sig", errors="surrogateescape", newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise CorpusError(f"{path} is empty: give a CSV file with a header row") from None
    for name, option in ((fields.text, "--text-field"), (fields.id, "--id-field"), (fields.label, "--label-field"),
                         (fields.time, "--time-field")):
        if name is not None and name not in header:
            raise CorpusError(f"{path} has no column {name!r} (columns: {', '.join(header)}): "
                              f"name the right one ({option})")
    columns = [header.index(n) if n is not None else None
               for n in (fields.text, fields.id, fields.label, fields.time)]
    rows = []
    while True:
        line = reader.line_num + 1
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            rows.append((line, None, str(exc)))
            continue
        if not values:
            continue
        if len(values) != len(header):
            rows.append((line, None, f"{len(values)} fields where the header has {len(header)}"))
        else:
            rows.append((line, [None if c is None else values[c] for c in columns], None))
        if len(rows) == chunk_docs:
            yield (CSV, str(path), rows), len(rows)
            rows = []
    if rows:
        yield (CSV, str(path), rows), len(rows)


def parse_chunk(chunk, fields: Fields) -> Records:
    """Parse a chunk of :func:`chunks` into :class:`Records`."""
    kind, out = chunk[0], Records()
    if kind == FOLDER:
        root = Path(chunk[1])
        for rel in chunk[2]:
            rel_path = Path(rel)
            try:
                raw = (root / rel_path).read_bytes()
            except OSError:
                out.not_text.append(writable_name(rel))
                continue
            if looks_binary(raw[:8192]):
                out.not_text.append(writable_name(rel))
                continue
            text, n_bad = file_text(rel_path.name, raw)
            out.texts.append(text)
            out.ids.append(writable_name(rel))
            if n_bad:
                out.replaced += n_bad
                out.replaced_in.append(writable_name(rel))
            out.labels.append(writable_name(rel_path.parts[0]) if len(rel_path.parts) > 1 else None)
            out.times.append(None)
    elif kind == JSONL:
        path, first, lines = chunk[1], chunk[2], chunk[3]
        name = Path(path).name
        for number, line in enumerate(lines, first):
            if number == 1 and line.startswith(b"\xef\xbb\xbf"):    # a UTF-8 byte-order mark
                line = line[3:]
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (ValueError, UnicodeDecodeError) as exc:
                out.bad.append((f"{path}:{number}", f"not a JSON object ({str(exc).splitlines()[0]})"))
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get(fields.text), str):
                out.bad.append((f"{path}:{number}", f"no text field {fields.text!r} holding a string"))
                continue
            if fields.label is not None and obj.get(fields.label) is None:
                out.bad.append((f"{path}:{number}", f"no label field {fields.label!r}"))
                continue
            stamp = parse_time(obj.get(fields.time)) if fields.time is not None else None
            if fields.time is not None and stamp is None:
                out.bad.append((f"{path}:{number}", f"no time field {fields.time!r} holding {EXPECTED}"))
                continue
            out.texts.append(obj[fields.text])
            out.ids.append(str(obj[fields.id]) if fields.id is not None and obj.get(fields.id) is not None
                           else f"{name}:{number}")
            out.labels.append(str(obj[fields.label]) if fields.label is not None else None)
            out.times.append(stamp)
    else:
        path, rows = chunk[1], chunk[2]
        name = Path(path).name
        for line, values, problem in rows:
            if problem is not None:
                out.bad.append((f"{path}:{line}", problem))
                continue
            stamp = parse_time(values[3]) if fields.time is not None else None
            if fields.time is not None and stamp is None:
                out.bad.append((f"{path}:{line}", f"column {fields.time!r} holds {values[3]!r}, not {EXPECTED}"))
                continue
            (text, n_text), (doc_id, n_id), (label, n_label) = (
                (None, 0) if v is None else replace_bad_bytes(v) for v in values[:3])
            out.texts.append(text)
            out.ids.append(doc_id if doc_id is not None else f"{name}:{line}")
            out.labels.append(label)
            out.times.append(stamp)
            if n_text + n_id + n_label:
                out.replaced += n_text + n_id + n_label
                out.replaced_in.append(f"{path}:{line}")
    return out


def check_bad_lines(bad, skip: bool) -> None:
    """Stop (CorpusError, one line) at the first malformed line unless ``skip``."""
    if bad and not skip:
        where, reason = bad[0]
        raise CorpusError(f"{where}: {reason}: fix the line, or pass --skip-bad-lines to skip and count such lines")


def warn_replaced(source, n_bytes: int, n_with: int, examples: list, n_docs: int) -> None:
    """The :class:`CorpusWarning` for ``n_bytes`` bytes that were not valid UTF-8,
    replaced by U+FFFD in ``n_with`` of ``n_docs`` documents (``examples``: some of
    them), as :func:`~bpetopics.text.loaders.load_folder` warns."""
    if n_bytes:
        warnings.warn(f"{n_bytes:,} bytes that are not valid UTF-8 were replaced by U+FFFD in {n_with:,} of "
                      f"{n_docs:,} documents of {source} (e.g. {examples[0]})", CorpusWarning, stacklevel=3)


def no_document_message(source, n_bad: int, first_bad, same_reason: bool, not_text: int = 0) -> str:
    """Why ``source`` gave no document: every line malformed (``first_bad`` the first
    ``(where, reason)``, ``same_reason`` when all share its reason), only files that are
    not text, or nothing in it."""
    if n_bad:
        where, reason = first_bad
        if same_reason:
            return (f"all {n_bad:,} lines of {source} were skipped: {reason} (e.g. {where}): name the right "
                    "field (--text-field), or fix the file")
        return (f"all {n_bad:,} lines of {source} were skipped as malformed (the first, {where}: {reason}): "
                "fix the file")
    return f"{source} holds no document{' (only files that are not text)' if not_text else ''}"
