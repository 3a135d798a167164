"""Saving and loading a training run: JSON, text, .npz and safetensors; never pickle.

A run folder (written by :func:`save_run`, read back by :func:`load_run`)::

    config.json        format + version, model class, parameters, seed, n_data, n_features,
                       history, corpus (source, settings, TextPipeline dict), versions
    model.safetensors  model.state_dict(): decoder.*, likelihood.*, prior.{a, b, t}
    vocabulary.txt     one word per line, column j of the counts is line j
    topics.csv         topic, share, rank, word, weight (long format)
    doc_codes.npz      codes of the training documents (scipy.sparse.save_npz, CSR uint8); trained on
                       a sharded corpus: codes/ instead, and no doc_topics.npz (runs/sharded_codes.py)
    counts.npz         training counts (scipy.sparse.save_npz, CSR N x W), rows in the order of
                       the ids in doc_topics.npz; absent from runs saved without a corpus or
                       counts, and from runs of older bpetopics (still version 1)
    doc_topics.npz     doc_topic (N x T float32), ids (N strings) and, for a corpus read with a
                       time field, times (N float64 numbers or datetime64[s] dates)
    history.csv        epoch, objective, active_bits, topic_overlap, restarted_topics, topics, seconds
    summary.json       sizes, final objective, topic shares, top words
    labels.json        a short label per topic: automatic (bpetopics.labels) and set by hand;
                       absent from runs of older bpetopics (runs/labels.py then computes them)

It is written beside its target and renamed into place. The files' names and the small
readers and writers are :mod:`bpetopics.runs.run`'s; the model is rebuilt by
:mod:`bpetopics.runs.saved_model` (as from a checkpoint, :mod:`bpetopics.runs.checkpoints`);
image runs are :mod:`bpetopics.runs.image_folder`'s; the loaded run is
:class:`~bpetopics.runs.loaded_run.Run`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp
from safetensors.torch import save as safetensors_bytes

from bpetopics.bpe.batches import RowStore
from bpetopics.bpe.machine import describe_machine
from bpetopics.files import canonical_safetensors, staging_folder
from bpetopics.labels import label_topics, labels_record
from bpetopics.runs.image_folder import load_image_run
from bpetopics.runs.loaded_run import Run
from bpetopics.runs.run import (COUNTS_FILE, CONFIG_FILE, DOC_CODES_FILE, DOC_TOPICS_FILE, FORMAT,  # noqa: F401
                                FORMAT_VERSION, HISTORY_COLUMNS, HISTORY_FILE, LABELS_FILE, SUMMARY_FILE,
                                TOPICS_FILE, VOCABULARY_FILE, WEIGHTS_FILE, RunError, check_run_destination,
                                csv_bytes, damage_is_run_error, first_line, is_run, json_bytes, partial_path,
                                read_json)
from bpetopics.runs.saved_model import build_model, library_versions, load_tensors, torch_threads
from bpetopics.runs.sharded_codes import code_summary, write_codes
from bpetopics.topwords import top_word_ids

CHECKPOINT_FILE = "checkpoint.safetensors"  # inside RUN.partial/ while training


# ----------------------------------------------------------------------- helpers
def _job_text(partial: Path) -> str:
    """The job.json of a training in progress, as text ('' when unreadable)."""
    try:
        return (partial / "job.json").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


# ------------------------------------------------------------------------ save_run
def save_run(out, model, corpus=None, *, vocabulary=None, pipeline=None, counts=None, corpus_info=None,
             overwrite: bool = False, n_top_words: int = 20, group=None, labels=None, ids=None) -> Path:
    """Write a fitted text model and its corpus settings to the run folder ``out``, atomically.

    ``model`` (a fitted PoissBPE) was fitted on ``corpus.counts``; ``corpus`` gives the
    vocabulary, pipeline, ids, counts and summary (or pass ``vocabulary`` / ``pipeline`` /
    ``counts``); the training counts, when known, are saved as ``counts.npz`` (not those
    of a sharded corpus, which stays where it is and is recorded by path).
    ``corpus_info`` (JSON-safe) is merged into ``config["corpus"]``; ``overwrite``
    replaces a finished run at ``out``; ``n_top_words`` per topic go to topics.csv and
    summary.json. Returns ``out``; raises RunError when ``out`` may not be written.
    ``group``: the processes of a data-parallel job, which share the encoding of a sharded
    corpus (this is rank 0; the others call ``sharded_codes.share_encoding``).
    ``labels``: the content of ``labels.json`` (:func:`bpetopics.labels.labels_record`);
    by default computed from the corpus's texts (none for a corpus without texts).
    ``ids``: the documents' ids when there is no ``corpus`` (default: their indices).
    """
    out = check_run_destination(out, overwrite)
    vocabulary = list(vocabulary if vocabulary is not None else corpus.vocabulary)
    pipeline = pipeline if pipeline is not None else getattr(corpus, "pipeline", None)
    if len(vocabulary) != model.n_features_:
        raise ValueError(f"the vocabulary has {len(vocabulary)} words but the model {model.n_features_}")
    if counts is None and corpus is not None:
        counts = corpus.counts
    on_disk = counts is not None and isinstance(counts, RowStore)   # a sharded corpus: not copied
    codes = None if on_disk else np.asarray(model.codes_, dtype=np.uint8)   # on disk: encoded below
    n_docs = counts.shape[0] if on_disk else len(codes)
    if counts is not None and not on_disk:
        counts = sp.csr_matrix(counts)
        if counts.shape != (n_docs, len(vocabulary)):
            raise ValueError(f"the counts have shape {counts.shape} but the model has {n_docs} documents "
                             f"and {len(vocabulary)} words")
    topic_word = model.topic_word_
    order = top_word_ids(topic_word, n_top_words)  # ties in vocabulary order, as `bpetopics topics`
    history = [dict(h) for h in model.history_]

    corpus_cfg = {"source": getattr(corpus, "source", None), "split": getattr(corpus, "split", None),
                  "summary": corpus.summary() if corpus is not None else None,
                  "pipeline": pipeline.to_dict() if pipeline is not None else None}
    corpus_cfg.update(corpus_info or {})
    config = {"format": FORMAT, "format_version": FORMAT_VERSION, "model": type(model).__name__,
              "params": model.config_params(), "seed": model.random_state, "n_data": int(model.n_data_),
              "n_features": int(model.n_features_), "corpus": corpus_cfg, "versions": library_versions(),
              "machine": describe_machine(),
              "training": {"epoch": int(model.epoch_), "step": int(model.step_), "history": history,
                           "torch_threads": torch_threads()}}
    if getattr(model, "backend_", None) is not None:        # the backend the run trained on
        config["training"]["backend"] = model.backend_
    with staging_folder(out) as tmp:
        if on_disk:     # codes/: written shard by shard (runs/sharded_codes.py), never dense
            config["codes"], distinct = write_codes(tmp, model, counts, progress=getattr(model, "progress", False),
                                                    group=group)
            coded = code_summary(distinct, model.code_topic)
        else:
            doc_topic = model.code_topic(codes).astype(np.float32)
            lengths = np.asarray(counts.sum(axis=1), dtype=float).ravel() if counts is not None else np.ones(n_docs)
            coded = {"mean_active_bits": float(codes.sum(1).mean()) if n_docs else 0.0,
                     "bits_used": int((codes.sum(0) > 0).sum()),
                     "topic_share": (lengths @ doc_topic) / max(float(lengths.sum()), 1e-12)}
            ids = [str(i) for i in (corpus.ids if corpus is not None else range(n_docs) if ids is None else ids)]
            sp.save_npz(tmp / DOC_CODES_FILE, sp.csr_matrix(codes), compressed=True)
            times = getattr(corpus, "times", None)      # a corpus read with a time field
            np.savez_compressed(tmp / DOC_TOPICS_FILE, doc_topic=doc_topic, ids=np.array(ids, dtype=str),
                                **({} if times is None else {"times": np.asarray(times)}))
        share = coded["topic_share"]
        summary = {"documents": n_docs, "vocabulary": len(vocabulary), "n_topics": int(topic_word.shape[0]),
                   "n_bits": model.code_length(), "epochs": int(model.epoch_),
                   "final_objective": history[-1]["objective"] if history else None,
                   "mean_active_bits": coded["mean_active_bits"], "bits_used": coded["bits_used"],
                   "train_seconds": float(sum(h.get("seconds", 0.0) for h in history)),
                   "topic_share": [float(x) for x in share], "top_words": [[vocabulary[j] for j in row] for row in order]}
        if hasattr(model, "_topic_smoothing"):      # the Dirichlet prior's eta in use (None: by corpus size)
            summary["topic_smoothing"] = float(model._topic_smoothing())
        state = {k: v.detach().cpu().contiguous().clone() for k, v in model.state_dict().items()}
        (tmp / WEIGHTS_FILE).write_bytes(canonical_safetensors(safetensors_bytes(
            state, metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION)})))
        (tmp / VOCABULARY_FILE).write_text("".join(w + "\n" for w in vocabulary), encoding="utf-8")
        (tmp / TOPICS_FILE).write_bytes(csv_bytes(
            ("topic", "share", "rank", "word", "weight"),
            ((t, f"{share[t]:.6g}", r, vocabulary[j], f"{topic_word[t, j]:.6g}")
             for t, row in enumerate(order) for r, j in enumerate(row))))
        if counts is not None and not on_disk:
            sp.save_npz(tmp / COUNTS_FILE, counts, compressed=True)
        (tmp / HISTORY_FILE).write_bytes(csv_bytes(
            HISTORY_COLUMNS, ([h.get(c) for c in HISTORY_COLUMNS] for h in history)))
        (tmp / SUMMARY_FILE).write_bytes(json_bytes(summary))
        texts = getattr(corpus, "texts", None)
        if labels is None and texts is not None and len(texts) == n_docs:
            labels = labels_record(label_topics(topic_word, vocabulary, texts))
        if labels is not None:
            (tmp / LABELS_FILE).write_bytes(json_bytes(labels))
        (tmp / CONFIG_FILE).write_bytes(json_bytes(config))
    return out


# ------------------------------------------------------------------------ load_run
@damage_is_run_error
def load_run(path, device: str | None = "cpu") -> Run:
    """Read a run folder written by :func:`save_run` (or ``bpetopics train``).

    ``device`` ('cpu', 'cuda', 'auto'; None keeps the saved setting) is where the model
    lives; on the same device it encodes exactly as the saved one. Raises RunError (one
    line) when the folder is missing, incomplete, corrupted, of another format version,
    or its weights do not match its config.
    """
    path = Path(path)
    if not is_run(path):
        if partial_path(path).is_dir():
            command = ("bpetopics images train ... --model ..." if '"data"' in _job_text(partial_path(path))
                       else "bpetopics train")
            raise RunError(f"training of {path} did not finish: continue it with "
                           f"`{command} --out {path} --resume`")
        if not path.exists():
            raise RunError(f"{path} does not exist: give a run folder written by `bpetopics train` "
                           "(or `bpetopics images train`)")
        if not path.is_dir():
            raise RunError(f"{path} is a file, not a run folder written by `bpetopics train` "
                           "(or `bpetopics images train`)")
        raise RunError(f"{path} is not a complete run ({CONFIG_FILE} is missing)")
    config = read_json(path / CONFIG_FILE)
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        found = config.get("format") if isinstance(config, dict) else None
        raise RunError(f"{path / CONFIG_FILE} is not a bpetopics run (format {found!r}, expected {FORMAT!r})")
    if config.get("format_version") != FORMAT_VERSION:
        raise RunError(f"{path} has format version {config.get('format_version')!r} but this bpetopics "
                       f"reads version {FORMAT_VERSION}: use the bpetopics that wrote it, or train again")
    missing = [k for k in ("model", "params", "n_data", "n_features") if k not in config]
    if missing:
        raise RunError(f"{path / CONFIG_FILE} is incomplete (no {', '.join(missing)})")
    if "data" in config:  # an image run (bpetopics.runs.image_folder)
        return load_image_run(path, config, device)
    try:
        vocabulary = (path / VOCABULARY_FILE).read_text(encoding="utf-8").split("\n")[:-1]
    except FileNotFoundError:
        raise RunError(f"{path} is not complete ({VOCABULARY_FILE} is missing)") from None
    except UnicodeDecodeError:
        raise RunError(f"{path / VOCABULARY_FILE} is corrupted (not UTF-8 text)") from None
    if len(vocabulary) != config["n_features"]:
        raise RunError(f"{path / VOCABULARY_FILE} has {len(vocabulary)} words but the config says "
                       f"n_features={config['n_features']}")
    pipeline = None
    pipe_dict = (config.get("corpus") or {}).get("pipeline")
    if pipe_dict is not None:
        from bpetopics.text import TextPipeline

        try:
            pipeline = TextPipeline.from_dict(pipe_dict)
        except (ValueError, TypeError, KeyError) as exc:
            raise RunError(f"{path / CONFIG_FILE} holds an unreadable text pipeline ({first_line(exc)})") from None
        if getattr(pipeline, "vocabulary_", None) is not None and pipeline.vocabulary_ != vocabulary:
            raise RunError(f"{path / VOCABULARY_FILE} does not match the vocabulary in {CONFIG_FILE}")
    state, _ = load_tensors(path / WEIGHTS_FILE, str(path))
    model = build_model(config["model"], config["params"], state, config["n_data"], config["n_features"],
                         config.get("training"), device, str(path))
    if (path / DOC_CODES_FILE).is_file():
        try:
            codes = sp.load_npz(path / DOC_CODES_FILE)
        except Exception as exc:
            raise RunError(f"{path / DOC_CODES_FILE} is corrupted ({first_line(exc)})") from None
        if codes.shape != (config["n_data"], model.code_length()):
            raise RunError(f"{path / DOC_CODES_FILE} has shape {codes.shape}, "
                           f"expected ({config['n_data']}, {model.code_length()})")
        model.codes_ = codes.toarray().astype(np.uint8)
    summary = read_json(path / SUMMARY_FILE) if (path / SUMMARY_FILE).is_file() else {}
    return Run(model=model, pipeline=pipeline, vocabulary=vocabulary, config=config, path=path, summary=summary)

