"""Corpus: prepare_corpus on a folder, dropped documents, save/load round trip, no pickle."""

import gzip
import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics.text import Corpus, CorpusError, CorpusWarning, load_splits, prepare_corpus, save_splits

TOPICS = {
    "space": ["rocket orbit launch", "orbit moon rocket", "launch moon orbit", "rocket launch moon"],
    "cars": ["engine wheel brake", "brake engine wheel", "wheel engine brake", "engine brake wheel"],
}


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "src"
    for label, docs in TOPICS.items():
        (root / label).mkdir(parents=True)
        for i, text in enumerate(docs):
            (root / label / f"{i}.txt").write_text(f"From: x@y.z\nSubject: {label} {i}\n\n{text} shared\n")
    (root / "cars" / "empty.txt").write_text("From: a@b.c\nSubject: hi\n\n> only a quote\n12 34 !!\n")
    (root / "cars" / "oov.txt").write_text("unique words nowhere else\n")
    (root / "space" / "image.gif").write_bytes(b"GIF89a\x00\x00\x01\x02" * 10)
    return root


@pytest.fixture
def splits(folder):
    with pytest.warns(CorpusWarning, match="skipped 1 of 11"):
        return prepare_corpus(folder, vocab_size=None, min_df=2, max_df=1.0, stopwords="none")


def test_prepare_folder_counts_labels_and_dropped(splits):
    assert list(splits) == ["train"]
    c = splits["train"]
    assert c.split == "train" and c.n_docs == 8
    assert c.vocabulary == sorted("brake engine launch moon orbit rocket shared wheel".split())
    assert sp.isspmatrix_csr(c.counts) and c.counts.dtype == np.int64 and c.counts.shape == (8, 8)
    assert c.label_names == ["cars", "space"] and c.labels.tolist() == [0] * 4 + [1] * 4
    assert c.dropped == {
        "not a text file": ["space/image.gif"],
        "empty after cleaning": ["cars/empty.txt"],
        "no word in the vocabulary": ["cars/oov.txt"],
    }
    assert c.summary()["dropped"] == {"not a text file": 1, "empty after cleaning": 1, "no word in the vocabulary": 1}
    # headers are gone: "subject" / "cars" would otherwise be tokens in every document
    assert "subject" not in c.vocabulary and "cars" not in c.vocabulary
    assert c.n_tokens == 32 and c.summary()["mean_length"] == 4.0


def test_texts_are_in_vocabulary_and_match_counts(splits):
    c = splits["train"]
    vocab = set(c.vocabulary)
    assert all(set(t) <= vocab for t in c.texts)
    assert c.doc_lengths.tolist() == [len(t) for t in c.texts]
    assert c.texts[c.ids.index("space/0.txt")] == ["rocket", "orbit", "launch", "shared"]
    for i, text in enumerate(c.texts):
        row = c.counts[i]
        assert {c.vocabulary[j]: v for j, v in zip(row.indices, row.data)} == {w: text.count(w) for w in set(text)}


def test_pipeline_transforms_new_documents_on_the_same_vocabulary(splits):
    c = splits["train"]
    X = c.pipeline.transform(["From: q@r.s\n\nrocket rocket wheel unknown"])
    assert X.shape == (1, c.n_words)
    assert X[0, c.vocabulary.index("rocket")] == 2 and X.sum() == 3


def test_save_load_round_trip_without_pickle(splits, tmp_path):
    c = splits["train"]
    c.save(tmp_path / "one")
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == [
        "corpus.json", "counts.npz", "documents.json", "texts.txt.gz", "vocabulary.json"]
    with np.load(tmp_path / "one" / "counts.npz", allow_pickle=False) as npz:
        assert npz["format"].item() in ("csr", b"csr") and npz["data"].dtype == np.int64
    with gzip.open(tmp_path / "one" / "texts.txt.gz", "rt") as f:
        assert f.readline().split() == c.texts[0]
    back = Corpus.load(tmp_path / "one")
    assert sp.isspmatrix_csr(back.counts) and (back.counts != c.counts).nnz == 0
    assert back.counts.dtype == c.counts.dtype
    assert back.vocabulary == c.vocabulary and back.texts == c.texts and back.ids == c.ids
    assert back.labels.tolist() == c.labels.tolist() and back.label_names == c.label_names
    assert back.split == c.split and back.dropped == c.dropped and back.source == c.source
    assert back.pipeline.get_params() == c.pipeline.get_params()
    doc = ["rocket moon\n> quoted engine\n-- \nsig wheel"]
    assert (back.pipeline.transform(doc) != c.pipeline.transform(doc)).nnz == 0


def test_save_splits_is_atomic_and_refuses_to_overwrite(splits, tmp_path):
    out = tmp_path / "saved"
    save_splits(splits, out)
    assert json.loads((out / "manifest.json").read_text())["splits"] == ["train"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folder left
    with pytest.raises(CorpusError, match="already holds a saved corpus: pass --overwrite"):
        save_splits(splits, out)
    save_splits(splits, out, overwrite=True)
    assert load_splits(out)["train"].n_docs == 8
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("precious")
    with pytest.raises(CorpusError, match="exists and is not a saved corpus"):
        save_splits(splits, other, overwrite=True)
    assert (other / "keep.txt").read_text() == "precious"


def test_a_saved_corpus_is_a_source(splits, tmp_path):
    save_splits(splits, tmp_path / "saved")
    again = prepare_corpus(tmp_path / "saved")
    assert list(again) == ["train"] and again["train"].ids == splits["train"].ids
    single = prepare_corpus(str(tmp_path / "saved" / "train"))
    assert single["train"].vocabulary == splits["train"].vocabulary


def test_load_errors(tmp_path):
    with pytest.raises(CorpusError, match="is not a saved corpus"):
        Corpus.load(tmp_path)
    (tmp_path / "corpus.json").write_text('{"format": "bpetopics.corpus", "version": 1, "split": "train"}')
    with pytest.raises(CorpusError, match="vocabulary.json is missing"):
        Corpus.load(tmp_path)


def test_corpus_checks_shapes():
    X = sp.csr_matrix(np.array([[1, 0], [0, 2]]))
    with pytest.raises(ValueError, match="2 columns but the vocabulary has 3"):
        Corpus(X, ["a", "b", "c"], [["a"], ["b", "b"]], ["d0", "d1"])
    with pytest.raises(TypeError, match="sparse"):
        Corpus(X.toarray(), ["a", "b"], [["a"], ["b", "b"]], ["d0", "d1"])


def test_prepare_corpus_reports_bad_input(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        prepare_corpus(tmp_path / "missing", stopwords="none")
    with pytest.raises(CorpusError, match="max_df=0.1 is below min_df=0.5"):
        prepare_corpus(tmp_path / "missing", min_df=0.5, max_df=0.1, stopwords="none")  # checked first


def test_test_size_holds_out_documents_before_the_vocabulary_is_fitted(tmp_path):
    root = tmp_path / "texts"
    root.mkdir()
    rng = np.random.default_rng(0)
    def name(i):                                    # letters only: digits are cleaned away
        return "".join("abcdefghij"[int(c)] for c in f"{i:02d}")

    words = [f"word{name(i)}" for i in range(30)]
    for i in range(40):
        (root / f"d{i:02d}.txt").write_text(" ".join(rng.choice(words, size=12)) + f" only{name(i)} only{name(i)}\n")
    settings = dict(vocab_size=None, min_df=1, max_df=1.0, stopwords="none", random_state=3)
    whole = prepare_corpus(root, **settings)["train"]
    splits = prepare_corpus(root, test_size=0.25, **settings)
    train, test = splits["train"], splits["test"]
    assert (train.split, test.split, train.n_docs, test.n_docs) == ("train", "test", 30, 10)
    assert sorted(train.ids + test.ids) == sorted(whole.ids) and not set(train.ids) & set(test.ids)
    assert train.ids == sorted(train.ids) and test.ids == sorted(test.ids)       # in the documents' order
    # the vocabulary is the training documents': a held-out document's own word is not in it
    held = {f"only{name(int(i[1:3]))}" for i in test.ids}
    assert not held & set(train.vocabulary) and held <= set(whole.vocabulary)
    assert test.vocabulary == train.vocabulary
    again = prepare_corpus(root, test_size=0.25, **settings)
    assert again["test"].ids == test.ids                                         # seeded
    other = prepare_corpus(root, test_size=0.25, **{**settings, "random_state": 4})
    assert other["test"].ids != test.ids


@pytest.mark.parametrize("test_size, pattern", [(0.0, "between 0 and 1"), (1.0, "between 0 and 1"),
                                                (0.01, "too few to hold out")])
def test_a_bad_test_size_is_one_line(folder, test_size, pattern):
    with pytest.raises(CorpusError, match=pattern) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore", CorpusWarning)          # (the folder's skipped image)
        prepare_corpus(folder, min_df=1, max_df=1.0, stopwords="none", test_size=test_size)
    assert "\n" not in str(caught.value)
