"""Table 1 in pieces: every model of the table is an image run under the table's folder.

::

    OUT/table.json                   what the table was started with (budget, data sets, seed)
    OUT/runs/<data set>-<model>/     an image run (bpetopics.runs.image_folder), trained by
                                     the image job: RUN.partial/ with a checkpoint after
                                     every epoch while it trains
    OUT/runs/<data set>-<model>.json its Table 1 row, history and the grid's reconstructions

A table stopped anywhere (Ctrl-C, a GPU's time running out) continues with
``resume=True``: finished models are read back (their .json, or the run when the .json is
missing), an interrupted model continues from its last checkpoint (the same model as if
never stopped, :mod:`bpetopics.runs.image_job`), and the others start.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np

from bpetopics.experiments.image_table_report import hardware
from bpetopics.experiments.image_table_setup import DATASETS, VAE_FIXED, VAE_LEARNED
from bpetopics.files import write_text_atomic
from bpetopics.runs.folder import RunError, partial_path

TABLE_FILE = "table.json"
RUNS = "runs"
TABLE_FORMAT = "bpetopics.table1"


def table_models(kind, budget, seed, device):
    """[(row name, file slug, registry model, params)] of one data set's kind."""
    from bpetopics.runs.image_job import image_params

    def params(model, bits=None, epochs=None, batch_size=None, lr=None, fast_stop_epochs=None, **extra):
        p = image_params(model, bits=bits, epochs=epochs, seed=seed, device=device, batch_size=batch_size,
                         lr=lr, fast_stop_epochs=fast_stop_epochs)
        return {**p, **extra}

    bpe = dict(bits=budget.n_bits, epochs=budget.bpe_epochs, batch_size=budget.bpe_batch_size,
               lr=budget.bpe_lr, shortlist=budget.shortlist, fast_stop_epochs=budget.fast_stop_epochs)
    if kind == "gauss":
        gauss = {**bpe, "bits": budget.gauss_n_bits or budget.n_bits}
        return [("GaussBPE", "gaussbpe", "GaussBPE", params("GaussBPE", **gauss, sigma=budget.sigma)),
                (VAE_FIXED, "vae-fixed", "GaussianVAE",
                 params("GaussianVAE", epochs=budget.vae_epochs, obs_var=1.0)),
                (VAE_LEARNED, "vae-learned", "GaussianVAE",
                 params("GaussianVAE", epochs=budget.vae_epochs, obs_var="learned"))]
    return [("BernBPE", "bernbpe", "BernBPE", params("BernBPE", **bpe)),
            ("GS-VAE", "gsvae", "GumbelSoftmaxVAE", params("GumbelSoftmaxVAE", epochs=budget.gsvae_epochs))]


def check_models(models, datasets, budget):
    """The model slugs ``models`` (None: all) as a set, or ValueError (one line) naming an
    unknown slug or a data set of ``datasets`` that none of them belongs to."""
    if not models:
        return None
    slugs = {ds: [m[1] for m in table_models(DATASETS[ds][1], budget, 0, "cpu")] for ds in datasets}
    known = sorted({s for kind in ("gauss", "bern") for _, s, _, _ in table_models(kind, budget, 0, "cpu")})
    unknown = [m for m in models if m not in known]
    if unknown:
        raise ValueError(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    empty = [ds for ds in datasets if not set(slugs[ds]) & set(models)]
    if empty:
        raise ValueError(f"no model of {', '.join(empty)} among {', '.join(models)}: name one of its models "
                         "or leave the data set out")
    return set(models)


def open_table(out, budget, seed, *, resume=False, overwrite=False) -> Path:
    """Create (or, with ``resume``, check) the table folder ``out``: RunError (one line)
    when resuming a table started with another budget or seed, or when there is none."""
    out = Path(out)
    record = {"format": TABLE_FORMAT, "budget": asdict(budget), "seed": int(seed)}
    record["budget"]["datasets"] = list(budget.datasets)
    path = out / TABLE_FILE
    if resume:
        if not path.is_file():
            raise RunError(f"{out} holds no table to resume ({TABLE_FILE} is missing): start it without --resume")
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RunError(f"{path} is unreadable ({exc}): start again with --overwrite") from None
        if isinstance(saved.get("budget"), dict):       # saved before these settings existed
            saved["budget"].setdefault("shortlist", None)
            saved["budget"].setdefault("fast_stop_epochs", None)
        if saved != record:
            changed = [k for k in record["budget"] if saved.get("budget", {}).get(k) != record["budget"][k]]
            changed += ["seed"] if saved.get("seed") != record["seed"] else []
            raise RunError(f"{out} was started with other settings ({', '.join(changed) or 'format'}): resume it "
                           "with the same options, or start again with --overwrite")
        return out
    if overwrite and (out / RUNS).is_dir():
        shutil.rmtree(out / RUNS)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(record, indent=1) + "\n")
    return out


def model_entry(out, dataset, name, slug, registry, params, data, evaluate, resume, log):
    """Train (or continue, or read back) one model of the table.

    ``data``: the training images (:class:`bpetopics.images.sources.ImageData`);
    ``evaluate(model) -> (row dict, reconstructions of the grid's images)``.
    Returns (row, reconstructions (n_show, D), history).
    """
    from bpetopics.runs import image_job
    from bpetopics.runs.folder import load_run

    runs = Path(out) / RUNS
    runs.mkdir(parents=True, exist_ok=True)
    run, metrics = runs / f"{dataset}-{slug}", runs / f"{dataset}-{slug}.json"
    if resume and metrics.is_file() and run.is_dir():
        saved = json.loads(metrics.read_text(encoding="utf-8"))
        log(f"  {name}: finished before ({metrics})")
        return saved["row"], np.asarray(saved["recon"], dtype=np.float32), saved["history"]
    if resume and (run / "config.json").is_file():
        log(f"  {name}: trained before, evaluating")
        model = load_run(run, device=params.get("device")).model
    else:
        def after_epoch(m, info):
            shown = ", ".join(f"{k} {info[k]:.4g}" for k in ("objective", "loss", "active_bits") if k in info)
            log(f"    epoch {info['epoch']}/{m.epochs}: {info.get('seconds', 0.0):.1f} s, {shown}")

        if resume and partial_path(run).is_dir():
            log(f"  {name}: continuing from its last checkpoint")
            job = image_job.resume_image_job(run, device=params.get("device"))
        else:
            log(f"  {name}")
            job = image_job.start_image_job(run, registry, params, data, overwrite=True)
        try:
            image_job.run_image_job(job, after_epoch)
        except BaseException:
            image_job.release_job(job)
            raise
        image_job.finish_image_job(job, overwrite=True)
        model = job.model
    row, recon = evaluate(model)

    # where the row was made (trained, or read back and scored): a table merged from pieces
    # on another machine reports the pieces' device, not the merging one's
    row["made_on"] = f"device {getattr(model, 'device_', params.get('device'))}; {hardware()}"
    history = [dict(h) for h in model.history_]
    row["train_seconds"] = float(sum(h.get("seconds", 0.0) for h in history))
    write_text_atomic(metrics, json.dumps({"row": row, "recon": np.asarray(recon).tolist(), "history": history},
                                          default=float) + "\n")
    return row, np.asarray(recon, dtype=np.float32), history
