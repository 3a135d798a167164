"""The training job for image runs: :mod:`bpetopics.runs.job` with images instead of a corpus.

What ``bpetopics images train`` runs::

    data = load_images("mnist", data_root, limit=500)
    job = start_image_job("runs/mnist", "GaussBPE", params, data)   # RUN.partial/job.json
    run_image_job(job)             # checkpoint.safetensors after every epoch
    finish_image_job(job)          # RUN (an image run, bpetopics.runs.image_folder), atomically

    job = resume_image_job("runs/mnist")   # same model as if never stopped

``RUN.partial/`` holds ``job.json`` (model, params, the images' record: source, data
root, split, limit, seed, sha256), the lock and the last checkpoint; the images are not
copied: resuming reads them again from the record and refuses (one line) when they
changed. The lock, the refusals and the checkpoint format are those of text jobs.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

from bpetopics.files import write_bytes_atomic
from bpetopics.bpe.sizes import SizeError
from bpetopics.runs.checkpoints import load_checkpoint
from bpetopics.runs.folder import RunError, check_run_destination, partial_path
from bpetopics.runs.image_folder import save_image_run
from bpetopics.runs.job import (JOB_FILE, JOB_FORMAT, TrainingJob, check_job_destination, lock_job, read_job,
                                finish_with, release_job, run_job)

#: Models whose likelihood needs pixel values in [0, 1].
BERNOULLI_MODELS = ("BernBPE", "GumbelSoftmaxVAE")


def image_model(model: str, params: dict, data, label=str):
    """An unfitted registry ``model`` with ``params``, checked against the images ``data``
    (RunError, one line, for a parameter or data it cannot train on, naming parameters
    as ``label(name)``), sizes included, before anything is allocated."""
    from bpetopics.models.registry import MODELS

    from bpetopics.bpe.device import resolve_device

    if model not in MODELS:
        raise RunError(f"unknown image model {model!r}")
    try:
        resolve_device(params.get("device", "auto"))
    except ValueError as exc:
        raise RunError(str(exc)) from None
    if model in BERNOULLI_MODELS and data.X.size and (data.X.min() < 0 or data.X.max() > 1):
        raise RunError(f"{model} needs pixel values in [0, 1] but {data.source} has values in "
                       f"[{data.X.min():.3g}, {data.X.max():.3g}]: use a Gaussian model (gaussbpe, vae)")
    instance = check_image_params(model, params, label, n_data=len(data.X))
    if hasattr(instance, "check_sizes"):
        try:
            instance.check_sizes(*data.X.shape)
        except SizeError as exc:
            raise RunError(_refusal(model, str(exc.labelled(label)), label)) from None
    return instance


def _refusal(model: str, message: str, label) -> str:
    return message if label is not str else f"cannot train {model}: {message}"


def check_image_params(model: str, params: dict, label=str, n_data: int = 1):
    """The unfitted registry ``model`` with ``params``, checked, before any image is read
    or anything allocated, against what it refuses whatever the images (for the BPE
    models: their rules and sizes, :meth:`bpetopics.bpe.model.BPEBase.validate`, for
    at least ``n_data`` images); RunError, one line, naming parameters as ``label(name)``."""
    from bpetopics.models.registry import MODELS

    try:
        instance = MODELS[model](**params)
        if hasattr(instance, "validate"):
            instance.validate(n_data, label=label)
    except (TypeError, ValueError) as exc:
        raise RunError(_refusal(model, str(exc).splitlines()[0], label)) from None
    return instance


def start_image_job(out, model: str, params: dict, data, *, overwrite: bool = False, label=str) -> TrainingJob:
    """Begin training ``model`` (registry name) with ``params`` on the images ``data``
    (:class:`bpetopics.images.sources.ImageData`). Refuses (RunError) as
    :func:`bpetopics.runs.job.start_job` does, naming parameters as ``label(name)``."""
    out = Path(out)
    check_run_destination(out, overwrite)
    if len(data.X) == 0:
        raise RunError(f"{data.source} holds no image to train on")
    instance = image_model(model, params, data, label)
    lock = lock_job(out)
    try:
        partial = check_job_destination(out, overwrite, lock)
        lock.clear()
        record = {"format": JOB_FORMAT, "model": model, "params": params, "data": data.record()}
        write_bytes_atomic(partial / JOB_FILE, (json.dumps(record, indent=1) + "\n").encode("utf-8"))
    except BaseException:
        lock.release()
        raise
    return TrainingJob(out, instance, data, record, lock)


def resume_image_job(out, *, device: str | None = None) -> TrainingJob:
    """The interrupted image training of ``out``, from its last checkpoint; ``device``
    replaces the recorded one. RunError when there is none, it is a text training, or
    its images changed."""
    from bpetopics.images.sources import ImageSourceError, load_recorded
    from bpetopics.models.registry import MODELS

    out = Path(out)
    lock = lock_job(out)
    try:
        record = read_job(out)
        if not isinstance(record.get("data"), dict) or record.get("model") not in MODELS:
            raise RunError(f"{partial_path(out)} holds a text training: resume it with `bpetopics train --resume`")
        if device is not None:
            record["params"]["device"] = device
        try:
            data = load_recorded(record["data"])
        except ImageSourceError as exc:
            raise RunError(f"cannot read the images to resume {out}: {exc}") from None
        if data.fingerprint() != record["data"].get("sha256"):
            raise RunError(f"the images of {record['data']['source']} changed since the training of {out} started: "
                           "start again with --overwrite")
        checkpoint = partial_path(out) / "checkpoint.safetensors"
        if checkpoint.is_file():
            try:
                model, _ = load_checkpoint(checkpoint, device=record["params"].get("device"))
            except RunError as exc:
                raise RunError(f"{exc} (start again with --overwrite)") from None
        else:
            model = image_model(record["model"], record["params"], data)
    except BaseException:
        lock.release()
        raise
    return TrainingJob(out, model, data, record, lock)


def run_image_job(job: TrainingJob, after_epoch=None, progress=None):
    """Train (or continue) ``job.model`` on the job's images, a checkpoint after every
    epoch, then ``after_epoch(model, info)``; ``progress`` shows the model's bar over
    minibatches (:func:`bpetopics.runs.job.run_job`). Returns the fitted model.

    On CPU, torch runs on as many threads as a step's work keeps busy
    (:func:`training_threads`): a few images on one thread, full minibatches on all."""
    from bpetopics.bpe.device import resolve_device
    from bpetopics.bpe.threads import torch_threads

    device = resolve_device(job.record["params"].get("device", "auto"))
    with torch_threads(training_threads(job.record["model"], job.record["params"], job.corpus.X.shape),
                       device):
        return run_job(job, after_epoch, X=job.corpus.X, progress=progress)


def training_threads(model: str, params: dict, shape) -> int:
    """Torch threads for training registry ``model`` with ``params`` on images of
    ``shape`` (N, D): the decoder's multiply-adds for a minibatch, forward and backward
    (about three times the forward's; the BPE pursuit's more), through
    :func:`bpetopics.bpe.threads.torch_threads_for`."""
    from bpetopics.bpe.threads import torch_threads_for
    from bpetopics.models.registry import MODELS

    defaults = {k: v.default for k, v in inspect.signature(MODELS[model].__init__).parameters.items()}
    value = {**defaults, **params}.get
    hidden = value("hidden", value("decoder_hidden", ())) or ()
    code = int(value(CODE_SIZE_PARAM.get(model, "n_bits"), 0) or 0) * (int(value("n_categories", 1) or 1))
    layers = [code, *map(int, hidden), int(shape[1])]
    per_image = sum(a * b for a, b in zip(layers, layers[1:]))
    batch = min(int(value("batch_size", 128) or 128), max(1, int(shape[0])))
    return torch_threads_for(3 * batch * per_image)


def finish_image_job(job: TrainingJob, *, overwrite: bool = False) -> Path:
    """Write the image run ``job.out`` atomically, remove ``RUN.partial/``, release the lock."""
    # a BPE fit ends with the training images' codes (codes_): not a second pursuit
    codes = getattr(job.model, "codes_", None)
    return finish_with(job, lambda: save_image_run(job.out, job.model, job.corpus, codes=codes,
                                                   overwrite=overwrite))


def train_image_run(out, model: str, params: dict, data, *, overwrite: bool = False, resume: bool = False,
                    device: str | None = None, after_epoch=None, progress=None, label=str) -> Path:
    """Start (or, with ``resume``, continue) an image training, run it and finish it;
    ``label`` names parameters in a refusal (the command line: its options)."""
    job = (resume_image_job(out, device=device) if resume
           else start_image_job(out, model, params, data, overwrite=overwrite, label=label))
    try:
        run_image_job(job, after_epoch, progress)
    except BaseException:
        release_job(job)
        raise
    return finish_image_job(job, overwrite=overwrite)


#: The parameter ``--bits`` sets for each image model: the length of the code.
CODE_SIZE_PARAM = {"GaussBPE": "n_bits", "BernBPE": "n_bits", "GaussianVAE": "n_latent",
                   "GumbelSoftmaxVAE": "n_variables"}


def image_params(model: str, *, bits=None, epochs=None, seed: int = 0, device: str = "auto", batch_size=None,
                 lr=None, hidden=None, shortlist=None, exact_stop=None, fast_stop_epochs=None,
                 sigma=None) -> dict:
    """The parameters of an image ``model`` (registry name) for ``bpetopics images
    train``: the class defaults, with the code size (BPE: bits K; Gaussian VAE: latents;
    Gumbel-Softmax VAE: categorical variables of 10 classes), epochs, batch size,
    learning rate, decoder hidden sizes (``hidden``) and the BPE pursuit's ``shortlist`` (0:
    every bit), ``exact_stop``, ``fast_stop_epochs`` (a number or 'all') and GaussBPE's ``sigma``
    replaced where given, and the seed and device; a BPE model's default gamma resolved
    for its code length (the model's ``default_gamma``: 10, or K/4 for codes of at most 10
    bits), so that the run records it. RunError (one line) for a device that is not there."""
    import inspect

    from bpetopics.bpe.device import resolve_device
    from bpetopics.models.registry import MODELS

    try:
        resolve_device(device)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    signature = inspect.signature(MODELS[model].__init__).parameters
    params = {k: p.default for k, p in signature.items() if k not in ("self", "callback")}
    params = {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
    given = {CODE_SIZE_PARAM[model]: bits, "epochs": epochs, "batch_size": batch_size, "lr": lr,
             "hidden" if "hidden" in params else "decoder_hidden": list(hidden) if hidden is not None else None,
             "exact_stop": exact_stop, "sigma": sigma}
    params.update({k: v for k, v in given.items() if v is not None})
    if fast_stop_epochs is not None:        # 'all': every training epoch (the model's None)
        params["fast_stop_epochs"] = None if fast_stop_epochs == "all" else int(fast_stop_epochs)
    if shortlist is not None:               # 0: every bit, the exact greedy pursuit
        params["shortlist"] = int(shortlist) or None
    if "gamma" in params and params["gamma"] is None and hasattr(MODELS[model], "default_gamma"):
        params["gamma"] = MODELS[model].default_gamma(params[CODE_SIZE_PARAM[model]])
    params.update(random_state=int(seed), device=device, progress=False)
    return params
