"""``bpetopics train CORPUS --out RUN``: fit a PoissBPE topic model and save the run.

Every parameter of :class:`bpetopics.PoissBPE` is an option whose default is read from
its signature and whose rule is the estimator's own (``_parameter_rules``), so the two
never drift (:func:`bpetopics.cli.model_options`). The job itself (a checkpoint after every epoch in ``RUN.partial/``, resume,
``RUN`` written only when training has finished) is :mod:`bpetopics.runs.job`; its
progress bar and what an interruption prints, :mod:`bpetopics.cli.training_progress`.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click
from click.core import ParameterSource

from bpetopics.cli import (IntRange, TrainCommand, UserError, option_flag, check_model_params, corpus_errors,
                           cuda_batch_note, describe_os_error, fit_with_progress, launcher_interruption_message,
                           long_documents_note, main, open_run, option, planned_epochs, record_options, run_errors,
                           short_texts_note, small_corpus_note, vocabulary_options, warn_threads)

#: What ``train`` without a CORPUS (and without --resume) says.
NO_CORPUS = "give a CORPUS to train on (20newsgroups, a folder of texts or a saved corpus), or --resume"
#: File extensions a corpus file's name drops in its default run folder's name.
CORPUS_EXTENSIONS = (".gz", ".bz2", ".xz", ".zst", ".jsonl", ".json", ".csv", ".tsv", ".txt")


def default_run_folder(corpus: str | None, resume: bool = False) -> Path:
    """The run folder when --out is not given: ``runs/NAME``, NAME being the last part of
    the corpus argument (a named corpus, a folder or a file) without its extensions.

    Raises UserError when there is no corpus to name it after (``--resume`` alone)."""
    if corpus is None and resume:
        raise UserError("--resume needs --out, the folder of the run to resume")
    if corpus is None:
        raise UserError(NO_CORPUS)
    name = Path(corpus.rstrip("/\\")).name
    while name.lower().endswith(CORPUS_EXTENSIONS) and "." in name[1:]:
        name = name[:name.rindex(".")]
    if not name or name in (".", ".."):
        raise UserError(f"cannot name a run after the corpus {corpus}: give --out")
    return Path("runs") / name


def _lock(out: Path, ctx):
    """Lock ``RUN.partial`` for this process until the command ends (bpetopics.runs.lock):
    a second ``train`` on the same --out stops at once, naming this one."""
    from bpetopics.runs import job as jobs

    with run_errors():
        lock = jobs.lock_job(out)
    ctx.call_on_close(lock.release)
    return lock


def _check_sizes(params: dict, corpus) -> None:
    """Refuse sizes that cannot work for the corpus or the memory, before anything is written."""
    from bpetopics.bpe.sizes import SizeError
    from bpetopics.models import PoissBPE

    try:
        PoissBPE(**params).check_sizes(corpus.n_docs, corpus.n_words)
    except SizeError as exc:
        raise UserError(exc.message(option_flag(exc.param))) from None
    except ValueError as exc:       # e.g. --initial-topics above --topics
        raise UserError(str(exc).splitlines()[0]) from None


@main.command(cls=TrainCommand)
@click.argument("corpus", required=False)
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="The run folder to write (created when training has finished). Default: runs/NAME, NAME "
                   "being CORPUS's last part without its file extensions (runs/posts for posts.jsonl.gz).")
@click.option("--resume", is_flag=True, help="Continue the interrupted training of --out from its last checkpoint.")
@click.option("--overwrite", is_flag=True, help="Replace a finished run (or an interrupted one) at --out.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@option("--top-n", "top", type=IntRange(min=1), default=10, show_default=True, old=("--top",),
        help="Top words per topic printed at the end.")
@click.option("--nproc", type=IntRange(min=1), default=1, show_default=True,
              help="Train with this many processes on this machine, each pursuing its share of every "
                   "minibatch (torch.distributed; on one machine's CPUs the step's sums go through shared "
                   "memory, NCCL with one GPU a process), the steps in order (--no-pipeline); the model is the "
                   "one 1 process trains with --no-pipeline, to float tolerance. Pays from about "
                   "--batch-size 1024. Under torchrun leave it out.")
@click.option("--seed-topics", "seed_file", type=click.Path(path_type=Path), default=None,
              help="Guided topics: a text file, one topic per line, its seed words separated by commas or "
                   "spaces; topic t starts with extra weight on line t's words and a prior favours them "
                   "(--seed-strength). Words outside the vocabulary are dropped and named.")
@vocabulary_options
@click.option("--corpus-seed", type=int, default=0, show_default=True, help="Seed of the --max-docs and --test-size draws.")
@record_options
@click.pass_context
def train(ctx, corpus, out, resume, overwrite, quiet, top, nproc, seed_file, vocab_size, min_df, max_df, stopwords, data_home,
          categories, max_docs, test_size, passages, corpus_seed, text_field, id_field, label_field, time_field,
          skip_bad_lines, **params):
    """Train a PoissBPE topic model on CORPUS and save the run to --out (default runs/NAME).

    CORPUS is 20newsgroups (its train split), abc, state_union, lee, abc-sentences,
    state_union-sentences or 20newsgroups-subjects (named corpora), a folder of text files (one document per
    file; .html pages give their visible text), a .jsonl or .csv file
    (compressed or not: .gz, .bz2, .xz, .zst; see --text-field), or a corpus saved by
    `bpetopics corpus` (then the corpus options are ignored), also a sharded one
    (--format sharded: read from disk as training goes, checked against its
    checksums first). The model options below default to
    PoissBPE's own defaults.

    A checkpoint is kept after every epoch in RUN.partial/; RUN itself is written
    only when training has finished. After Ctrl-C, continue with --resume: the result
    is the same as that of an uninterrupted run.

    Several processes share every minibatch with --nproc P on one machine, or under
    torchrun on one or many (docs/scale.md).

    \b
    Examples:
      bpetopics train path/to/texts                   # saves runs/texts
      bpetopics train 20newsgroups --out runs/20ng
      bpetopics train 20newsgroups --categories sci.space,rec.autos --topics 10 --out runs/two
      bpetopics train corpora/20ng --topics 50 --bits 128 --epochs 30 --seed 1 --out runs/20ng-50
      bpetopics train path/to/texts --vocab-size 5000 --min-df 2 --device cpu --out runs/mine
      bpetopics train path/to/texts --test-size 0.2 --out runs/mine   # then: bpetopics evaluate runs/mine
      bpetopics train corpora/big-sharded --epochs 2 --out runs/big
      bpetopics train corpora/big-sharded --nproc 2 --out runs/big
      torchrun --nproc-per-node 2 -m bpetopics train corpora/big-sharded --out runs/big
      bpetopics train 20newsgroups --topics 20 --seed-topics seeds.txt --out runs/guided
      bpetopics train --out runs/20ng --resume
    """
    from bpetopics.runs.launch import world_from_env
    from bpetopics.seed_topics import read_seed_topics
    from bpetopics.text.settings import CorpusSettings

    out = out if out is not None else default_run_folder(corpus, resume)
    try:
        seed_topics = read_seed_topics(seed_file) if seed_file is not None and not resume else None
    except ValueError as exc:
        raise UserError(f"--seed-topics: {exc}") from None
    if seed_topics is not None and len(seed_topics) > params["n_topics"]:
        raise UserError(f"--seed-topics: {seed_file} has {len(seed_topics)} seed topics but --topics is "
                        f"{params['n_topics']}: give at most one line per topic")

    try:
        world = world_from_env()
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if nproc > 1 and world is not None:
        raise UserError("--nproc starts its own processes: leave it out under torchrun, whose --nproc-per-node "
                        "decides how many")
    if nproc > 1 or world is not None:   # processes sharing a step take the steps in order
        params = dict(params, pipeline=False)
        _check_processes(params, out, resume, nproc if world is None else world[1], device_given=(
            ctx.get_parameter_source("device") is ParameterSource.COMMANDLINE), launching=nproc > 1)
    explicit = [p.opts[-1] for p in ctx.command.get_params(ctx)
                if p.expose_value and p.name not in ("out", "resume", "overwrite", "quiet", "top", "device", "nproc")
                and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE] if resume else []
    resume_hint = f"bpetopics train --out {shlex.quote(str(out))} --resume" + (f" --nproc {nproc}" if nproc > 1 else "")
    resume_hint = resume_hint if world is None else f"the same torchrun command with `{resume_hint}`"
    options = dict(corpus=corpus, out=out, resume=resume, overwrite=overwrite, quiet=quiet, top=top,
                   settings=CorpusSettings.from_options(
                       vocab_size=vocab_size, min_df=min_df, max_df=max_df, stopwords=stopwords, data_home=data_home,
                       categories=categories, max_docs=max_docs, seed=corpus_seed, test_size=test_size,
                       passages=passages, text_field=text_field,
                       id_field=id_field, label_field=label_field, skip_bad_lines=skip_bad_lines,
                       time_field=time_field),
                   params=params, seed_topics=seed_topics, explicit=explicit, resume_hint=resume_hint, summary=True,
                   device_given=ctx.get_parameter_source("device") is ParameterSource.COMMANDLINE)
    if nproc > 1:
        from bpetopics.runs.launch import small_batch_note
        batch_size, device = _batch_and_device(params, out, resume)
        note = small_batch_note(batch_size, nproc, device)
        if note:
            click.echo(note, err=True)
        return _launch(options, nproc)
    if world is None:
        return _train(ctx, options)
    _train_rank(options, ctx)


def _batch_and_device(params: dict, out, resume: bool) -> tuple:
    """(batch size, device) the training will use: with --resume the interrupted run's
    batch size (its settings are kept) and device (unless --device is given)."""
    batch_size, device = params.get("batch_size"), params.get("device")
    if resume:
        from bpetopics.runs.job import read_job
        from bpetopics.runs.run import RunError

        try:
            saved = read_job(out)["params"]
        except (RunError, KeyError, TypeError):    # nothing to resume: the processes say so
            return batch_size, device
        batch_size = saved.get("batch_size", batch_size)
        if click.get_current_context().get_parameter_source("device") is not ParameterSource.COMMANDLINE:
            device = saved.get("device", device)
    return batch_size, device


def _train_rank(options, ctx=None) -> None:
    """This process's part of a torch.distributed job (torchrun's environment, or
    ``--nproc``'s: :func:`bpetopics.runs.launch.launch` calls it with no ``ctx``)."""
    from bpetopics.runs.distributed import joined
    from bpetopics.runs.launch import RankLostError

    try:
        with joined(options["params"]["device"]) as group, ctx or click.Context(train, info_name="train") as ctx:
            _train(ctx, options, group)
    except RankLostError as exc:
        raise UserError(str(exc)) from None


def _launch(options, nproc: int) -> None:
    """``--nproc``: start the processes, wait, and report the first failure in one line
    (with where the last checkpoint is), or the run's summary."""
    import torch

    from bpetopics.runs.job import interrupted_note
    from bpetopics.runs.launch import launch

    outcome = launch(_train_rank, (dict(options, summary=False, launched=True),), nproc,
                     max(1, torch.get_num_threads() // nproc))
    if outcome.stopped is not None and not outcome.ok:
        click.echo(launcher_interruption_message(options["out"], options["resume_hint"]), err=True)
        raise click.exceptions.Exit(128 + outcome.stopped)
    if not outcome.ok and outcome.exitcodes[0] == 0 and Path(options["out"], "config.json").is_file():
        click.echo(f"Note: {outcome.error()} after the last training step; the run was saved", err=True)
    elif not outcome.ok:
        message = outcome.error()
        if "--resume" not in message and "training process" in message:
            message += f"; {interrupted_note(options['out'])}: resume with `{options['resume_hint']}`"
        raise UserError(message)
    _print_summary(options["out"], options["top"])


def _check_processes(params: dict, out, resume: bool, n_processes: int, device_given: bool,
                     launching: bool) -> None:
    """Refuse, before any process starts, what cannot train in ``n_processes`` processes
    sharing each step: a bad option (sizes included), an option that trains in one
    process only (with --resume: the interrupted run's), more processes than GPUs."""
    from bpetopics.models import PoissBPE
    from bpetopics.runs import job as jobs

    if resume:
        with run_errors():
            recorded = dict(jobs.read_job(out)["params"])
        if device_given:
            recorded["device"] = params["device"]
        params = recorded
    else:
        check_model_params(params)
    try:
        PoissBPE(**params).check_processes(n_processes, label=option_flag)
    except ValueError as exc:
        if resume:
            raise UserError(f"{out} cannot resume in several processes: {str(exc).split(';')[0]}; resume it in "
                            "one process (without --nproc)") from None
        raise UserError(str(exc)) from None
    if launching and str(params["device"]) != "cpu":
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if gpus and n_processes > gpus:
            raise UserError(f"--nproc {n_processes} needs a GPU a process and this machine has {gpus}: lower "
                            "--nproc, or train on the CPUs with --device cpu")


def _print_summary(out, top: int) -> None:
    from bpetopics.runs.labels import topic_labels
    from bpetopics.runs.topics import format_rows, topic_rows

    run = open_run(out, device=None)
    s = run.summary
    click.echo(f"Saved run to {out}: {s['n_topics']} topics, {s['n_bits']} bits, {s['epochs']} epoch(s), "
               f"{s['documents']:,} documents; mean active bits {s['mean_active_bits']:.2f}, "
               f"final objective {s['final_objective']:.2f}")
    with run_errors():
        labels = topic_labels(run, rebuild=False)
    click.echo(format_rows(topic_rows(run, top, labels), "table"))


def _train(ctx, o: dict, group=None) -> None:
    """The command's work in one process: prepare (or resume) the job, train, save.
    With ``group`` (a torch.distributed job) rank 0 does all of it and sends the job
    to the other ranks, which train their share (:func:`_follow`)."""
    from bpetopics.runs.run import check_run_destination

    if group is not None and group.rank != 0:
        return _follow(group)
    corpus, out, resume, overwrite, quiet, params = (o[k] for k in ("corpus", "out", "resume", "overwrite",
                                                                     "quiet", "params"))
    job = None
    try:
        with run_errors():      # before importing torch: a refusal takes no time
            check_run_destination(out, overwrite)
        from bpetopics.runs import job as jobs
        from bpetopics.text.prepare import prepare_training_corpus
        from bpetopics.text.sources import corpus_record

        lock = _lock(out, ctx)

        if resume:
            with run_errors():
                record = jobs.read_job(out)
            if "update" in (record.get("corpus") or {}):
                raise UserError(f"{out}.partial holds an update: resume it with `bpetopics update --out {out} --resume`")
            if o["explicit"]:
                click.echo(f"Note: {', '.join(o['explicit'])} ignored with --resume: the interrupted run's settings "
                           "are kept", err=True)
            if o["device_given"]:
                record["params"]["device"] = params["device"]
            check_model_params(record["params"])
            with run_errors():
                job = jobs.resume_job(out, record=record, lock=lock)
            warn_threads(job.saved_threads)
            if not quiet:
                click.echo(f"Resuming {out} at epoch {getattr(job.model, 'epoch_', 0)} of "
                           f"{planned_epochs(job.model)}", err=True)
        else:
            if corpus is None:
                raise UserError(NO_CORPUS)
            with run_errors():
                jobs.check_job_destination(out, overwrite, lock=lock)
            params["progress"] = False
            check_model_params(params)
            settings = o["settings"]
            with corpus_errors():
                splits = prepare_training_corpus(corpus, settings)
            train_corpus = splits["train"]
            if train_corpus.n_docs == 0:
                raise UserError(f"the corpus {corpus} has no training document with a word of its vocabulary")
            for split in splits.values():
                if split.dropped_note():
                    click.echo(f"Note: {split.dropped_note()}", err=True)
            _check_sizes(params, train_corpus)
            if o.get("seed_topics") is not None:
                from bpetopics.seed_topics import seed_words_for

                try:
                    params["seed_words"] = seed_words_for(o["seed_topics"], train_corpus.vocabulary,
                                                           lambda line: click.echo(line, err=True))
                except ValueError as exc:
                    raise UserError(f"--seed-topics: {exc}") from None
            with run_errors():
                job = jobs.start_job(out, params, train_corpus, corpus_record(corpus, settings, splits),
                                     overwrite=overwrite, lock=lock)
            if not quiet:
                from bpetopics.bpe.device import resolve_device

                s = train_corpus.summary()
                units = f"{s['documents']:,} documents"
                if settings.passages is not None:
                    from bpetopics.text.passages import source_documents

                    units = f"{s['documents']:,} {settings.passages} of {source_documents(train_corpus.ids):,} documents"
                click.echo(f"Training on {corpus}: {units}, {s['vocabulary']:,} words, {s['tokens']:,} tokens",
                           err=True)
                for note in (long_documents_note(train_corpus.n_docs, s["tokens"], settings.passages),
                             small_corpus_note(train_corpus.n_docs, corpus, params["n_topics"]),
                             short_texts_note(train_corpus.n_docs, train_corpus.counts.getnnz(), corpus,
                                              params["n_topics"]),
                             cuda_batch_note(resolve_device(job.model.device), job.model.batch_size)):
                    if note:
                        click.echo(note, err=True)
    finally:
        if group is not None:       # the other ranks wait for the job (None: they stop)
            from bpetopics.runs.distributed import share_job

            share_job(job, group)
    if group is not None:
        job.model.step_group = group
    try:
        fit_with_progress(job, quiet, o["resume_hint"], ctx, launched=o.get("launched", False))
    finally:
        vars(job.model).pop("step_group", None)    # saving the run is rank 0's alone
    try:
        with run_errors():
            jobs.finish_job(job, overwrite=overwrite, group=group)
    except OSError as exc:  # the run's temp folder is removed; the last checkpoint is kept
        raise UserError(describe_os_error(exc, f"save the trained model from its checkpoint, which is "
                                               f"kept: {o['resume_hint']}", out)) from None
    if o["summary"]:
        _print_summary(out, o["top"])


def _follow(group) -> None:
    """A rank other than 0: train the job rank 0 sends (no checkpoint, no output), or
    stop with exit code 2 when rank 0 has none (it reports why). Ctrl-C or SIGTERM stops
    it quietly with 130 or 143: rank 0 says where the training stands."""
    from bpetopics.runs.distributed import follow_job
    from bpetopics.runs.launch import Stopped, stop_on_signals

    try:
        with stop_on_signals():
            followed = follow_job(group)
    except Stopped as exc:
        raise click.exceptions.Exit(exc.exit_code) from None
    if not followed:
        raise click.exceptions.Exit(2)
