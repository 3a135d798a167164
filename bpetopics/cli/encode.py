"""``bpetopics encode RUN INPUT --out FILE``: codes and topic mixtures of new documents."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import click

from bpetopics.files import write_bytes_atomic

from bpetopics.cli import UserError, corpus_errors, main, open_run

EXTENSIONS = (".csv", ".npz", ".json")


def read_documents(path: Path) -> tuple[list[str], list[str]]:
    """(ids, raw texts) of a folder of text files (ids: relative paths) or of one file."""
    from bpetopics.text import load_folder
    from bpetopics.text.loaders import _looks_binary, decode_bytes

    if not path.exists():
        raise UserError(f"input {path} does not exist: give a text file or a folder of text files")
    if path.is_file():
        raw = path.read_bytes()
        if _looks_binary(raw[:8192]):
            raise UserError(f"{path} is not a text file")
        text, n_bad = decode_bytes(raw)
        if n_bad:
            click.echo(f"Warning: {n_bad:,} bytes that are not valid UTF-8 were replaced by U+FFFD in {path}",
                       err=True)
        return [path.name], [text]
    with corpus_errors():
        docs = load_folder(path)
    return list(docs.ids), list(docs.texts)


def _top(mixture, n, n_words=1):
    """The ``n`` heaviest topics of a mixture; none for a document without a vocabulary
    word (its code is empty and its mixture only the decoder's bias, which says nothing
    about the document)."""
    import numpy as np

    if not n_words:
        return []
    order = np.argsort(-mixture, kind="stable")[:n]
    return [(int(t), float(mixture[t])) for t in order]


def encoded_bytes(fmt: str, ids, n_words, codes, mixtures, top_topics: int, run_path) -> bytes:
    """The file content of ``fmt`` ('.csv', '.npz' or '.json') for encoded documents."""
    import numpy as np
    import scipy.sparse as sp

    if fmt == ".npz":
        csr = sp.csr_matrix(codes.astype(np.uint8))
        buf = io.BytesIO()
        # scipy.sparse.load_npz(FILE) reads the codes from the first five arrays.
        np.savez_compressed(buf, format=np.array(b"csr"), shape=np.array(csr.shape), data=csr.data,
                            indices=csr.indices, indptr=csr.indptr, doc_topic=mixtures.astype(np.float32),
                            ids=np.array(ids, dtype=str), n_words=np.asarray(n_words, dtype=np.int64))
        return buf.getvalue()
    if fmt == ".json":
        docs = [{"id": doc_id, "n_words": int(n), "active_bits": np.flatnonzero(code).tolist(),
                 "top_topics": [{"topic": t, "weight": round(w, 6)} for t, w in _top(mix, top_topics, n)],
                 "mixture": [round(float(x), 6) for x in mix]}
                for doc_id, n, code, mix in zip(ids, n_words, codes, mixtures)]
        return (json.dumps({"run": str(run_path), "n_topics": int(mixtures.shape[1]), "n_bits": int(codes.shape[1]),
                            "documents": docs}, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["doc_id", "n_words", "active_bits", "top_topics",
                     *(f"topic_{t}" for t in range(mixtures.shape[1]))])
    for doc_id, n, code, mix in zip(ids, n_words, codes, mixtures):
        writer.writerow([doc_id, int(n), " ".join(map(str, np.flatnonzero(code))),
                         " ".join(f"{t}:{w:.4f}" for t, w in _top(mix, top_topics, n)),
                         *(f"{x:.6g}" for x in mix)])
    return buf.getvalue().encode("utf-8")


@main.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Output file: .csv, .npz or .json (the extension picks the format).")
@click.option("--top-topics", type=int, default=3, show_default=True, help="Top topics listed per document.")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda or auto.")
@click.option("--overwrite", is_flag=True, help="Replace --out if it exists.")
def encode(run, input_path, out, top_topics, device, overwrite):
    """Encode new documents with a trained run: binary codes and topic mixtures.

    INPUT is a text file (one document) or a folder of text files (one document per
    file). The documents are cleaned and counted with the run's own settings and
    vocabulary; words outside the vocabulary are ignored.

    \b
    Output by the extension of --out:
      .csv   doc_id, n_words, active_bits (bit indices), top_topics (topic:weight),
             then one column per topic (the mixture f(z))
      .npz   scipy.sparse.load_npz(FILE) gives the codes (CSR, N x K);
             numpy.load(FILE) also holds doc_topic (N x T), ids and n_words
      .json  {"documents": [{"id", "n_words", "active_bits", "top_topics", "mixture"}]}

    \b
    Examples:
      bpetopics encode runs/20ng new_posts/ --out codes.csv
      bpetopics encode runs/20ng message.txt --out message.json
      bpetopics encode runs/20ng archive/ --out archive.npz --device auto
    """
    fmt = out.suffix.lower()
    if fmt not in EXTENSIONS:
        raise UserError(f"--out {out} must end in .csv, .npz or .json (the extension picks the format)")
    if out.is_dir() or (out.exists() and not overwrite):
        raise UserError(f"{out} already exists: pass --overwrite to replace it, or choose another --out")
    if top_topics < 1:
        raise UserError(f"--top-topics must be a positive integer; got {top_topics}")
    trained = open_run(run, device=device)
    if trained.pipeline is None:
        raise UserError(f"{run} has no text pipeline (it was trained on counts, not texts): it cannot encode texts")
    ids, texts = read_documents(input_path)
    counts = trained.pipeline.transform(texts)
    codes = trained.model.transform(counts)
    mixtures = trained.model.code_topic(codes)
    n_words = counts.sum(axis=1).A1
    data = encoded_bytes(fmt, ids, n_words, codes, mixtures, top_topics, run)
    write_bytes_atomic(out, data)
    empty = int((n_words == 0).sum())
    click.echo(f"Encoded {len(ids):,} document(s) from {input_path} with {run} to {out}: "
               f"mean active bits {codes.sum(1).mean():.2f}"
               + (f"; {empty:,} had no word of the run's vocabulary" if empty else ""))
