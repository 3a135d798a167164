"""A sharded corpus built from a folder of texts, a JSONL or a CSV file of any size, in
bounded memory, on one or several processes.

Two passes over the input, each in chunks of ``chunk_docs`` documents:

1. vocabulary: each chunk is cleaned and tokenised (:meth:`TextPipeline.analyze_many`)
   and its document and total word frequencies counted; the sums give the vocabulary
   (:meth:`TextPipeline.fit_frequencies`, the same cuts as an in-memory build);
2. counting: each chunk is tokenised again and counted on that vocabulary
   (:meth:`TextPipeline.transform_tokens`), documents left without a word dropped and
   counted, and the rows appended to the shards (:class:`~bpetopics.text.sharded.ShardWriter`).

With ``jobs > 1`` the chunks are cleaned by a pool of worker processes, at most one a
CPU this process may use (:func:`usable_cpus`) and one a chunk; results come back in
input order, so the corpus is byte for byte the one ``jobs=1`` writes. At most
``2 * jobs`` chunks are in flight, so memory holds a few chunks, one shard being
written and the word frequencies (which grow with the distinct words of the input,
not with its documents). The same texts and settings give the same vocabulary and
counts as :func:`bpetopics.text.prepare_corpus` (tests/text/test_sharded.py).

Inputs: a folder (one document per file, as :func:`~bpetopics.text.loaders.load_folder`:
sorted paths, a first-level subfolder names the label, files that are not text
skipped), a ``.jsonl`` file (one JSON object a line with a text field, optional id and
label fields), a ``.csv`` file (a header row naming the columns). A malformed line is a
one-line :class:`CorpusError` naming the file and line, or, with ``skip_bad_lines``,
skipped and counted.
"""

from __future__ import annotations

import collections
import csv
import json
import os
import sys
from collections import Counter
from itertools import chain, islice
from pathlib import Path

import numpy as np

from bpetopics.text.corpus import EMPTY_AFTER_CLEANING, NO_VOCABULARY_WORD, is_saved_corpus
from bpetopics.text.decoding import _looks_binary, _name, decode_bytes
from bpetopics.text.errors import CorpusError
from bpetopics.text.loaders import NOT_TEXT
from bpetopics.text.pipeline import TextPipeline
from bpetopics.text.sharded import ShardWriter, is_sharded_corpus

MALFORMED = "malformed line"
FOLDER, JSONL, CSV = "folder", "jsonl", "csv"


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
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return JSONL
    if suffix == ".csv":
        return CSV
    raise CorpusError(f"{path} is neither a folder, a .jsonl nor a .csv file: give one of those")


# ----------------------------------------------------------------------- reading
class _Fields:
    """Which fields hold the text, the id and the label (JSONL keys, CSV columns)."""

    def __init__(self, text="text", id=None, label=None):
        self.text, self.id, self.label = text, id, label


def _chunks(source, kind: str, fields: _Fields, chunk_docs: int):
    """The input in chunks of raw records (what a worker parses), with their sizes for
    the progress bar: ``(chunk, units)``."""
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
    elif kind == JSONL:
        with open(path, "rb") as f:
            lines, first, size = [], 1, 0
            for number, line in enumerate(f, 1):
                lines.append(line)
                size += len(line)
                if len(lines) == chunk_docs:
                    yield (JSONL, str(path), first, lines), size
                    lines, first, size = [], number + 1, 0
            if lines:
                yield (JSONL, str(path), first, lines), size
    else:
        yield from _csv_chunks(path, fields, chunk_docs)


def _csv_chunks(path: Path, fields: _Fields, chunk_docs: int):
    """CSV rows parsed here (a quoted field may span lines), sent on as (line, values)."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            raise CorpusError(f"{path} is empty: give a CSV file with a header row") from None
        for name in (fields.text, fields.id, fields.label):
            if name is not None and name not in header:
                raise CorpusError(f"{path} has no column {name!r} (columns: {', '.join(header)}): "
                                  "name the right one (--text-field)")
        columns = [header.index(n) if n is not None else None for n in (fields.text, fields.id, fields.label)]
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


def _records(chunk, fields: _Fields):
    """Parse a chunk: ``(texts, ids, labels, bad, not_text)``, ``labels`` a list of str
    or None per document, ``bad`` ``[(where, reason)]``."""
    kind = chunk[0]
    texts, ids, labels, bad, not_text = [], [], [], [], []
    if kind == FOLDER:
        root = Path(chunk[1])
        for rel in chunk[2]:
            rel_path = Path(rel)
            try:
                raw = (root / rel_path).read_bytes()
            except OSError:
                not_text.append(_name(rel))
                continue
            if _looks_binary(raw[:8192]):
                not_text.append(_name(rel))
                continue
            texts.append(decode_bytes(raw)[0])
            ids.append(_name(rel))
            labels.append(_name(rel_path.parts[0]) if len(rel_path.parts) > 1 else None)
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
                bad.append((f"{path}:{number}", f"not a JSON object ({str(exc).splitlines()[0]})"))
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get(fields.text), str):
                bad.append((f"{path}:{number}", f"no text field {fields.text!r} holding a string"))
                continue
            if fields.label is not None and obj.get(fields.label) is None:
                bad.append((f"{path}:{number}", f"no label field {fields.label!r}"))
                continue
            texts.append(obj[fields.text])
            ids.append(str(obj[fields.id]) if fields.id is not None and obj.get(fields.id) is not None
                       else f"{name}:{number}")
            labels.append(str(obj[fields.label]) if fields.label is not None else None)
    else:
        path, rows = chunk[1], chunk[2]
        name = Path(path).name
        for line, values, problem in rows:
            if problem is not None:
                bad.append((f"{path}:{line}", problem))
                continue
            text, doc_id, label = values
            texts.append(text)
            ids.append(doc_id if doc_id is not None else f"{name}:{line}")
            labels.append(label)
    return texts, ids, labels, bad, not_text


# ----------------------------------------------------------------------- workers
_STATE: dict = {}


def _init_worker(pipeline_dict: dict, fields: tuple) -> None:
    _STATE["pipeline"] = TextPipeline.from_dict(pipeline_dict)
    _STATE["fields"] = _Fields(*fields)


def _count_frequencies(chunk):
    """Pass 1 on one chunk: document and total word frequencies, documents with a
    token, label names, documents outside label subfolders, bad lines, files not text."""
    texts, ids, labels, bad, not_text = _records(chunk, _STATE["fields"])
    tokens = _STATE["pipeline"].analyze_many(texts)
    doc_freq = Counter(chain.from_iterable(map(set, tokens)))
    term_freq = Counter(chain.from_iterable(tokens))
    n_nonempty = len(tokens) - sum(1 for t in tokens if not t)
    return (doc_freq, term_freq, n_nonempty, set(l for l in labels if l is not None),
            sum(1 for l in labels if l is None), bad, not_text, len(texts))


def _count_documents(chunk):
    """Pass 2 on one chunk: the counts of the documents with a vocabulary word (CSR),
    their ids and labels, and how many were left empty by cleaning or the vocabulary."""
    texts, ids, labels, bad, not_text = _records(chunk, _STATE["fields"])
    tokens = _STATE["pipeline"].analyze_many(texts)
    counts, _ = _STATE["pipeline"].transform_tokens(tokens)
    lengths = np.diff(counts.indptr)
    keep = np.flatnonzero(lengths > 0)
    empty = sum(1 for t in tokens if not t)
    return (counts[keep], [ids[i] for i in keep], [labels[i] for i in keep], empty,
            len(tokens) - empty - len(keep), len(bad))


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system tells it, else
    all of the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _ordered_results(function, chunks, jobs: int, init_args, bar):
    """``function`` over ``chunks`` in input order: in this process (``jobs == 1``, or a
    single chunk) or a pool of at most ``jobs`` workers, one a chunk, with at most
    ``2 * jobs`` chunks in flight (memory stays bounded)."""
    chunks = iter(chunks)
    first = list(islice(chunks, jobs))          # read ahead: no more workers than chunks
    jobs, chunks = max(1, min(jobs, len(first))), chain(first, chunks)
    if jobs == 1:
        _init_worker(*init_args)
        for chunk, units in chunks:
            yield function(chunk)
            bar.update(units)
        return
    import multiprocessing

    with multiprocessing.get_context().Pool(jobs, initializer=_init_worker, initargs=init_args) as pool:
        pending = collections.deque()
        for chunk, units in chunks:
            pending.append((pool.apply_async(function, (chunk,)), units))
            if len(pending) >= 2 * jobs:
                result, n = pending.popleft()
                yield result.get()
                bar.update(n)
        while pending:
            result, n = pending.popleft()
            yield result.get()
            bar.update(n)


def _check_bad(bad, skip: bool):
    if bad and not skip:
        where, reason = bad[0]
        raise CorpusError(f"{where}: {reason}: fix the line, or pass --skip-bad-lines to skip and count such lines")


# ------------------------------------------------------------------------- build
def build_sharded(source, out, pipeline: TextPipeline, *, jobs: int = 1, shard_docs: int = 100_000,
                  chunk_docs: int = 1000, text_field: str = "text", id_field: str | None = None,
                  label_field: str | None = None, skip_bad_lines: bool = False, overwrite: bool = False,
                  progress: bool = False) -> dict:
    """Build a sharded corpus at ``out`` from ``source`` (folder, ``.jsonl``, ``.csv``).

    Parameters
    ----------
    source : str or path
    out : str or path
        The corpus folder (written atomically; replaced only with ``overwrite``).
    pipeline : TextPipeline
        Unfitted settings (fitted here, on the whole input).
    jobs : int
        Worker processes cleaning and tokenising (1: this process); at most
        :func:`usable_cpus` and the number of chunks are started.
    shard_docs, chunk_docs : int
        Documents per shard, and per chunk handed to a worker.
    text_field, id_field, label_field : str or None
        JSONL keys or CSV columns (ignored for a folder).
    skip_bad_lines : bool
        Skip and count malformed lines instead of stopping at the first.
    progress : bool
        Show a progress bar for each pass.

    Returns
    -------
    dict
        The manifest written (``sharded.json``), with ``n_docs``, ``nnz``, ``dropped``.
    """
    from tqdm.auto import tqdm

    kind = input_kind(source)
    if jobs < 1:
        raise CorpusError(f"jobs={jobs} is below 1: give the number of worker processes (--jobs 2)")
    jobs = min(int(jobs), usable_cpus())
    if chunk_docs < 1:
        raise CorpusError(f"chunk_docs={chunk_docs} is below 1")
    pipeline.check_settings()
    pipeline.stop_words  # noqa: B018  (fail fast on missing stop-word data)
    writer = ShardWriter(out, 0, shard_docs, overwrite)       # refuses an existing --out now
    fields = _Fields(text_field, id_field, label_field if kind != FOLDER else None)
    init = (pipeline.to_dict(), (fields.text, fields.id, fields.label))
    total = Path(source).stat().st_size if kind == JSONL else None
    unit = "B" if kind == JSONL else "doc"

    # pass 1: word frequencies
    doc_freq, term_freq, n_nonempty, label_set, unlabelled, n_bad, not_text, n_docs = \
        Counter(), Counter(), 0, set(), 0, 0, [], 0
    with tqdm(total=total, unit=unit, unit_scale=True, desc="vocabulary pass", disable=not progress) as bar:
        for df, tf, nonempty, labs, unlab, bad, skipped, n in _ordered_results(
                _count_frequencies, _chunks(source, kind, fields, chunk_docs), jobs, init, bar):
            _check_bad(bad, skip_bad_lines)
            doc_freq.update(df)
            term_freq.update(tf)
            n_nonempty += nonempty
            label_set |= labs
            unlabelled += unlab
            n_bad += len(bad)
            not_text += skipped
            n_docs += n
    if n_docs == 0:
        raise CorpusError(f"{source} holds no document{' (only files that are not text)' if not_text else ''}")
    pipeline.fit_frequencies(doc_freq, term_freq, n_nonempty)
    del doc_freq, term_freq
    has_labels = (kind == FOLDER and unlabelled == 0) or (kind != FOLDER and label_field is not None)
    label_names = sorted(label_set) if has_labels else None
    lookup = {name: i for i, name in enumerate(label_names or [])}

    # pass 2: counts, written shard by shard
    writer.n_words = len(pipeline.vocabulary_)
    init = (pipeline.to_dict(), init[1])
    empty = no_word = read = 0
    with writer, tqdm(total=total, unit=unit, unit_scale=True, desc="counting pass",
                      disable=not progress) as bar:
        for counts, ids, labels, n_empty, n_no_word, _ in _ordered_results(
                _count_documents, _chunks(source, kind, fields, chunk_docs), jobs, init, bar):
            writer.append(counts, ids, [lookup[l] for l in labels] if has_labels else None)
            empty += n_empty
            no_word += n_no_word
            read += counts.shape[0] + n_empty + n_no_word
        if read != n_docs:
            raise CorpusError(f"{source} changed while it was read ({n_docs:,} documents, then {read:,}): "
                              "build again from a copy that does not change")
        dropped = {EMPTY_AFTER_CLEANING: empty, NO_VOCABULARY_WORD: no_word}
        if not_text:
            dropped[NOT_TEXT] = len(not_text)
        if n_bad:
            dropped[MALFORMED] = n_bad
        manifest = writer.close(pipeline, label_names=label_names,
                                source=os.path.abspath(source), dropped=dropped,
                                extra={"input": {"kind": kind, "text_field": fields.text, "id_field": fields.id,
                                                 "label_field": fields.label}})
    return manifest
