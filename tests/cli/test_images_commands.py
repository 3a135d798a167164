"""`bpetopics images train / encode / show` on 100 MNIST images: the run is written,
encoded, drawn; each failure is one line and exit code 2; Ctrl-C leaves a checkpoint
that --resume finishes into the same run."""

import csv
import json

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # end-to-end: in `make test`, left out by `make test-quick`
import torch

from bpetopics.cli import main
from tests.cli.conftest import one_line_error
from tests.images.conftest import data_root  # noqa: F401

TINY = ["--max-images", "100", "--epochs", "2", "--bits", "8", "--hidden", "32,64", "--device", "cpu", "--batch-size", "50", "--quiet"]


@pytest.fixture(scope="module")
def image_run(data_root, tmp_path_factory):  # noqa: F811
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("image_cli") / "mnist"
    result = CliRunner().invoke(main, ["images", "train", "mnist", "--model", "gaussbpe", "--out", str(out),
                                       "--data-root", str(data_root), *TINY])
    assert result.exit_code == 0, result.output
    # the last line sums the run up from its summary.json
    summary = json.loads((out / "summary.json").read_text())
    assert result.output.splitlines()[-1] == (
        f"wrote {out}: 100 images, 2 epochs, final objective {summary['final_objective']:.4g}; "
        f"{summary['mean_active_bits']:.2f} of 8 bits on an image, {summary['bits_used']} used")
    return out


def test_train_encode_show(image_run, runner, tmp_path, data_root):  # noqa: F811
    from PIL import Image

    from bpetopics.runs import load_run
    from bpetopics.runs.image_codes import encode_images
    from bpetopics.images.sources import load_images
    from bpetopics.viz.image_grid import grid_size

    run = load_run(image_run)
    assert run.config["model"] == "GaussBPE" and run.config["params"]["n_bits"] == 8
    assert run.config["params"]["gamma"] == 2.0  # K/4: gamma must lie below K
    codes_file = tmp_path / "codes.npz"
    result = runner.invoke(main, ["images", "encode", str(image_run), "mnist", "--out", str(codes_file),
                                  "--max-images", "60"])
    assert result.exit_code == 0, result.output
    with np.load(codes_file, allow_pickle=False) as f:
        codes, labels = f["codes"], f["labels"]
    test = load_images("mnist", data_root, split="test", limit=60)
    assert np.array_equal(codes, encode_images(run.model, test.X)) and np.array_equal(labels, test.labels)

    bits = tmp_path / "bits.png"
    result = runner.invoke(main, ["images", "show", str(image_run), "--out", str(bits), "--show-images", "6"])
    assert result.exit_code == 0, result.output
    used = int(((run.codes() != 0).sum(0) > 0).sum())
    with Image.open(bits) as img:
        assert img.size == grid_size(1 + used, (28, 28), 10) and img.mode == "L"
    with Image.open(tmp_path / "bits.recon.png") as img:
        assert img.size == grid_size(12, (28, 28), 6)  # 6 originals over 6 reconstructions
    # bits.csv: the tiles' bits, most used first, with the training images using each
    with open(tmp_path / "bits.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    on = (run.codes() != 0).sum(0)
    assert [int(r["tile"]) for r in rows] == list(range(1, used + 1))
    assert [int(r["images"]) for r in rows] == sorted(on[on > 0].tolist(), reverse=True)
    assert all(on[int(r["bit"])] == int(r["images"]) for r in rows)
    assert float(rows[0]["share"]) == pytest.approx(on.max() / len(run.codes()))
    one_line_error(runner.invoke(main, ["images", "show", str(image_run), "--out", str(bits)]),
                   "already exists", "--overwrite")
    assert runner.invoke(main, ["images", "show", str(image_run), "--out", str(bits), "--overwrite"]).exit_code == 0


def test_encode_with_another_pursuit_than_the_runs(image_run, runner, tmp_path, data_root):  # noqa: F811
    """--shortlist N encodes a BPE run with that pursuit (0: the exact greedy pursuit), the
    codes the model gives with it; refused for a VAE run."""
    from bpetopics.images.sources import load_images
    from bpetopics.runs import load_run
    from bpetopics.runs.image_codes import encode_images

    test = load_images("mnist", data_root, split="test", limit=60).X
    model = load_run(image_run).model                 # K = 8: its default shortlist scores every bit
    seen = {}
    for given, shortlist in (("1", 1), ("0", None)):
        out = tmp_path / f"codes{given}.npz"
        result = runner.invoke(main, ["images", "encode", str(image_run), "mnist", "--out", str(out),
                                      "--max-images", "60", "--shortlist", given])
        assert result.exit_code == 0, result.output
        with np.load(out, allow_pickle=False) as f:
            seen[given] = f["codes"]
        assert np.array_equal(seen[given], encode_images(model.set_params(shortlist=shortlist), test))
    assert not np.array_equal(seen["1"], seen["0"])
    vae = tmp_path / "vae"
    assert runner.invoke(main, ["images", "train", "mnist", "--model", "vae", "--out", str(vae),
                                "--data-root", str(data_root), *TINY]).exit_code == 0
    one_line_error(runner.invoke(main, ["images", "encode", str(vae), "mnist", "--out", str(tmp_path / "v.npz"),
                                        "--shortlist", "2"]), "--shortlist is for BPE runs")


def test_tf32_switches_the_gpu_products_and_leaves_the_cpu_alone(image_run, runner, tmp_path, data_root):  # noqa: F811
    from bpetopics.bpe.device import allow_tf32
    from bpetopics.runs import load_run

    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    allow_tf32(False)
    try:
        out = tmp_path / "tf32"
        result = runner.invoke(main, ["images", "train", "mnist", "--model", "gaussbpe", "--out", str(out),
                                      "--data-root", str(data_root), *TINY, "--tf32"])
        assert result.exit_code == 0, result.output
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before
    assert np.array_equal(load_run(out).codes(), load_run(image_run).codes())  # the CPU: float32 as before


def test_a_shortlist_run_saves_its_pursuit_and_encodes_by_it(runner, tmp_path, data_root):  # noqa: F811
    """--shortlist / --fast-stop reach the model, the saved run and its encoding."""
    from bpetopics.images.sources import load_images
    from bpetopics.runs import load_run
    from bpetopics.runs.image_codes import encode_images

    out = tmp_path / "short"
    small = [a if a != "8" else "24" for a in TINY]               # 24 bits: a shortlist of 3 is short
    result = runner.invoke(main, ["images", "train", "mnist", "--model", "bernbpe", "--out", str(out),
                                  "--data-root", str(data_root), *small, "--shortlist", "3", "--fast-stop"])
    assert result.exit_code == 0, result.output
    run = load_run(out)
    assert run.config["params"]["shortlist"] == 3 and run.config["params"]["exact_stop"] is False
    assert run.model.shortlist == 3 and run.model.exact_stop is False
    test = load_images("binary_mnist", data_root, split="test", limit=40).X
    codes = encode_images(run.model, test)
    assert codes.sum(1).mean() >= 1
    exact = run.model.set_params(shortlist=None)
    assert not np.array_equal(encode_images(exact, test), codes)   # the shortlist changed codes


@pytest.mark.parametrize("given, saved", [("1", 1), ("all", None)])
def test_fast_stop_epochs_reach_the_run(runner, tmp_path, data_root, given, saved):  # noqa: F811
    """--fast-stop-epochs N or all is saved with the run, whose encodings take the exact stop."""
    from bpetopics.runs import load_run

    out = tmp_path / "warm"
    result = runner.invoke(main, ["images", "train", "mnist", "--model", "gaussbpe", "--out", str(out),
                                  "--data-root", str(data_root), *TINY, "--fast-stop-epochs", given])
    assert result.exit_code == 0, result.output
    run = load_run(out)
    assert run.config["params"]["fast_stop_epochs"] == saved and run.model.exact_stop is True
    assert run.model._pursuit_options() == {"shortlist": 32, "exact_stop": True}
    assert run.model._pursuit_options(training=True)["exact_stop"] is (saved is not None)  # after 2 epochs


@pytest.mark.parametrize("extra, saved", [([], 32), (["--shortlist", "3"], 3), (["--shortlist", "0"], None)])
def test_on_a_gpu_the_bpe_models_keep_their_pursuit(runner, tmp_path, data_root, extra, saved):  # noqa: F811
    """`images train` keeps the models' shortlist pursuit unless --shortlist says otherwise,
    whatever the device (earlier versions took the exact one on a GPU; the command no
    longer asks where it runs, so the run trains on the CPU)."""
    from bpetopics.runs import load_run

    out = tmp_path / "gpu"
    result = runner.invoke(main, ["images", "train", "mnist", "--model", "bernbpe", "--out", str(out),
                                  "--data-root", str(data_root), *TINY, *extra])
    assert result.exit_code == 0, result.output
    assert load_run(out).config["params"]["shortlist"] == saved


def test_sigma_reaches_gaussbpe_and_buys_bits(image_run, runner, tmp_path, data_root):  # noqa: F811
    """--sigma is GaussBPE's noise level: saved with the run, and a smaller one switches on
    more bits per image than the default 0.3 (a bit must lower the error by ~2 sigma^2 its cost)."""
    from bpetopics.runs import load_run

    out = tmp_path / "sharp"
    result = runner.invoke(main, ["images", "train", "mnist", "--model", "gaussbpe", "--out", str(out),
                                  "--data-root", str(data_root), *TINY, "--sigma", "0.1"])
    assert result.exit_code == 0, result.output
    run, default = load_run(out), load_run(image_run)
    assert run.config["params"]["sigma"] == 0.1 and run.model.sigma == 0.1 and default.model.sigma == 0.3
    assert run.codes().sum(1).mean() > default.codes().sum(1).mean()


def test_every_failure_is_one_line(image_run, runner, tmp_path, data_root):  # noqa: F811
    root = ["--data-root", str(data_root)]
    train = ["images", "train"]
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "gaussbpe", "--out", str(image_run), *TINY]),
                   "already holds a finished run")
    one_line_error(runner.invoke(main, [*train, "nowhere", "--model", "vae", "--out", str(tmp_path / "r")]),
                   "nowhere", "neither a data set")
    one_line_error(runner.invoke(main, [*train, "scaled_mnist", "--model", "bernbpe", "--out", str(tmp_path / "r"),
                                        *root, *TINY]), "[0, 1]")
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "lda", "--out", str(tmp_path / "r")]), "lda")
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "vae", "--out", str(tmp_path / "r"),
                                        "--shortlist", "4"]), "--shortlist", "gaussbpe")
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "gsvae", "--out", str(tmp_path / "r"),
                                        "--fast-stop"]), "--fast-stop", "gaussbpe")
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "gaussbpe", "--out", str(tmp_path / "r"),
                                        "--shortlist", "0", "--fast-stop"]), "--fast-stop", "--shortlist 0")
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "gaussbpe", "--out", str(tmp_path / "r"),
                                        "--fast-stop", "--fast-stop-epochs", "2"]), "--fast-stop-epochs", "drop one")
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "vae", "--out", str(tmp_path / "r"),
                                        "--fast-stop-epochs", "2"]), "--fast-stop-epochs", "gaussbpe")
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "gaussbpe", "--out", str(tmp_path / "r"),
                                        "--fast-stop-epochs", "soon"]), "--fast-stop-epochs", "'all'")
    one_line_error(runner.invoke(main, [*train, "binary_mnist", "--model", "bernbpe", "--out", str(tmp_path / "r"),
                                        "--sigma", "0.1"]), "--sigma", "GaussBPE")
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "vae", "--out", str(tmp_path / "r"),
                                        "--resume"]), "nothing to resume")
    one_line_error(runner.invoke(main, [*train, "mnist", "--model", "vae", "--out", str(tmp_path / "r"),
                                        "--data-root", str(tmp_path)]), "--data-root")
    # the VAEs' sizes are checked before anything is allocated, naming the option
    for model, option, value in (("vae", "--bits", "1000000000"), ("gsvae", "--hidden", "1000000,1000000")):
        one_line_error(runner.invoke(main, [*train, "mnist", "--model", model, "--out", str(tmp_path / "r"), *root,
                                            "--max-images", "20", option, value]),
                       f"{option} {value} needs about", f"lower {option}")
    assert not (tmp_path / "r").exists() and not (tmp_path / "r.partial").exists()

    encode = ["images", "encode"]
    one_line_error(runner.invoke(main, [*encode, str(tmp_path / "none"), "mnist", "--out", str(tmp_path / "c.npz")]),
                   "does not exist")
    one_line_error(runner.invoke(main, [*encode, str(image_run), "cifar10", "--out", str(tmp_path / "c.npz"),
                                        "--max-images", "10"]), "shape")
    (tmp_path / "c.npz").write_bytes(b"keep")
    one_line_error(runner.invoke(main, [*encode, str(image_run), "mnist", "--out", str(tmp_path / "c.npz")]),
                   "already exists")
    assert (tmp_path / "c.npz").read_bytes() == b"keep"

    show = ["images", "show"]
    one_line_error(runner.invoke(main, [*show, str(tmp_path / "none"), "--out", str(tmp_path / "b.png")]),
                   "does not exist")
    (tmp_path / "b.recon.png").write_bytes(b"keep")
    one_line_error(runner.invoke(main, [*show, str(image_run), "--out", str(tmp_path / "b.png")]), "b.recon.png")
    assert not (tmp_path / "b.png").exists()
    (tmp_path / "c.csv").write_bytes(b"keep")
    one_line_error(runner.invoke(main, [*show, str(image_run), "--out", str(tmp_path / "c.png")]), "c.csv")
    one_line_error(runner.invoke(main, [*show, str(image_run), "--out", str(tmp_path / "d.csv")]), "give a .png")
    assert not (tmp_path / "c.png").exists() and (tmp_path / "c.csv").read_bytes() == b"keep"


def test_text_commands_refuse_image_runs_and_back(image_run, trained_run, runner, tmp_path):
    for args in (["topics", str(image_run)], ["graph", str(image_run), "--out", str(tmp_path / "g.png")]):
        one_line_error(runner.invoke(main, args), "is an image run", "bpetopics images")
    text_run = str(trained_run[0])
    one_line_error(runner.invoke(main, ["images", "show", text_run, "--out", str(tmp_path / "b.png")]),
                   "is a text run")
    one_line_error(runner.invoke(main, ["images", "encode", text_run, "mnist", "--out", str(tmp_path / "c.npz")]),
                   "is a text run")
    assert not list(tmp_path.iterdir())


def test_info_says_what_an_image_run_is(image_run, runner):
    import json

    result = runner.invoke(main, ["info", str(image_run)])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "GaussBPE" in text and "Images: mnist, train split, class-balanced subset of 100 (seed 0)" in text
    assert "100 images of 28x28 = 784 values in [0, 1]" in text
    assert "codes of 8 bits, mean active bits" in text and "2 epochs" in text
    history = text.split("Training history:")[1].split("Library versions")[0].strip().splitlines()
    assert history[0].split()[:3] == ["epoch", "objective", "active"] and len(history) == 3
    as_json = json.loads(runner.invoke(main, ["info", str(image_run), "--format", "json"]).output)
    assert as_json["config"]["data"]["n_images"] == 100 and as_json["summary"]["code_size"] == 8


def test_ctrl_c_then_resume_gives_the_same_run(runner, tmp_path, data_root, monkeypatch):  # noqa: F811
    from bpetopics.runs import load_run
    from bpetopics.runs import image_job

    args = ["images", "train", "mnist", "--model", "vae", "--data-root", str(data_root), *TINY]
    assert runner.invoke(main, [*args, "--out", str(tmp_path / "whole")]).exit_code == 0

    real = image_job.run_image_job

    def interrupted(job, after_epoch=None, progress=None):
        def stop(m, info):
            if m.epoch_ == 1:
                raise KeyboardInterrupt
        return real(job, stop, progress)

    monkeypatch.setattr(image_job, "run_image_job", interrupted)
    result = runner.invoke(main, [*args, "--out", str(tmp_path / "cut")])
    assert result.exit_code == 130 and "--resume" in result.output, result.output
    assert not (tmp_path / "cut").exists() and (tmp_path / "cut.partial" / "checkpoint.safetensors").is_file()
    monkeypatch.setattr(image_job, "run_image_job", real)
    result = runner.invoke(main, [*args, "--out", str(tmp_path / "cut"), "--resume"])
    assert result.exit_code == 0, result.output
    a, b = load_run(tmp_path / "whole"), load_run(tmp_path / "cut")
    sa, sb = a.model.state_dict(), b.model.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa) and np.array_equal(a.codes(), b.codes())
