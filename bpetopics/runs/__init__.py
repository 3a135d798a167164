"""Training runs on disk and the training job.

:mod:`~bpetopics.runs.folder` (the run folder: :func:`save_run`, :func:`load_run`,
:class:`Run`), :mod:`~bpetopics.runs.checkpoints` (one safetensors file per checkpoint),
:mod:`~bpetopics.runs.job` (start, checkpoint every epoch, resume, finish atomically:
what ``bpetopics train`` runs, callable from a notebook); image runs (GaussBPE, BernBPE,
the VAE baselines) in ``image_folder``, ``image_job``, ``image_codes``, ``image_explore``;
training across processes in ``distributed`` (torch.distributed: each rank's share of
every minibatch, the step's sums; ``shared_memory_sum`` carries them between the
processes of one machine) and ``launch`` (``--nproc``); a run's topic labels in ``labels``
(:func:`topic_labels`), search by query and by document in ``search``.
"""

import importlib

# Imported on first use (saving and loading need torch and safetensors; the command line
# must start without them).
_EXPORTS = {
    "load_checkpoint": "checkpoints", "save_checkpoint": "checkpoints",
    "CHECKPOINT_FILE": "folder", "Run": "loaded_run", "RunError": "run", "check_run_destination": "run",
    "is_run": "run", "library_versions": "saved_model", "load_run": "folder", "partial_path": "run",
    "save_run": "folder",
    "TrainingJob": "job", "start_job": "job", "resume_job": "job", "run_job": "job", "finish_job": "job",
    "train_run": "job",
    "run_splits": "corpus", "run_train_counts": "corpus",
    "save_image_run": "image_folder", "train_image_run": "image_job", "image_params": "image_job",
    "encode_images": "image_codes", "show_run": "image_explore", "encode_run_images": "image_explore",
    "topic_labels": "labels", "set_topic_labels": "labels", "relabel_topics": "labels",
    "CodeIndex": "search", "find_topics": "search", "similar_documents": "search",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"bpetopics.runs.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'bpetopics.runs' has no attribute {name!r}")
