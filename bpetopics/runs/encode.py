"""New documents through a trained text run: read, count with the run's own pipeline,
encode, and write the codes and mixtures as CSV, NPZ or JSON (``bpetopics encode``)."""

from __future__ import annotations

import csv
import io
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from bpetopics.runs.folder import RunError

__all__ = ["EXTENSIONS", "EncodedDocuments", "encode_documents", "encoded_bytes", "read_documents"]

#: Output formats, chosen by the file's extension.
EXTENSIONS = (".csv", ".npz", ".json")


def read_documents(path) -> tuple[list[str], list[str]]:
    """(ids, raw texts) of a folder of text files (ids: relative paths) or of one file.

    CorpusError (one line) for a missing path, a binary file or a folder without text;
    invalid UTF-8 bytes are replaced and counted in a CorpusWarning.
    """
    from bpetopics.text import load_folder
    from bpetopics.text.errors import CorpusError, CorpusWarning
    from bpetopics.text.decoding import file_text, looks_binary

    path = Path(path)
    if not path.exists():
        raise CorpusError(f"input {path} does not exist: give a text file or a folder of text files")
    if path.is_file():
        raw = path.read_bytes()
        if looks_binary(raw[:8192]):
            raise CorpusError(f"{path} is not a text file")
        text, n_bad = file_text(path.name, raw)
        if n_bad:
            warnings.warn(f"{n_bad:,} bytes that are not valid UTF-8 were replaced by U+FFFD in {path}",
                          CorpusWarning, stacklevel=2)
        return [path.name], [text]
    docs = load_folder(path)
    return list(docs.ids), list(docs.texts)


@dataclass
class EncodedDocuments:
    """Documents encoded by a run: ``ids`` (N,), ``n_words`` (N,) in-vocabulary tokens,
    ``codes`` (N, K) uint8, ``mixtures`` (N, T) topic mixtures."""

    ids: list
    n_words: np.ndarray
    codes: np.ndarray
    mixtures: np.ndarray

    @property
    def n_empty(self) -> int:
        """Documents with no word of the run's vocabulary (their code says nothing)."""
        return int((self.n_words == 0).sum())


#: ``bpetopics encode --mixture`` -> ``PoissBPE.doc_topic``'s ``posterior``.
MIXTURES = {"document": "document", "posterior": "local", "code": "map"}


def encode_documents(run, ids, texts, mixture="document", passages=None) -> EncodedDocuments:
    """Count ``texts`` with the run's own pipeline and vocabulary, then encode them
    (words outside the vocabulary are ignored). RunError when the run has no pipeline.
    ``mixture``: 'document', each document's own mixture around the posterior one
    (``PoissBPE.doc_topic``'s default); 'posterior', the posterior mean over each code and
    the codes near it (``PoissBPE.posterior_topic``); or 'code', f(z) at the code alone.
    ``passages`` ("paragraphs", "sentences"): encode each document's passages instead,
    cut after cleaning as training cuts them (:mod:`bpetopics.text.passages`; ids
    ``<id>#k``)."""
    from bpetopics.text import RawDocuments
    from bpetopics.text.passages import split_passages

    if run.pipeline is None:
        raise RunError(f"{run.path} has no text pipeline (it was trained on counts, not texts): "
                       "it cannot encode texts")
    docs = split_passages(RawDocuments(list(texts), list(ids)), passages, run.pipeline.clean)
    ids = docs.ids
    counts = run.pipeline.transform(docs.texts, docs.cleaned)
    codes = run.model.transform(counts)
    mixtures = run.model.topic_mixtures(counts, codes, posterior=MIXTURES[mixture])
    return EncodedDocuments(list(ids), np.asarray(counts.sum(axis=1)).ravel(), codes, mixtures)


def _top(mixture, n, n_words=1):
    """The ``n`` heaviest topics of a mixture; none for a document without a vocabulary
    word (its code is empty and its mixture only the decoder's bias, which says nothing
    about the document)."""
    if not n_words:
        return []
    order = np.argsort(-mixture, kind="stable")[:n]
    return [(int(t), float(mixture[t])) for t in order]


def encoded_table(docs: EncodedDocuments, top_topics: int, labels) -> str:
    """A table to read in a terminal: per document its id, words of the vocabulary,
    active bits and heaviest topics as ``topic label (weight)``; ``labels`` (T,) the
    run's topic labels."""
    ids = [str(doc_id) for doc_id in docs.ids]
    width = max([len("document"), *map(len, ids)])
    lines = [f"{'document':<{width}}  words  bits  top topics"]
    for doc_id, n, code, mix in zip(ids, docs.n_words, docs.codes, docs.mixtures):
        top = _top(mix, top_topics, n)
        shown = "; ".join(f"{t} {labels[t]} ({w:.2f})" for t, w in top) if top else "(no word of the vocabulary)"
        lines.append(f"{doc_id:<{width}}  {int(n):>5}  {int(code.sum()):>4}  {shown}")
    return "\n".join(lines)


def encoded_bytes(fmt: str, docs: EncodedDocuments, top_topics: int, run_path) -> bytes:
    """The file content of ``fmt`` ('.csv', '.npz' or '.json') for encoded documents."""
    ids, n_words, codes, mixtures = docs.ids, docs.n_words, docs.codes, docs.mixtures
    if fmt == ".npz":
        csr = sp.csr_matrix(codes.astype(np.uint8))
        buf = io.BytesIO()
        # scipy.sparse.load_npz(FILE) reads the codes from the first five arrays.
        np.savez_compressed(buf, format=np.array(b"csr"), shape=np.array(csr.shape), data=csr.data,
                            indices=csr.indices, indptr=csr.indptr, doc_topic=mixtures.astype(np.float32),
                            ids=np.array(ids, dtype=str), n_words=np.asarray(n_words, dtype=np.int64))
        return buf.getvalue()
    if fmt == ".json":
        rows = [{"id": doc_id, "n_words": int(n), "active_bits": np.flatnonzero(code).tolist(),
                 "top_topics": [{"topic": t, "weight": round(w, 6)} for t, w in _top(mix, top_topics, n)],
                 "mixture": [round(float(x), 6) for x in mix]}
                for doc_id, n, code, mix in zip(ids, n_words, codes, mixtures)]
        return (json.dumps({"run": str(run_path), "n_topics": int(mixtures.shape[1]), "n_bits": int(codes.shape[1]),
                            "documents": rows}, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["doc_id", "n_words", "active_bits", "top_topics",
                     *(f"topic_{t}" for t in range(mixtures.shape[1]))])
    for doc_id, n, code, mix in zip(ids, n_words, codes, mixtures):
        writer.writerow([doc_id, int(n), " ".join(map(str, np.flatnonzero(code))),
                         " ".join(f"{t}:{w:.4f}" for t, w in _top(mix, top_topics, n)),
                         *(f"{x:.6g}" for x in mix)])
    return buf.getvalue().encode("utf-8")
