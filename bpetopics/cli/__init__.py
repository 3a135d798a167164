"""The ``bpetopics`` command line: parse, call the library, print.

Each command lives in its own module of this package (a new command is a new module,
listed in ``COMMAND_MODULES``) and registers itself on ``main``. Command modules never
import each other: what two commands share is either library code (``bpetopics.runs``,
``bpetopics.text``, ...) or one of the click-level helpers here (option types, the corpus
options, PoissBPE's parameters as ``train``'s options) and the ones re-exported from the
helper modules :mod:`bpetopics.cli.errors` (one-line errors, :func:`open_run`),
:mod:`bpetopics.cli.options` (options that mean the same in every command) and
:mod:`bpetopics.cli.training_progress` (``train``'s progress bar and interruptions) and
:mod:`bpetopics.cli.corpus_notes` (``train``'s notes on a small or long-document corpus,
and on CUDA at a small minibatch). Errors a user can fix are raised as
:class:`click.UsageError` / :class:`UserError` (one line, exit code 2, no traceback).
"""

import importlib
import re
from pathlib import Path

import click

from bpetopics import __version__
from bpetopics.bpe.interruptions import interruptions_kept
from bpetopics.cli.corpus_notes import (cuda_batch_note, long_documents_note, short_texts_note,  # noqa: F401
                                        small_corpus_note)
from bpetopics.cli.errors import (UserError, corpus_errors, describe_os_error, is_full_disk,  # noqa: F401
                                  open_run, refuse_existing, run_errors)                      # (re-exported)
from bpetopics.cli.options import DEVICE_HELP, device_option, option  # noqa: F401 (re-exported)
from bpetopics.cli.training_progress import (fit_with_progress, launcher_interruption_message,  # noqa: F401
                                             planned_epochs, warn_threads)                     # (re-exported)

# Modules that define commands; each does ``@main.command()``.
COMMAND_MODULES = ["corpus", "train", "topics", "encode", "search", "similar", "info", "evaluate", "compare",
                   "graph", "ldavis", "over_time", "explore", "compile", "images", "image_table", "update"]


class OneLine:
    """A click type whose bad values are a one-line :class:`UserError` (exit 2), not a usage error."""

    def fail(self, message, param=None, ctx=None):
        name = max(param.opts, key=len) if param is not None and getattr(param, "opts", None) else "a value"
        raise UserError(f"invalid {name}: {message}")


class Choice(OneLine, click.Choice):
    """``click.Choice`` with one-line errors."""


class IntRange(OneLine, click.IntRange):
    """``click.IntRange`` with one-line errors."""


class FloatRange(OneLine, click.FloatRange):
    """``click.FloatRange`` with one-line errors."""


class Main(click.Group):
    """The command group: an OSError no command turned into a message (a full disk, a
    folder without permission) ends as one line and exit code 2, not a traceback; Ctrl-C
    in a command without a cleanup of its own ends with "Interrupted." and exit code 130
    (outputs are written whole or not at all), not click's "Aborted!" and 1."""

    def invoke(self, ctx):
        try:
            with interruptions_kept():
                return super().invoke(ctx)
        except KeyboardInterrupt as exc:                # 143 for a Stopped by SIGTERM
            click.echo("\nInterrupted.", err=True)
            ctx.exit(getattr(exc, "exit_code", 130))
        except BrokenPipeError:  # e.g. `bpetopics topics RUN | head`: the reader left
            raise
        except OSError as exc:
            raise UserError(describe_os_error(exc)) from None
        except click.UsageError as exc:  # a missing argument, an unknown option: one line too
            raise _one_line_usage(exc) from None

    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as exc:
            raise _one_line_usage(exc) from None


def _one_line_usage(exc: click.UsageError) -> UserError:
    command = " ".join(["bpetopics", *(exc.ctx.command_path.split()[1:] if exc.ctx is not None else [])])
    message = re.sub(r"\s*\n\s*", " ", exc.format_message().strip())   # e.g. a missing choice's list
    return UserError(f"{message} (see `{command} --help`)")


class EpochsOrAll(OneLine, click.ParamType):
    """A number of epochs (an integer >= 0) or ``all`` (returned as the string)."""

    name = "N|all"

    def convert(self, value, param, ctx):
        text = str(value).strip().lower()
        if text == "all":
            return "all"
        if re.fullmatch(r"\d+", text):
            return int(text)
        self.fail(f"{value!r} is neither a number of epochs (0, 1, ...) nor 'all'", param, ctx)


class DocFrequency(OneLine, click.ParamType):
    """A document frequency: an integer count (``5``) or a fraction (``0.5``)."""

    name = "COUNT|FRACTION"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)):
            return value
        text = str(value).strip()
        try:
            if re.fullmatch(r"[+-]?\d+", text):
                return int(text)
            return float(text)
        except ValueError:
            self.fail(f"{value!r} is not a number: give a document count (5) or a fraction (0.5)", param, ctx)


# The corpus options of `corpus`, `train` and `compare` (prepare_corpus's parameters).
_VOCABULARY_OPTIONS = [
    click.option("--vocab-size", type=IntRange(min=0), default=2000, show_default=True,
                 help="Keep the most frequent words; 0 keeps them all."),
    click.option("--min-df", type=DocFrequency(), default="5", show_default=True,
                 help="Drop words in fewer documents: a count (5) or a fraction (0.01)."),
    click.option("--max-df", type=DocFrequency(), default="0.5", show_default=True,
                 help="Drop words in more documents: a fraction (0.5) or a count (1000)."),
    click.option("--stopwords", default="nltk", show_default=True,
                 help="Stop-word list: nltk, sklearn, gensim, none, or a file (one word per line)."),
    click.option("--data-home", type=click.Path(path_type=Path), default=None,
                 help="Folder with scikit-learn's 20 Newsgroups cache [default: $SCIKIT_LEARN_DATA]."),
    click.option("--categories", default=None, metavar="A,B,...",
                 help="Keep only these labels (20 Newsgroups groups, a named corpus's labels or subfolder names), "
                      "comma-separated."),
    click.option("--max-docs", type=IntRange(min=1), default=None,
                 help="Keep at most this many documents per split, drawn at random with the seed."),
    click.option("--test-size", type=FloatRange(0, 1, min_open=True, max_open=True), default=None,
                 metavar="FRACTION",
                 help="Hold out this share of the documents as the test split, drawn at random with the seed "
                      "(a source without one: a folder, .jsonl, .csv, abc, state_union, lee, abc-sentences, "
                      "state_union-sentences) "
                      "[default: none]."),
    click.option("--passages", type=click.Choice(["paragraphs", "sentences"]), default=None,
                 help="Model each document's paragraphs (blank-line separated, or one a line) or sentences instead "
                      "of the whole document, for long documents; passages of under 30 (3) words are joined to "
                      "the next, labels and times kept, ids DOC#1, DOC#2, ... [default: whole documents]."),
]


def vocabulary_options(command):
    """Add the shared corpus options to a click command."""
    for option in reversed(_VOCABULARY_OPTIONS):
        command = option(command)
    return command


# The fields of a JSONL or CSV source (of `corpus`, `train` and `compare`).
_RECORD_OPTIONS = [
    click.option("--text-field", default="text", show_default=True,
                 help="JSONL key or CSV column of the text (a .jsonl or .csv source, compressed or not)."),
    click.option("--id-field", default=None, help="JSONL key or CSV column of the document id [default: FILE:LINE]."),
    click.option("--label-field", default=None, help="JSONL key or CSV column of the label [default: no labels]."),
    click.option("--time-field", default=None,
                 help="JSONL key or CSV column of each document's timestamp, an ISO date or a number "
                      "(for `bpetopics over-time`) [default: none]."),
    click.option("--skip-bad-lines", is_flag=True,
                 help="Skip and count malformed lines instead of stopping at the first."),
]


def record_options(command):
    """Add the options of a JSONL or CSV source to a click command."""
    for option in reversed(_RECORD_OPTIONS):
        command = option(command)
    return command


# ---------------------------------------------------- the model's options (train)
#: Options named differently from the model's parameters.
OPTION_NAMES = {"n_topics": "topics", "n_bits": "bits", "random_state": "seed"}
#: Model parameters that are not options (the command line drives these itself).
NOT_OPTIONS = ("self", "callback", "progress", "seed_words")     # seed words: train's --seed-topics
MODEL_HELP = {
    "n_topics": "T, the number of topics.",
    "n_bits": "K, the length of each document's binary code [default: 64, or sqrt(20 x topics) "
              "rounded up to a multiple of 8 when more; at least the topics for short texts].",
    "hidden": "Decoder hidden layer sizes, comma-separated ('' for a linear decoder).",
    "activation": "Decoder activation: relu, tanh, softplus, sigmoid, elu, leaky_relu or gelu.",
    "alpha": "Beta-process concentration alpha, the prior's strength [default: N, the number of documents].",
    "reseed_similarity": "Restart, in the first half of training, dead topics and topics this similar "
                         "(cosine) to a more used one.",
    "split_moves": "Restart topics by split moves until 90% of training: split a topic that holds "
                   "two themes, giving one half to a restarted, unneeded or like topic.",
    "split_min_gain": "Nats per token a split must gain (beyond restarting a dead or duplicated "
                      "topic).",
    "initial_topics": "Start with this many topics and double them, splitting the topics worth "
                      "splitting most in two, in rounds over the first third of the epochs until there "
                      "are --topics [default: about 25 from 40 topics on (25 at 50 and 100), else no "
                      "growth].",
    "cooldown_epochs": "Train the last this many epochs (at most a fifth of them) at a fifth of the "
                       "learning rate (0: the same rate throughout).",
    "gamma": "Beta-process mass gamma: prior mean of a bit is gamma/K [default: K/4].",
    "tau": "Delay tau of the q(pi) step size (t + tau)^-kappa.",
    "kappa": "Forgetting rate kappa of the q(pi) step size, in (0.5, 1].",
    "epochs": "Passes over the corpus [default: enough for 2,000 minibatch steps, 15 to 30 epochs].",
    "batch_size": "Documents per minibatch.",
    "lr": "Adam learning rate.",
    "max_bits": "At most this many active bits per code [default: no limit].",
    "flat_start": "Start q(pi) at Beta(1, 1) rather than at the prior.",
    "prior_ramp_epochs": "Epochs over which the prior's weight in the pursuit ramps from 0 to 1.",
    "topic_init_docs": "Start each topic from this many random documents (0: uniform topics).",
    "topic_repulsion": "Weight of the diversity prior on the topics: the cosine similarities "
                       "between topics, summed over pairs (each topic's over at most 59 "
                       "others: times 59 / (T - 1) above 60 topics, and times 100 / T above "
                       "100 topics) and weighted by use, are added to the per-token loss (0: "
                       "maximum likelihood).",
    "mixture_entropy": "Weight of the prior that favours spread mixtures: minus the entropy of "
                       "each document's mixture, weighed by its tokens, is added to the "
                       "per-token loss and to the codes' scores, so that documents can share "
                       "a topic of common words (0: none; default: min(0.2, 5 T / N) for N "
                       "training documents).",
    "topic_smoothing": "Dirichlet pseudo-counts of every word in every topic (MAP), weighed "
                       "against the corpus's tokens: helps small corpora (0: none; default: "
                       "0.1 from 80,000 tokens on, 0.1 x 80,000 / tokens below, at most 1, "
                       "times 100 / T above 100 topics). "
                       "Between -1 and 0 a sparse prior: sparser, more distinct topics on long "
                       "texts at up to about 50 topics, for a higher perplexity; not for short "
                       "texts (docs/defaults.md).",
    "soft_codes": "Codes per document the theta step fits: 1 the pursued code (MAP-EM); M > 1 the M "
                  "most probable of it and its one-bit neighbours, weighted (better topics, "
                  "slower: docs/defaults.md).",
    "pipeline": "Pursue each minibatch's codes during the previous step's theta update, from "
                "the theta before it, on a second thread (faster epochs on two cores, the same model "
                "on one thread and two; docs/results/speed.md); --no-pipeline: the steps in "
                "order.",
    "backend": "auto, numba or torch: where the speed paths run (numba: compiled kernels, CPU "
               "only; torch: their torch twins, any device, slower; auto: numba on a CPU when it "
               "imports). Recorded in the run's config.json.",
    "seed_strength": "Weight of the seed words of --seed-topics: pseudo-counts of each in its topic, as a "
                     "share of an average topic's tokens.",
    "random_state": "Seed of the model: initialisation and minibatch order.",
    "device": DEVICE_HELP,
}
class IntTuple(click.ParamType):
    """Comma-separated integers, e.g. ``128,64``; empty for none."""

    name = "N,N,..."

    def convert(self, value, param, ctx):
        if isinstance(value, (tuple, list)):
            return tuple(value)
        try:
            return tuple(int(v) for v in str(value).replace(" ", "").split(",") if v)
        except ValueError:
            flag = param.opts[0] if getattr(param, "opts", None) else f"--{param.name.replace('_', '-')}"
            raise UserError(f"{flag} takes comma-separated integers such as 128,64; got {value!r}") from None


def option_flag(name: str) -> str:
    return "--" + OPTION_NAMES.get(name, name).replace("_", "-")


# Parameters whose default None stands for a value computed from the data.
FLOAT_OR_NONE = {"alpha": float, "gamma": float, "topic_smoothing": float, "mixture_entropy": float}


def model_parameters() -> dict:
    """PoissBPE's parameters that are options, with their defaults (from its signature).

    The signature is read from the source of :mod:`bpetopics.models.poissbpe.model` (parsed,
    not imported: importing the model imports torch, which takes seconds that checking
    the arguments of ``train`` must not wait for); the defaults there are literals.
    """
    import ast

    import bpetopics

    source = Path(bpetopics.__file__).parent / "models" / "poissbpe" / "model.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    init = next(node for cls in tree.body if isinstance(cls, ast.ClassDef) and cls.name == "PoissBPE"
                for node in cls.body if isinstance(node, ast.FunctionDef) and node.name == "__init__")
    args = init.args
    positional = args.posonlyargs + args.args
    named = ([(a.arg, d) for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)]
             + [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None])
    return {name: ast.literal_eval(default) for name, default in named if name not in NOT_OPTIONS}


def model_options() -> list[click.Option]:
    """One click option per model parameter; the type follows the default."""
    options = []
    for name, default in model_parameters().items():
        flag, help_ = option_flag(name), MODEL_HELP.get(name, f"PoissBPE's {name}.")
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
    """Adds the model options the first time they are needed (``train`` runs or shows
    its help), read from the model's source without importing it (:func:`model_parameters`)."""

    def get_params(self, ctx):
        if not getattr(self, "_model_options_added", False):
            self._model_options_added = True
            self.params.extend(model_options())
        return super().get_params(ctx)


def check_model_params(params: dict) -> None:
    """Fail fast, with one line naming the option, on parameters the model would refuse
    (the estimator's own rules: :meth:`bpetopics.bpe.model.BPEBase.validate`)."""
    from bpetopics.models import PoissBPE

    try:
        PoissBPE(**params).validate(label=option_flag)
    except ValueError as exc:
        raise UserError(str(exc)) from None


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bpetopics")
def main():
    """bpetopics: topic modelling with sparse binary codes (PoissBPE).

    \b
    Typical use:
      bpetopics corpus 20newsgroups --out corpora/20ng
      bpetopics train 20newsgroups --out runs/20ng
      bpetopics topics runs/20ng
    """


# The group of `bpetopics images`: here, because two command modules register on it
# (images: train, encode, show; image_table: table).
@main.group("images")
def image_commands():
    """Image runs (GaussBPE, BernBPE, the VAE baselines) and the paper's Table 1.

    \b
    Examples:
      bpetopics images train mnist --model gaussbpe --out runs/mnist --max-images 2000 --epochs 4
      bpetopics images encode runs/mnist mnist --out codes.npz
      bpetopics images show runs/mnist --out bits.png
      bpetopics images table --data-root ../shared/data --out runs/table1
    """


for _name in COMMAND_MODULES:
    importlib.import_module(f"bpetopics.cli.{_name}")
