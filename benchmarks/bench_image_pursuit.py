"""CPU seconds per epoch of GaussBPE and BernBPE against the VAE baselines.

One thread, CPU time (``time.process_time``), every model in this one process on the
same MNIST images (binarised for BernBPE and the GS-VAE). For each BPE model, with the
exact greedy pursuit (``shortlist=None``; the rows without a shortlist): its set-up (the
decoder's prototype initialisation, once per fit, timed apart), epoch 1 (the prior's ramp: more bits per image) and
epoch 2, the share of epoch 2 spent in the
pursuit, and with ``--before`` epoch 2 again from the same state by the generic batched
pursuit (every image x every candidate through the decoder, the path before the dense
tables): its objective must equal the fast path's (the codes are the same). With
``--shortlists`` each BPE model is trained again (same seed, same images) with the
shortlist pursuit (:mod:`bpetopics.models.images.shortlist_pursuit`), one row pair per setting:
``32`` is a shortlist of 32 bits with the exact stop (widening lists first: the default),
``8f`` one of 8 that stops at once, ``16w`` one of 16 whose first
epoch stops at once (the warm-up, ``fast_stop_epochs=1``) and whose second takes the exact
stop. ``--skip-exact`` leaves out the
exact pursuit's rows. Run:

    python benchmarks/bench_image_pursuit.py --data-root ../shared/data --images 5000 --before
    python benchmarks/bench_image_pursuit.py --data-root ../shared/data --images 5000 --shortlists 32,16,16f,8f
    python benchmarks/bench_image_pursuit.py --data-root ../shared/data --images 5000 --shortlists 32,32n --skip-exact
    python benchmarks/bench_image_pursuit.py --data-root ../shared/data --images 5000 --shortlists 32,16f,16w --skip-exact
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import torch

from bpetopics.baselines.gsvae import GumbelSoftmaxVAE
from bpetopics.baselines.vae import GaussianVAE
from bpetopics.bpe import training_step as step_module
from bpetopics.experiments.image_table import load_split
from bpetopics.models import BernBPE, GaussBPE


class _Generic:
    """A likelihood without the dense tables: greedy_pursuit takes its generic path."""

    def __init__(self, likelihood):
        self._likelihood = likelihood

    def __getattr__(self, name):
        if name in ("shared_term", "linear_bound"):
            raise AttributeError(name)
        return getattr(self._likelihood, name)


class _PursuitClock:
    """Wraps the estimator's greedy_pursuit: CPU seconds spent inside it."""

    def __init__(self, generic=False):
        self.seconds, self.generic = 0.0, generic
        self._inner = step_module.greedy_pursuit

    def __call__(self, decoder, likelihood, *args, **kwargs):
        start = time.process_time()
        try:
            lik = _Generic(likelihood) if self.generic else likelihood
            return self._inner(decoder, lik, *args, **kwargs)
        finally:
            self.seconds += time.process_time() - start


def _epoch(model, X, generic=False):
    """One epoch (``partial_fit``): (CPU seconds, pursuit seconds, history record)."""
    clock = _PursuitClock(generic)
    step_module.greedy_pursuit = clock
    try:
        start = time.process_time()
        model.partial_fit(X)
        return time.process_time() - start, clock.seconds, model.history_[-1]
    finally:
        step_module.greedy_pursuit = clock._inner


def _setup(model, X):
    """The model built before its first epoch (the decoder's prototype initialisation, a
    few hundred Adam steps: once per fit, not per epoch): a row (CPU seconds, no pursuit)."""
    start = time.process_time()
    model._setup(model._check_X(X))
    return time.process_time() - start, 0.0, {"active_bits": float("nan")}


def bench_bpe(name, model, X, before):
    rows = [(name, "set-up (once)", *_setup(model, X))]
    t1, p1, h1 = _epoch(model, X)
    rows.append((name, "1 (prior ramp)", t1, p1, h1))
    previous = copy.deepcopy(model) if before else None
    t2, p2, h2 = _epoch(model, X)
    rows.append((name, "2", t2, p2, h2))
    if before:
        t3, p3, h3 = _epoch(previous, X, generic=True)
        rows.append((name + " (generic pursuit)", "2", t3, p3, h3))
        same = abs(h3["objective"] - h2["objective"]) <= 1e-4 * abs(h2["objective"])
        print(f"{name}: epoch 2 objective fast {h2['objective']:.4f}, generic "
              f"{h3['objective']:.4f} ({'same' if same else 'DIFFERENT'})", flush=True)
    return rows


def bench_vae(make, X, epochs):
    start = time.process_time()
    make(epochs).fit(X)
    return (time.process_time() - start) / epochs


def _shortlist_setting(text):
    """'32' -> (row label, model parameters): a shortlist of 32 with the exact stop
    after widening lists; '8f': a shortlist of 8 that stops at once;
    '16w': a shortlist of 16 whose epoch 1 stops at once (``fast_stop_epochs=1``, the
    warm-up) and epoch 2 takes the exact stop."""
    fast, warm = text.endswith("f"), text.endswith("w")
    size = int(text.rstrip("fw"))
    stop = ("stops at once" if fast else "epoch 1 stops at once, then the exact stop" if warm else "exact stop")
    return f", shortlist {size} ({stop})", {"shortlist": size, "exact_stop": not fast, "fast_stop_epochs": int(warm)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--bits", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--vae-epochs", type=int, default=3)
    parser.add_argument("--before", action="store_true",
                        help="also time epoch 2 by the generic pursuit (slow)")
    parser.add_argument("--models", default="gaussbpe,bernbpe")
    parser.add_argument("--shortlists", default="",
                        help="comma-separated shortlist settings to time as well: M (exact stop), Mw (fast "
                             "stop in epoch 1) or Mf (fast stop)")
    parser.add_argument("--skip-exact", action="store_true", help="no rows for the exact greedy pursuit")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])   # its first call imports torch._dynamo
    X, _ = load_split("mnist", "train", args.data_root, args.images)
    Xb, _ = load_split("binary_mnist", "train", args.data_root, args.images)
    common = dict(n_bits=args.bits, batch_size=args.batch_size, lr=3e-3, epochs=2, random_state=0,
                  device="cpu", progress=False)
    vae = bench_vae(lambda e: GaussianVAE(obs_var=1.0, epochs=e, random_state=0, device="cpu",
                                          progress=False), X, args.vae_epochs)
    gsvae = bench_vae(lambda e: GumbelSoftmaxVAE(epochs=e, random_state=0, device="cpu",
                                                 progress=False), Xb, args.vae_epochs)
    rows = []
    wanted = args.models.split(",")
    settings = ([] if args.skip_exact else [("", {"shortlist": None})]) + \
        [_shortlist_setting(v) for v in args.shortlists.split(",") if v]
    for label, extra in settings:
        before = args.before and extra["shortlist"] is None
        if "gaussbpe" in wanted:
            model = GaussBPE(sigma=0.3, **common, **extra)
            rows += [(*r, vae, "VAE") for r in bench_bpe("GaussBPE" + label, model, X, before)]
        if "bernbpe" in wanted:
            model = BernBPE(**common, **extra)
            rows += [(*r, gsvae, "GS-VAE") for r in bench_bpe("BernBPE" + label, model, Xb, before)]
    print(f"\nMNIST, {len(X)} training images, K = {args.bits}, BPE minibatch {args.batch_size}, "
          f"one thread, CPU seconds ({torch.__version__})\n")
    print(f"VAE (sigma^2 = 1, 100-image minibatches): {vae:.2f} s per epoch; GS-VAE: {gsvae:.2f} s per epoch\n")
    print("| model | epoch | CPU s | pursuit s | pursuit share | bits per image | x VAE epoch | x GS-VAE epoch |")
    print("|---|---|---|---|---|---|---|---|")
    for name, epoch, total, pursuit, hist, _, _ in rows:
        bits = hist["active_bits"]
        print(f"| {name} | {epoch} | {total:.1f} | {pursuit:.1f} | {pursuit / total:.0%} | "
              f"{'' if np.isnan(bits) else f'{bits:.2f}'} | {total / vae:.0f} | {total / gsvae:.0f} |")


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
