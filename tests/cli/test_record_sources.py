"""JSONL and CSV sources, compressed or not (.gz, .bz2, .xz, .zst), read without a flag by
``corpus`` (in memory, or sharded with --nproc) and ``train``."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma

import numpy as np
import pytest
import zstandard

from bpetopics.cli import main
from bpetopics.text import load_splits
from bpetopics.text.sharded import open_sharded
from tests.cli.conftest import TINY, one_line_error

WORDS = ["--stopwords", "none", "--min-df", "2", "--vocab-size", "60"]


def _zstd_two_frames(data: bytes) -> bytes:
    """zstd of ``data`` as two frames one after the other (as pzstd and appends write)."""
    half = len(data) // 2
    return b"".join(zstandard.ZstdCompressor(level=3).compress(part) for part in (data[:half], data[half:]))


COMPRESS = {"": lambda b: b, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress,
            ".zst": _zstd_two_frames}


def _documents(n=120, seed=5):
    rng = np.random.default_rng(seed)
    vocab = [f"word{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(80)]
    docs = []
    for i in range(n):
        topic = i % 4
        p = np.full(80, 0.2)
        p[topic * 20:(topic + 1) * 20] += 5
        docs.append({"id": f"d{i}", "body": " ".join(rng.choice(vocab, size=int(rng.integers(5, 30)), p=p / p.sum())),
                     "topic": f"t{topic}"})
    return docs


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """{suffix: path} of the same documents as JSONL, plain and compressed, and a
    gzipped CSV of them."""
    folder = tmp_path_factory.mktemp("records")
    data = "".join(json.dumps(d) + "\n" for d in _documents()).encode()
    paths = {}
    for suffix, compress in COMPRESS.items():
        paths[suffix] = folder / f"docs.jsonl{suffix}"
        paths[suffix].write_bytes(compress(data))
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=["id", "body", "topic"])
    writer.writeheader()
    writer.writerows(_documents())
    paths["csv.gz"] = folder / "docs.csv.gz"
    paths["csv.gz"].write_bytes(gzip.compress(text.getvalue().encode()))
    return paths


FIELDS = ["--text-field", "body", "--id-field", "id", "--label-field", "topic"]


@pytest.mark.parametrize("suffix", list(COMPRESS) + ["csv.gz"])
def test_a_jsonl_or_csv_file_compressed_or_not_is_built_in_memory(runner, sources, tmp_path, suffix):
    plain = tmp_path / "plain"
    assert runner.invoke(main, ["corpus", str(sources[""]), "--out", str(plain), *FIELDS, *WORDS]).exit_code == 0
    out = tmp_path / "c"
    result = runner.invoke(main, ["corpus", str(sources[suffix]), "--out", str(out), *FIELDS, *WORDS])
    assert result.exit_code == 0, result.output
    a, b = load_splits(plain)["train"], load_splits(out)["train"]
    assert b.n_docs == 120 and b.label_names == ["t0", "t1", "t2", "t3"] and list(b.ids) == list(a.ids)
    assert (a.counts != b.counts).nnz == 0 and a.vocabulary == b.vocabulary


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_jobs_build_a_compressed_jsonl_sharded_with_the_same_counts(runner, sources, tmp_path, suffix):
    memory, sharded = tmp_path / "m", tmp_path / "s"
    assert runner.invoke(main, ["corpus", str(sources[suffix]), "--out", str(memory), *FIELDS, *WORDS]).exit_code == 0
    result = runner.invoke(main, ["corpus", str(sources[suffix]), "--nproc", "2", "--out", str(sharded), "-q",
                                  *FIELDS, *WORDS])
    assert result.exit_code == 0, result.output
    assert "(sharded)" in result.output
    a, s = load_splits(memory)["train"], open_sharded(sharded)
    assert s.vocabulary == a.vocabulary and list(s.ids) == list(a.ids)
    assert (s.counts[np.arange(s.n_docs)] != a.counts).nnz == 0


def test_sharded_only_options_with_format_memory_are_one_line(runner, sources, tmp_path):
    result = runner.invoke(main, ["corpus", str(sources[""]), "--nproc", "2", "--format", "memory",
                                  "--out", str(tmp_path / "c")])
    one_line_error(result, "--nproc applies only to a sharded build", "--format sharded")
    assert not (tmp_path / "c").exists()


def test_train_reads_a_compressed_jsonl(runner, sources, tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(main, ["train", str(sources[".xz"]), "--out", str(out), "-q", *FIELDS, *WORDS, *TINY])
    assert result.exit_code == 0, result.output
    config = json.loads((out / "config.json").read_text())
    assert config["n_data"] == 120 and config["corpus"]["settings"]["text_field"] == "body"


@pytest.mark.parametrize("name, data, fragment", [
    ("docs.jsonl.zst", zstandard.ZstdCompressor().compress(b'{"text": "hello world"}\n' * 200)[:-9],
     "ends inside a zstd frame"),
    ("docs.csv.zst", b"id,text\n1,hello world\n", "cannot be decompressed"),
    ("docs.jsonl.gz", b"not gzip at all", "cannot be decompressed"),
    ("docs.csv.xz", lzma.compress(b"id,text\n1,hello world\n" * 50)[:40], "cannot be decompressed"),
])
def test_an_unreadable_compressed_file_is_one_line(runner, tmp_path, name, data, fragment):
    path = tmp_path / name
    path.write_bytes(data)
    for extra in ([], ["--format", "sharded", "-q"]):
        result = runner.invoke(main, ["corpus", str(path), "--out", str(tmp_path / "c"), *extra])
        one_line_error(result, name, fragment)
        assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("build", [[], ["--format", "sharded", "-q"]])
def test_invalid_bytes_are_counted_and_warned_in_both_builds(runner, tmp_path, build):
    csv_file = tmp_path / "bad.csv"
    csv_file.write_bytes(b"id,text\n1,caf\xe9 rocket orbit\n2,rocket orbit engine\n3,engine \xff\xfe brake\n")
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"caf\xe9 rocket orbit\n")
    (folder / "b.txt").write_bytes(b"rocket orbit engine\n")
    for source, warning in ((csv_file, "3 bytes that are not valid UTF-8 were replaced by U+FFFD in 2 of 3"),
                            (folder, "1 bytes that are not valid UTF-8 were replaced by U+FFFD in 1 of 2")):
        result = runner.invoke(main, ["corpus", str(source), "--out", str(tmp_path / f"c{len(build)}{source.name}"),
                                      "--min-df", "1", "--max-df", "1.0", "--stopwords", "none", *build])
        assert result.exit_code == 0, result.output
        assert f"Warning: {warning}" in result.output


@pytest.mark.parametrize("build", [[], ["--format", "sharded", "-q"]])
def test_a_text_field_no_line_has_is_named(runner, sources, tmp_path, build):
    result = runner.invoke(main, ["corpus", str(sources[".gz"]), "--text-field", "nope", "--skip-bad-lines",
                                  "--out", str(tmp_path / "c"), *build])
    one_line_error(result, "all 120 lines of", "were skipped: no text field 'nope'", "--text-field")


def test_evaluate_refuses_a_training_file_whose_text_changed(runner, tmp_path):
    docs = _documents(n=80)
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(json.dumps(d) + "\n" for d in docs))
    run = tmp_path / "run"
    result = runner.invoke(main, ["train", str(source), "--out", str(run), "-q", *FIELDS, *WORDS, *TINY])
    assert result.exit_code == 0, result.output
    evaluate = ["evaluate", str(run), "--reference", "train", "--no-gensim"]
    assert runner.invoke(main, evaluate).exit_code == 0
    docs[3]["body"] = " ".join(reversed(docs[3]["body"].split()))     # the same words, ids and vocabulary
    source.write_text("".join(json.dumps(d) + "\n" for d in docs))
    one_line_error(runner.invoke(main, evaluate), "train documents of", "changed since training")
    # a run of an older bpetopics records no fingerprint: evaluated, with a note that it cannot be checked
    config = json.loads((run / "config.json").read_text())
    del config["corpus"]["fingerprints"]
    (run / "config.json").write_text(json.dumps(config))
    result = runner.invoke(main, evaluate)
    assert result.exit_code == 0, result.output
    assert "Note:" in result.output and "cannot be checked" in result.output
