"""``bpetopics images table``: the paper's Table 1 (BPE models against VAEs on images)."""

from __future__ import annotations

from pathlib import Path

import click

from bpetopics.cli import UserError, main

#: The budgets offered by --budget (bpetopics.images.table.BUDGETS).
PUBLIC_BUDGETS = ("tiny", "small", "full")


def _budget(ctx, param, value):
    from bpetopics.experiments.image_table import BUDGETS

    if value not in BUDGETS:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(PUBLIC_BUDGETS)}")
    return value


def _datasets(ctx, param, value):
    from bpetopics.experiments.image_table import DATASETS

    names = [n.strip() for item in value for n in item.split(",") if n.strip()]
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        raise click.BadParameter(f"unknown data set {', '.join(map(repr, unknown))}; "
                                 f"choose from {', '.join(DATASETS)}")
    return tuple(dict.fromkeys(names))


@main.group()
def images():
    """Image experiments: GaussBPE / BernBPE against VAE baselines.

    \b
    Examples:
      bpetopics images table --data-root ../shared/data --out runs/table1
    """


@images.command("table")
@click.option("--data-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder with the data sets (MNIST under mnist/MNIST/raw or MNIST/raw, "
                   "CIFAR-10 under cifar10/); default $BPETOPICS_DATA or ~/.cache/bpetopics.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Output folder: table1.csv, table1.md, recon_*.png, seconds_per_epoch.png.")
@click.option("--budget", default="small", show_default=True, callback=_budget,
              metavar="[tiny|small|full]",
              help="tiny: 150 / 100 images per data set, 2 epochs: a check that everything runs "
                   "(seconds; the numbers mean nothing). "
                   "small: 2,000 / 1,000 images per data set, 4 BPE epochs, no CIFAR-10 "
                   "(18 min measured on one thread of a busy 2-core machine). full: whole "
                   "splits and CIFAR-10, for a GPU.")
@click.option("--datasets", multiple=True, callback=_datasets,
              help="Data sets to run, comma-separated or repeated: mnist, scaled_mnist, "
                   "binary_mnist, cifar10 (default: the budget's).")
@click.option("--device", default="auto", show_default=True,
              help="auto (CUDA when present), cpu or cuda.")
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
@click.option("--bpe-epochs", type=click.IntRange(min=1), default=None,
              help="Override the budget's BPE epochs (e.g. to fit a lent GPU's time).")
@click.option("--vae-epochs", type=click.IntRange(min=1), default=None,
              help="Override the budget's epochs of both VAE baselines.")
@click.option("--progress/--no-progress", default=False, show_default=True,
              help="Show progress bars while training.")
@click.option("--overwrite", is_flag=True, help="Replace the files of a table already in --out.")
def table(data_root, out, budget, datasets, device, seed, bpe_epochs, vae_epochs, progress, overwrite):
    """Train all models of the paper's Table 1 and write it next to ours.

    \b
    Examples:
      bpetopics images table --data-root ../shared/data --out runs/table1
      bpetopics images table --out runs/table1-full --budget full --device cuda
      bpetopics images table --out runs/mnist --datasets mnist,binary_mnist
      bpetopics images table --out runs/cifar --budget full --datasets cifar10 --bpe-epochs 3
    """
    from dataclasses import replace

    from bpetopics.core.device import resolve_device
    from bpetopics.experiments.image_table import BUDGETS, run_table

    if out.exists() and not overwrite and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} already exists and is not empty: pass --overwrite to replace its files, "
                        "or choose another --out")
    try:
        resolve_device(device)
    except ValueError as err:
        raise UserError(str(err)) from None
    budget = BUDGETS[budget]
    if bpe_epochs:
        budget = replace(budget, bpe_epochs=bpe_epochs)
    if vae_epochs:
        budget = replace(budget, vae_epochs=vae_epochs, gsvae_epochs=vae_epochs)
    try:
        rows, paths = run_table(data_root, out, budget, datasets or None, device, seed,
                                progress, log=click.echo)
    except FileNotFoundError as err:
        # the library's message names its own arguments (download=True, data_root): name the flags
        where = str(err).splitlines()[0].split("; pass download=True")[0]
        raise UserError(f"{where}; give --data-root FOLDER where they are (or set $BPETOPICS_DATA)") from None
    click.echo((Path(out) / "table1.md").read_text(encoding="utf-8"))
    click.echo("wrote " + ", ".join(str(p) for p in paths))
