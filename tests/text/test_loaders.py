"""Loaders: a folder of texts (labels, non-text files, encodings, errors) and 20 Newsgroups."""

import re

import numpy as np
import pytest

from bpetopics.text import CorpusError, CorpusWarning, load_20newsgroups, load_folder, load_source


@pytest.fixture
def labelled_folder(tmp_path):
    root = tmp_path / "texts"
    (root / "space").mkdir(parents=True)
    (root / "cars" / "deeper").mkdir(parents=True)
    (root / "space" / "a.txt").write_text("rockets and orbits", encoding="utf-8")
    (root / "space" / "b").write_bytes("caf\xe9 on the moon".encode("latin-1"))  # not UTF-8
    (root / "cars" / "c.txt").write_bytes("\ufeffengines with a BOM".encode("utf-8"))
    (root / "cars" / "deeper" / "d.txt").write_text("nested file, label from the first level")
    (root / "cars" / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" + bytes(range(256)))
    (root / "space" / "blob.bin").write_bytes(bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 20)
    (root / ".hidden").write_text("ignored")
    (root / "space" / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    return root


def test_folder_labels_ids_and_encodings(labelled_folder):
    with pytest.warns(CorpusWarning) as caught:
        docs = load_folder(labelled_folder)
    messages = [str(w.message) for w in caught]
    assert any(re.search(r"skipped 2 of 6 files .* not text", m) for m in messages), messages
    assert any(re.search(r"^1 bytes that are not valid UTF-8 were replaced .* in 1 of 6 files .*space/b", m)
               for m in messages), messages
    assert docs.ids == ["cars/c.txt", "cars/deeper/d.txt", "space/a.txt", "space/b"]
    assert docs.label_names == ["cars", "space"]
    np.testing.assert_array_equal(docs.labels, [0, 0, 1, 1])
    assert docs.texts[0] == "engines with a BOM"  # BOM dropped
    assert docs.texts[3] == "caf\ufffd on the moon"  # the bad byte replaced, no crash
    assert docs.split == "train" and docs.source == str(labelled_folder)
    assert sorted(docs.skipped["not a text file"]) == ["cars/photo.jpg", "space/blob.bin"]


def test_folder_without_subfolders_has_no_labels(tmp_path):
    for i in range(3):
        (tmp_path / f"{i}.txt").write_text(f"document number {i}")
    docs = load_folder(tmp_path)
    assert docs.labels is None and docs.label_names is None
    assert docs.ids == ["0.txt", "1.txt", "2.txt"]


def test_folder_with_files_outside_label_folders_warns(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("labelled")
    (tmp_path / "loose.txt").write_text("not labelled")
    with pytest.warns(CorpusWarning, match="1 files lie directly"):
        docs = load_folder(tmp_path)
    assert docs.labels is None and len(docs) == 2


def test_folder_errors_name_the_problem_and_the_fix(tmp_path):
    with pytest.raises(CorpusError, match=r"folder '.*nope' does not exist: give a folder of text files"):
        load_folder(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match=r"is empty: put text files in it"):
        load_folder(tmp_path / "empty")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "x.dat").write_bytes(b"\x00\x01\x02" * 50)
    with pytest.raises(CorpusError, match=r"has no text files \(1 files skipped"):
        load_folder(tmp_path / "bin")
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(CorpusError, match="is a file, not a folder"):
        load_folder(tmp_path / "f.txt")


def test_load_source_selects_labels_of_a_folder(labelled_folder):
    with pytest.warns(CorpusWarning):
        docs = load_source(labelled_folder, categories=["space"])["train"]
    assert docs.ids == ["space/a.txt", "space/b"]
    assert docs.label_names == ["space"] and docs.labels.tolist() == [0, 0]
    with pytest.warns(CorpusWarning), pytest.raises(CorpusError, match="unknown labels"):
        load_source(labelled_folder, categories=["boats"])


def test_sample_is_seeded_and_ordered(tmp_path):
    for i in range(20):
        (tmp_path / f"{i:02d}.txt").write_text(f"doc {i}")
    docs = load_folder(tmp_path)
    a, b = docs.sample(5, random_state=3), docs.sample(5, random_state=3)
    assert a.ids == b.ids and a.ids == sorted(a.ids) and len(a) == 5
    assert docs.sample(50) is docs


def test_20newsgroups_split_sizes_and_categories(shared_data):
    raw = load_20newsgroups(shared_data / "sklearn", download_if_missing=False)
    train, test = raw["train"], raw["test"]
    assert (len(train), len(test)) == (11314, 7532)
    assert len(train.label_names) == 20 and train.label_names == test.label_names
    assert train.ids == sorted(train.ids) and len(set(train.ids)) == 11314
    assert not set(train.ids) & set(test.ids)
    space = train.label_names.index("sci.space")
    assert (int((train.labels == space).sum()), int((test.labels == space).sum())) == (593, 394)
    assert train.texts[train.ids.index("rec.autos/102994")].startswith("From: lerxst@wam.umd.edu")

    small = load_20newsgroups(shared_data / "sklearn", categories=["sci.space", "alt.atheism"],
                              download_if_missing=False)
    assert small["train"].label_names == ["alt.atheism", "sci.space"]
    assert np.bincount(small["train"].labels).tolist() == [480, 593]
    assert np.bincount(small["test"].labels).tolist() == [319, 394]


def test_20newsgroups_errors(tmp_path):
    with pytest.raises(CorpusError, match="unknown 20 Newsgroups categories"):
        load_20newsgroups(categories=["sci.spaec"])
    with pytest.raises(CorpusError, match=r"cannot load 20 Newsgroups from .*put 20news-bydate_py3.pkz there"):
        load_20newsgroups(tmp_path, download_if_missing=False)


def test_one_bad_byte_does_not_change_the_whole_files_encoding(tmp_path):
    """Issue #11: one invalid byte turned a whole UTF-8 file into latin-1 ("cafÃ©")."""
    from bpetopics.text.decoding import decode_bytes

    raw = "café crème ".encode("utf-8") * 3 + b"\xff" + " naïve".encode("utf-8")
    text, n_bad = decode_bytes(raw)
    assert text == "café crème " * 3 + "\ufffd naïve" and n_bad == 1
    (tmp_path / "a.txt").write_bytes(raw)
    (tmp_path / "b.txt").write_bytes(b"\xe9t\xe9 " + "été".encode("utf-8"))
    with pytest.warns(CorpusWarning, match=r"^3 bytes that are not valid UTF-8 .* in 2 of 2 files"):
        docs = load_folder(tmp_path)
    assert "café" in docs.texts[0] and "cafÃ" not in docs.texts[0]
    assert docs.texts[1] == "\ufffdt\ufffd été"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_files_with_a_bom_are_read(tmp_path, encoding):
    text = "Ünïcode topics: the shuttle's orbit\n"
    raw = text.encode(encoding)
    if not raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        raw = "\ufeff".encode(encoding) + raw  # utf-16-be writes no BOM by itself
    (tmp_path / "doc.txt").write_bytes(raw)
    docs = load_folder(tmp_path)
    assert docs.texts == [text] and not docs.skipped
