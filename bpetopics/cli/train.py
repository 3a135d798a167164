"""``bpetopics train CORPUS --out RUN``: fit a PoissBPE topic model and save the run.

Every parameter of :class:`bpetopics.PoissBPE` is an option whose default is read from
its signature (so the two never drift). Training keeps a checkpoint after every epoch
in ``RUN.partial/`` and writes ``RUN`` only when it has finished.
"""

from __future__ import annotations

import inspect
import json
import os
import shlex
import shutil
from pathlib import Path

import click
from click.core import ParameterSource

from bpetopics.cli import UserError, corpus_errors, main
from bpetopics.cli.corpus import corpus_settings, vocabulary_options

#: Options named differently from the model's parameters.
OPTION_NAMES = {"n_topics": "topics", "n_bits": "bits", "random_state": "seed"}
#: Model parameters that are not options (the command line drives these itself).
NOT_OPTIONS = ("self", "callback", "progress")
#: Parameters that must be positive integers.
POSITIVE_INTS = ("n_topics", "n_bits", "epochs", "batch_size")
MODEL_HELP = {
    "n_topics": "T, the number of topics.",
    "n_bits": "K, the length of each document's binary code.",
    "hidden": "Decoder hidden layer sizes, comma-separated ('' for a linear decoder).",
    "activation": "Decoder activation: relu, tanh, softplus, elu, leaky_relu or gelu.",
    "alpha": "Beta-process concentration alpha, the prior's strength [default: N, the number of documents].",
    "reseed_similarity": "Restart, in the first half of training, dead topics and topics this similar "
                         "(cosine) to a more used one.",
    "gamma": "Beta-process mass gamma: prior mean of a bit is gamma/K [default: K/4].",
    "tau": "Delay tau of the q(pi) step size (t + tau)^-kappa.",
    "kappa": "Forgetting rate kappa of the q(pi) step size, in (0.5, 1].",
    "epochs": "Passes over the corpus.",
    "batch_size": "Documents per minibatch.",
    "lr": "Adam learning rate.",
    "max_bits": "At most this many active bits per code [default: no limit].",
    "flat_start": "Start q(pi) at Beta(1, 1) rather than at the prior.",
    "prior_ramp_epochs": "Epochs over which the prior's weight in the pursuit ramps from 0 to 1.",
    "topic_init_docs": "Start each topic from this many random documents (0: uniform topics).",
    "topic_repulsion": "Weight of the diversity prior on the topics: the cosine similarities "
                       "between topics, summed over pairs and weighted by use, are added to "
                       "the per-token loss (0: maximum likelihood).",
    "random_state": "Seed of the model: initialisation and minibatch order.",
    "device": "cpu, cuda, or auto (CUDA when present).",
}
JOB_FILE = "job.json"
CORPUS_DIR = "corpus"


class IntTuple(click.ParamType):
    """Comma-separated integers, e.g. ``128,64``; empty for none."""

    name = "N,N,..."

    def convert(self, value, param, ctx):
        if isinstance(value, (tuple, list)):
            return tuple(value)
        try:
            return tuple(int(v) for v in str(value).replace(" ", "").split(",") if v)
        except ValueError:
            raise UserError(f"--{param.name.replace('_', '-')} takes comma-separated integers such as "
                            f"128,64; got {value!r}") from None


def _option_flag(name: str) -> str:
    return "--" + OPTION_NAMES.get(name, name).replace("_", "-")


# Parameters whose default None stands for a value computed from the data.
FLOAT_OR_NONE = {"alpha": float, "gamma": float}


def model_parameters() -> dict:
    """PoissBPE's parameters that are options, with their defaults (from its signature)."""
    from bpetopics.models import PoissBPE

    return {name: p.default for name, p in inspect.signature(PoissBPE.__init__).parameters.items()
            if name not in NOT_OPTIONS}


def model_options() -> list[click.Option]:
    """One click option per model parameter; the type follows the default."""
    options = []
    for name, default in model_parameters().items():
        flag, help_ = _option_flag(name), MODEL_HELP.get(name, f"PoissBPE's {name}.")
        if isinstance(default, bool):
            options.append(click.Option([name, f"{flag}/--no-{flag[2:]}"], default=default,
                                        show_default=True, help=help_))
            continue
        kind = (IntTuple() if isinstance(default, (tuple, list))
                else FLOAT_OR_NONE.get(name, int) if default is None else type(default))
        options.append(click.Option([name, flag], type=kind, default=default,
                                    show_default=default is not None, help=help_))
    return options


class TrainCommand(click.Command):
    """Adds the model options the first time they are needed, so torch is imported only
    when ``train`` runs (or shows its help), not for every command."""

    def get_params(self, ctx):
        if not getattr(self, "_model_options_added", False):
            self._model_options_added = True
            self.params.extend(model_options())
        return super().get_params(ctx)


def check_model_params(params: dict) -> None:
    """Fail fast, with one line, on parameters the model would refuse."""
    from bpetopics.core.decoder import ACTIVATIONS
    from bpetopics.core.model import resolve_device
    from bpetopics.core.prior import BetaProcessPrior
    from bpetopics.models import PoissBPE

    for name in POSITIVE_INTS:
        if params[name] < 1:
            raise UserError(f"{_option_flag(name)} must be a positive integer; got {params[name]}")
    for name in ("alpha", "tau", "lr"):
        if params[name] is not None and not params[name] > 0:
            raise UserError(f"{_option_flag(name)} must be positive; got {params[name]}")
    for name in ("topic_init_docs", "prior_ramp_epochs", "topic_repulsion"):
        if params[name] < 0:
            raise UserError(f"{_option_flag(name)} must be zero or more; got {params[name]}")
    if params["max_bits"] is not None and params["max_bits"] < 1:
        raise UserError(f"--max-bits must be a positive integer; got {params['max_bits']}")
    if any(h < 1 for h in params["hidden"]):
        raise UserError(f"--hidden sizes must be positive integers; got {','.join(map(str, params['hidden']))}")
    if params["activation"] not in ACTIVATIONS:
        raise UserError(f"unknown --activation {params['activation']!r}; choose from {', '.join(sorted(ACTIVATIONS))}")
    try:
        resolve_device(params["device"])
        PoissBPE(**params)._validate_params()
        alpha = 1.0 if params["alpha"] is None else params["alpha"]
        gamma = params["n_bits"] / 4 if params["gamma"] is None else params["gamma"]
        BetaProcessPrior(params["n_bits"], 1, alpha, gamma, params["tau"], params["kappa"])
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _prepare(source, settings: dict):
    """``prepare_corpus`` with its one-line errors and its warnings printed."""
    from bpetopics.text import prepare_corpus

    with corpus_errors():
        return prepare_corpus(source, **settings)


def _lock(partial: Path, ctx):
    """Lock ``RUN.partial`` for this process until the command ends (bpetopics.runlock)."""
    from bpetopics.runlock import RunLockedError, lock_run

    try:
        lock = lock_run(partial)
    except (RunLockedError, OSError) as exc:
        raise UserError(str(exc)) from None
    ctx.call_on_close(lock.release)
    return lock


def _check_sizes(params: dict, corpus) -> None:
    """Refuse sizes that cannot work for the corpus or the memory, before anything is written."""
    from bpetopics.core.sizes import SizeError
    from bpetopics.models import PoissBPE

    try:
        PoissBPE(**params).check_sizes(corpus.n_docs, corpus.n_words)
    except SizeError as exc:
        raise UserError(exc.message(_option_flag(exc.param))) from None


def _warn_threads(saved) -> None:
    """One warning line when the checkpoint was written with another torch thread count."""
    import torch

    if isinstance(saved, int) and saved != torch.get_num_threads():
        click.echo(f"Warning: the checkpoint was trained with {saved} torch threads and this process uses "
                   f"{torch.get_num_threads()}: on CPU the result may differ from an uninterrupted run "
                   f"(set OMP_NUM_THREADS={saved} to match)", err=True)


def _read_job(partial: Path) -> dict:
    try:
        job = json.loads((partial / JOB_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"nothing to resume: {partial} holds no interrupted training (train without --resume)") from None
    except (ValueError, UnicodeDecodeError):
        raise UserError(f"{partial / JOB_FILE} is corrupted: start again with --overwrite") from None
    if not isinstance(job, dict) or job.get("format") != "bpetopics.train_job" or "params" not in job:
        raise UserError(f"{partial / JOB_FILE} is not a bpetopics training job: start again with --overwrite")
    return job


def _fit(model, X, checkpoint: Path, quiet: bool, resume_hint: str, ctx) -> None:
    """Train (or continue) with a checkpoint and a progress bar after every epoch; Ctrl-C
    leaves the last checkpoint and exits with 130."""
    from tqdm import tqdm

    import torch

    from bpetopics import io as run_io

    bar = tqdm(total=model.epochs, initial=getattr(model, "epoch_", 0), desc="training", unit="epoch", disable=quiet,
               dynamic_ncols=True)

    def after_epoch(m, info):
        run_io.save_checkpoint(checkpoint, m, extra={"torch_threads": torch.get_num_threads()})
        bar.set_postfix_str(f"objective {info['objective']:.2f}, mean active bits {info['active_bits']:.2f}",
                            refresh=False)
        bar.update(1)

    model.callback = after_epoch
    try:
        if hasattr(model, "decoder_"):  # loaded from a checkpoint
            model.continue_fit(X)
        else:
            model.fit(X)
    except OSError as exc:  # e.g. a full disk: the previous checkpoint is intact, the temp file gone
        from bpetopics.cli import describe_os_error

        raise UserError(describe_os_error(exc, f"continue from the last checkpoint, which is kept: "
                                               f"{resume_hint}", checkpoint)) from None
    except KeyboardInterrupt:
        bar.close()
        try:  # check that the last checkpoint loads, and say how far it got
            saved = run_io.load_checkpoint(checkpoint, device="cpu")[0].epoch_ if checkpoint.is_file() else None
        except run_io.RunError as exc:
            click.echo(f"\nInterrupted, and the checkpoint is unusable ({exc}): start again with --overwrite", err=True)
            ctx.exit(130)
        where = ("no epoch had finished; resuming starts from the beginning" if saved is None
                 else f"the checkpoint after epoch {saved} of {model.epochs} is in {checkpoint.parent}")
        click.echo(f"\nInterrupted: {where}. Resume with:\n  {resume_hint}", err=True)
        ctx.exit(130)
    finally:
        bar.close()
        model.callback = None


@main.command(cls=TrainCommand)
@click.argument("corpus", required=False)
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="The run folder to write (created when training has finished).")
@click.option("--resume", is_flag=True, help="Continue the interrupted training of --out from its last checkpoint.")
@click.option("--overwrite", is_flag=True, help="Replace a finished run (or an interrupted one) at --out.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--top", type=int, default=10, show_default=True, help="Words per topic printed at the end.")
@vocabulary_options
@click.option("--corpus-seed", type=int, default=0, show_default=True, help="Seed of the --max-docs draw.")
@click.pass_context
def train(ctx, corpus, out, resume, overwrite, quiet, top, vocab_size, min_df, max_df, stopwords, data_home,
          categories, max_docs, corpus_seed, **params):
    """Train a PoissBPE topic model on CORPUS and save the run to --out.

    CORPUS is 20newsgroups (its train split), a folder of text files (one document
    per file), or a corpus saved by `bpetopics corpus` (then the corpus options are
    ignored). The model options below default to PoissBPE's own defaults.

    A checkpoint is kept after every epoch in RUN.partial/; RUN itself is written
    only when training has finished. After Ctrl-C, continue with --resume: the result
    is the same as that of an uninterrupted run.

    \b
    Examples:
      bpetopics train 20newsgroups --out runs/20ng
      bpetopics train 20newsgroups --categories sci.space,rec.autos --topics 10 --out runs/two
      bpetopics train corpora/20ng --topics 50 --bits 128 --epochs 30 --seed 1 --out runs/20ng-50
      bpetopics train path/to/texts --vocab-size 5000 --min-df 2 --device cpu --out runs/mine
      bpetopics train --out runs/20ng --resume
    """
    from bpetopics import io as run_io
    from bpetopics.models import PoissBPE
    from bpetopics.text import Corpus, CorpusError, is_saved_corpus
    from bpetopics.text.loaders import is_newsgroups

    from bpetopics.cli.topics import format_rows, open_run, topic_rows

    partial = run_io.partial_path(out)
    checkpoint = partial / run_io.CHECKPOINT_FILE
    resume_hint = f"bpetopics train --out {shlex.quote(str(out))} --resume"
    try:
        run_io.check_run_destination(out, overwrite)
    except run_io.RunError as exc:
        raise UserError(str(exc)) from None
    lock = _lock(partial, ctx)
    if top < 1:
        raise UserError(f"--top must be a positive integer; got {top}")

    if resume:
        job = _read_job(partial)
        explicit = [p.opts[-1] for p in ctx.command.get_params(ctx)
                    if p.name not in ("out", "resume", "overwrite", "quiet", "top", "device")
                    and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE]
        if explicit:
            click.echo(f"Note: {', '.join(explicit)} ignored with --resume: the interrupted run's settings are kept",
                       err=True)
        if ctx.get_parameter_source("device") is ParameterSource.COMMANDLINE:
            job["params"]["device"] = params["device"]
        check_model_params(job["params"])
        try:
            train_corpus = Corpus.load(partial / CORPUS_DIR)
        except CorpusError as exc:
            raise UserError(f"{exc} (start again with --overwrite)") from None
        if checkpoint.is_file():
            try:
                model, saved = run_io.load_checkpoint(checkpoint, device=job["params"]["device"])
            except run_io.RunError as exc:
                raise UserError(f"{exc} (start again with --overwrite)") from None
            _warn_threads(saved.get("torch_threads"))
        else:
            model = PoissBPE(**job["params"])
        if not quiet:
            click.echo(f"Resuming {out} at epoch {getattr(model, 'epoch_', 0)} of {model.epochs}", err=True)
    else:
        if corpus is None:
            raise UserError("give a CORPUS to train on (20newsgroups, a folder of texts or a saved corpus), "
                            "or --resume")
        if lock.others():  # RUN.partial holds more than our lock
            if not (partial / JOB_FILE).is_file():
                raise UserError(f"{partial} exists and is not an interrupted bpetopics training: move it away")
            if not overwrite:
                raise UserError(f"{partial} holds an interrupted training: pass --resume to continue it, "
                                "or --overwrite to start again")
        params["progress"] = False
        check_model_params(params)
        settings = corpus_settings(vocab_size, min_df, max_df, stopwords, data_home, categories, max_docs,
                                   corpus_seed)
        splits = _prepare(corpus, settings)
        train_corpus = splits["train"]
        if train_corpus.n_docs == 0:
            raise UserError(f"the corpus {corpus} has no training document with a word of its vocabulary")
        _check_sizes(params, train_corpus)
        # paths are recorded absolute, so that the run's corpus can be rebuilt from any folder
        source = corpus if is_newsgroups(corpus) else os.path.abspath(corpus)
        settings["data_home"] = None if data_home is None else os.path.abspath(data_home)
        if is_saved_corpus(corpus) and not is_newsgroups(corpus):  # loaded as saved: the options played no part
            settings = {"saved_corpus": source}
        corpus_info = {"source": source, "settings": settings,
                       "splits": {name: c.summary() for name, c in splits.items()}}
        lock.clear()  # an interrupted training replaced (--overwrite): all but the lock
        job = {"format": "bpetopics.train_job", "params": params, "corpus": corpus_info}
        (partial / JOB_FILE).write_text(json.dumps(job, indent=1) + "\n", encoding="utf-8")
        train_corpus.save(partial / CORPUS_DIR)
        model = PoissBPE(**params)
        if not quiet:
            s = train_corpus.summary()
            click.echo(f"Training on {corpus}: {s['documents']:,} documents, {s['vocabulary']:,} words, "
                       f"{s['tokens']:,} tokens", err=True)

    _fit(model, train_corpus.counts, checkpoint, quiet, resume_hint, ctx)
    try:
        run_io.save_run(out, model, train_corpus, corpus_info=job["corpus"], overwrite=overwrite)
    except run_io.RunError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:  # the run's temp folder is removed; the last checkpoint is kept
        from bpetopics.cli import describe_os_error

        raise UserError(describe_os_error(exc, f"save the trained model from its checkpoint, which is "
                                               f"kept: {resume_hint}", out)) from None
    shutil.rmtree(partial, ignore_errors=True)
    run = open_run(out, device=None)
    s = run.summary
    click.echo(f"Saved run to {out}: {s['n_topics']} topics, {s['n_bits']} bits, {s['epochs']} epoch(s), "
               f"{s['documents']:,} documents; mean active bits {s['mean_active_bits']:.2f}, "
               f"final objective {s['final_objective']:.2f}")
    click.echo(format_rows(topic_rows(run, top), "table"))
