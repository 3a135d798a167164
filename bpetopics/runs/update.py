"""Updating a run: train a finished text run further on new documents, on its vocabulary.

What ``bpetopics update RUN DOCUMENTS --out RUN2`` runs, as library functions::

    job = start_update("runs/20ng", "new_docs/", "runs/20ng-2", epochs=2)   # RUN2.partial/
    run_job(job.training)                 # bpetopics.runs.job: a checkpoint after every epoch
    path, movement = finish_update(job)   # RUN2, atomically; the per-topic cosines

    job = resume_update("runs/20ng-2")    # after an interruption

The new documents are counted with the run's own pipeline and vocabulary
(:func:`~bpetopics.text.prepare.corpus_on_vocabulary`): words outside it are dropped and
counted, documents without a word of it are left out and reported (``dropped``). The
model goes on from the run's weights for ``epochs`` more epochs over the new documents
(as :meth:`~bpetopics.bpe.model.BPEBase.partial_fit` does, one epoch a pass), with the
prior's N the new documents' number; the update keeps the topics' identities: no topic
is restarted, split or grown (``reseed_similarity=None``, ``split_moves=False``), so
topic t of RUN2 is topic t of RUN and :func:`topic_movement` compares them. The
learning-rate schedule runs on as if the run had been trained for its epochs plus these
(the last ones in the cooldown, at a fifth of ``lr``); Adam starts afresh (a run folder
keeps no optimiser state).

The job is a :class:`~bpetopics.runs.job.TrainingJob` (``RUN2.partial/``, its lock,
checkpoints and atomic finish); ``job.json``'s corpus record holds ``update`` (the run it
started from, its epochs and the new ones), which the new run's ``config.json`` keeps
under ``corpus.update`` with the topics' movement. RUN itself is never written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bpetopics.runs.folder import RunError, load_run, save_run
from bpetopics.runs.job import TrainingJob, finish_with, read_job, resume_job, start_job

__all__ = ["UpdateJob", "new_documents", "topic_movement", "start_update", "resume_update", "finish_update",
           "UPDATE_KEY"]

#: The key of ``config.json``'s ``corpus`` record (and of ``job.json``'s) that says a run
#: was updated from another.
UPDATE_KEY = "update"


@dataclass
class UpdateJob:
    """An update in progress: the training job and the topics of the run it started
    from (T, W), against which :func:`finish_update` measures how far they moved."""

    training: TrainingJob
    old_topics: np.ndarray

    @property
    def out(self) -> Path:
        return self.training.out


def new_documents(run, source, fields: dict | None = None):
    """The documents of ``source`` (a folder of texts, a .jsonl or .csv file, a named
    corpus: :func:`~bpetopics.text.load_source`; its train split) counted with ``run``'s
    pipeline and vocabulary, split into passages as the run's documents were
    (:func:`run_passages`).

    Returns (Corpus, dropped tokens): the tokens, after cleaning, outside the
    vocabulary. The documents without a word of it are in the corpus's ``dropped``.
    Raises CorpusError (one line) for a source that cannot be read, RunError for a run
    without its text pipeline or a source of which no document has a word of the
    vocabulary.
    """
    from bpetopics.text import load_source
    from bpetopics.text.prepare import corpus_on_vocabulary
    from bpetopics.text.sources import SAVED, SHARDED, source_kind

    if run.pipeline is None:
        raise RunError(f"{run.path} records no text pipeline (trained on counts alone): its new documents "
                       "cannot be counted the same way")
    if source_kind(source) in (SAVED, SHARDED):
        raise RunError(f"{source} is a saved corpus, counted on its own vocabulary: give the raw documents "
                       "(a folder of texts, a .jsonl or .csv file)")
    docs = load_source(source, fields=fields)["train"]
    corpus, dropped_tokens = corpus_on_vocabulary(docs, run.pipeline, run_passages(run))
    if corpus.n_docs == 0:
        raise RunError(f"none of the {len(docs):,} documents of {source} has a word of the run's vocabulary")
    return corpus, dropped_tokens


def run_passages(run) -> str | None:
    """The passages (``"paragraphs"``, ``"sentences"``) a run's documents were split into,
    as its config.json records them (``corpus.settings.passages``); None for whole
    documents."""
    return ((run.config.get("corpus") or {}).get("settings") or {}).get("passages")


def topic_movement(old_topics: np.ndarray, new_topics: np.ndarray) -> np.ndarray:
    """Each topic's cosine similarity between its old and new word distributions (rows
    of two (T, W) ``topic_word_``): 1 for a topic that did not move, shape (T,)."""
    old = np.asarray(old_topics, dtype=np.float64)
    new = np.asarray(new_topics, dtype=np.float64)
    if old.shape != new.shape:
        raise ValueError(f"the topics have shapes {old.shape} and {new.shape}: compare the same topics")
    norms = np.linalg.norm(old, axis=1) * np.linalg.norm(new, axis=1)
    return (old * new).sum(1) / np.maximum(norms, 1e-300)


def _prepared(model, n_docs: int, epochs: int):
    """The run's model set to train ``epochs`` more epochs on ``n_docs`` new documents
    (module docstring)."""
    model.set_params(epochs=int(model.epoch_) + int(epochs), reseed_similarity=None, split_moves=False,
                     progress=False)
    model.n_data_ = int(n_docs)
    model.prior_.n_data = model.n_data_
    model.n_tokens_ = None                  # the new corpus's tokens, counted when training starts
    vars(model).pop("codes_", None)        # the run's documents' codes: not these documents'
    return model


def _load_text_run(path, device):
    run = load_run(path, device=device)
    if run.is_image_run:
        raise RunError(f"{path} is an image run ({run.config['model']}): update reads text runs")
    if not hasattr(run.model, "topic_word_"):
        raise RunError(f"{path} holds a {run.config['model']}, which cannot be updated")
    if getattr(run.model, "topic_groups_", None) is not None:
        raise RunError(f"{path} has merged topics: update the run it was merged from, then merge again")
    return run


def start_update(run_path, source, out, *, epochs: int = 1, overwrite: bool = False, fields: dict | None = None,
                 device: str | None = None, lock=None):
    """Begin updating the run ``run_path`` on the documents of ``source``, writing ``out``.

    Returns (UpdateJob, corpus, dropped tokens) (:func:`new_documents`). Refuses
    (RunError) ``out`` being the run itself, a finished run at ``out`` (unless
    ``overwrite``), an unusable run or source. ``device`` replaces the run's; ``lock`` as
    for :func:`~bpetopics.runs.job.start_job`."""
    if int(epochs) < 1:
        raise ValueError(f"epochs must be at least 1, not {epochs}")
    if Path(out).resolve() == Path(run_path).resolve():
        raise RunError(f"--out {out} is the run being updated: write the update to another folder")
    run = _load_text_run(run_path, device)
    corpus, dropped_tokens = new_documents(run, source, fields)
    old_topics = run.model.topic_word_
    model = _prepared(run.model, corpus.n_docs, epochs)
    record = corpus_record_of(source, fields, corpus, run_passages(run))
    record[UPDATE_KEY] = {"from": str(Path(run_path).resolve()), "from_epoch": int(model.epoch_),
                          "epochs": int(epochs), "dropped_tokens": dropped_tokens}
    job = start_job(out, model.config_params(), corpus, record, overwrite=overwrite, lock=lock)
    job.model = model
    return UpdateJob(job, old_topics), corpus, dropped_tokens


def corpus_record_of(source, fields, corpus, passages: str | None = None) -> dict:
    """What the updated run records about its corpus: the source and its reading
    settings (:func:`~bpetopics.text.sources.corpus_record`; the vocabulary is the
    run's, not refitted), and the passages its documents were split into, if any."""
    from bpetopics.text.sources import corpus_record

    settings = dict(fields or {})
    if passages is not None:
        settings["passages"] = passages
    return corpus_record(source, settings, {"train": corpus})


def resume_update(out, *, device: str | None = None, lock=None) -> UpdateJob:
    """The interrupted update writing ``out``, from its last checkpoint (from the run it
    started from, reloaded, when no epoch had finished). RunError when ``out.partial``
    holds no update, or the run it started from is gone."""
    record = read_job(out)
    update = (record.get("corpus") or {}).get(UPDATE_KEY)
    if not isinstance(update, dict) or "from" not in update:
        raise RunError(f"{out}.partial holds a training, not an update: resume it with "
                       f"`bpetopics train --out {out} --resume`")
    try:
        old = _load_text_run(update["from"], device)
    except RunError as exc:
        raise RunError(f"the update of {out} started from {update['from']}, which cannot be read ({exc})") from None
    job = resume_job(out, device=device, record=record, lock=lock)
    if not job.checkpoint.is_file():
        job.model = _prepared(old.model, job.corpus.n_docs, update["epochs"])
        return UpdateJob(job, old.model.topic_word_)
    return UpdateJob(job, old.model.topic_word_)


def finish_update(job: UpdateJob, *, overwrite: bool = False) -> tuple[Path, np.ndarray]:
    """Write the updated run ``job.out`` (atomically), with the topics' movement
    (:func:`topic_movement`) recorded in its ``config.json`` under
    ``corpus.update.topic_cosine`` (and their mean, ``mean_topic_cosine``); release the
    lock. Returns (path, the per-topic cosines)."""
    training = job.training
    movement = topic_movement(job.old_topics, training.model.topic_word_)
    info = dict(training.record["corpus"])
    info[UPDATE_KEY] = dict(info[UPDATE_KEY], topic_cosine=[round(float(c), 6) for c in movement],
                            mean_topic_cosine=float(movement.mean()))
    path = finish_with(training, lambda: save_run(training.out, training.model, training.corpus, corpus_info=info,
                                                  overwrite=overwrite))
    return path, movement
