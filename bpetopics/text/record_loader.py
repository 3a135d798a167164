"""Loading a JSONL or CSV file (compressed or not) in memory, one document a record.

The records are read in chunks and parsed by :mod:`bpetopics.text.records` (which the
sharded build streams instead); this module gathers them into :class:`RawDocuments`.
"""

from __future__ import annotations

import os

import numpy as np

from bpetopics.text.errors import CorpusError
from bpetopics.text.loaders import RawDocuments
from bpetopics.text.records import (MALFORMED, Fields, check_bad_lines, chunks, input_kind, is_record_file,
                                    no_document_message, parse_chunk, warn_replaced)
from bpetopics.text.timestamps import time_array


def load_records(path: str | os.PathLike, split: str = "train", *, text_field: str = "text",
                 id_field: str | None = None, label_field: str | None = None,
                 skip_bad_lines: bool = False, time_field: str | None = None) -> RawDocuments:
    """Load a JSONL file (one JSON object a line) or a CSV file (a header row), either
    compressed or not (``.gz``, ``.bz2``, ``.xz``, ``.zst``), one document a record.

    Parameters
    ----------
    path : str or path
        The file; its kind is its name's (``.jsonl``, ``.ndjson``, ``.csv``, then
        perhaps the compression's suffix).
    split : str, default="train"
    text_field, id_field, label_field : str or None
        The JSONL keys or CSV columns of the text, the id (default ``FILE:LINE``) and
        the label (default: no labels).
    time_field : str or None
        The key or column of each document's timestamp, a date or a number
        (:mod:`bpetopics.text.timestamps`); a record without one is malformed.
    skip_bad_lines : bool, default=False
        Skip malformed lines (recorded in ``skipped``) instead of stopping at the first.

    Returns
    -------
    RawDocuments
        Documents in file order; labels (sorted names) when ``label_field`` is given.
    """
    kind = input_kind(path)
    if not is_record_file(path):
        raise CorpusError(f"{path} is not a .jsonl or .csv file: give one (or a folder of text files)")
    fields = Fields(text_field, id_field, label_field, time_field)
    texts, ids, names, stamps, bad, replaced, replaced_in = [], [], [], [], [], 0, []
    for chunk, _ in chunks(path, kind, fields, 10_000):
        records = parse_chunk(chunk, fields)
        check_bad_lines(records.bad, skip_bad_lines)
        texts += records.texts
        ids += records.ids
        names += records.labels
        stamps += records.times
        bad += records.bad
        replaced += records.replaced
        replaced_in += records.replaced_in
    if not texts:
        raise CorpusError(no_document_message(path, len(bad), bad[0] if bad else None,
                                              all(reason == bad[0][1] for _, reason in bad)))
    warn_replaced(path, replaced, len(replaced_in), replaced_in, len(texts))
    labels = label_names = None
    if label_field is not None:
        label_names = sorted(set(names))
        lookup = {name: i for i, name in enumerate(label_names)}
        labels = np.array([lookup[name] for name in names], dtype=np.int64)
    return RawDocuments(texts=texts, ids=ids, split=split, labels=labels, label_names=label_names,
                        source=str(path), skipped={MALFORMED: [where for where, _ in bad]} if bad else {},
                        times=None if time_field is None else time_array(stamps, path))
