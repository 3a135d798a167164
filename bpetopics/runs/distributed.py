"""Data-parallel training with torch.distributed: P processes share every minibatch step.

Each process (a *rank*) pursues its share of the global minibatch, the one a single
process would take (the same :func:`~bpetopics.bpe.batches.epoch_order`, each minibatch
cut into P contiguous parts); the step's totals (q(pi)'s statistics, the theta loss's
normaliser, scores) and then theta's gradients are summed by all-reduce, so that every
rank takes the step one process takes on the whole minibatch
(:mod:`bpetopics.bpe.step_group` has the algebra) and keeps the same model. Only rank 0
writes checkpoints and the run.

Library use (every rank runs the same code, e.g. under ``torchrun``)::

    group = init_group("cpu")                  # gloo on CPU, NCCL for CUDA tensors
    model = PoissBPE(20, device="cpu")
    distributed_fit(model, X, group)           # X: csr counts or a sharded corpus's counts
    # every rank holds the same fitted model; rank 0 saves it

``bpetopics train`` uses :func:`share_job` (rank 0 prepares the job, the others receive
the model and the corpus from it) and :mod:`bpetopics.runs.launch` (``--nproc``).
"""

from __future__ import annotations

import contextlib
import datetime
import os

import numpy as np
import torch
import torch.distributed as dist

from bpetopics.bpe.batches import epoch_order
from bpetopics.runs.launch import RankLostError, world_from_env

#: Seconds a collective waits for a silent rank before the job stops (a rank that dies
#: closes its connections and stops the others at once). Environment:
#: BPETOPICS_DIST_TIMEOUT.
DEFAULT_TIMEOUT_S = 1800
#: Rows gathered at once by a rank's batch source (whole global minibatches).
BLOCK_ROWS = 16384


class TorchGroup:
    """The :class:`~bpetopics.bpe.step_group.StepGroup` of a torch.distributed job (the
    default process group, initialised): sums by all-reduce on the model's device, CPU
    tensors through shared memory when every rank is on this machine
    (:mod:`bpetopics.runs.shared_memory_sum`, ``shared=True``: a small fraction of gloo's
    latency over TCP)."""

    def __init__(self, shared: bool = False):
        self.rank, self.size = dist.get_rank(), dist.get_world_size()
        self._shared_sum = None
        if shared:
            from bpetopics.runs.shared_memory_sum import open_shared_sum

            self._shared_sum = open_shared_sum(self.rank, self.size, timeout_seconds())

    @property
    def transport(self) -> str:
        """How CPU tensors are summed: 'shared memory' or the backend's name."""
        return "shared memory" if self._shared_sum is not None else str(dist.get_backend())

    def close(self) -> None:
        if self._shared_sum is not None:
            self._shared_sum.close()
            self._shared_sum = None

    def batches(self, X, batch_size: int, seed: int, epoch: int) -> "RankBatches":
        return RankBatches(X, batch_size, seed, epoch, self.rank, self.size)

    def _all_reduce(self, tensor):
        try:
            dist.all_reduce(tensor)
        except (RuntimeError, ValueError) as exc:   # gloo/NCCL: peer closed, timeout
            raise RankLostError(f"rank {self.rank} of {self.size} lost contact with the other training "
                                f"processes ({_first_line(exc)})") from None
        return tensor

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        if self._shared_sum is not None and tensor.device.type == "cpu" and tensor.is_contiguous():
            return self._shared_sum.sum_(tensor)
        return self._all_reduce(tensor)

    def encoding_rows(self) -> slice:
        """Every P-th row of the encoding order from this rank's (the order sorts by
        length: the ranks get alike rows)."""
        return slice(self.rank, None, self.size)


class RankBatches:
    """Rank ``rank``'s share of each minibatch of an epoch: minibatch b is the rows
    ``order[b B : (b + 1) B]`` of :func:`epoch_order` (as one process takes them), and
    rank r takes its r-th contiguous part, rows ``[len r / P, len (r + 1) / P)`` of it
    (a part may be empty when a minibatch has fewer rows than P). Rows are gathered a
    block of minibatches at a time (``X[rows]``: a CSR in memory, or a
    :class:`~bpetopics.bpe.batches.RowStore` read from disk, each rank reading only its
    rows). ``n_samples`` is N, the rows all ranks see together."""

    def __init__(self, X, batch_size: int, seed: int, epoch: int, rank: int, size: int,
                 block_rows: int = BLOCK_ROWS):
        self.X, self.batch_size, self.seed, self.epoch = X, int(batch_size), int(seed), int(epoch)
        self.rank, self.size = int(rank), int(size)
        self.n_samples = int(X.shape[0])
        self.block = max(1, block_rows // self.batch_size) * self.batch_size

    def __len__(self) -> int:
        return -(-self.n_samples // self.batch_size)

    def share(self, n_rows: int) -> tuple[int, int]:
        """This rank's part [begin, end) of a minibatch of ``n_rows`` rows."""
        return n_rows * self.rank // self.size, n_rows * (self.rank + 1) // self.size

    def __iter__(self):
        order = epoch_order(self.n_samples, self.seed, self.epoch)
        for block_begin in range(0, self.n_samples, self.block):
            block = order[block_begin:block_begin + self.block]
            parts = []
            for begin in range(0, len(block), self.batch_size):
                rows = block[begin:begin + self.batch_size]
                lo, hi = self.share(len(rows))
                parts.append(rows[lo:hi])
            gathered = self.X[np.concatenate(parts)]
            ends = np.cumsum([len(p) for p in parts])
            for end, part in zip(ends, parts):
                yield gathered[end - len(part):end]


def _first_line(exc) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__)[:300]


def timeout_seconds() -> float:
    """The collectives' timeout: BPETOPICS_DIST_TIMEOUT seconds, else DEFAULT_TIMEOUT_S."""
    value = os.environ.get("BPETOPICS_DIST_TIMEOUT")
    try:
        return float(value) if value else float(DEFAULT_TIMEOUT_S)
    except ValueError:
        raise ValueError(f"BPETOPICS_DIST_TIMEOUT must be a number of seconds; got {value!r}") from None


def init_group(device="auto") -> TorchGroup:
    """Join the job torchrun (or ``--nproc``) started (MASTER_ADDR, MASTER_PORT, RANK,
    WORLD_SIZE in the environment): gloo for CPU tensors, NCCL for CUDA ones (one GPU a
    process: this rank's LOCAL_RANK). Returns the job's :class:`TorchGroup`."""
    if not dist.is_initialized():
        _, _, local = world_from_env() or (0, 1, 0)
        backend = "gloo"
        if str(device) != "cpu" and torch.cuda.is_available() and dist.is_nccl_available():
            torch.cuda.set_device(local % torch.cuda.device_count())
            backend = "cpu:gloo,cuda:nccl"
        dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_seconds()))
    global _GROUP
    if _GROUP is None:
        _GROUP = TorchGroup(shared=str(device) == "cpu" or not torch.cuda.is_available())
    return _GROUP


#: This process's group once joined (one per process, as torch.distributed's default group).
_GROUP = None


def close_group() -> None:
    global _GROUP
    if _GROUP is not None:
        _GROUP.close()
        _GROUP = None
    if dist.is_initialized():
        dist.destroy_process_group()


@contextlib.contextmanager
def joined(device="auto"):
    """``with joined(device) as group:`` this process's place in the job (:func:`init_group`),
    left at the end; RankLostError (one line) when the job cannot be formed."""
    try:
        group = init_group(device)
    except (RuntimeError, ValueError) as exc:
        raise RankLostError(f"cannot join the training processes ({_first_line(exc)}): check MASTER_ADDR, "
                            "MASTER_PORT and that every process was started") from None
    try:
        yield group
    finally:
        close_group()


def broadcast(obj, group: TorchGroup):
    """``obj`` of rank 0 on every rank (pickled over the job's own connections)."""
    box = [obj if group.rank == 0 else None]
    try:
        dist.broadcast_object_list(box, src=0)
    except (RuntimeError, ValueError) as exc:
        raise RankLostError(f"rank {group.rank} of {group.size} lost contact with rank 0 "
                            f"({_first_line(exc)})") from None
    return box[0]


def _is_fitted(model) -> bool:
    return hasattr(model, "decoder_")


def distributed_fit(model, X, group: TorchGroup):
    """Train ``model`` on ``X`` with the step shared by ``group`` (fit, or continue_fit
    when it holds a checkpoint's state); every rank must call it with equal models and
    the same X (each reads only its share of every minibatch). Returns the model."""
    from bpetopics.bpe.batches import RowStore

    encode = {"encode": False} if isinstance(X, RowStore) else {}   # rank 0 writes them by shards
    model.step_group = group
    try:
        if _is_fitted(model):
            model.continue_fit(X, **encode)
        else:
            model.fit(X, **encode)
    finally:
        vars(model).pop("step_group", None)     # back to the class's: one process
    return model


def job_payload(job) -> dict:
    """What the other ranks need from rank 0's training job: the model (its class,
    parameters and, once trained, its state) and the corpus (the path of a sharded one,
    or the counts in memory)."""
    model, corpus = job.model, job.corpus
    payload = {"model": type(model).__name__, "params": model.get_params(deep=False)}
    payload["params"].pop("callback", None)
    if _is_fitted(model):
        payload["state"] = (model.state_dict(), model.training_state(), model.n_data_, model.n_features_)
    path = getattr(corpus, "path", None)
    payload["corpus"] = ("sharded", str(path)) if getattr(corpus, "manifest", None) is not None \
        else ("memory", corpus.counts)
    return payload


def model_from_payload(payload: dict):
    """The model and training matrix a non-zero rank trains, from :func:`job_payload`."""
    from bpetopics.models.registry import MODELS

    model = MODELS[payload["model"]](**dict(payload["params"], progress=False))
    if "state" in payload:
        state, training, n_data, n_features = payload["state"]
        model.load_state(state, n_data, n_features, training)
    kind, corpus = payload["corpus"]
    if kind == "sharded":
        from bpetopics.text.sharded import open_sharded

        corpus = open_sharded(corpus).counts
        corpus.values_checked = True                   # rank 0 has verified the checksums and values
    return model, corpus


def share_job(job, group: TorchGroup):
    """Rank 0 (holding ``job``, or None when preparing it failed) sends the job to the
    other ranks; they return ``(model, X)`` to train, or None when rank 0 has no job."""
    payload = broadcast(None if job is None else job_payload(job), group)
    if group.rank == 0 or payload is None:
        return None
    return model_from_payload(payload)


def follow_job(group: TorchGroup) -> bool:
    """A rank other than 0 in ``bpetopics train``: receive the job from rank 0
    (:func:`share_job`) and train its share, then, for a sharded corpus, encode its share
    of the rows while rank 0 saves the run; False when rank 0 had no job to send."""
    shared = share_job(None, group)
    if shared is None:
        return False
    model, X = shared
    distributed_fit(model, X, group)
    from bpetopics.bpe.batches import RowStore

    if isinstance(X, RowStore):     # rank 0 saves the run: the codes of every row, shared out
        from bpetopics.runs.sharded_codes import share_encoding

        share_encoding(model, X, group)
    return True
