"""``bpetopics over-time RUN --out shares.csv``: topic shares per span of time (or per
label), with their spread, as a table or a plot."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import (Choice, IntRange, UserError, describe_os_error, main, open_run, refuse_existing,
                           run_errors)

SUFFIXES = (".csv", ".png")


def _topic_list(value):
    if value is None:
        return None
    try:
        return [int(t) for t in value.replace(" ", "").split(",") if t]
    except ValueError:
        raise UserError(f"--topics takes comma-separated topic numbers such as 0,3,7; got {value!r}") from None


@main.command("over-time")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="The file to write: a .csv table (one row per bin and topic) or a .png plot.")
@click.option("--bins", type=IntRange(min=1), default=None,
              help="Equal spans from the first timestamp to the last [default: 10].")
@click.option("--freq", default=None, metavar="D|W|M|Q|Y",
              help="Dates only: calendar periods (pandas frequency: day, week, month, quarter, year) "
                   "instead of --bins.")
@click.option("--by-label", is_flag=True,
              help="Shares per label of the corpus (--label-field, or label subfolders) instead of over time.")
@click.option("--interval", type=Choice(("se", "bootstrap")), default="se", show_default=True,
              help="The spread's interval: share ± 1.96 standard errors, or bootstrap percentiles (2.5, 97.5).")
@click.option("--n-boot", type=IntRange(min=1), default=1000, show_default=True,
              help="Resamples of each bin's documents (--interval bootstrap).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--topics", "topic_list", default=None, metavar="T,T,...",
              help="Topics drawn in the plot [default: the --top-topics largest].")
@click.option("--top-topics", "top", type=IntRange(min=1), default=None,
              help="Topics drawn in the plot, largest mean share first [default: 8 over time, 20 per label].")
@click.option("--overwrite", is_flag=True, help="Replace a file already at --out.")
def over_time(run, out, bins, freq, by_label, interval, n_boot, seed, topic_list, top, overwrite):
    """Topic shares over time, or per label, with their spread.

    For each span of time (or each label), the mean share of every topic among the
    span's training documents (their mixtures f(z)), its standard error, a 95%
    interval and the number of documents. Timestamps come from the corpus the run
    was trained on: train on a .jsonl or .csv corpus with --time-field (ISO dates
    or numbers). Labels (--by-label) come from its --label-field, or from label
    subfolders, or 20 Newsgroups' groups.

    \b
    Examples:
      bpetopics train posts.jsonl --time-field date --out runs/posts
      bpetopics over-time runs/posts --freq M --out shares.csv
      bpetopics over-time runs/posts --bins 20 --out shares.png
      bpetopics over-time runs/20ng --by-label --out groups.png
    """
    if out.is_dir():
        raise UserError(f"--out {out} is a folder: give a file name such as {out / 'shares.csv'}")
    if out.suffix.lower() not in SUFFIXES:
        raise UserError(f"--out must be a .csv table or a .png plot; got {out}")
    if by_label and (bins is not None or freq is not None):
        raise UserError("--bins and --freq split time: leave them out with --by-label")
    if bins is not None and freq is not None:
        raise UserError("give either --bins (equal spans) or --freq (calendar periods), not both")
    topics = _topic_list(topic_list)
    refuse_existing([out], overwrite)
    from bpetopics.runs.over_time import run_topic_shares

    loaded = open_run(run)
    n_topics = loaded.model.topic_word_.shape[0]
    if topics is not None and not all(0 <= t < n_topics for t in topics):
        raise UserError(f"--topics must lie in 0..{n_topics - 1} (the run has {n_topics} topics); got {topic_list}")
    with run_errors():
        frame = run_topic_shares(loaded, by_label=by_label, bins=10 if bins is None else bins, freq=freq,
                                 interval=interval, n_boot=n_boot, seed=seed)
    try:
        if out.suffix.lower() == ".csv":
            from bpetopics.files import atomic_path

            with atomic_path(out) as tmp:
                frame.to_csv(tmp, index=False)
        else:
            from bpetopics.viz import plot_topics_over_time, plot_topics_per_class

            plot = plot_topics_per_class if by_label else plot_topics_over_time
            title = (f"{loaded.path.name}: topics per label (percent)" if by_label
                     else f"{loaded.path.name}: topics over time (shaded: 95% interval)")
            plot(frame, out, topics=topics, top=top or (20 if by_label else 8), title=title)
    except OSError as exc:
        raise UserError(describe_os_error(exc, "run the command again (nothing was written)", path=out)) from None
    groups = frame["class" if by_label else "bin"].nunique()
    empty = int((frame.drop_duplicates("class" if by_label else "bin")["documents"] == 0).sum())
    note = f", {empty} without a document" if empty else ""
    click.echo(f"Wrote {out} ({n_topics} topics x {groups} {'labels' if by_label else 'bins'}{note})")
