"""Image runs: the run folder of :mod:`bpetopics.runs.folder`, with images instead of text.

An image run (GaussBPE, BernBPE, GaussianVAE or GumbelSoftmaxVAE; written by
:func:`save_image_run` or ``bpetopics images train``) holds::

    config.json        format "bpetopics.run", format_version 1, model (registry name),
                       params, seed, n_data, n_features, training (epoch, step, history,
                       torch_threads), versions, and "data" instead of "corpus": the
                       image source (data set name or folder), data root, split, limit,
                       seed, n_images, image_shape, value range, sha256 of the images
    model.safetensors  model.state_dict() (BPE: decoder.*, likelihood.*, prior.*;
                       VAEs: net.*, fitted.*)
    codes.npz          codes (N x K) of the training images (uint8, or float32 posterior
                       means for the Gaussian VAE) and their labels when known
    history.csv        one row per epoch, the model's history keys as columns
    summary.json       images, image shape, code size, bits used, mean active bits,
                       final objective / loss, training seconds

:func:`bpetopics.runs.folder.load_run` reads both kinds; for an image run ``run.data``
is the "data" record and ``run.codes()`` the training codes. Nothing is pickled.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.torch import save as safetensors_bytes

from bpetopics.bpe.machine import describe_machine
from bpetopics.files import canonical_safetensors, staging_folder
from bpetopics.runs.loaded_run import Run, read_codes
from bpetopics.runs.run import (CODES_FILE, CONFIG_FILE, FORMAT, FORMAT_VERSION, HISTORY_FILE, SUMMARY_FILE,
                                WEIGHTS_FILE, RunError, check_run_destination, csv_bytes, json_bytes, read_json)
from bpetopics.runs.saved_model import build_model, library_versions, load_tensors, torch_threads


def save_image_run(out, model, data, *, codes=None, overwrite: bool = False) -> Path:
    """Write a fitted image ``model`` and the record of its training images ``data``
    (:class:`bpetopics.images.sources.ImageData`) to the run folder ``out``, atomically.

    ``codes`` are the training images' codes (computed with
    :func:`bpetopics.runs.image_codes.encode_images` when None). Returns ``out``;
    RunError when ``out`` may not be written.
    """
    from bpetopics.runs.image_codes import encode_images

    out = check_run_destination(out, overwrite)
    codes = encode_images(model, data.X) if codes is None else np.asarray(codes)
    history = [dict(h) for h in model.history_]
    config = {"format": FORMAT, "format_version": FORMAT_VERSION, "model": type(model).__name__,
              "params": model.config_params(), "seed": model.random_state, "n_data": int(model.n_data_),
              "n_features": int(model.n_features_), "data": data.record(), "versions": library_versions(),
              "machine": describe_machine(),
              "training": {"epoch": int(model.epoch_), "step": int(getattr(model, "step_", getattr(model, "n_steps_", 0))),
                           "history": history, "torch_threads": torch_threads()}}
    last = history[-1] if history else {}
    summary = {"images": int(codes.shape[0]), "image_shape": list(data.shape), "code_size": int(codes.shape[1]),
               "code_dtype": str(codes.dtype), "epochs": int(model.epoch_),
               "final_objective": last.get("objective", last.get("loss")),
               "mean_active_bits": float((codes != 0).sum(1).mean()) if codes.size else 0.0,
               "bits_used": int(((codes != 0).sum(0) > 0).sum()),
               "train_seconds": float(sum(h.get("seconds", 0.0) for h in history))}
    columns = list(dict.fromkeys(k for h in history for k in h))
    arrays = {"codes": codes}
    if data.labels is not None:
        arrays["labels"] = np.asarray(data.labels, dtype=np.int64)
    with staging_folder(out) as tmp:
        state = {k: v.detach().cpu().contiguous().clone() for k, v in model.state_dict().items()}
        (tmp / WEIGHTS_FILE).write_bytes(canonical_safetensors(safetensors_bytes(
            state, metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION)})))
        np.savez_compressed(tmp / CODES_FILE, **arrays)
        (tmp / HISTORY_FILE).write_bytes(csv_bytes(columns, ([h.get(c) for c in columns] for h in history)))
        (tmp / SUMMARY_FILE).write_bytes(json_bytes(summary))
        (tmp / CONFIG_FILE).write_bytes(json_bytes(config))
    return out


def image_run_summary(path) -> str:
    """One line on the finished image run at ``path`` from its summary.json: images, epochs,
    the final objective (BPE) or loss (VAEs), and the codes (binary: mean bits on an image,
    bits used; a Gaussian VAE's means: the latents)."""
    done = read_json(Path(path) / SUMMARY_FILE)
    model = read_json(Path(path) / CONFIG_FILE).get("model", "")
    codes = (f"{done['mean_active_bits']:.2f} of {done['code_size']} bits on an image, {done['bits_used']} used"
             if done["code_dtype"] == "uint8" else f"{done['code_size']} latents")
    final = done.get("final_objective")
    kind = "loss" if model.endswith("VAE") else "objective"
    epochs = done["epochs"]
    return (f"{done['images']:,} images, {epochs} epoch{'s' if epochs != 1 else ''}"
            + (f", final {kind} {final:.4g}" if final is not None else "") + f"; {codes}")


def check_image_config(path: Path, config: dict) -> dict:
    """The "data" record of an image run's config, checked (RunError, one line)."""
    data = config.get("data")
    shape = data.get("image_shape") if isinstance(data, dict) else None
    if not isinstance(data, dict) or "source" not in data or not isinstance(shape, list) or not shape:
        raise RunError(f"{path / CONFIG_FILE} holds no usable image data record: train the run again")
    if int(np.prod(shape)) != config["n_features"]:
        raise RunError(f"{path / CONFIG_FILE} says images of shape {shape} but n_features={config['n_features']}")
    return data


def load_image_run(path: Path, config: dict, device) -> Run:
    """An image run, for :func:`bpetopics.runs.folder.load_run` (which has read and checked
    ``config``): the model, its training codes as ``model.codes_``, the data record."""
    data = check_image_config(path, config)
    state, _ = load_tensors(path / WEIGHTS_FILE, str(path))
    model = build_model(config["model"], config["params"], state, config["n_data"], config["n_features"],
                         config.get("training"), device, str(path))
    model.codes_, _ = read_codes(path, config["n_data"])
    summary = read_json(path / SUMMARY_FILE) if (path / SUMMARY_FILE).is_file() else {}
    return Run(model=model, pipeline=None, vocabulary=[], config=config, path=path, summary=summary, data=data)
