"""Image runs (GaussBPE, BernBPE, GaussianVAE, GumbelSoftmaxVAE) have the guarantees of
text runs: saved as safetensors + JSON, a loaded run encodes images to the same codes,
an interrupted training resumes to the same model, damaged runs are refused in one line.
Trained on 120 MNIST images from the shared offline data, for 1-2 epochs on the CPU."""

import json

import numpy as np
import pytest
import torch

from bpetopics.runs import RunError, load_run
from bpetopics.runs.image_codes import bit_contributions, encode_images
from bpetopics.runs.image_job import (finish_image_job, image_params, resume_image_job, run_image_job,
                                      start_image_job, train_image_run)
from bpetopics.runs.job import release_job, resume_job
from tests.images.conftest import data_root  # noqa: F401

#: registry name -> (data set, --bits)
MODELS = {"GaussBPE": ("mnist", 12), "BernBPE": ("binary_mnist", 12), "GaussianVAE": ("mnist", 6),
          "GumbelSoftmaxVAE": ("binary_mnist", 3)}


def _params(model, epochs=2):
    dataset, bits = MODELS[model]
    params = image_params(model, bits=bits, epochs=epochs, seed=3, device="cpu", batch_size=50, hidden=[32, 64])
    if "encoder_hidden" in params:  # small networks: seconds on a busy CPU
        params["encoder_hidden"] = [64] if model == "GaussianVAE" else [64, 32]
    return params


@pytest.fixture(scope="module")
def images(data_root):  # noqa: F811
    from bpetopics.images.sources import load_images

    return {name: (load_images(name, data_root, limit=120, seed=0),
                   load_images(name, data_root, split="test", limit=100, seed=0))
            for name in ("mnist", "binary_mnist")}


@pytest.fixture(scope="module")
def trained(images, tmp_path_factory):
    """model name -> (run folder, the fitted model before saving)."""
    out = {}
    for model, (dataset, _) in MODELS.items():
        folder = tmp_path_factory.mktemp("image_runs") / model
        job = start_image_job(folder, model, _params(model), images[dataset][0])
        run_image_job(job)
        finish_image_job(job)
        out[model] = (folder, job.model)
    return out


@pytest.mark.parametrize("model", list(MODELS))
def test_a_loaded_run_encodes_the_test_images_to_the_same_codes(model, trained, images):
    folder, fitted = trained[model]
    train, test = images[MODELS[model][0]]
    run = load_run(folder)
    assert type(run.model).__name__ == model and run.is_image_run
    before, after = encode_images(fitted, test.X), encode_images(run.model, test.X)
    assert before.shape[0] == 100 and np.array_equal(before, after)
    assert np.array_equal(run.codes(), encode_images(fitted, train.X))
    # the codes differ between images (the Gumbel-Softmax VAE, after 6 steps, barely)
    assert len({row.tobytes() for row in after}) > (1 if model == "GumbelSoftmaxVAE" else 5)
    config = json.loads((folder / "config.json").read_text())
    assert config["model"] == model and config["data"]["source"] == MODELS[model][0]
    assert config["data"]["image_shape"] == [28, 28] and config["data"]["n_images"] == 120
    assert not any(p.suffix in (".pkl", ".pt", ".pickle") for p in folder.iterdir())


def test_every_used_bit_is_drawn_most_used_first(trained):
    run = load_run(trained["GaussBPE"][0])
    codes = run.codes()
    empty, adds, bits = bit_contributions(run.model, codes)
    use = (codes != 0).sum(0)
    assert set(bits) == set(np.flatnonzero(use)) and (np.diff(use[bits]) <= 0).all()
    assert empty.shape == (784,) and adds.shape == (len(bits), 784) and np.abs(adds).max() > 0.05


def test_the_bits_table_names_each_drawn_tile(trained, tmp_path, data_root):  # noqa: F811
    """show_run's CSV: binary codes list bit and images using it, a Gaussian VAE its
    latents and their spread, in the order of the tiles (tile 0: the empty code)."""
    import csv

    from bpetopics.runs.image_explore import show_run

    for model, header in (("BernBPE", ["tile", "bit", "images", "share"]), ("GaussianVAE", ["tile", "latent", "spread"])):
        run = load_run(trained[model][0])
        _, _, table = show_run(run, tmp_path / f"{model}.png", n_images=2, data_root=data_root)
        with open(table, newline="") as f:
            rows = list(csv.reader(f))
        _, _, bits = bit_contributions(run.model, run.codes())
        codes = run.codes()
        assert rows[0] == header and len(rows) > 1 and [int(r[1]) for r in rows[1:]] == bits.tolist()
        if model == "BernBPE":
            assert [int(r[2]) for r in rows[1:]] == (codes != 0).sum(0)[bits].tolist()
        else:
            assert [float(r[2]) for r in rows[1:]] == pytest.approx(codes.std(0)[bits].tolist(), rel=1e-5)


@pytest.mark.parametrize("model", list(MODELS))
def test_an_interrupted_image_training_resumes_to_the_same_model(model, images, tmp_path):
    data = images[MODELS[model][0]][0]
    whole = train_image_run(tmp_path / "whole", model, _params(model, epochs=2), data)

    class Stop(Exception):
        pass

    def stop_after_first(m, info):
        if m.epoch_ == 1:
            raise Stop

    job = start_image_job(tmp_path / "cut", model, _params(model, epochs=2), data)
    with pytest.raises(Stop):
        run_image_job(job, stop_after_first)
    release_job(job)
    assert not (tmp_path / "cut").exists() and job.checkpoint.is_file()
    with pytest.raises(RunError, match="interrupted training"):
        start_image_job(tmp_path / "cut", model, _params(model, epochs=2), data)
    with pytest.raises(RunError, match="bpetopics images train"):
        load_run(tmp_path / "cut")
    with pytest.raises(RunError, match="an image training"):
        resume_job(tmp_path / "cut")  # the text job's resume names the image command
    resumed = resume_image_job(tmp_path / "cut")
    assert resumed.model.epoch_ == 1
    run_image_job(resumed)
    finish_image_job(resumed)
    a, b = load_run(whole), load_run(tmp_path / "cut")
    sa, sb = a.model.state_dict(), b.model.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    assert np.array_equal(a.codes(), b.codes())
    assert [h["epoch"] for h in b.model.history_] == [1, 2]


def _one_line(exc_info, *fragments):
    message = str(exc_info.value)
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message


def test_damaged_image_runs_are_refused_in_one_line(trained, tmp_path):
    import shutil

    source = trained["GaussianVAE"][0]
    cases = {"weights": ("model.safetensors", b"\x00" * 40, "model.safetensors"),
             "codes": ("codes.npz", b"PK\x03\x04 not a zip", "codes.npz"),
             "config": ("config.json", b"{not json", "config.json")}
    for name, (file, content, fragment) in cases.items():
        folder = tmp_path / name
        shutil.copytree(source, folder)
        (folder / file).write_bytes(content)
        with pytest.raises(RunError) as exc_info:
            load_run(folder)
        _one_line(exc_info, fragment)
    folder = tmp_path / "shape"
    shutil.copytree(source, folder)
    config = json.loads((folder / "config.json").read_text())
    config["data"]["image_shape"] = [3, 32, 32]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(RunError) as exc_info:
        load_run(folder)
    _one_line(exc_info, "shape")


def test_bernoulli_models_refuse_images_outside_the_unit_interval(data_root, tmp_path):  # noqa: F811
    from bpetopics.images.sources import load_images

    scaled = load_images("scaled_mnist", data_root, limit=50)
    for model in ("BernBPE", "GumbelSoftmaxVAE"):
        with pytest.raises(RunError) as exc_info:
            start_image_job(tmp_path / model, model, _params(model), scaled)
        _one_line(exc_info, "[0, 1]")
        assert not (tmp_path / model).exists() and not (tmp_path / f"{model}.partial").exists()


def test_a_folder_of_images_trains_encodes_and_must_have_one_size(images, tmp_path):
    from PIL import Image

    from bpetopics.images.sources import ImageSourceError, load_images

    train = images["mnist"][0]
    folder = tmp_path / "pictures"
    folder.mkdir()
    for i in range(40):
        Image.fromarray(np.round(train.X[i].reshape(28, 28) * 255).astype(np.uint8)).save(folder / f"{i:02d}.png")
    data = load_images(folder)
    assert data.X.shape == (40, 784) and data.shape == (28, 28)
    assert np.abs(data.X - train.X[:40]).max() <= 0.5 / 255 + 1e-6
    run = load_run(train_image_run(tmp_path / "run", "GaussianVAE", _params("GaussianVAE", epochs=1), data))
    assert run.data["source"] == str(folder.resolve()) and run.data["split"] == "folder"
    assert np.array_equal(encode_images(run.model, load_images(folder).X), run.codes())
    Image.fromarray(np.zeros((20, 20), dtype=np.uint8)).save(folder / "zz.png")
    with pytest.raises(ImageSourceError) as exc_info:
        load_images(folder)
    _one_line(exc_info, "zz.png", "one size")


def test_a_shortlist_run_round_trips_and_older_runs_load_exact(images, tmp_path):
    """A run trained with the shortlist pursuit encodes the test images to the same codes
    once loaded; a run saved before the shortlist existed (no "shortlist" in its params)
    loads with the exact greedy pursuit it was trained with."""
    train, test = images["mnist"]
    params = {**image_params("GaussBPE", bits=40, epochs=1, seed=3, device="cpu", batch_size=50,
                             hidden=[32, 64], shortlist=4), "gamma": 10.0}
    assert params["shortlist"] == 4 and params["exact_stop"] is True
    folder = tmp_path / "short"
    job = start_image_job(folder, "GaussBPE", params, train)
    run_image_job(job)
    finish_image_job(job)
    run = load_run(folder)
    assert run.model.shortlist == 4
    assert np.array_equal(encode_images(run.model, test.X), encode_images(job.model, test.X))

    config = json.loads((folder / "config.json").read_text())
    del config["params"]["shortlist"]
    (folder / "config.json").write_text(json.dumps(config))
    assert load_run(folder).model.shortlist is None


@pytest.mark.parametrize("model", ["GaussBPE", "GaussianVAE"])
def test_the_progress_bar_counts_every_minibatch_and_is_not_recorded(model, images, tmp_path, monkeypatch):
    """``progress=True`` shows a bar over the minibatches of every epoch (120 images in
    batches of 50: 3 a pass, 6 in two epochs), and the checkpoints and the run keep the
    model's ``progress`` parameter as it was (False)."""
    import tqdm.std

    from bpetopics.baselines import vae_base
    from bpetopics.bpe import batches as batches_module
    from safetensors import safe_open

    bars = []

    class Recording(tqdm.std.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "disable": False})
            bars.append(self)

        def close(self):
            self.final = self.n
            super().close()

    monkeypatch.setattr(batches_module, "tqdm", Recording)
    monkeypatch.setattr(vae_base, "tqdm", Recording)
    dataset, _ = MODELS[model]
    folder = tmp_path / "run"
    job = start_image_job(folder, model, _params(model), images[dataset][0])
    saved = []            # each checkpoint's progress parameter, read back after its epoch

    def read_back(m, info):
        with safe_open(job.checkpoint, "pt") as f:
            saved.append(json.loads(f.metadata()["config"])["params"]["progress"])

    run_image_job(job, read_back, progress=True)
    finish_image_job(job)
    assert [bar.total for bar in bars] == [6] and bars[0].final == 6
    assert saved == [False, False] and job.model.progress is False
    assert json.loads((folder / "config.json").read_text())["params"]["progress"] is False


def test_image_training_uses_the_torch_threads_its_work_keeps_busy(monkeypatch):
    """A handful of images trains on one torch thread (more threads only spin, on a busy
    machine); full minibatches on every thread given."""
    from types import SimpleNamespace

    import torch

    from bpetopics.runs import image_job

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert image_job.training_threads("GaussBPE", {"device": "cpu"}, (6, 784)) == 1
        assert image_job.training_threads("GaussBPE", {"device": "cpu"}, (60_000, 784)) == 2
        assert image_job.training_threads("GumbelSoftmaxVAE", {"device": "cpu"}, (60_000, 784)) == 2
        seen = []
        monkeypatch.setattr(image_job, "run_job", lambda job, after, X, progress: seen.append(torch.get_num_threads()))
        job = SimpleNamespace(record={"model": "GaussBPE", "params": {"device": "cpu"}},
                              corpus=SimpleNamespace(X=np.zeros((6, 784), np.float32)))
        image_job.run_image_job(job)
        assert seen == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
