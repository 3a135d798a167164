"""Table 1's report: the measured rows as CSV and as markdown next to the paper's, with
the checks of the paper's claims (:mod:`bpetopics.experiments.image_table` measures them;
:mod:`bpetopics.experiments.image_table_plots` draws the figures)."""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from bpetopics.experiments.image_table_setup import DATASETS, VAE_FIXED, VAE_LEARNED

COLUMNS = ["dataset", "model", "metric", "value", "neg_elbo", "sparsity", "active_bits",
           "empty_codes", "bits_used", "sec_per_epoch", "epochs", "train_seconds",
           "encode_seconds", "n_train", "n_test", "paper_value", "paper_sparsity", "mean_s2",
           "mse_per_unit_scale"]


def _fmt(value, digits=2):
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def checks(rows):
    """The paper's claims, checked on the measured rows: list of (claim, holds)."""
    by = {(r["dataset"], r["model"]): r for r in rows}
    out = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        label, kind = DATASETS[dataset]
        if kind == "gauss":
            bpe = by.get((dataset, "GaussBPE"))
            for name in (VAE_FIXED, VAE_LEARNED):
                vae = by.get((dataset, name))
                if bpe is None or vae is None:
                    continue
                out.append((f"{label}: GaussBPE MSE {bpe['value']:.2f} < {name} "
                            f"{vae['value']:.2f}", bpe["value"] < vae["value"]))
                out.append((f"{label}: GaussBPE sparsity {bpe['sparsity']:.3f} > {name} "
                            f"{vae['sparsity']:.3f}", bpe["sparsity"] > vae["sparsity"]))
        else:
            bpe, vae = by.get((dataset, "BernBPE")), by.get((dataset, "GS-VAE"))
            if bpe is None or vae is None:
                continue
            out.append((f"{label}: BernBPE sparsity {bpe['sparsity']:.3f} > GS-VAE "
                        f"{vae['sparsity']:.3f}", bpe["sparsity"] > vae["sparsity"]))
            out.append((f"{label}: BernBPE NLL {bpe['value']:.2f} within 10% of (or below) "
                        f"the GS-VAE's reconstruction NLL {vae['value']:.2f}",
                        bpe["value"] <= 1.1 * vae["value"]))
    return out


def hardware() -> str:
    if torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(0)
    else:
        gpu = "no GPU"
    threads = torch.get_num_threads()
    return (f"{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__} "
            f"with {threads} thread{'s' if threads != 1 else ''}, {gpu}")


def markdown(rows, budget, device, total_seconds) -> str:
    """The measured table next to the paper's, with the checks, as markdown."""
    head = ["data", "model", "metric", "ours", "paper", "GS-VAE -ELBO", "sparsity (ours)",
            "sparsity (paper)", "bits per image", "s / epoch", "epochs"]
    # rows made elsewhere (pieces merged here) name their own device; older rows this one's
    made_on = list(dict.fromkeys(r.get("made_on") or f"device {device}; {hardware()}" for r in rows))
    lines = [f"# Table 1, measured (budget '{budget.name}')", "",
             f"Train / test images per data set: {budget.n_train or 'all'} / "
             f"{budget.n_test or 'all'}; {' / '.join(made_on) or f'device {device}; {hardware()}'}; "
             f"training and scoring {total_seconds / 60:.1f} min (summed over models).",
             f"BPE: K = {budget.gauss_n_bits or budget.n_bits} bits (GaussBPE), {budget.n_bits} "
             f"(BernBPE), {budget.bpe_epochs} epochs, batch {budget.bpe_batch_size}, lr "
             f"{budget.bpe_lr:g}, sigma {budget.sigma:g}, "
             + (f"pursuit: shortlist {budget.shortlist} with the exact stop." if budget.shortlist
                else "pursuit: exact greedy (every bit scored)."), "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [DATASETS[r["dataset"]][0], r["model"], r["metric"], _fmt(r["value"]),
                 _fmt(r["paper_value"]), _fmt(r.get("neg_elbo")), _fmt(r["sparsity"], 3),
                 _fmt(r["paper_sparsity"]), _fmt(r.get("active_bits"), 1),
                 f"{r['sec_per_epoch']:.3g}", str(r["epochs"])]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "MSE: sum over pixels, mean over test images (BPE: E[lambda_n] f(z_n); VAE: "
              "f(posterior mean)). NLL: -ln p(x_n | z_n) at one code (GS-VAE: posterior "
              "argmax); the GS-VAE's negative ELBO is a bound on -ln p(x_n), a different "
              "quantity. Sparsity: mean Hoyer of the codes (VAE: posterior means). The "
              "paper's baseline is the fixed-variance VAE."]
    scaled = [r for r in rows if r.get("mse_per_unit_scale") is not None]
    if scaled:
        lines += ["", f"Scaled MNIST in plain MNIST's units (MSE / the test images' mean s_n^2 = "
                      f"{scaled[0]['mean_s2']:.3f}; s_n ~ U(-{budget.s_max:g}, {budget.s_max:g}), an "
                      "s_max the paper does not state): "
                  + ", ".join(f"{r['model']} {r['mse_per_unit_scale']:.2f}" for r in scaled) + "."]
    lines += ["", "Checks of the paper's "
              "direction:", ""]
    lines += [f"- [{'x' if ok else ' '}] {claim}" for claim, ok in checks(rows)]
    return "\n".join(lines) + "\n"


def write_outputs(out, rows, grids, histories, budget, device, total_seconds):
    """Write table1.csv, table1.md, history.json and the figures; returns the paths."""
    import pandas as pd

    from bpetopics.experiments.image_table_plots import plot_seconds_per_epoch, save_reconstruction_grid
    from bpetopics.files import atomic_path, write_text_atomic

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows).reindex(columns=COLUMNS)
    with atomic_path(out / "table1.csv") as tmp:
        frame.to_csv(tmp, index=False, float_format="%.4f")
    paths = [out / "table1.csv",
             write_text_atomic(out / "table1.md", markdown(rows, budget, device, total_seconds)),
             write_text_atomic(out / "history.json", json.dumps(
                 {"budget": asdict(budget), "histories": histories}, indent=1, default=float))]
    for dataset, grid in grids.items():
        paths.append(save_reconstruction_grid(grid, dataset, out / f"recon_{dataset}.png"))
    paths.append(plot_seconds_per_epoch(rows, out / "seconds_per_epoch.png"))
    return paths
