"""The training job: start, checkpoint every epoch, resume, finish atomically.

What ``bpetopics train`` runs, as library functions a notebook can call::

    job = start_job("runs/20ng", params, corpus, corpus_info)   # writes runs/20ng.partial/
    run_job(job)                                                # a checkpoint after every epoch
    finish_job(job)                                             # runs/20ng, atomically

    job = resume_job("runs/20ng")       # after an interruption: the same model as if never stopped
    run_job(job); finish_job(job)

While training, ``RUN.partial/`` holds ``job.json`` (the model parameters and the corpus
record), ``corpus/`` (the training corpus, saved), ``checkpoint.safetensors`` (after
the first epoch) and ``train.lock`` (:mod:`bpetopics.runs.lock`: the process training it,
so that a second one stops at once and touches nothing). ``RUN`` itself is written only
by :func:`finish_job`. Every problem a user can fix is a one-line
:class:`~bpetopics.runs.folder.RunError`; a failed write (a full disk) is an OSError that
leaves the last checkpoint intact.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from bpetopics.bpe.batches import RowStore
from bpetopics.files import write_bytes_atomic
from bpetopics.runs.checkpoints import load_checkpoint, save_checkpoint
from bpetopics.runs.folder import CHECKPOINT_FILE, RunError, check_run_destination, partial_path, save_run
from bpetopics.runs.lock import RunLock, RunLockedError, lock_run

JOB_FILE = "job.json"
CORPUS_DIR = "corpus"
JOB_FORMAT = "bpetopics.train_job"


@dataclass
class TrainingJob:
    """A training in progress: the run folder it will write, its model and corpus,
    ``record`` (the content of ``job.json``: format, params, corpus), the lock held on
    ``RUN.partial`` and, for a resumed job, the torch thread count its checkpoint was
    trained with (CPU results repeat for the same count only)."""

    out: Path
    model: object
    corpus: object
    record: dict
    lock: RunLock | None = None
    saved_threads: int | None = None

    @property
    def partial(self) -> Path:
        """``RUN.partial/``, where the job lives until it finishes."""
        return partial_path(self.out)

    @property
    def checkpoint(self) -> Path:
        return self.partial / CHECKPOINT_FILE


def _model_class(name: str = "PoissBPE"):
    from bpetopics.models.registry import MODELS

    return MODELS[name]


def lock_job(out) -> RunLock:
    """Take the lock on ``RUN.partial`` (created if missing) for this process; RunError
    naming the process that holds it. Release it with ``.release()`` (or let
    :func:`finish_job` do it)."""
    try:
        return lock_run(partial_path(out))
    except (RunLockedError, OSError) as exc:
        raise RunError(str(exc)) from None


def check_job_destination(out, overwrite: bool = False, lock: RunLock | None = None) -> Path:
    """Check, before slow work, that a new job may train ``out``; returns ``RUN.partial``.

    RunError when ``out`` holds a finished run (unless ``overwrite``) or something else,
    or when ``RUN.partial`` is not a training job, or is one and ``overwrite`` is false.
    With ``lock`` (ours, on ``RUN.partial``) the lock file itself does not count.
    """
    check_run_destination(out, overwrite)
    partial = partial_path(out)
    held = lock.others() if lock is not None else (list(partial.iterdir()) if partial.is_dir() else [])
    if held or (partial.exists() and not partial.is_dir()):
        if not (partial / JOB_FILE).is_file():
            raise RunError(f"{partial} exists and is not an interrupted bpetopics training: move it away")
        if not overwrite:
            raise RunError(f"{partial} holds an interrupted training: pass --resume to continue it, "
                           "or --overwrite to start again")
    return partial


def start_job(out, params: dict, corpus, corpus_info: dict, *, overwrite: bool = False,
              model: str = "PoissBPE", lock: RunLock | None = None) -> TrainingJob:
    """Begin training a ``model`` (registry name) with ``params`` on ``corpus`` (a
    :class:`~bpetopics.text.Corpus`, its ``counts`` the training matrix, or a
    :class:`~bpetopics.text.sharded.ShardedCorpus`, read from disk as training goes and
    kept in ``RUN.partial/corpus/`` as a reference, not a copy).

    Takes the lock on ``RUN.partial`` (unless the caller holds it: ``lock``), then writes
    ``job.json`` and the corpus; ``corpus_info`` (JSON-safe, e.g.
    :func:`bpetopics.text.sources.corpus_record`) is recorded in the run's config. Refuses
    (RunError) a finished run at ``out``, an interrupted one unless ``overwrite``, and a
    ``RUN.partial`` another live process is training.
    """
    out = Path(out)
    check_run_destination(out, overwrite)
    if corpus.n_docs == 0:
        raise RunError(f"the corpus {corpus_info.get('source', '')} has no training document with a word of "
                       "its vocabulary")
    instance = _model_class(model)(**params)
    own = lock is None
    lock = lock_job(out) if own else lock
    try:
        partial = check_job_destination(out, overwrite, lock)
        lock.clear()  # an interrupted training replaced (overwrite): all but the lock
        record = {"format": JOB_FORMAT, "params": params, "corpus": corpus_info}
        if model != "PoissBPE":
            record["model"] = model
        write_bytes_atomic(partial / JOB_FILE, (json.dumps(record, indent=1) + "\n").encode("utf-8"))
        corpus.save(partial / CORPUS_DIR)
    except BaseException:
        if own:
            lock.release()
        raise
    return TrainingJob(out, instance, corpus, record, lock)


def read_job(out) -> dict:
    """The ``job.json`` of the interrupted training of ``out`` (RunError when there is none)."""
    partial = partial_path(out)
    try:
        job = json.loads((partial / JOB_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"nothing to resume: {partial} holds no interrupted training (train without --resume)") from None
    except (ValueError, UnicodeDecodeError):
        raise RunError(f"{partial / JOB_FILE} is corrupted: start again with --overwrite") from None
    if not isinstance(job, dict) or job.get("format") != JOB_FORMAT or "params" not in job:
        raise RunError(f"{partial / JOB_FILE} is not a bpetopics training job: start again with --overwrite")
    return job


def resume_job(out, *, device: str | None = None, record: dict | None = None,
               lock: RunLock | None = None) -> TrainingJob:
    """The interrupted training of ``out``, from its last checkpoint (or from the start
    when no epoch had finished). ``device`` replaces the recorded one; ``record`` is
    ``read_job(out)`` when the caller has read (and perhaps checked) it already; ``lock``
    is the caller's lock on ``RUN.partial`` (taken here when None)."""
    from bpetopics.text import Corpus, CorpusError
    from bpetopics.text.sharded import load_reference

    out = Path(out)
    own = lock is None
    lock = lock_job(out) if own else lock
    try:
        record = read_job(out) if record is None else record
        if "data" in record:
            raise RunError(f"{partial_path(out)} holds an image training: resume it with "
                           f"`bpetopics images train ... --out {out} --resume`")
        if device is not None:
            record["params"]["device"] = device
        partial = partial_path(out)
        try:
            # a sharded corpus is kept as a reference to its folder, not copied
            corpus = load_reference(partial / CORPUS_DIR) or Corpus.load(partial / CORPUS_DIR)
        except CorpusError as exc:
            raise RunError(f"{exc} (start again with --overwrite)") from None
        checkpoint = partial / CHECKPOINT_FILE
        saved_threads = None
        if checkpoint.is_file():
            try:
                model, extra = load_checkpoint(checkpoint, device=record["params"]["device"])
            except RunError as exc:
                raise RunError(f"{exc} (start again with --overwrite)") from None
            saved_threads = extra.get("torch_threads") if isinstance(extra, dict) else None
        else:
            model = _model_class(record.get("model", "PoissBPE"))(**record["params"])
    except BaseException:
        if own:
            lock.release()
        raise
    return TrainingJob(out, model, corpus, record, lock, saved_threads)


def checkpoint_epoch(job: TrainingJob) -> int | None:
    """The epoch of the job's last checkpoint (None when no epoch had finished); RunError
    when the checkpoint is unusable."""
    if not job.checkpoint.is_file():
        return None
    return load_checkpoint(job.checkpoint, device="cpu")[0].epoch_


def checkpoint_progress(out) -> tuple[int, int] | None:
    """(e, E): the interrupted training of ``out`` holds a checkpoint after epoch e of
    the E it runs; None when no epoch had finished. RunError when it is unusable."""
    checkpoint = partial_path(out) / CHECKPOINT_FILE
    if not checkpoint.is_file():
        return None
    model = load_checkpoint(checkpoint, device="cpu")[0]
    return model.epoch_, model.total_epochs()


def interrupted_note(out) -> str:
    """Where the interrupted training of ``out`` stands, in words: "the checkpoint after
    epoch e of E is kept in RUN.partial", "no epoch had finished", or why the checkpoint
    is unusable."""
    try:
        progress = checkpoint_progress(out)
    except RunError as exc:
        return f"the checkpoint is unusable ({exc})"
    if progress is None:
        return "no epoch had finished"
    return f"the checkpoint after epoch {progress[0]} of {progress[1]} is kept in {partial_path(out)}"


def run_job(job: TrainingJob, after_epoch=None, X=None, progress=None):
    """Train (or continue) ``job.model`` on ``X`` (default: the job's corpus counts; an
    image job passes its images), saving a checkpoint after every epoch, then calling
    ``after_epoch(model, info)``. Returns the fitted model. ``progress`` (True/False)
    shows or hides the model's own progress bar while it trains; the checkpoints and the
    run record the model's ``progress`` parameter as it was.

    An interruption (e.g. KeyboardInterrupt) leaves the last checkpoint, from which
    :func:`resume_job` continues with the same result as an uninterrupted run (for the
    same torch thread count on CPU, which the checkpoint records). A failed checkpoint
    write (OSError, e.g. a full disk) leaves the previous checkpoint intact.
    """
    import torch

    model = job.model
    recorded = model.progress
    shown = recorded if progress is None else bool(progress)

    def callback(m, info):
        m.progress = recorded
        try:
            save_checkpoint(job.checkpoint, m, extra={"torch_threads": torch.get_num_threads()})
        finally:
            m.progress = shown
        if after_epoch is not None:
            after_epoch(m, info)

    X = job.corpus.counts if X is None else X
    # rows on disk: no dense codes_ at the end; save_run writes them shard by shard
    encode = {"encode": False} if isinstance(X, RowStore) else {}
    model.callback, model.progress = callback, shown
    try:
        if hasattr(model, "decoder_") or hasattr(model, "net_"):  # loaded from a checkpoint
            model.continue_fit(X, **encode)
        else:
            model.fit(X, **encode)
    finally:
        model.callback, model.progress = None, recorded
    return model


def finish_job(job: TrainingJob, *, overwrite: bool = False, group=None) -> Path:
    """Write the run folder ``job.out`` (atomically), remove ``RUN.partial/`` and release
    the job's lock. On an OSError (a full disk) the run's temporary folder is removed and
    ``RUN.partial/`` with its last checkpoint is kept (the lock is released). ``group``:
    a data-parallel job's processes, which share a sharded corpus's encoding
    (:func:`~bpetopics.runs.folder.save_run`)."""
    return finish_with(job, lambda: save_run(job.out, job.model, job.corpus, corpus_info=job.record["corpus"],
                                             overwrite=overwrite, group=group))


def finish_with(job: TrainingJob, save) -> Path:
    """Finish ``job`` with ``save()`` (which writes ``job.out`` atomically): release the
    lock whatever happens, and remove ``RUN.partial/`` only when ``save`` succeeded."""
    try:
        save()
    finally:
        release_job(job)
    shutil.rmtree(job.partial, ignore_errors=True)
    return job.out


def release_job(job: TrainingJob) -> None:
    """Give back the job's lock on ``RUN.partial`` (nothing else is touched)."""
    if job.lock is not None:
        job.lock.release()


def train_run(out, params: dict, corpus, corpus_info: dict, *, overwrite: bool = False, after_epoch=None) -> Path:
    """Start, run and finish a training job in one call; returns the run folder."""
    job = start_job(out, params, corpus, corpus_info, overwrite=overwrite)
    try:
        run_job(job, after_epoch)
    except BaseException:
        release_job(job)
        raise
    return finish_job(job, overwrite=overwrite)
