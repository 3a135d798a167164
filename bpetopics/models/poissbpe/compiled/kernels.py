"""A compiled CPU kernel for the pursuit's later steps (numba), torch elsewhere.

For A documents, each with its current code's candidate mixtures f(z_n + e_j) (K x T),
the data term of every candidate is

    score_nj = sum_{i in n} x_i ln sum_t beta[w_i, t] f(z_n + e_j)_t          (A, K)

over the document's real non-zeros i. Documents with the same code share the candidates
z + e_j, so the caller computes ln phi once per distinct (word, code) pair: the products
over T in one compiled loop (``prange``: pairs are spread over the threads), the
logarithms by torch's vectorised ``log_`` (a scalar log in the loop is much slower), then
each document's weighted sum of its pairs' rows in a second compiled loop. Used on CPU
tensors when numba imports; :func:`bpetopics.models.poissbpe.table_pursuit._shared_code_scores` has
the torch path (CUDA, or without numba), which gives the same scores to float tolerance.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch

try:
    import numba
    from numba import prange
except ImportError:                                   # pragma: no cover - numba optional
    numba = None

#: Whether numba imports: the compiled kernels exist.
AVAILABLE = numba is not None

_BLOCK = 32        # pairs (documents) per parallel work item

if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit, renamed

    if numba.config.THREADING_LAYER == "default":
        # OpenMP's workers spin after each parallel loop and burn the other cores' time;
        # the work-queue pool sleeps.
        numba.config.THREADING_LAYER = "workqueue"

    def _mix_products_py(words, codes, beta, mix_t, phi):  # pragma: no cover
        """phi[m, j] = max(sum_t beta[words[m], t] mix_t[codes[m], t, j], 1e-30).
        words, codes (M,), beta (U, T), mix_t (C, T, K) -> phi (M, K)."""
        n_topics, n_bits, n_pairs = mix_t.shape[1], mix_t.shape[2], words.shape[0]
        for block in prange((n_pairs + _BLOCK - 1) // _BLOCK):
            acc = np.empty(n_bits, dtype=np.float32)     # one scratch row per block
            for m in range(block * _BLOCK, min(n_pairs, (block + 1) * _BLOCK)):
                w, c = words[m], codes[m]
                acc[:] = 0.0
                for t in range(n_topics):
                    b = beta[w, t]
                    for j in range(n_bits):
                        acc[j] += b * mix_t[c, t, j]
                for j in range(n_bits):                 # as the reference: phi >= 1e-30
                    phi[m, j] = max(acc[j], np.float32(1e-30))

    def _row_sums_py(indptr, pair_of_nz, vals, log_phi, scores):  # pragma: no cover
        """scores[n, j] = sum_{i in n} vals[i] log_phi[pair_of_nz[i], j].
        indptr (A+1,), pair_of_nz, vals (nnz,), log_phi (M, K) -> scores (A, K)."""
        n_bits, n_docs = log_phi.shape[1], indptr.shape[0] - 1
        for block in prange((n_docs + _BLOCK - 1) // _BLOCK):
            acc = np.empty(n_bits, dtype=np.float32)
            for n in range(block * _BLOCK, min(n_docs, (block + 1) * _BLOCK)):
                acc[:] = 0.0
                for i in range(indptr[n], indptr[n + 1]):
                    x, p = vals[i], pair_of_nz[i]
                    for j in range(n_bits):
                        acc[j] += x * log_phi[p, j]
                for j in range(n_bits):
                    scores[n, j] = acc[j]

    # One thread: plain loops (no thread pool); more: the loop is spread over threads. The
    # parallel builds are renamed: numba's on-disk cache is keyed by name, and the serial
    # and parallel builds must not overwrite each other.
    _products = (cached_njit(nogil=True)(_mix_products_py),
                 cached_njit(parallel=True, nogil=True)(renamed(_mix_products_py, "_par")))
    _sums = (cached_njit(nogil=True)(_row_sums_py),
             cached_njit(parallel=True, nogil=True)(renamed(_row_sums_py, "_par")))


def set_kernel_threads(count: int) -> None:
    """Let the compiled kernels' parallel loops use up to ``count`` threads (a process of
    a distributed run; nothing without numba)."""
    if numba is not None:
        numba.set_num_threads(max(1, min(int(count), numba.config.NUMBA_NUM_THREADS)))


#: PoissBPE's ``backend`` values: "auto" is "numba" on the CPU when numba imports, else "torch".
BACKENDS = ("auto", "numba", "torch")


def resolve_backend(backend: str, device) -> str:
    """The backend a model on ``device`` runs: "numba" or "torch" (ValueError, one line,
    for "numba" where it cannot run)."""
    cpu = torch.device(device).type == "cpu"
    if backend == "auto":
        return "numba" if numba is not None and cpu else "torch"
    if backend == "numba" and not (numba is not None and cpu):
        why = "numba is not installed" if numba is None else f"the device is {torch.device(device).type}"
        raise ValueError(f"backend='numba' cannot run here ({why}): use backend='auto' or 'torch'")
    return backend


_torch_only: list = []     # one entry per open backend_in_use("torch") block


@contextmanager
def backend_in_use(backend: str):
    """Inside the block the compiled kernels serve only if ``backend`` (resolved) is
    "numba"; with "torch" every path takes its torch twin (:func:`available` is False)."""
    if backend == "numba":
        yield
        return
    _torch_only.append(backend)
    try:
        yield
    finally:
        _torch_only.pop()


@contextmanager
def model_backend(model):
    """The block on ``model``'s backend: ``model.backend`` resolved for its ``device_``
    (again each time: a model loaded from disk, or moved, resolves where it now runs),
    kept in ``model.backend_`` and in use (:func:`backend_in_use`) until the block ends.
    PoissBPE opens it around training, encoding and its topic outputs, so that
    ``backend="torch"`` runs no compiled kernel anywhere."""
    model.backend_ = resolve_backend(model.backend, model.device_)
    with backend_in_use(model.backend_):
        yield


def available(device) -> bool:
    """Whether the compiled kernels serve tensors on ``device`` (never inside a
    ``backend_in_use("torch")`` block)."""
    if numba is None or _torch_only:
        return False
    # (a torch.device as it is: building one again costs more than the rest of a step's checks)
    return (device if isinstance(device, torch.device) else torch.device(device)).type == "cpu"


#: Multiply-adds below which a call runs serially whatever the thread count. On 20
#: Newsgroups with two cores the parallel build made a training epoch slower on two threads
#: than on one and encoding several times slower; serial everywhere, both run as fast on
#: one thread as on two (docs/design.md). No call of training or encoding here comes near
#: this threshold: the parallel build stays for much larger calls and machines with more
#: cores.
MIN_PARALLEL_WORK = 10**9


def _pick(pair, threads, work=None):
    """The serial build for one thread (or for less than :data:`MIN_PARALLEL_WORK`
    multiply-adds), else the parallel build on ``threads`` threads."""
    if work is not None and work < MIN_PARALLEL_WORK:
        threads = 1
    threads = max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS))
    if threads > 1:
        numba.set_num_threads(threads)
    return pair[threads > 1]


def log_mixtures(words, codes, beta, mix, threads=1):
    """ln phi_mj = ln max(sum_t beta[w_m, t] f(z_{c_m} + e_j)_t, 1e-30) for M (word, code)
    pairs: words, codes (M,) long, beta (U, T), mix (C, K, T) -> (M, K) float32.
    Products by the compiled loop on ``threads`` threads, logarithms by torch's ``log_``."""
    phi = torch.empty(words.shape[0], mix.shape[1])
    work = words.shape[0] * mix.shape[1] * mix.shape[2]
    _pick(_products, threads, work)(words.numpy(), codes.numpy(), beta.float().contiguous().numpy(),
                              mix.float().transpose(1, 2).contiguous().numpy(), phi.numpy())
    return phi.log_()


def pair_sums(sub, pair_of_nz, log_phi, threads=1):
    """score_nj = sum_{i in n} x_i log_phi[pair(i), j] for the documents of ``sub``
    (PackedCounts, A rows): pair_of_nz (nnz,), log_phi (M, K) -> (A, K) float32."""
    scores = torch.empty(len(sub), log_phi.shape[1])
    _pick(_sums, threads, pair_of_nz.shape[0] * log_phi.shape[1])(sub.indptr.numpy(), pair_of_nz.numpy(), sub.vals.float().numpy(),
                          log_phi.numpy(), scores.numpy())
    return scores
