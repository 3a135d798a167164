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

Inputs (read by :mod:`bpetopics.text.records`): a folder (one document per file, as
:func:`~bpetopics.text.loaders.load_folder`: sorted paths, a first-level subfolder names
the label, files that are not text skipped), a ``.jsonl`` file (one JSON object a line
with a text field, optional id and label fields), a ``.csv`` file (a header row naming
the columns), either compressed or not (``.gz``, ``.bz2``, ``.xz``, ``.zst``). A malformed line is a
one-line :class:`CorpusError` naming the file and line, or, with ``skip_bad_lines``,
skipped and counted.
"""

from __future__ import annotations

import collections
import os
from collections import Counter
from itertools import chain, islice
from pathlib import Path

import numpy as np

from bpetopics.text.corpus import EMPTY_AFTER_CLEANING, NO_VOCABULARY_WORD
from bpetopics.text.errors import CorpusError
from bpetopics.text.loaders import NOT_TEXT
from bpetopics.text.pipeline import TextPipeline
from bpetopics.text.records import (FOLDER, JSONL, MALFORMED, Fields, check_bad_lines, chunks, input_kind,
                                    is_compressed, no_document_message, parse_chunk, warn_replaced)
from bpetopics.text.sharded import ShardWriter

# ----------------------------------------------------------------------- workers
_STATE: dict = {}


def _init_worker(pipeline_dict: dict, fields: tuple) -> None:
    _STATE["pipeline"] = TextPipeline.from_dict(pipeline_dict)
    _STATE["fields"] = Fields(*fields)


def _count_frequencies(chunk):
    """Pass 1 on one chunk: document and total word frequencies, documents with a
    token, label names, documents outside label subfolders, bad lines, files not text,
    documents, and (bytes replaced by U+FFFD, the first document with some, documents with some)."""
    records = parse_chunk(chunk, _STATE["fields"])
    texts, labels, bad, not_text = records.texts, records.labels, records.bad, records.not_text
    tokens = _STATE["pipeline"].analyze_many(texts)
    doc_freq = Counter(chain.from_iterable(map(set, tokens)))
    term_freq = Counter(chain.from_iterable(tokens))
    n_nonempty = len(tokens) - sum(1 for t in tokens if not t)
    return (doc_freq, term_freq, n_nonempty, set(l for l in labels if l is not None),
            sum(1 for l in labels if l is None), bad, not_text, len(texts),
            (records.replaced, records.replaced_in[:1], len(records.replaced_in)))


def _count_documents(chunk):
    """Pass 2 on one chunk: the counts of the documents with a vocabulary word (CSR),
    their ids and labels, and how many were left empty by cleaning or the vocabulary."""
    records = parse_chunk(chunk, _STATE["fields"])
    ids, labels, bad = records.ids, records.labels, records.bad
    tokens = _STATE["pipeline"].analyze_many(records.texts)
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


# ------------------------------------------------------------------------- build
def build_sharded(source, out, pipeline: TextPipeline, *, jobs: int = 1, shard_docs: int = 100_000,
                  chunk_docs: int = 1000, text_field: str = "text", id_field: str | None = None,
                  label_field: str | None = None, skip_bad_lines: bool = False, overwrite: bool = False,
                  progress: bool = False) -> dict:
    """Build a sharded corpus at ``out`` from ``source`` (folder, ``.jsonl``, ``.csv``,
    the files compressed or not).

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
    fields = Fields(text_field, id_field, label_field if kind != FOLDER else None)
    init = (pipeline.to_dict(), (fields.text, fields.id, fields.label))
    total = Path(source).stat().st_size if kind == JSONL and not is_compressed(source) else None
    unit = "B" if kind == JSONL else "doc"

    # pass 1: word frequencies
    doc_freq, term_freq, n_nonempty, label_set, unlabelled, n_bad, not_text, n_docs = \
        Counter(), Counter(), 0, set(), 0, 0, [], 0
    first_bad, same_reason, replaced, replaced_in, n_replaced_docs = None, True, 0, [], 0
    with tqdm(total=total, unit=unit, unit_scale=True, desc="vocabulary pass", disable=not progress) as bar:
        for df, tf, nonempty, labs, unlab, bad, skipped, n, (n_bytes, where, n_with) in _ordered_results(
                _count_frequencies, chunks(source, kind, fields, chunk_docs), jobs, init, bar):
            check_bad_lines(bad, skip_bad_lines)
            doc_freq.update(df)
            term_freq.update(tf)
            n_nonempty += nonempty
            label_set |= labs
            unlabelled += unlab
            if bad:
                first_bad = first_bad or bad[0]
                same_reason = same_reason and all(reason == first_bad[1] for _, reason in bad)
            n_bad += len(bad)
            not_text += skipped
            n_docs += n
            replaced, replaced_in, n_replaced_docs = replaced + n_bytes, replaced_in or where, n_replaced_docs + n_with
    if n_docs == 0:
        raise CorpusError(no_document_message(source, n_bad, first_bad, same_reason, len(not_text)))
    warn_replaced(source, replaced, n_replaced_docs, replaced_in, n_docs)
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
                _count_documents, chunks(source, kind, fields, chunk_docs), jobs, init, bar):
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
