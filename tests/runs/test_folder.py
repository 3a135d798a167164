"""bpetopics.runs: a saved run loads back to a model that encodes identically; checkpoints
resume to the same model; damaged runs give one-line RunErrors and never run code."""

from __future__ import annotations

import json
import os
import pickle
import shutil

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from safetensors.torch import load_file, save_file

from bpetopics import PoissBPE
from bpetopics.runs import folder as run_io
from bpetopics.runs import RunError, load_checkpoint, load_run, save_checkpoint, save_run

TINY = dict(n_topics=5, n_bits=8, epochs=2, device="cpu", progress=False)


@pytest.fixture(scope="module")
def corpus(newsgroups_small):
    from bpetopics.text import Corpus

    c, n = newsgroups_small["train"], 300
    return Corpus(counts=c.counts[:n], vocabulary=c.vocabulary, texts=c.texts[:n], ids=c.ids[:n],
                  pipeline=c.pipeline, source=c.source)


@pytest.fixture(scope="module")
def fitted(corpus):
    return PoissBPE(**TINY).fit(corpus.counts)


@pytest.fixture(scope="module")
def saved(fitted, corpus, tmp_path_factory):
    return save_run(tmp_path_factory.mktemp("io") / "run", fitted, corpus, corpus_info={"settings": {"max_docs": 300}})


def _same_state(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_a_loaded_run_encodes_identically(saved, fitted, corpus):
    run = load_run(saved)
    assert isinstance(run.model, PoissBPE) and _same_state(run.model, fitted)
    X = corpus.counts
    np.testing.assert_array_equal(run.model.transform(X), fitted.transform(X))
    np.testing.assert_array_equal(run.model.codes_, fitted.codes_)
    np.testing.assert_array_equal(run.model.code_topic(fitted.codes_), fitted.code_topic(fitted.codes_))
    np.testing.assert_array_equal(run.model.topic_word_, fitted.topic_word_)
    assert run.model.history_ == fitted.history_ and run.model.epoch_ == 2
    params = fitted.config_params()
    assert {k: v for k, v in run.config["params"].items()} == params
    assert run.vocabulary == corpus.vocabulary
    assert run.pipeline.to_dict() == corpus.pipeline.to_dict()
    assert (run.pipeline.transform(["space shuttle orbit nasa"]) != 0).nnz > 0
    assert run.config["corpus"]["settings"] == {"max_docs": 300}
    assert (run.config["n_data"], run.config["n_features"]) == (300, 500)


def test_the_files_are_readable_by_other_tools(saved, fitted, corpus):
    weights = load_file(saved / "model.safetensors")  # plain safetensors, no bpetopics needed
    assert weights["prior.t"].dim() == 0 and int(weights["prior.t"]) == fitted.prior_.t
    assert weights["likelihood.topic_logits"].shape == (500, 5)
    np.testing.assert_array_equal(sp.load_npz(saved / "doc_codes.npz").toarray(), fitted.codes_)
    with np.load(saved / "doc_topics.npz", allow_pickle=False) as f:
        assert list(f["ids"]) == corpus.ids and f["doc_topic"].shape == (300, 5)
    assert (saved / "vocabulary.txt").read_text().split("\n")[:-1] == corpus.vocabulary
    assert (saved / "topics.csv").read_text().splitlines()[0] == "topic,share,rank,word,weight"
    assert len((saved / "history.csv").read_text().splitlines()) == 1 + 2
    summary = json.loads((saved / "summary.json").read_text())
    assert summary["n_topics"] == 5 and len(summary["top_words"][0]) == 20


def test_counts_round_trip(saved, corpus, tmp_path):
    run = load_run(saved)
    assert run.has_counts()
    counts = run.counts()
    assert sp.isspmatrix_csr(counts) and counts.shape == corpus.counts.shape == (300, 500)
    assert counts.dtype == corpus.counts.dtype and (counts != corpus.counts).nnz == 0
    assert run.doc_topics()[0] == corpus.ids  # rows follow the ids of doc_topics.npz
    np.testing.assert_array_equal(sp.load_npz(saved / "counts.npz").toarray(), corpus.counts.toarray())

    # a run of an older bpetopics (no counts.npz) still loads; counts() says why it cannot
    old = tmp_path / "old"
    shutil.copytree(saved, old)
    (old / "counts.npz").unlink()
    run = load_run(old)
    assert not run.has_counts()
    with pytest.raises(RunError, match="no training counts") as err:
        run.counts()
    assert "\n" not in str(err.value)
    (old / "counts.npz").write_bytes(b"not an npz")
    with pytest.raises(RunError, match="counts.npz is corrupted"):
        load_run(old).counts()
    sp.save_npz(old / "counts.npz", corpus.counts[:10])
    with pytest.raises(RunError, match=r"has shape \(10, 500\), expected \(300, 500\)"):
        load_run(old).counts()


def test_save_run_counts_without_a_corpus(fitted, corpus, tmp_path):
    with_counts = save_run(tmp_path / "a", fitted, vocabulary=corpus.vocabulary, counts=corpus.counts)
    assert (load_run(with_counts).counts() != corpus.counts).nnz == 0
    without = save_run(tmp_path / "b", fitted, vocabulary=corpus.vocabulary)
    assert not (without / "counts.npz").exists() and not load_run(without).has_counts()
    with pytest.raises(ValueError, match="the counts have shape"):
        save_run(tmp_path / "c", fitted, vocabulary=corpus.vocabulary, counts=corpus.counts[:10])


def test_save_run_is_atomic(saved, fitted, corpus, tmp_path, monkeypatch):
    with pytest.raises(RunError, match="already holds a finished run"):
        save_run(saved, fitted, corpus)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(run_io.np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        save_run(tmp_path / "new", fitted, corpus)
    copy = tmp_path / "copy"
    shutil.copytree(saved, copy)
    with pytest.raises(OSError, match="disk full"):
        save_run(copy, fitted, corpus, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]  # nothing new, no temporary folder left
    load_run(copy)  # the old run is intact


def test_checkpoint_resumes_to_the_same_model(corpus, tmp_path):
    X = corpus.counts
    params = dict(TINY, epochs=3, random_state=3)
    whole = PoissBPE(**params).fit(X)
    path = tmp_path / "ckpt.safetensors"

    def stop_after_first_epoch(model, info):
        save_checkpoint(path, model, extra={"note": "epoch 1"})
        if model.epoch_ == 1:
            raise KeyboardInterrupt

    cut = PoissBPE(**params, callback=stop_after_first_epoch)
    with pytest.raises(KeyboardInterrupt):
        cut.fit(X)
    resumed, extra = load_checkpoint(path)
    assert extra == {"note": "epoch 1"} and resumed.epoch_ == 1 and resumed.step_ == cut.step_
    opt_a, opt_b = cut.optimizer_.state_dict(), resumed.optimizer_.state_dict()
    assert opt_a["param_groups"] == opt_b["param_groups"]
    assert all(torch.equal(opt_a["state"][i][k], opt_b["state"][i][k]) for i in opt_a["state"] for k in opt_a["state"][i])
    resumed.continue_fit(X)
    assert _same_state(resumed, whole)
    np.testing.assert_array_equal(resumed.codes_, whole.codes_)
    assert [h["objective"] for h in resumed.history_] == [h["objective"] for h in whole.history_]

    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(RunError, match="corrupted or truncated"):
        load_checkpoint(path)


@pytest.mark.parametrize("stop", [1, 2, 3])
def test_checkpoint_resumes_to_the_same_model_across_topic_growth(corpus, tmp_path, stop):
    """Topics grow 3 -> 6 after epoch 2 and 6 -> 10 after epoch 3 of 9: a checkpoint before,
    between or after the rounds (each starts a fresh Adam) resumes to the model trained
    without a stop."""
    X = corpus.counts
    params = dict(TINY, n_topics=10, initial_topics=3, epochs=9, random_state=3)
    whole = PoissBPE(**params).fit(X)
    assert [h["topics"] for h in whole.history_] == [3, 6, 10, 10, 10, 10, 10, 10, 10]
    path = tmp_path / "ckpt.safetensors"

    def stop_after(model, info):
        save_checkpoint(path, model)
        if model.epoch_ == stop:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        PoissBPE(**params, callback=stop_after).fit(X)
    resumed, _ = load_checkpoint(path)
    assert resumed.current_topics_ == {1: 3, 2: 6, 3: 10}[stop]
    resumed.continue_fit(X)
    assert _same_state(resumed, whole)
    np.testing.assert_array_equal(resumed.codes_, whole.codes_)
    assert [h["objective"] for h in resumed.history_] == [h["objective"] for h in whole.history_]


@pytest.mark.parametrize("name, today, before", [("pipeline", True, False), ("mixture_entropy", None, 0.0)])
def test_a_run_saved_before_a_parameter_existed_loads_as_it_trained(saved, tmp_path, name, today, before):
    """A config without ``pipeline`` was trained in order, one without ``mixture_entropy``
    without the mixtures' entropy prior: each loads so (training it further, a resumed
    checkpoint, keeps that), whatever today's default."""
    assert getattr(load_run(saved).model, name) == today
    old = tmp_path / "old"
    shutil.copytree(saved, old)
    config = json.loads((old / "config.json").read_text())
    del config["params"][name]
    (old / "config.json").write_text(json.dumps(config))
    assert getattr(load_run(old).model, name) == before


def _rewrite_config(run, **changes):
    config = json.loads((run / "config.json").read_text())
    for key, value in changes.items():
        if key.startswith("params."):
            config["params"][key[7:]] = value
        else:
            config[key] = value
    (run / "config.json").write_text(json.dumps(config))


def _wrong_shape_weights(run):
    weights = load_file(run / "model.safetensors")
    weights["likelihood.topic_logits"] = torch.zeros(500, 6)
    save_file(weights, run / "model.safetensors")


class _Exploit:
    def __reduce__(self):
        return (os.mkdir, (str(_Exploit.marker),))


def _pickle_payload(run):
    (run / "model.safetensors").write_bytes(pickle.dumps(_Exploit()))


DAMAGES = {
    "missing config": (lambda r: (r / "config.json").unlink(), "config.json is missing"),
    "config not JSON": (lambda r: (r / "config.json").write_text("{oops"), "not valid JSON"),
    "other format": (lambda r: _rewrite_config(r, format="something.else"), "is not a bpetopics run"),
    "wrong format version": (lambda r: _rewrite_config(r, format_version=2), "format version 2"),
    "truncated weights": (lambda r: (r / "model.safetensors").write_bytes((r / "model.safetensors").read_bytes()[:300]),
                          "corrupted or truncated"),
    "missing weights": (lambda r: (r / "model.safetensors").unlink(), "model.safetensors is missing"),
    "weights of the wrong shape": (_wrong_shape_weights, "do not match its config"),
    "config with other n_topics": (lambda r: _rewrite_config(r, **{"params.n_topics": 7}), "do not match its config"),
    "config with other n_bits": (lambda r: _rewrite_config(r, **{"params.n_bits": 16}), "prior.a"),
    "unknown parameter": (lambda r: _rewrite_config(r, **{"params.colour": "red"}), "parameters this bpetopics does not know"),
    "unknown model": (lambda r: _rewrite_config(r, model="Evil"), "unknown model class 'Evil'"),
    "short vocabulary": (lambda r: (r / "vocabulary.txt").write_text("a\nb\n"), "has 2 words"),
    "missing vocabulary": (lambda r: (r / "vocabulary.txt").unlink(), "vocabulary.txt is missing"),
    "pickle instead of safetensors": (_pickle_payload, "corrupted or truncated"),
}


@pytest.mark.parametrize("name", list(DAMAGES))
def test_damaged_runs_give_one_line(saved, tmp_path, name):
    damage, fragment = DAMAGES[name]
    run = tmp_path / "run"
    shutil.copytree(saved, run)
    _Exploit.marker = tmp_path / "pwned"
    damage(run)
    with pytest.raises(RunError) as err:
        load_run(run)
    message = str(err.value)
    assert fragment in message and "\n" not in message
    assert not _Exploit.marker.exists()  # nothing was unpickled


def test_missing_and_unfinished_runs(tmp_path):
    with pytest.raises(RunError, match="does not exist"):
        load_run(tmp_path / "nothing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunError, match="is a file"):
        load_run(tmp_path / "file")
    (tmp_path / "run.partial").mkdir()
    with pytest.raises(RunError, match="did not finish.*--resume"):
        load_run(tmp_path / "run")


def test_checkpoint_metadata_records_the_thread_count(tmp_path):
    """Issue #11 item 7: CPU results are reproducible for the same thread count only."""
    import json

    from safetensors import safe_open

    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, size=(40, 30)))
    model = PoissBPE(**dict(TINY, epochs=1)).fit(X)
    path = save_checkpoint(tmp_path / "c.safetensors", model)
    with safe_open(str(path), framework="pt") as f:
        assert json.loads(f.metadata()["config"])["torch_threads"] == torch.get_num_threads()


def test_identical_models_give_identical_safetensors_bytes(tmp_path):
    """Issue #11 item 8: safetensors wrote its metadata in hash-map order, so the bytes of
    model.safetensors differed between identical trainings."""
    from bpetopics.files import canonical_safetensors

    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, size=(40, 30)))
    model = PoissBPE(**dict(TINY, epochs=1)).fit(X)
    vocabulary = [f"w{i}" for i in range(30)]
    weights = {save_run(tmp_path / f"r{i}", model, vocabulary=vocabulary, counts=X).joinpath(
        "model.safetensors").read_bytes() for i in range(12)}
    checkpoints = {save_checkpoint(tmp_path / f"c{i}.safetensors", model).read_bytes() for i in range(12)}
    assert len(weights) == 1 and len(checkpoints) == 1
    data = next(iter(weights))
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    assert list(header) == sorted(header) and list(header["__metadata__"]) == sorted(header["__metadata__"])
    assert canonical_safetensors(data) == data
    loaded = load_file(str(tmp_path / "r0" / "model.safetensors"))
    assert all(torch.equal(loaded[k], v) for k, v in model.state_dict().items())


def test_top_words_are_plain_str():
    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, size=(40, 30)))
    words = PoissBPE(**dict(TINY, epochs=1)).fit(X).top_words(np.array([f"w{i}" for i in range(30)]), n=3)
    assert len(words) == 5 and all(type(w) is str for row in words for w in row)


def test_n_topics_mismatch_names_the_parameter_and_shapes(tmp_path):
    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, size=(40, 30)))
    out = save_run(tmp_path / "r", PoissBPE(**dict(TINY, epochs=1)).fit(X), vocabulary=[f"w{i}" for i in range(30)])
    config = json.loads((out / "config.json").read_text())
    config["params"]["n_topics"] = 6
    (out / "config.json").write_text(json.dumps(config))
    with pytest.raises(RunError, match=r"size mismatch for \S+: copying a param with shape \(\[5, 8\]\) .* "
                                       r"current model is \(\[6, 8\]\)") as info:
        load_run(out)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["PoissBPE"])
def test_every_parameter_is_documented(name):
    """help(PoissBPE) documents each parameter of __init__ (numpy-style "name :" entries)."""
    import inspect
    import re

    from bpetopics import models

    cls = getattr(models, name)
    doc = inspect.getdoc(cls)
    section = doc.split("Parameters\n----------", 1)[1].split("Attributes\n----------", 1)[0] if "Parameters" in doc else ""
    documented = {n.strip() for line in section.splitlines() if re.match(r"^\S.* :", line)
                  for n in line.split(" :", 1)[0].split(",")}
    missing = [p for p in inspect.signature(cls.__init__).parameters if p != "self" and p not in documented]
    assert not missing, f"{name} leaves {missing} undocumented"


def test_a_run_with_the_default_code_length_round_trips(corpus, tmp_path):
    """n_bits=None (K from T: 64 bits at T = 30) is saved as None and rebuilt with K = 64."""
    model = PoissBPE(n_topics=30, epochs=1, device="cpu", progress=False).fit(corpus.counts)
    out = save_run(tmp_path / "run", model, corpus)
    config = json.loads((out / "config.json").read_text())
    assert config["params"]["n_bits"] is None
    assert json.loads((out / run_io.SUMMARY_FILE).read_text())["n_bits"] == 64
    run = load_run(out)
    assert run.model.code_length() == 64 and run.model.codes_.shape == (corpus.counts.shape[0], 64)
    np.testing.assert_array_equal(run.model.transform(corpus.counts[:50]), model.transform(corpus.counts[:50]))


def test_a_run_saved_under_another_default_code_length_keeps_its_bits(corpus, tmp_path):
    """A run saved with n_bits=None when the default K for its T was another (80 bits at
    T = 30 before K grew as sqrt(T)) loads with the K it was trained with."""
    model = PoissBPE(n_topics=30, n_bits=80, epochs=1, device="cpu", progress=False).fit(corpus.counts)
    out = save_run(tmp_path / "run", model, corpus)
    _rewrite_config(out, **{"params.n_bits": None})
    run = load_run(out)
    assert run.model.code_length() == 80 and run.model.codes_.shape == (corpus.counts.shape[0], 80)
    np.testing.assert_array_equal(run.model.transform(corpus.counts[:50]), model.transform(corpus.counts[:50]))


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_run_whose_weights_are_not_finite_is_refused(saved, fitted, tmp_path, value):
    """A run whose weights hold NaN (a diverged training, a damaged file) would encode every
    document to NaN without a word: loading it, or its state into a model, refuses it."""
    run = tmp_path / "run"
    shutil.copytree(saved, run)
    state = load_file(run / "model.safetensors")
    name = next(k for k, v in state.items() if k.startswith("decoder.") and v.is_floating_point())
    state[name] = torch.full_like(state[name], value)
    save_file(state, run / "model.safetensors")
    with pytest.raises(RunError) as err:
        load_run(run)
    message = str(err.value)
    assert "\n" not in message and f"{name} holds NaN or infinite values" in message
    assert str(run) in message and "train the run again" in message
    with pytest.raises(ValueError, match=f"saved weights are not finite: {name}"):
        PoissBPE(**TINY).load_state(state, fitted.n_data_, fitted.n_features_)
