"""The codes of a run trained on a sharded corpus: encoded block by block after
training, written sparse, one file per corpus shard; never a dense (N, K) array.

A run trained on an in-memory corpus keeps ``doc_codes.npz`` (one CSR) and
``doc_topics.npz`` (N x T mixtures). One trained on a sharded corpus
(:mod:`bpetopics.text.sharded`) holds instead::

    codes/shard-NNNNN.npz   CSR (n_s x K) uint8 (scipy.sparse.save_npz), the codes of the
                            rows of corpus shard NNNNN, in the corpus's order
    codes/distinct.npz      the distinct codes and what the views need from them:
                            codes (U, K) uint8, documents (U,) int64 (how many documents
                            have each), tokens (U,) int64 (their summed lengths), and
                            term_frequency (W,) int64 (the corpus's column sums)

and ``config.json`` records them under ``codes`` (:data:`CODES_FORMAT`, the shard files
and their document counts). Everything a run's views need from every document is a sum
over documents, so over distinct codes: a topic's token share is
sum_u tokens_u f(u)_t / sum_u tokens_u, the co-activation counts are
A_U^T diag(documents) A_U, pyLDAvis's topic sizes are the same weighted sums. The
documents (no ids, no mixtures) are not duplicated into the run: the corpus keeps them.

:func:`write_codes` runs inside :func:`~bpetopics.runs.folder.save_run`'s staging
folder, so a run is never half-written. Memory: one block of :data:`ENCODE_ROWS` rows
(gathered from the maps), its dense codes (block x K bytes), one shard's sparse codes,
the keys of up to :data:`MERGE_ROWS` codes and the distinct codes; nothing that grows
with N but the sparse codes of one shard.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from bpetopics.runs.run import RunError

CODES_DIR = "codes"
CODES_FORMAT = "bpetopics.sharded_codes"
DISTINCT_FILE = "distinct.npz"
#: Rows encoded at once (``transform`` pursues them 1,024 at a time; the block bounds the
#: gathered counts and their temporaries).
ENCODE_ROWS = 4096
#: Encoded rows whose codes are merged into the distinct codes at once (their keys, about
#: K / 8 bytes a row, wait until then).
MERGE_ROWS = 65536


@dataclass
class DistinctCodes:
    """The distinct codes of the training documents and their weights.

    Attributes
    ----------
    codes : np.ndarray uint8, shape (U, K)
    documents : np.ndarray int64, shape (U,)
        Documents whose code is row u.
    tokens : np.ndarray int64, shape (U,)
        Their summed lengths (tokens).
    term_frequency : np.ndarray int64, shape (W,)
        Column sums of the training counts.
    """

    codes: np.ndarray
    documents: np.ndarray
    tokens: np.ndarray
    term_frequency: np.ndarray

    @property
    def n_docs(self) -> int:
        return int(self.documents.sum())

    def bit_documents(self) -> np.ndarray:
        """(K,) int64: documents whose code has bit k on."""
        return self.documents @ self.codes.astype(np.int64)


def _row_keys(codes: np.ndarray) -> np.ndarray:
    """One byte string per row (the row's bits packed), so that np.unique works on 1-D."""
    packed = np.ascontiguousarray(np.packbits(codes != 0, axis=1))
    return packed.view(np.dtype((np.void, packed.shape[1]))).ravel()


def _key_rows(keys: np.ndarray, n_bits: int) -> np.ndarray:
    """The rows of :func:`_row_keys` back: (U, K) uint8."""
    packed = np.frombuffer(keys.tobytes(), dtype=np.uint8).reshape(len(keys), -1)
    return np.unpackbits(packed, axis=1, count=n_bits)


class _DistinctTally:
    """Distinct codes with their documents and tokens, merged every :data:`MERGE_ROWS`
    rows (a merge sorts the distinct codes so far with the rows added since: merging
    every block of :data:`ENCODE_ROWS` would sort the distinct codes N / 4,096 times)."""

    def __init__(self, n_bits: int):
        self.n_bits = n_bits
        self.keys = _row_keys(np.zeros((0, n_bits), np.uint8))
        self.documents = np.zeros(0, np.int64)
        self.tokens = np.zeros(0, np.int64)
        self._pending_keys, self._pending_tokens, self._pending_rows = [], [], 0

    def add(self, codes: np.ndarray, lengths: np.ndarray) -> None:
        self._pending_keys.append(_row_keys(codes))
        self._pending_tokens.append(np.asarray(lengths, np.int64))
        self._pending_rows += len(codes)
        if self._pending_rows >= MERGE_ROWS:
            self._merge()

    def _merge(self) -> None:
        if not self._pending_rows:
            return
        added = np.concatenate(self._pending_keys)
        keys = np.concatenate([self.keys, added])
        docs = np.concatenate([self.documents, np.ones(len(added), np.int64)])
        tokens = np.concatenate([self.tokens, *self._pending_tokens])
        self.keys, inverse = np.unique(keys, return_inverse=True)
        inverse = inverse.ravel()
        # float64 weights are exact: the sums stay far below 2^53
        self.documents = np.bincount(inverse, weights=docs, minlength=len(self.keys)).astype(np.int64)
        self.tokens = np.bincount(inverse, weights=tokens, minlength=len(self.keys)).astype(np.int64)
        self._pending_keys, self._pending_tokens, self._pending_rows = [], [], 0

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(codes (U, K) uint8, documents (U,), tokens (U,)), every row added merged."""
        self._merge()
        return _key_rows(self.keys, self.n_bits), self.documents, self.tokens


def code_summary(distinct: DistinctCodes, code_topic) -> dict:
    """What ``summary.json`` says of the codes, from the distinct codes: ``documents``,
    ``mean_active_bits``, ``bits_used`` and ``topic_share`` ((T,) token shares,
    sum_u tokens_u f(u) / sum_u tokens_u, with ``code_topic`` (U, K) -> (U, T))."""
    n_docs = distinct.n_docs
    mixtures = np.asarray(code_topic(distinct.codes), dtype=np.float64)
    share = distinct.tokens.astype(np.float64) @ mixtures / max(float(distinct.tokens.sum()), 1e-12)
    active = distinct.documents @ distinct.codes.sum(axis=1, dtype=np.int64)
    return {"documents": n_docs, "mean_active_bits": float(active / n_docs) if n_docs else 0.0,
            "bits_used": int((distinct.bit_documents() > 0).sum()), "topic_share": share}


def write_codes(folder, model, counts, progress: bool = False, group=None) -> tuple[dict, DistinctCodes]:
    """Encode every row of a sharded corpus's ``counts`` with the fitted ``model`` and
    write ``folder/codes/`` (module docstring); returns (the ``config["codes"]``
    record, the :class:`DistinctCodes`).

    Rows are encoded by blocks of :data:`ENCODE_ROWS` with ``model.transform``
    (everything global frozen): each document's code is the one ``transform`` gives it
    in memory (tested).

    Parameters
    ----------
    folder : path
        The run's staging folder.
    model : fitted PoissBPE
    counts : ShardedCounts, shape (N, W)
    group : StepGroup, optional
        The processes of a data-parallel job (rank 0 writes; every other rank calls
        :func:`share_encoding` at the same time): each encodes every P-th row of a block.
    """
    from tqdm.auto import tqdm

    codes_dir = Path(folder) / CODES_DIR
    codes_dir.mkdir()
    tally = _DistinctTally(model.code_length())
    shards = []
    bar = tqdm(total=counts.shape[0], desc="encoding", unit="doc", disable=not progress, leave=False)
    parts = []
    for s, codes, lengths, last in _encoded_blocks(model, counts, group):
        if len(lengths):
            tally.add(codes, lengths)
            parts.append(sp.csr_matrix(codes))
            bar.update(len(lengths))
        if last:
            shards.append(_write_shard(codes_dir, s, parts, model.code_length()))
            parts = []
    bar.close()
    term_frequency = np.asarray(counts.sum(axis=0), dtype=np.int64).ravel()     # streamed once, then kept
    distinct = DistinctCodes(*tally.finish(), term_frequency)
    np.savez_compressed(codes_dir / DISTINCT_FILE, codes=distinct.codes, documents=distinct.documents,
                        tokens=distinct.tokens, term_frequency=distinct.term_frequency)
    record = {"format": CODES_FORMAT, "folder": CODES_DIR, "n_bits": model.code_length(), "shards": shards,
              "distinct": DISTINCT_FILE}
    return record, distinct


def share_encoding(model, counts, group) -> None:
    """A rank other than 0 of a data-parallel job: encode its rows of every block while
    rank 0 runs :func:`write_codes` with the same ``group`` (nothing is written here)."""
    for _ in _encoded_blocks(model, counts, group):
        pass


def _encoded_blocks(model, counts, group):
    """(shard s, codes (b, K) uint8, lengths (b,) int64, whether the block ends the
    shard) for each block of :data:`ENCODE_ROWS` rows of every shard, in order. With a
    ``group`` of P processes, rank r encodes rows r, r + P, ... of each block and the
    block's codes and lengths are summed across the processes (every row is one rank's)."""
    import torch

    offsets = np.asarray(counts.row_offsets)
    rank, size = (0, 1) if group is None else (group.rank, group.size)
    for s in range(len(offsets) - 1):
        begin_s, end_s = int(offsets[s]), int(offsets[s + 1])
        if end_s == begin_s:
            yield s, np.zeros((0, model.code_length()), np.uint8), np.zeros(0, np.int64), True
            continue
        for begin in range(begin_s, end_s, ENCODE_ROWS):
            rows = np.arange(begin, min(begin + ENCODE_ROWS, end_s))
            mine = rows[rank::size]
            block = counts[mine]
            codes = np.zeros((len(rows), model.code_length()), np.uint8)
            lengths = np.zeros(len(rows), np.int64)
            if len(mine):
                codes[rank::size] = model.transform(block)                   # (b / P, K) uint8
                lengths[rank::size] = np.asarray(block.sum(axis=1)).ravel()
            if size > 1:
                group.sum_(torch.from_numpy(codes))
                group.sum_(torch.from_numpy(lengths))
            yield s, codes, lengths, rows[-1] + 1 == end_s


def _write_shard(codes_dir: Path, s: int, parts: list, n_bits: int) -> dict:
    shard = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, n_bits), dtype=np.uint8)
    name = f"shard-{s:05d}.npz"
    sp.save_npz(codes_dir / name, shard.astype(np.uint8), compressed=True)
    return {"file": name, "documents": int(shard.shape[0]), "nnz": int(shard.nnz)}


# ---------------------------------------------------------------------------- reading
def is_sharded_run(run) -> bool:
    """True for a text run whose codes are sharded (trained on a sharded corpus)."""
    return (run.config.get("codes") or {}).get("format") == CODES_FORMAT


def _record(run) -> dict:
    record = run.config.get("codes") or {}
    if record.get("format") != CODES_FORMAT:
        raise RunError(f"{run.path} does not hold sharded codes (config.json has no codes record)")
    return record


def code_shards(run):
    """The codes of the training documents, shard by shard: CSR (n_s x K) uint8 each, in
    the corpus's order. RunError (one line) for a missing or damaged file."""
    record = _record(run)
    for entry in record["shards"]:
        path = run.path / record["folder"] / entry["file"]
        try:
            codes = sp.load_npz(path).tocsr()
        except Exception as exc:   # scipy/numpy/zipfile raise many types for a damaged file
            raise RunError(f"{path} is missing or damaged ({type(exc).__name__}): train the run again") from None
        if codes.shape != (entry["documents"], record["n_bits"]):
            raise RunError(f"{path} has shape {codes.shape}, expected ({entry['documents']}, {record['n_bits']}): "
                           "train the run again")
        yield codes


def all_codes(run) -> sp.csr_matrix:
    """Every training document's code, one CSR (N x K) uint8 (sparse: ~ the active bits)."""
    parts = list(code_shards(run))
    if not parts:
        return sp.csr_matrix((0, _record(run)["n_bits"]), dtype=np.uint8)
    return sp.vstack(parts, format="csr").astype(np.uint8)


def read_distinct(run) -> DistinctCodes:
    """The run's :class:`DistinctCodes` (``codes/distinct.npz``); RunError when damaged."""
    record = _record(run)
    path = run.path / record["folder"] / record["distinct"]
    try:
        with np.load(path, allow_pickle=False) as f:
            distinct = DistinctCodes(f["codes"].astype(np.uint8), f["documents"].astype(np.int64),
                                     f["tokens"].astype(np.int64), f["term_frequency"].astype(np.int64))
    except Exception as exc:
        raise RunError(f"{path} is missing or damaged ({type(exc).__name__}): train the run again") from None
    if distinct.n_docs != run.config.get("n_data") or len(distinct.term_frequency) != run.config.get("n_features"):
        raise RunError(f"{path} does not match the run's {run.config.get('n_data')} documents: train the run again")
    return distinct
