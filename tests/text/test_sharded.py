"""The sharded on-disk corpus and its streaming build (issue #15): the same vocabulary,
counts, ids and labels as an in-memory build of the same texts; the same minibatches and
the same trained model as the same counts in memory; damaged files refused."""

import json
import shutil
import warnings

import numpy as np
import pytest

from bpetopics.bpe.batches import InMemoryBatches
from bpetopics.models import PoissBPE
from bpetopics.text import CorpusError, TextPipeline, corpus_from_documents, prepare_corpus
from bpetopics.text import sharded as S
from bpetopics.text import sharded_counts as SC
from bpetopics.text.loaders import RawDocuments
from bpetopics.text.streaming import build_sharded

SETTINGS = dict(vocab_size=30, min_df=2, max_df=0.9, stopwords="none")


def _texts(n, seed=0):
    """Planted documents: words drawn from a skewed distribution over 80 made-up words
    (many ties in frequency, so the vocab_size cut's tie-breaking is exercised), some
    documents empty, some with only rare words."""
    rng = np.random.default_rng(seed)
    words = [f"w{chr(97 + i % 26)}{chr(97 + i // 26)}x" for i in range(80)]
    texts = []
    for _ in range(n):
        p = rng.dirichlet(np.full(80, 0.3))
        texts.append(" ".join(rng.choice(words, size=int(rng.integers(0, 30)), p=p)))
    return texts


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("texts")
    texts = _texts(240)
    for i, text in enumerate(texts):
        label = "alpha" if i % 2 else "beta"
        (root / label).mkdir(exist_ok=True)
        (root / label / f"{i:03d}.txt").write_text(text)
    (root / "alpha" / "image.bin").write_bytes(b"\x00\x01\x02" * 100)   # not text: skipped
    return root


@pytest.fixture(scope="module")
def in_memory(folder):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return prepare_corpus(str(folder), **SETTINGS)["train"]


@pytest.fixture(scope="module")
def built(folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("built") / "corpus"
    build_sharded(folder, out, TextPipeline(**SETTINGS), shard_docs=37, chunk_docs=25)
    return out


def _assert_same_counts(sharded, memory):
    X = sharded.counts[np.arange(sharded.n_docs)]
    assert X.shape == memory.counts.shape
    assert np.array_equal(X.indptr, memory.counts.indptr)
    assert np.array_equal(X.indices, memory.counts.indices)
    assert np.array_equal(X.data, memory.counts.data) and X.data.dtype == memory.counts.data.dtype


def test_folder_build_equals_the_in_memory_corpus(built, in_memory):
    corpus = S.open_sharded(built, verify=True)
    assert corpus.vocabulary == in_memory.vocabulary
    _assert_same_counts(corpus, in_memory)
    assert corpus.ids == in_memory.ids
    assert corpus.label_names == in_memory.label_names
    assert np.array_equal(corpus.labels, in_memory.labels)
    assert len(corpus.manifest["shards"]) == -(-corpus.n_docs // 37)   # several shards
    assert all(isinstance(a, np.memmap) for shard in corpus.counts.shards for a in shard.values())  # mapped
    assert corpus.dropped["empty after cleaning"] == len(in_memory.dropped["empty after cleaning"])
    assert corpus.dropped["no word in the vocabulary"] == len(in_memory.dropped["no word in the vocabulary"])
    assert np.array_equal(corpus.counts.sum(0), np.asarray(in_memory.counts.sum(0)))
    assert np.array_equal(corpus.counts.sum(1), np.asarray(in_memory.counts.sum(1)))
    assert corpus.summary()["tokens"] == in_memory.n_tokens


@pytest.mark.parametrize("block", [1, 5, 64])
def test_sums_streamed_in_small_blocks_equal_the_in_memory_sums(built, in_memory, monkeypatch, block):
    """Blocks of a few non-zeros cut rows and shards anywhere: the sums do not change."""
    monkeypatch.setattr(SC, "SUM_NNZ", block)
    counts = S.open_sharded(built).counts
    X = in_memory.counts
    assert counts.nnz > 3 * block            # several blocks in every case
    assert np.array_equal(counts.sum(0), np.asarray(X.sum(0)))
    assert np.array_equal(counts.sum(1), np.asarray(X.sum(1)))
    assert counts.sum() == int(X.sum())


def test_two_jobs_write_the_same_files_as_one(folder, built, tmp_path):
    out = tmp_path / "two"
    build_sharded(folder, out, TextPipeline(**SETTINGS), jobs=2, shard_docs=37, chunk_docs=25)
    one, two = json.loads((built / S.MANIFEST).read_text()), json.loads((out / S.MANIFEST).read_text())
    assert one["files"] == two["files"]          # every file's sha256 and size
    assert one["files"]                          # (and there are files)


def test_jsonl_and_csv_builds_equal_the_in_memory_corpus(tmp_path):
    texts = _texts(150, seed=1)
    labels = [f"l{i % 3}" for i in range(150)]
    raw = RawDocuments(texts=texts, ids=[f"d{i}" for i in range(150)], labels=np.arange(150) % 3,
                       label_names=["l0", "l1", "l2"])
    memory = corpus_from_documents({"train": raw}, TextPipeline(**SETTINGS))["train"]
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text("\ufeff" + "".join(json.dumps({"body": t, "key": f"d{i}", "tag": lab}) + "\n"
                                       for i, (t, lab) in enumerate(zip(texts, labels))) + "\n",
                     encoding="utf-8")   # with a byte-order mark, as some editors write
    csv_file = tmp_path / "docs.csv"
    import csv

    with open(csv_file, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["key", "body", "tag"])
        w.writerows([f"d{i}", t, lab] for i, (t, lab) in enumerate(zip(texts, labels)))
    for source in (jsonl, csv_file):
        out = tmp_path / f"out-{source.suffix[1:]}"
        build_sharded(source, out, TextPipeline(**SETTINGS), text_field="body", id_field="key",
                      label_field="tag", shard_docs=50, chunk_docs=16)
        corpus = S.open_sharded(out)
        assert corpus.vocabulary == memory.vocabulary
        _assert_same_counts(corpus, memory)
        assert corpus.ids == memory.ids
        assert np.array_equal(corpus.labels, memory.labels) and corpus.label_names == ["l0", "l1", "l2"]


def test_a_malformed_line_is_named_or_skipped_and_counted(tmp_path):
    jsonl = tmp_path / "docs.jsonl"
    lines = [json.dumps({"text": t}) for t in _texts(60, seed=2)]
    lines[41] = '{"text": "unterminated'
    lines[50] = json.dumps({"title": "no text field"})
    jsonl.write_text("\n".join(lines) + "\n")
    with pytest.raises(CorpusError, match=rf"docs.jsonl:42: not a JSON object .*--skip-bad-lines") as err:
        build_sharded(jsonl, tmp_path / "out", TextPipeline(**SETTINGS), chunk_docs=16)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "out").exists()
    manifest = build_sharded(jsonl, tmp_path / "out", TextPipeline(**SETTINGS), chunk_docs=16, skip_bad_lines=True)
    assert manifest["dropped"]["malformed line"] == 2
    ids = S.open_sharded(tmp_path / "out").ids
    assert "docs.jsonl:42" not in ids and "docs.jsonl:51" not in ids and "docs.jsonl:43" in ids


def test_the_batch_source_yields_the_in_memory_minibatches(built, in_memory):
    counts = S.open_sharded(built).counts
    for epoch in (0, 3):
        ours = list(SC.ShardedBatches(counts, 16, seed=5, epoch=epoch, block_rows=40))   # blocks of 32 rows
        theirs = list(InMemoryBatches(in_memory.counts, 16, seed=5, epoch=epoch))
        assert len(ours) == len(theirs) == len(InMemoryBatches(in_memory.counts, 16, 5, epoch))
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape
            assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
            assert np.array_equal(a.data, b.data)


@pytest.mark.parametrize("read", ["pread", "maps", "maps without numba"])
def test_rows_gathered_in_any_order_are_those_in_memory(built, in_memory, monkeypatch, read):
    from bpetopics.text.compiled import shard_rows

    if read == "maps without numba":
        monkeypatch.setattr(shard_rows, "_copy_from_maps", shard_rows._copy_rows_numpy)
    counts = S.open_sharded(built).counts
    counts.by_pread = read == "pread"
    if read == "pread":
        assert shard_rows._file_backed(counts.shards[0]["indices"], np.zeros(0, counts.shards[0]["indices"].dtype))
    n = counts.shape[0]
    rng = np.random.default_rng(0)
    for rows in (rng.permutation(n)[:50], np.array([n - 1, 0, 5, 5, -1, 37, 36]), np.zeros(0, np.int64),
                 slice(30, 80, 3)):
        ours, theirs = counts[rows], in_memory.counts[rows]
        assert ours.shape == theirs.shape
        assert np.array_equal(ours.indptr, theirs.indptr) and np.array_equal(ours.indices, theirs.indices)
        assert np.array_equal(ours.data, theirs.data) and ours.data.dtype == theirs.data.dtype


def test_training_from_the_shards_equals_training_in_memory(built, in_memory, monkeypatch):
    monkeypatch.setattr(SC, "BLOCK_ROWS", 40)   # several blocks per epoch
    params = dict(n_topics=3, n_bits=8, epochs=3, batch_size=16, device="cpu", progress=False, random_state=2)
    memory = PoissBPE(**params).fit(in_memory.counts)
    disk = PoissBPE(**params).fit(S.open_sharded(built).counts)
    assert sum(h["restarted_topics"] for h in memory.history_) > 0    # the restart path read rows too
    assert np.array_equal(memory.topic_word_, disk.topic_word_)
    assert np.array_equal(memory.codes_, disk.codes_)
    assert [h["objective"] for h in memory.history_] == [h["objective"] for h in disk.history_]


def test_a_shard_cut_short_after_opening_is_named_when_its_rows_are_read(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    counts = S.open_sharded(copy).counts
    shard = copy / "shard-00001.data.npy"
    with open(shard, "r+b") as f:
        f.truncate(shard.stat().st_size - 4)        # the last row's last value is gone
    last = int(counts.row_offsets[2]) - 1           # shard 1's last row
    counts[np.arange(last)]                        # rows before it still read
    with pytest.raises(CorpusError, match=r"shard-00001.data.npy ends before row .*: the shard changed"):
        counts[np.array([0, last])]


def test_a_truncated_or_altered_shard_is_refused(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    shard = copy / "shard-00001.indices.npy"
    data = shard.read_bytes()
    shard.write_bytes(data[:-8])
    with pytest.raises(CorpusError, match=r"shard-00001.indices.npy has .* bytes where the manifest says"):
        S.open_sharded(copy)
    shard.write_bytes(data[:-4] + bytes(4))        # same size, other content
    corpus = S.open_sharded(copy)                  # the size check passes ...
    with pytest.raises(CorpusError, match=r"shard-00001.indices.npy does not match its sha256"):
        corpus.verify()                            # ... the hash does not
    (copy / "ids.txt").unlink()
    with pytest.raises(CorpusError, match="ids.txt is missing"):
        S.open_sharded(copy)


def test_an_existing_output_is_never_replaced_without_overwrite(folder, built, tmp_path):
    before = (built / S.MANIFEST).read_bytes()
    with pytest.raises(CorpusError, match="already holds a sharded corpus: pass --overwrite"):
        build_sharded(folder, built, TextPipeline(**SETTINGS))
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(CorpusError, match="is not a sharded corpus: choose another --out"):
        build_sharded(folder, other, TextPipeline(**SETTINGS), overwrite=True)
    assert (built / S.MANIFEST).read_bytes() == before and (other / "keep.txt").read_text() == "mine"


def test_a_malformed_csv_row_is_named_and_a_built_corpus_is_not_an_input(built, tmp_path):
    csv_file = tmp_path / "docs.csv"
    rows = ["id,text"] + [f"d{i},{t}" for i, t in enumerate(_texts(30, seed=4))]
    rows[12] += ",extra"
    csv_file.write_text("\n".join(rows) + "\n")
    with pytest.raises(CorpusError, match=r"docs.csv:13: 3 fields where the header has 2"):
        build_sharded(csv_file, tmp_path / "out", TextPipeline(**SETTINGS))
    with pytest.raises(CorpusError, match="has no column 'body'"):
        build_sharded(csv_file, tmp_path / "out", TextPipeline(**SETTINGS), text_field="body")
    with pytest.raises(CorpusError, match="is a corpus already built"):
        build_sharded(built, tmp_path / "out", TextPipeline(**SETTINGS))
    assert not (tmp_path / "out").exists()
