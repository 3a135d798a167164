"""Fuzzing the sharded corpus reader: seeded random edits of a small sharded corpus built
here, in its manifest (counts, names, fields of the wrong type), its shards' values (word
ids, counts, row pointers; with the checksums written again or not), its vocabulary, ids
and labels, and damaged files (cut, bit-flipped, deleted). Every edit is either refused
with one line (CorpusError; ``bpetopics`` exits with code 2) or reads and trains to the
corpus its files hold: never a traceback, never phantom documents."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from bpetopics.cli import main
from bpetopics.models import PoissBPE
from bpetopics.text import CorpusError
from bpetopics.text.sharded import open_sharded
from tests.cli.conftest import TINY, one_line_error
from tests.text.test_sharded_checks import build_planted, resign

JUNK = [None, -1, 0, 1, 5000, 1e308, "x", "", [], {}, True, "../outside/shard-00000", "/tmp/x", "..",
        "shard-00001", "sub/shard-00000"]


def _edit_manifest(folder, rng) -> str:
    """One field of the manifest set to a junk value, a count moved, or a key removed."""
    manifest = json.loads((folder / "sharded.json").read_text())
    shard = manifest["shards"][int(rng.integers(len(manifest["shards"])))]
    places = [(manifest, key) for key in ("n_docs", "n_words", "nnz", "vocabulary", "ids", "labels", "label_names",
                                          "dropped", "source", "version", "shards", "files", "pipeline")]
    places += [(shard, key) for key in ("name", "n_docs", "nnz")]
    places += [(manifest["files"], name) for name in manifest["files"]]
    where, key = places[int(rng.integers(len(places)))]
    roll = rng.random()
    if roll < 0.1:
        where.pop(key)
        kind = f"remove {key}"
    elif roll < 0.5 and isinstance(where.get(key), int):
        where[key] += int(rng.choice([-3017, -2, -1, 1, 2, 3017]))
        kind = f"move {key}"
    elif roll < 0.6 and where is manifest["files"]:
        where[str(JUNK[int(rng.integers(11, len(JUNK)))])] = where.pop(key)     # listed under another name
        kind = f"rename {key}"
    else:
        where[key] = JUNK[int(rng.integers(len(JUNK)))]
        kind = f"set {key}"
    (folder / "sharded.json").write_text(json.dumps(manifest))
    return kind


def _edit_values(folder, rng) -> str:
    """A few values of one shard array (or the labels) set to values in and out of range."""
    shards = sorted(folder.glob("shard-*.npy")) + [folder / "labels.npy"]
    file = shards[int(rng.integers(len(shards)))]
    array = np.load(file)
    if array.size:
        at = rng.integers(0, array.size, size=int(rng.integers(1, 4)))
        array[at] = rng.integers(-3, 70, size=at.size)
    np.save(file, array)
    return f"values of {file.name}"


def _edit_text(folder, rng) -> str:
    """The vocabulary shortened or lengthened (n_words along or not), or ids dropped or added."""
    if rng.random() < 0.5:
        words = json.loads((folder / "vocabulary.json").read_text())
        words = words[:int(rng.integers(0, len(words)))] if rng.random() < 0.6 else words + ["extra", "more"]
        (folder / "vocabulary.json").write_text(json.dumps(words))
        if rng.random() < 0.5:
            manifest = json.loads((folder / "sharded.json").read_text())
            manifest["n_words"] = len(words)
            (folder / "sharded.json").write_text(json.dumps(manifest))
        return "vocabulary"
    lines = (folder / "ids.txt").read_text().splitlines(keepends=True)
    lines = lines[:-int(rng.integers(1, 4))] if rng.random() < 0.5 else lines + ['"extra"\n', "not json\n"]
    (folder / "ids.txt").write_text("".join(lines))
    return "ids"


def _damage_file(folder, rng) -> str:
    files = sorted(p for p in folder.iterdir() if p.is_file())
    file = files[int(rng.integers(len(files)))]
    data = file.read_bytes()
    kind = ["cut", "flip", "delete", "empty"][int(rng.integers(4))]
    if kind == "cut":
        file.write_bytes(data[:int(rng.integers(0, max(1, len(data))))])
    elif kind == "flip" and data:
        raw = np.frombuffer(data, dtype=np.uint8).copy()
        at = rng.integers(0, raw.size, size=int(rng.integers(1, 6)))
        raw[at] ^= rng.integers(1, 256, size=at.size, dtype=np.uint8)
        file.write_bytes(raw.tobytes())
    elif kind == "delete":
        file.unlink()
    else:
        file.write_bytes(b"")
    return f"{kind} {file.name}"


EDITS = [_edit_manifest, _edit_manifest, _edit_values, _edit_values, _edit_text, _damage_file]


def _edit(folder, rng) -> str:
    kind = EDITS[int(rng.integers(len(EDITS)))](folder, rng)
    if rng.random() < 0.6 and (folder / "sharded.json").is_file():
        try:
            resign(folder)           # consistent with the checksums: only the values can tell
            kind += ", re-signed"
        except (ValueError, KeyError, TypeError, AttributeError, OSError):
            pass                     # the manifest's files are not a list that can be signed
    return kind


def _files_corpus(folder, manifest):
    """The counts the shard files hold, read with numpy and scipy alone."""
    blocks = []
    for shard in manifest["shards"]:
        parts = [np.load(folder / f"{shard['name']}.{p}.npy") for p in ("data", "indices", "indptr")]
        blocks.append(sp.csr_matrix(tuple(parts), shape=(len(parts[2]) - 1, manifest["n_words"])))
    return sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, manifest["n_words"]))


def _assert_reads_what_the_files_hold(corpus):
    """An accepted corpus: as many documents as its shards hold rows, the rows the files
    hold, ids and labels for each, word ids in the vocabulary, positive counts."""
    held = _files_corpus(corpus.path, corpus.manifest)
    assert corpus.n_docs == held.shape[0] and corpus.n_words == len(corpus.vocabulary) == held.shape[1]
    X = corpus.counts[np.arange(corpus.n_docs)]
    assert np.array_equal(X.indptr, held.indptr) and np.array_equal(X.indices, held.indices)
    assert np.array_equal(X.data, held.data) and (X.data > 0).all()
    assert len(corpus.ids) == corpus.n_docs
    if corpus.labels is not None:
        labels = np.asarray(corpus.labels)
        assert labels.shape == (corpus.n_docs,) and ((labels >= 0) & (labels < len(corpus.label_names))).all()
    assert corpus.summary()["documents"] == corpus.n_docs


def _one_line(exc):
    assert str(exc) and "\n" not in str(exc), str(exc)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_planted(tmp_path_factory.mktemp("fuzz"))


@pytest.mark.parametrize("seed", range(4))
def test_edited_corpora_are_refused_with_one_line_or_read_as_their_files_hold(built, tmp_path, seed):
    rng = np.random.default_rng(seed)
    trained = 0
    for case in range(50):
        folder = tmp_path / f"c{case}"
        shutil.copytree(built, folder)
        kind = _edit(folder, rng)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                corpus = open_sharded(folder, verify=True)
                _assert_reads_what_the_files_hold(corpus)
        except CorpusError as exc:
            _one_line(exc)
        else:
            if trained < 3:          # a few accepted ones trained: finite topics, a code a document
                model = PoissBPE(n_topics=3, n_bits=8, epochs=1, device="cpu", progress=False).fit(corpus.counts)
                assert model.codes_.shape == (corpus.n_docs, 8) and np.isfinite(model.topic_word_).all(), kind
                trained += 1
        try:                         # opened without verify: fit reads the values first
            counts = open_sharded(folder).counts
            PoissBPE(n_topics=3, n_bits=8, epochs=1, device="cpu", progress=False)._check_X(counts)
        except CorpusError as exc:
            _one_line(exc)
        shutil.rmtree(folder)


def test_commands_on_edited_corpora_end_with_one_line(built, tmp_path):
    rng = np.random.default_rng(11)
    runner = CliRunner()
    for case in range(12):
        folder = tmp_path / f"c{case}"
        shutil.copytree(built, folder)
        _edit(folder, rng)
        for args in (["corpus", str(folder)], ["train", str(folder), "--out", str(tmp_path / "run"), *TINY]):
            result = runner.invoke(main, args)
            if result.exit_code != 0:
                one_line_error(result)
            shutil.rmtree(tmp_path / "run", ignore_errors=True)
        shutil.rmtree(folder)
