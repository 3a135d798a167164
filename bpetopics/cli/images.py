"""``bpetopics images train / encode / show``: train, encode and show image runs.

They call :mod:`bpetopics.runs.image_job` and :mod:`bpetopics.runs.image_explore`;
``images table`` (the paper's Table 1) is :mod:`bpetopics.cli.image_table`, and the
``images`` group both register on is :func:`bpetopics.cli.image_commands`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bpetopics.bpe.interruptions import interruptions_kept
from bpetopics.cli import (Choice, EpochsOrAll, FloatRange, IntRange, UserError, device_option, image_commands,
                           open_run, option, refuse_existing, run_errors)

MODEL_CHOICES = ("gaussbpe", "bernbpe", "vae", "gsvae")
DATA_ROOT_HELP = ("Folder with the data sets (MNIST under mnist/MNIST/raw or MNIST/raw, CIFAR-10 under "
                  "cifar10/); default $BPETOPICS_DATA or ~/.cache/bpetopics.")


def _images_error(exc):
    return UserError(str(exc).splitlines()[0])


#: ``images train``'s option for each parameter of the BPE image models it sets.
IMAGE_OPTIONS = {"n_bits": "--bits", "n_latent": "--bits", "n_variables": "--bits", "batch_size": "--batch-size",
                 "hidden": "--hidden", "decoder_hidden": "--hidden", "epochs": "--epochs",
                 "lr": "--lr", "shortlist": "--shortlist", "sigma": "--sigma", "random_state": "--seed",
                 "device": "--device", "fast_stop_epochs": "--fast-stop-epochs"}


@image_commands.command("train")
@click.argument("dataset")
@click.option("--model", "model_name", type=Choice(MODEL_CHOICES), required=True,
              help="gaussbpe, bernbpe (pixels in [0, 1]), vae (Gaussian VAE) or gsvae (Gumbel-Softmax VAE).")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True, help="The run folder to write.")
@click.option("--data-root", type=click.Path(file_okay=False, path_type=Path), default=None, help=DATA_ROOT_HELP)
@option("--max-images", "limit", type=IntRange(min=1), default=None, old=("--limit",),
        help="Train on a class-balanced seeded subset of this many images (a folder: a seeded sample).")
@click.option("--epochs", type=IntRange(min=1), default=None, help="Passes over the images [default: the model's].")
@click.option("--bits", type=IntRange(min=1), default=None,
              help="Code size: bits K (BPE), latents (vae), 10-way variables (gsvae) [default: the model's].")
@click.option("--batch-size", type=IntRange(min=1), default=None, help="Images per minibatch [default: the model's].")
@click.option("--lr", type=FloatRange(min=0, min_open=True), default=None, help="Adam learning rate [default: the model's].")
@click.option("--hidden", default=None, metavar="N,N,...",
              help="Decoder hidden layer sizes, comma-separated [default: the model's, 256,512].")
@click.option("--shortlist", type=IntRange(min=0), default=None,
              help="BPE only: each pursuit step after the first scores exactly only this many bits an "
                   "image, ranked by a first-order estimate of their gain (not the exact greedy pursuit's "
                   "codes: on trained models they reach a higher objective on most images, "
                   "docs/results/images.md); 0 scores every bit, the exact greedy pursuit [default: 32].")
@click.option("--fast-stop", is_flag=True,
              help="BPE only: an image stops as soon as its shortlist gains nothing, instead of after "
                   "widening it and the exact step over the bits left: fewer bits per image, several times faster "
                   "epochs, a higher error.")
@click.option("--fast-stop-epochs", type=EpochsOrAll(), default=None,
              help="BPE only: the first N epochs (or all) stop an image as soon as its shortlist gains nothing "
                   "(a cheaper warm-up, several times faster epochs); the later epochs and the encodings take "
                   "the exact stop (docs/defaults.md has the error and the time measured) "
                   "[default: 0].")
@click.option("--sigma", type=FloatRange(min=0, min_open=True), default=None,
              help="GaussBPE only: the pixels' noise standard deviation. Smaller buys detail with bits: "
                   "Table 1's small budget uses 0.1 (docs/defaults.md) [default: the model's, 0.3].")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed (model and subset).")
@device_option()
@click.option("--tf32", is_flag=True,
              help="On a GPU, matrix products in TF32 instead of float32: faster BPE epochs; codes may "
                   "differ from float32's at near ties, and GaussBPE's test error can be higher "
                   "(docs/results/images.md).")
@click.option("--resume", is_flag=True, help="Continue the interrupted training of --out from its last checkpoint.")
@click.option("--overwrite", is_flag=True, help="Replace a finished run (or an interrupted one) at --out.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no line per epoch.")
@click.pass_context
def train(ctx, dataset, model_name, out, data_root, limit, epochs, bits, batch_size, lr, hidden, shortlist,
          fast_stop, fast_stop_epochs, sigma, seed, device, tf32, resume, overwrite, quiet):
    """Train one image model on DATASET and save it as a run folder.

    DATASET is mnist, scaled_mnist, binary_mnist or cifar10 (from --data-root; the
    train split), or a folder of PNG/JPEG images of one size. A checkpoint is saved
    after every epoch in OUT.partial/; after Ctrl-C, --resume continues it (the same
    model as an uninterrupted training). OUT is written only when training has finished.

    \b
    Examples:
      bpetopics images train mnist --model gaussbpe --out runs/mnist --max-images 2000 --epochs 4
      bpetopics images train mnist --model gaussbpe --out runs/mnist --max-images 2000 --epochs 8 --sigma 0.1
      bpetopics images train binary_mnist --model bernbpe --out runs/bin --bits 100
      bpetopics images train photos/ --model vae --out runs/photos --device cuda
      bpetopics images train mnist --model gaussbpe --out runs/mnist --resume
    """
    import shlex

    from bpetopics.runs.run import check_run_destination

    with run_errors():      # before importing torch: a refusal takes no time
        check_run_destination(out, overwrite)
    from bpetopics.images.sources import ImageSourceError, load_images
    from bpetopics.models.registry import IMAGE_MODELS
    from bpetopics.runs import image_job
    from bpetopics.runs.image_folder import image_run_summary

    model = IMAGE_MODELS[model_name]
    try:
        hidden = None if hidden is None else [int(v) for v in hidden.replace(" ", "").split(",") if v]
    except ValueError:
        raise UserError(f"--hidden takes comma-separated integers such as 256,512; got {hidden!r}") from None
    for flag, given in (("--shortlist", shortlist is not None), ("--fast-stop", fast_stop),
                        ("--fast-stop-epochs", fast_stop_epochs is not None)):
        if given and model_name not in ("gaussbpe", "bernbpe"):
            raise UserError(f"{flag} is for the BPE models (gaussbpe, bernbpe), not {model_name}: leave it out")
    if sigma is not None and model_name != "gaussbpe":
        raise UserError(f"--sigma is GaussBPE's noise level, not {model_name}'s: leave it out")
    for flag, given in (("--fast-stop", fast_stop), ("--fast-stop-epochs", fast_stop_epochs)):
        if given and shortlist == 0:
            raise UserError(f"{flag} needs a shortlist, and --shortlist 0 scores every bit: drop one of them")
    if fast_stop and fast_stop_epochs is not None:
        raise UserError("--fast-stop stops every epoch and encoding at once; --fast-stop-epochs only the first "
                        "epochs: drop one of them")
    hint = (f"bpetopics images train {shlex.quote(dataset)} --model {model_name} --out {shlex.quote(str(out))} "
            "--resume")

    def after_epoch(m, info):
        from tqdm import tqdm

        if not quiet:
            shown = ", ".join(f"{k} {info[k]:.4g}" for k in ("objective", "loss", "active_bits") if k in info)
            tqdm.write(f"epoch {info['epoch']}/{m.epochs}: {shown}", file=sys.stderr)   # above the bar

    with run_errors():
        if resume:
            data, params = None, None
        else:
            is_bpe = model_name in ("gaussbpe", "bernbpe")
            params = image_job.image_params(model, bits=bits, epochs=epochs, seed=seed, device=device,
                                            batch_size=batch_size, lr=lr, hidden=hidden, shortlist=shortlist,
                                            exact_stop=(not fast_stop) if is_bpe else None,
                                            fast_stop_epochs=fast_stop_epochs, sigma=sigma)
            if is_bpe:   # sizes too: refused before the images are read, naming the option
                image_job.check_image_params(model, params, lambda name: IMAGE_OPTIONS.get(name, name))
    if not resume:
        try:
            data = load_images(dataset, data_root, split="train", limit=limit, seed=seed)
        except ImageSourceError as exc:
            raise _images_error(exc) from None
    device_given = ctx.get_parameter_source("device") != click.core.ParameterSource.DEFAULT
    if tf32:
        from bpetopics.bpe.device import allow_tf32
        allow_tf32()
    try:
        with run_errors(), interruptions_kept():
            image_job.train_image_run(out, model, params, data, overwrite=overwrite, resume=resume,
                                      device=device if device_given else None, after_epoch=after_epoch,
                                      progress=not quiet, label=lambda name: IMAGE_OPTIONS.get(name, name))
    except KeyboardInterrupt:
        click.echo(f"\nInterrupted: the last finished epoch is checkpointed. Resume with:\n  {hint}", err=True)
        ctx.exit(130)
    click.echo(f"wrote {out}: {image_run_summary(out)}")


@image_commands.command("encode")
@click.argument("run", type=click.Path(path_type=Path))
@click.argument("images_arg", metavar="IMAGES")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The .npz file to write: codes (N x K), and labels or file names.")
@click.option("--data-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where IMAGES (a data set name) is [default: the run's data root].")
@option("--max-images", "limit", type=IntRange(min=1), default=None, old=("--limit",),
        help="Encode a class-balanced subset of this many images.")
@device_option()
@click.option("--shortlist", type=IntRange(min=0), default=None,
              help="BPE runs: encode with a shortlist of N bits a step instead of the run's own pursuit; 0 "
                   "scores every bit (the exact greedy pursuit, weaker on trained models: docs/results/images.md).")
@click.option("--overwrite", is_flag=True, help="Replace --out if it exists.")
def encode(run, images_arg, out, data_root, limit, device, shortlist, overwrite):
    """Encode IMAGES with the model of RUN: a data set name (its test split) or a folder.

    \b
    Examples:
      bpetopics images encode runs/mnist mnist --out codes.npz
      bpetopics images encode runs/photos photos/ --out photo_codes.npz
      bpetopics images encode runs/gpu-mnist mnist --out codes.npz --shortlist 32
    """
    from bpetopics.runs.image_explore import encode_run_images, write_codes

    refuse_existing([out], overwrite)
    loaded = open_run(run, device, images=True)
    if shortlist is not None:
        if not hasattr(loaded.model, "shortlist"):
            raise UserError(f"--shortlist is for BPE runs; {run} is a {loaded.config['model']} run: drop it")
        loaded.model.set_params(shortlist=shortlist or None)
    with run_errors():
        codes, data = encode_run_images(loaded, images_arg, data_root, limit=limit)
    write_codes(out, codes, data)
    click.echo(f"wrote {out}: codes of {codes.shape[0]} images, {codes.shape[1]} each, "
               f"{float((codes != 0).sum(1).mean()):.2f} non-zero on average")


@image_commands.command("show")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The bits picture (PNG); the reconstructions (bits.png -> bits.recon.png) and the "
                   "list of the drawn bits (bits.csv) go beside it.")
@option("--show-bits", "n_bits", type=IntRange(min=1), default=40, show_default=True, old=("--bits",),
        help="Show at most this many bits, most used first.")
@option("--show-images", "n_images", type=IntRange(min=1), default=10, show_default=True, old=("--images",),
        help="Originals (with their reconstructions) to show.")
@click.option("--data-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the run's data set is [default: the run's data root].")
@click.option("--overwrite", is_flag=True, help="Replace the pictures if they exist.")
def show(run, out, n_bits, n_images, data_root, overwrite):
    """Draw RUN's bits and reconstructions as two PNG pictures.

    The first: the empty code's image, then what each used bit adds to it (grey: no
    change, white: adds, black: removes), most used first. The second (OUT with
    .recon before the suffix): originals of the run's test split (a folder: its
    images) over their reconstructions. Beside them, OUT with .csv as suffix: tile,
    bit and how many training images use it (a Gaussian VAE: tile, latent and the
    spread of its training means), tile 0 being the empty code.

    \b
    Examples:
      bpetopics images show runs/mnist --out bits.png
    """
    from bpetopics.runs.image_explore import bits_table_path, recon_path, show_run

    if out.suffix.lower() == ".csv":
        raise UserError(f"--out {out} is the picture: give a .png name (the list of bits goes beside it as .csv)")
    refuse_existing([out, recon_path(out), bits_table_path(out)], overwrite)
    loaded = open_run(run, images=True)
    with run_errors():
        written = show_run(loaded, out, n_bits=n_bits, n_images=n_images, data_root=data_root)
    click.echo(f"wrote {', '.join(map(str, written[:-1]))} and {written[-1]}")
