"""``bpetopics images table``: train every model of the paper's Table 1 and write it
next to ours (:mod:`bpetopics.experiments.image_table`).
"""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.bpe.interruptions import interruptions_kept
from bpetopics.cli import EpochsOrAll, FloatRange, IntRange, UserError, device_option, image_commands, option

#: The budgets offered by --budget (bpetopics.images.table.BUDGETS).
PUBLIC_BUDGETS = ("tiny", "small", "full")


def _budget(ctx, param, value):
    from bpetopics.experiments.image_table import BUDGETS

    if value not in BUDGETS:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(PUBLIC_BUDGETS)}")
    return value


def _names(ctx, param, value):
    return tuple(dict.fromkeys(n.strip() for item in value for n in item.split(",") if n.strip()))


def _datasets(ctx, param, value):
    from bpetopics.experiments.image_table import DATASETS

    names = _names(ctx, param, value)
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        raise click.BadParameter(f"unknown data set {', '.join(map(repr, unknown))}; "
                                 f"choose from {', '.join(DATASETS)}")
    return names


def _on_gpu(device) -> bool:
    """Whether ``device`` resolves to CUDA (an unknown one: False, refused later with its message)."""
    from bpetopics.bpe.device import resolve_device
    try:
        return resolve_device(device).type == "cuda"
    except ValueError:
        return False


@image_commands.command("table")
@click.option("--data-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder with the data sets (MNIST under mnist/MNIST/raw or MNIST/raw, "
                   "CIFAR-10 under cifar10/); default $BPETOPICS_DATA or ~/.cache/bpetopics.")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Output folder: table1.csv, table1.md, recon_*.png, seconds_per_epoch.png.")
@click.option("--budget", default="small", show_default=True, callback=_budget,
              metavar="[tiny|small|full]",
              help="tiny: 150 / 100 images per data set, 2 epochs: a check that everything runs "
                   "(seconds; the numbers mean nothing). "
                   "small: 2,000 / 1,000 images per data set, 8 BPE epochs (GaussBPE 800 bits, "
                   "sigma 0.1; BernBPE 200), no CIFAR-10 (tens of CPU minutes on one thread; "
                   "docs/results/images.md). full: whole splits and CIFAR-10, 30 BPE epochs, sigma 0.1, for a GPU.")
@click.option("--datasets", multiple=True, callback=_datasets,
              help="Data sets to run, comma-separated or repeated: mnist, scaled_mnist, "
                   "binary_mnist, cifar10 (default: the budget's).")
@click.option("--models", multiple=True, callback=_names,
              help="Train only these models, comma-separated or repeated: gaussbpe, bernbpe, vae-fixed, "
                   "vae-learned, gsvae (default: all). Pieces of one table trained apart (e.g. one model a "
                   "process sharing a GPU) join with `images table --resume` once their runs are in one --out.")
@device_option()
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
@click.option("--bpe-epochs", type=IntRange(min=1), default=None,
              help="Override the budget's BPE epochs (e.g. to fit the time a GPU is available).")
@click.option("--vae-epochs", type=IntRange(min=1), default=None,
              help="Override the budget's epochs of both VAE baselines.")
@option("--max-images", "n_train", type=IntRange(min=1), default=None, old=("--n-train",),
        help="Override the budget's training images per data set (a class-balanced seeded subset; "
             "docs/results/images.md has scaled MNIST below the paper's error from 10,000).")
@click.option("--sigma", type=FloatRange(min=0, min_open=True), default=None,
              help="Override GaussBPE's noise standard deviation (the budget's: small and full 0.1). Smaller buys "
                   "detail with bits: docs/defaults.md has MSE and sparsity against it.")
@click.option("--shortlist", type=IntRange(min=0), default=None,
              help="Override the BPE pursuit's shortlist (the budget's: small and full 32, tiny 8; 0 scores "
                   "every bit, the exact greedy pursuit).")
@click.option("--fast-stop-epochs", type=EpochsOrAll(), default=None,
              help="Override the BPE models' first epochs (N or all) that stop an image at once (a cheaper "
                   "warm-up) [default: the models' own].")
@click.option("--tf32", is_flag=True,
              help="On a GPU, matrix products in TF32 instead of float32: faster BPE epochs; codes may "
                   "differ from float32's at near ties, and GaussBPE's test error can be higher "
                   "(docs/results/images.md).")
@click.option("--progress/--no-progress", default=False, show_default=True,
              help="Show progress bars while training.")
@click.option("--resume", is_flag=True,
              help="Continue the table in --out (same options): finished models are kept, an interrupted "
                   "one continues from its last checkpoint.")
@click.option("--overwrite", is_flag=True, help="Replace the files of a table already in --out.")
def table(data_root, out, budget, datasets, models, device, seed, bpe_epochs, vae_epochs, n_train, sigma, shortlist,
          fast_stop_epochs, tf32, progress, resume, overwrite):
    """Train all models of the paper's Table 1 and write it next to ours.

    \b
    Examples:
      bpetopics images table --data-root ../shared/data --out runs/table1
      bpetopics images table --out runs/table1-full --budget full --device cuda
      bpetopics images table --out runs/mnist --datasets mnist,binary_mnist
      bpetopics images table --out runs/cifar --budget full --datasets cifar10 --bpe-epochs 3
      bpetopics images table --out runs/table1-full --budget full --device cuda --resume
      bpetopics images table --out runs/scaled --datasets scaled_mnist --max-images 10000
      bpetopics images table --out runs/vae --datasets mnist --models vae-fixed,vae-learned

    Every model is an image run under OUT/runs/ with a checkpoint after every epoch:
    after an interruption, the same command with --resume keeps the finished models and
    continues the interrupted one (the same table as an uninterrupted run).
    """
    import shlex
    import sys
    from dataclasses import replace

    from bpetopics.bpe.device import allow_tf32, resolve_device
    from bpetopics.experiments.image_table import BUDGETS, run_table

    if resume and overwrite:
        raise UserError("--resume continues the table in --out and --overwrite starts it again: give one of them")
    if out.exists() and not (overwrite or resume) and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} already exists and is not empty: pass --resume to continue its table, "
                        "--overwrite to replace its files, or choose another --out")
    try:
        resolve_device(device)
    except ValueError as err:
        raise UserError(str(err)) from None
    if tf32:
        allow_tf32()
    overrides = {"bpe_epochs": bpe_epochs, "vae_epochs": vae_epochs, "gsvae_epochs": vae_epochs, "sigma": sigma,
                 "n_train": n_train, "fast_stop_epochs": fast_stop_epochs}
    budget = replace(BUDGETS[budget], **{k: v for k, v in overrides.items() if v is not None})
    if shortlist is not None:
        budget = replace(budget, shortlist=shortlist or None)     # 0: every bit
    if budget.fast_stop_epochs and not budget.shortlist:
        raise UserError("--fast-stop-epochs needs a shortlist, and --shortlist 0 scores every bit: drop one of them")
    if budget.name == "full" and not _on_gpu(device):
        click.echo("Note: the full budget is whole splits for a GPU; on a CPU one GaussBPE epoch of MNIST takes "
                   "over half an hour on a thread (docs/results/images.md); --budget small is the CPU's.", err=True)
    from bpetopics.experiments.image_table_runs import check_models

    try:
        check_models(models, datasets or budget.datasets, budget)
    except ValueError as err:
        raise UserError(f"--models: {err}") from None
    from bpetopics.images.sources import ImageSourceError
    from bpetopics.runs.folder import RunError

    given = {"--out": out, "--data-root": data_root, "--budget": budget.name, "--datasets": ",".join(datasets),
             "--models": ",".join(models),
             "--device": device, "--seed": seed, "--bpe-epochs": bpe_epochs, "--vae-epochs": vae_epochs,
             "--max-images": n_train, "--sigma": sigma, "--shortlist": shortlist, "--fast-stop-epochs": fast_stop_epochs}
    hint = "bpetopics images table " + " ".join(f"{k} {shlex.quote(str(v))}" for k, v in given.items()
                                                if v not in (None, "")) + (" --tf32" if tf32 else "") + " --resume"
    try:
        with interruptions_kept():
            rows, paths = run_table(data_root, out, budget, datasets or None, device, seed, progress,
                                    log=click.echo, resume=resume, overwrite=overwrite, models=models or None)
    except KeyboardInterrupt:
        click.echo(f"\nInterrupted: finished models and the last epoch are kept. Continue with:\n  {hint}",
                   err=True)
        sys.exit(130)
    except (RunError, ImageSourceError) as err:
        raise UserError(str(err).splitlines()[0]) from None
    except FileNotFoundError as err:
        # the library's message names its own arguments (download=True, data_root): name the flags
        where = str(err).splitlines()[0].split("; pass download=True")[0]
        raise UserError(f"{where}; give --data-root FOLDER where they are (or set $BPETOPICS_DATA)") from None
    click.echo((Path(out) / "table1.md").read_text(encoding="utf-8"))
    click.echo("wrote " + ", ".join(str(p) for p in paths))
