"""The paper's Table 1 (experiments/image_table.py): checks on hand-made rows and the
``bpetopics images table`` command end to end (moved from tests/images/test_bpe_images.py)."""

import csv
import json

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # end-to-end: in `make test`, left out by `make test-quick`
import torch
from click.testing import CliRunner


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_checks_and_markdown_on_hand_made_rows():
    from bpetopics.experiments.image_table import BUDGETS, VAE_FIXED, VAE_LEARNED
    from bpetopics.experiments.image_table_report import checks, markdown

    base = dict(sec_per_epoch=1.0, epochs=2, paper_value=1.0, paper_sparsity=0.5)
    rows = [dict(dataset="mnist", model="GaussBPE", metric="MSE", value=10.0, sparsity=0.9,
                 **base),
            dict(dataset="mnist", model=VAE_FIXED, metric="MSE", value=20.0, sparsity=0.7,
                 **base),
            dict(dataset="mnist", model=VAE_LEARNED, metric="MSE", value=5.0, sparsity=0.2,
                 **base),
            dict(dataset="binary_mnist", model="BernBPE", metric="NLL", value=100.0,
                 sparsity=0.9, **base),
            dict(dataset="binary_mnist", model="GS-VAE", metric="NLL", value=95.0,
                 neg_elbo=110.0, sparsity=0.3, **base)]
    got = [ok for _, ok in checks(rows)]
    assert got == [True, True, False, True, True, True]
    md = markdown(rows, BUDGETS["tiny"], "cpu", 12.0)
    assert md.count("\n| ") == 6 and "110.00" in md and "- [ ] MNIST: GaussBPE MSE" in md
    assert "device cpu; " in md
    # rows made on another machine (pieces merged here) name its device, not this one's
    made = [dict(r, made_on="device cuda:0; a GPU host") for r in rows]
    md = markdown(made, BUDGETS["tiny"], "cpu", 12.0)
    assert "; device cuda:0; a GPU host; training" in md and "device cpu" not in md


@pytest.mark.slow
def test_table_command_tiny_budget(data_root, tmp_path):
    from bpetopics.cli import main

    out = tmp_path / "table"
    result = CliRunner().invoke(main, ["images", "table", "--data-root", str(data_root),
                                       "--out", str(out), "--budget", "tiny", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    for name in ("table1.csv", "table1.md", "history.json", "seconds_per_epoch.png",
                 "recon_mnist.png", "recon_scaled_mnist.png", "recon_binary_mnist.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    with open(out / "table1.csv") as fh:
        rows = list(csv.DictReader(fh))
    models = [(r["dataset"], r["model"]) for r in rows]
    assert len(models) == 8 and ("binary_mnist", "GS-VAE") in models
    for r in rows:
        assert np.isfinite(float(r["value"])) and 0 <= float(r["sparsity"]) <= 1
        assert float(r["sec_per_epoch"]) > 0
    gs = next(r for r in rows if r["model"] == "GS-VAE")
    assert float(gs["neg_elbo"]) > 0 and float(gs["paper_value"]) == 81.55
    assert (out / "seconds_per_epoch.png").read_bytes()[:4] == b"\x89PNG"
    assert "| MNIST | GaussBPE | MSE |" in (out / "table1.md").read_text()
    assert "pursuit: shortlist 8 with the exact stop" in (out / "table1.md").read_text()
    # scaled MNIST's error in plain MNIST's units: MSE / the test images' mean s_n^2
    from bpetopics.images.datasets import load_scaled_mnist

    _, _, factors = load_scaled_mnist("test", data_root, s_max=2.0, limit=100, random_state=0)
    for r in rows:
        if r["dataset"] == "scaled_mnist":
            # (the CSV keeps 4 decimals)
            assert float(r["mean_s2"]) == pytest.approx(float(np.mean(factors.astype(float) ** 2)), abs=1e-4)
            assert float(r["mse_per_unit_scale"]) == pytest.approx(float(r["value"]) / float(r["mean_s2"]),
                                                                   rel=1e-3)
        else:
            assert r["mse_per_unit_scale"] == ""
    assert "Scaled MNIST in plain MNIST's units" in (out / "table1.md").read_text()


def test_table_command_epoch_overrides(data_root, tmp_path):
    from bpetopics.cli import main

    out = tmp_path / "short"
    result = CliRunner().invoke(main, ["images", "table", "--data-root", str(data_root),
                                       "--out", str(out), "--budget", "tiny", "--datasets",
                                       "binary_mnist", "--bpe-epochs", "1", "--vae-epochs",
                                       "3", "--max-images", "120", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    with open(out / "table1.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["model"]: int(r["epochs"]) for r in rows} == {"BernBPE": 1, "GS-VAE": 3}
    assert {int(r["n_train"]) for r in rows} == {120}                 # the tiny budget's is 150


@pytest.mark.parametrize("dataset, model, option, value, param, saved, said", [
    ("mnist", "gaussbpe", "--sigma", "0.2", "sigma", 0.2, "sigma 0.2"),
    # the tiny budget's BPE models use a shortlist of 8 of their 24 bits; 0: the exact pursuit
    ("binary_mnist", "bernbpe", "--shortlist", "0", "shortlist", None, "pursuit: exact greedy"),
])
def test_table_command_override_is_part_of_the_table(data_root, tmp_path, dataset, model, option, value,
                                                     param, saved, said):
    """--sigma / --shortlist reach the BPE model's run, the table says so, and --resume with
    the budget's own setting is refused."""
    from bpetopics.cli import main

    out = tmp_path / "table"
    args = ["images", "table", "--data-root", str(data_root), "--out", str(out), "--budget", "tiny",
            "--datasets", dataset, "--bpe-epochs", "1", "--vae-epochs", "1", "--device", "cpu"]
    result = CliRunner().invoke(main, args + [option, value])
    assert result.exit_code == 0, result.output
    config = json.loads((out / "runs" / f"{dataset}-{model}" / "config.json").read_text())
    assert config["params"][param] == saved
    assert said in (out / "table1.md").read_text()
    again = CliRunner().invoke(main, args + ["--resume"])            # the budget's setting is not the table's
    assert again.exit_code == 2 and f"other settings ({param})" in again.output


def test_on_a_gpu_the_table_keeps_the_budgets_pursuit(data_root, tmp_path, monkeypatch):
    """The pursuit does not depend on the device (earlier versions took the exact one on a GPU)."""
    import bpetopics.cli.image_table as table_command
    from bpetopics.cli import main

    monkeypatch.setattr(table_command, "_on_gpu", lambda device: True)   # faked: trains on the CPU
    out = tmp_path / "table"
    result = CliRunner().invoke(main, ["images", "table", "--data-root", str(data_root), "--out", str(out),
                                       "--budget", "tiny", "--datasets", "binary_mnist", "--models", "bernbpe",
                                       "--bpe-epochs", "1", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "pursuit: shortlist 8 with the exact stop" in (out / "table1.md").read_text()


def test_table_command_rejects_bad_input(tmp_path):
    from bpetopics.cli import main

    runner = CliRunner()
    bad_budget = runner.invoke(main, ["images", "table", "--out", str(tmp_path), "--budget",
                                      "huge"])
    assert bad_budget.exit_code == 2 and "small, full" in bad_budget.output
    bad_set = runner.invoke(main, ["images", "table", "--out", str(tmp_path), "--datasets",
                                   "mnist,svhn"])
    assert bad_set.exit_code == 2 and "svhn" in bad_set.output
    missing = runner.invoke(main, ["images", "table", "--out", str(tmp_path), "--data-root",
                                   str(tmp_path / "nothing"), "--datasets", "mnist"])
    assert missing.exit_code == 2 and "MNIST" in missing.output
    assert "Traceback" not in missing.output
    # the message names the command's flags, not the library's arguments
    assert "--data-root" in missing.output and "download=True" not in missing.output
    assert "data_root" not in missing.output.replace(str(tmp_path), "")
    full = runner.invoke(main, ["images", "table", "--out", str(tmp_path / "full"), "--data-root",
                                str(tmp_path / "nothing"), "--budget", "full", "--datasets", "mnist",
                                "--device", "cpu"])
    assert full.exit_code == 2 and "full budget is whole splits for a GPU" in full.output
    assert "full budget" not in missing.output        # the small budget says nothing
    helptext = runner.invoke(main, ["images", "table", "--help"]).output
    assert "tiny" in helptext and "--budget" in helptext and "--overwrite" in helptext
    zero = runner.invoke(main, ["images", "table", "--out", str(tmp_path), "--bpe-epochs", "0"])
    assert zero.exit_code == 2 and "--bpe-epochs" in zero.output
    nothing = runner.invoke(main, ["images", "table", "--out", str(tmp_path / "empty"), "--resume"])
    assert nothing.exit_code == 2 and "no table to resume" in nothing.output
    both = runner.invoke(main, ["images", "table", "--out", str(tmp_path), "--resume", "--overwrite"])
    assert both.exit_code == 2 and "give one of them" in both.output
    assert "--resume" in helptext


class _Stop:
    """A log that interrupts the table (KeyboardInterrupt) at the first message containing
    ``at``, as Ctrl-C would."""

    def __init__(self, at):
        self.at, self.seen = at, []

    def __call__(self, message):
        self.seen.append(message)
        if self.at is not None and self.at in message:
            self.at = None
            raise KeyboardInterrupt


@pytest.mark.slow
def test_interrupted_table_resumes_to_the_same_table(data_root, tmp_path):
    """Stopped inside BernBPE's training (after its first epoch's checkpoint) and again
    after BernBPE finished, then resumed: the same rows as a table never stopped."""
    from dataclasses import replace

    from bpetopics.experiments.image_table import BUDGETS, run_table
    from bpetopics.runs.folder import RunError

    budget = replace(BUDGETS["tiny"], n_train=80, n_test=40, datasets=("binary_mnist",), vae_epochs=2,
                     gsvae_epochs=2)
    whole, _ = run_table(data_root, tmp_path / "whole", budget, device="cpu")
    out = tmp_path / "pieces"
    with pytest.raises(KeyboardInterrupt):
        run_table(data_root, out, budget, device="cpu", log=_Stop("epoch 1/2"))
    assert (out / "runs" / "binary_mnist-bernbpe.partial" / "checkpoint.safetensors").is_file()
    second = _Stop("  GS-VAE")
    with pytest.raises(KeyboardInterrupt):
        run_table(data_root, out, budget, device="cpu", log=second, resume=True)
    assert any("continuing from its last checkpoint" in m for m in second.seen)
    assert (out / "runs" / "binary_mnist-bernbpe.json").is_file()
    third = _Stop(None)
    pieces, _ = run_table(data_root, out, budget, device="cpu", log=third, resume=True)
    assert any("BernBPE: finished before" in m for m in third.seen)
    keys = ("model", "value", "neg_elbo", "sparsity", "active_bits", "bits_used", "epochs")
    assert [[r.get(k) for k in keys] for r in pieces] == [[r.get(k) for k in keys] for r in whole]
    assert [r["model"] for r in pieces] == ["BernBPE", "GS-VAE"]
    # resuming with other settings is refused, naming what changed
    with pytest.raises(RunError, match="n_train"):
        run_table(data_root, out, replace(budget, n_train=90), device="cpu", resume=True)
    with pytest.raises(RunError, match="no table to resume"):
        run_table(data_root, tmp_path / "none", budget, device="cpu", resume=True)


def test_models_trained_apart_join_into_the_whole_table(data_root, tmp_path):
    """--models trains one model a table (a process each on a shared GPU); their runs copied
    into one folder resume, training nothing, to the table trained whole."""
    import shutil
    from dataclasses import replace

    from bpetopics.experiments.image_table import BUDGETS, run_table

    budget = replace(BUDGETS["tiny"], n_train=80, n_test=40, datasets=("binary_mnist",), vae_epochs=2,
                     gsvae_epochs=2)
    whole, _ = run_table(data_root, tmp_path / "whole", budget, device="cpu")
    joined = tmp_path / "joined"
    (joined / "runs").mkdir(parents=True)
    for slug in ("gsvae", "bernbpe"):
        rows, _ = run_table(data_root, tmp_path / slug, budget, device="cpu", models=[slug])
        assert len(rows) == 1
        for src in (tmp_path / slug / "runs").iterdir():
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, joined / "runs" / src.name)
    shutil.copy2(tmp_path / "gsvae" / "table.json", joined / "table.json")
    assert whole[0]["made_on"].startswith("device cpu; ")
    piece = joined / "runs" / "binary_mnist-gsvae.json"   # as if trained on a GPU
    saved = json.loads(piece.read_text())
    saved["row"]["made_on"] = "device cuda:0; a GPU host"
    piece.write_text(json.dumps(saved))
    log = _Stop(None)
    rows, _ = run_table(data_root, joined, budget, device="cpu", log=log, resume=True)
    header = (joined / "table1.md").read_text().splitlines()[2]
    assert "device cpu; " in header and " / device cuda:0; a GPU host; " in header
    assert sum("finished before" in m for m in log.seen) == 2 and not any("epoch" in m for m in log.seen)
    keys = ("model", "value", "neg_elbo", "sparsity", "active_bits", "epochs")
    assert [[r.get(k) for k in keys] for r in rows] == [[r.get(k) for k in keys] for r in whole]


@pytest.mark.parametrize("args, said", [
    (["--datasets", "mnist", "--models", "gaussbpe,bernbpe2"], "unknown model(s) bernbpe2"),
    (["--datasets", "binary_mnist", "--models", "gaussbpe"], "no model of binary_mnist among gaussbpe"),
])
def test_table_command_rejects_bad_models(tmp_path, args, said):
    from bpetopics.cli import main

    result = CliRunner().invoke(main, ["images", "table", "--out", str(tmp_path / "t"), "--budget", "tiny"] + args)
    assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output
    assert not (tmp_path / "t").exists()
