"""A sharded corpus is not trusted (text/shard_checks.py): a manifest whose counts are
not its shards', a file named outside the corpus folder, and shards that are consistent
with their manifest and checksums but hold impossible values are each refused with one
line naming the file and the fix, before any training; never phantom documents."""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from bpetopics.cli import main
from bpetopics.models import PoissBPE
from bpetopics.text import CorpusError, TextPipeline
from bpetopics.text import shard_checks
from bpetopics.text.sharded import open_sharded
from bpetopics.text.streaming import build_sharded
from tests.cli.conftest import TINY, one_line_error

SETTINGS = dict(vocab_size=40, min_df=2, max_df=0.9, stopwords="none")
FIX = "build the corpus again (`bpetopics corpus "


def planted_jsonl(path, n_docs=120, seed=0):
    """Documents of four planted themes over 80 made-up words, with ids and labels."""
    rng = np.random.default_rng(seed)
    words = [f"w{chr(97 + i % 26)}{chr(97 + i // 26)}x" for i in range(80)]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n_docs):
            p = np.full(80, 0.2)
            p[(i % 4) * 20:(i % 4 + 1) * 20] += 4
            text = " ".join(rng.choice(words, size=int(rng.integers(4, 30)), p=p / p.sum()))
            f.write(json.dumps({"text": text, "id": f"d{i}", "label": f"t{i % 4}"}) + "\n")
    return path


def build_planted(folder, shard_docs=35):
    """A sharded corpus of :func:`planted_jsonl`'s documents, in several shards."""
    source = planted_jsonl(folder / "docs.jsonl")
    out = folder / "corpus"
    build_sharded(source, out, TextPipeline(**SETTINGS), shard_docs=shard_docs, chunk_docs=30,
                  id_field="id", label_field="label")
    return out


def resign(folder) -> None:
    """Write every file's size and sha256 into the manifest again: the edit is then
    consistent with the checksums, as a deliberate edit or another writer's would be."""
    manifest = json.loads((folder / "sharded.json").read_text())
    for name in manifest["files"]:
        data = (folder / name).read_bytes()
        manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (folder / "sharded.json").write_text(json.dumps(manifest))


def edit_manifest(folder, change) -> None:
    manifest = json.loads((folder / "sharded.json").read_text())
    change(manifest)
    (folder / "sharded.json").write_text(json.dumps(manifest))


def edit_array(file, change) -> None:
    array = np.load(file)
    change(array)
    np.save(file, array)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_planted(tmp_path_factory.mktemp("sharded"))


@pytest.fixture
def copy(built, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(built, out)
    return out


def _refused(folder, *fragments, verify=True):
    with pytest.raises(CorpusError) as err:
        open_sharded(folder, verify=verify)
    message = str(err.value)
    assert "\n" not in message and FIX in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_a_document_count_the_shards_do_not_hold_is_refused_on_open(copy):
    n_docs = open_sharded(copy).n_docs
    edit_manifest(copy, lambda m: m.update(n_docs=n_docs + 3017))
    for verify in (False, True):
        _refused(copy, "sharded.json says", f"{n_docs + 3017:,} documents but its shards hold {n_docs:,}",
                 verify=verify)
    # the shard's own count edited too: its row pointers say otherwise
    edit_manifest(copy, lambda m: m["shards"][0].update(n_docs=m["shards"][0]["n_docs"] + 3017))
    _refused(copy, "shard-00000.indptr.npy holds shape", verify=False)


def test_non_zeros_the_shards_do_not_hold_are_refused(copy):
    edit_manifest(copy, lambda m: (m.update(nnz=m["nnz"] + 5), m["shards"][1].update(nnz=m["shards"][1]["nnz"] + 5)))
    _refused(copy, "shard-00001.indices.npy holds shape", verify=False)


@pytest.mark.parametrize("name", ["../outside/shard-00000", "/tmp/shard-00000", "sub/shard-00000", "..", ""])
def test_a_shard_named_outside_the_corpus_folder_is_never_read(copy, tmp_path, name):
    outside = tmp_path / "outside"
    outside.mkdir()
    for part in ("indptr", "indices", "data"):       # there is something to read there
        shutil.copy(copy / f"shard-00000.{part}.npy", outside / f"shard-00000.{part}.npy")

    def rename(manifest):
        manifest["shards"][0]["name"] = name
        for part in ("indptr", "indices", "data"):
            manifest["files"][f"{name}.{part}.npy"] = manifest["files"].pop(f"shard-00000.{part}.npy")

    edit_manifest(copy, rename)
    _refused(copy, "not a plain file name in the corpus folder", verify=False)


def test_a_listed_file_outside_the_folder_is_refused(copy):
    edit_manifest(copy, lambda m: m.update(ids="../ids.txt"))
    _refused(copy, "'../ids.txt', not a plain file name", verify=False)


def _short_vocabulary(folder):
    words = json.loads((folder / "vocabulary.json").read_text())[:5]
    (folder / "vocabulary.json").write_text(json.dumps(words))
    edit_manifest(folder, lambda m: m.update(n_words=5))


SELF_CONSISTENT = {   # edit, file named, problem named
    "short vocabulary": (_short_vocabulary, "indices.npy", "outside the vocabulary's 5 words"),
    "word id too large": (lambda f: edit_array(f / "shard-00001.indices.npy", lambda a: a.__setitem__(9, 900)),
                          "shard-00001.indices.npy", "word id 900"),
    "negative word id": (lambda f: edit_array(f / "shard-00002.indices.npy", lambda a: a.__setitem__(-1, -2)),
                         "shard-00002.indices.npy", "word id -2"),
    "negative count": (lambda f: edit_array(f / "shard-00002.data.npy", lambda a: a.__setitem__(4, -3)),
                       "shard-00002.data.npy", "count -3"),
    "zero count": (lambda f: edit_array(f / "shard-00000.data.npy", lambda a: a.__setitem__(0, 0)),
                   "shard-00000.data.npy", "count 0"),
    "row pointers decrease": (lambda f: edit_array(f / "shard-00001.indptr.npy",
                                                   lambda a: a.__setitem__(5, a[7])),
                              "shard-00001.indptr.npy", "decreases at row 5"),
    "a word twice in a row": (lambda f: edit_array(f / "shard-00000.indices.npy",
                                                   lambda a: a.__setitem__(1, a[0])),
                              "shard-00000.indices.npy", "within a row"),
    "label out of range": (lambda f: edit_array(f / "labels.npy", lambda a: a.__setitem__(3, 7)),
                           "labels.npy", "outside the 4 label names"),
}


@pytest.mark.parametrize("case", list(SELF_CONSISTENT))
def test_impossible_values_are_refused_before_training(copy, case):
    edit, file, problem = SELF_CONSISTENT[case]
    edit(copy)
    resign(copy)
    _refused(copy, file, problem)                              # verify=True: what `bpetopics train` does
    if case == "label out of range":
        return                                                 # labels are not what fit reads
    counts = open_sharded(copy).counts                         # opened without verify ...
    epochs = []
    model = PoissBPE(n_topics=3, n_bits=8, epochs=2, device="cpu", progress=False,
                     callback=lambda m, info: epochs.append(info))
    with pytest.raises(CorpusError, match=file):               # ... fit reads the values first
        model.fit(counts)
    assert epochs == []


def test_the_values_are_read_block_by_block(copy, monkeypatch):
    """With blocks of 7 values (a row's ids cross blocks) the corpus passes, and an id out
    of order across a block's edge, in a later block, is found."""
    monkeypatch.setattr(shard_checks, "BLOCK", 7)
    open_sharded(copy, verify=True)
    indptr = np.load(copy / "shard-00001.indptr.npy")
    row = next(r for r in range(len(indptr) - 1) if indptr[r] < 14 <= indptr[r + 1] - 1)  # a row over value 14
    edit_array(copy / "shard-00001.indices.npy", lambda a: a.__setitem__(14, a[13]))  # 13 | 14: blocks' edge
    resign(copy)
    _refused(copy, "shard-00001.indices.npy", "within a row")
    assert indptr[row] <= 13


def test_a_run_can_be_trained_on_the_corpus_left_as_it_was(built):
    corpus = open_sharded(built, verify=True)
    assert corpus.counts.values_checked
    model = PoissBPE(n_topics=3, n_bits=8, epochs=1, device="cpu", progress=False).fit(corpus.counts)
    assert model.codes_.shape == (corpus.n_docs, 8) and np.isfinite(model.topic_word_).all()


def test_commands_refuse_an_edited_corpus_with_one_line(copy, tmp_path):
    runner = CliRunner()
    n_docs = open_sharded(copy).n_docs
    edit_manifest(copy, lambda m: m.update(n_docs=5000))
    result = runner.invoke(main, ["train", str(copy), "--out", str(tmp_path / "run"), *TINY])
    one_line_error(result, f"says 5,000 documents but its shards hold {n_docs:,}", FIX)
    assert not (tmp_path / "run").exists() and not (tmp_path / "run.partial").exists()
    edit_manifest(copy, lambda m: m.update(n_docs=n_docs))
    SELF_CONSISTENT["negative count"][0](copy)
    resign(copy)
    result = runner.invoke(main, ["corpus", str(copy)])
    one_line_error(result, "shard-00002.data.npy holds the count -3", FIX)
