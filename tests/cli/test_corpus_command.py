"""``bpetopics corpus`` through click's runner: output, files, exit codes, one-line errors."""

import json

import pytest
from click.testing import CliRunner

from bpetopics.cli import main


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "src"
    for label, words in {"space": "rocket orbit launch moon", "cars": "engine wheel brake gear"}.items():
        (root / label).mkdir(parents=True)
        for i in range(4):
            (root / label / f"{i}.txt").write_text(f"From: a@b.c\nSubject: {i}\n\n{words} common\n")
    (root / "cars" / "empty.txt").write_text("12 34 !!\n")
    return root


def _check_one_line_error(result, *fragments):
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0]


def test_corpus_on_a_folder_writes_files_and_summary(runner, folder, tmp_path):
    out = tmp_path / "out"
    args = ["corpus", str(folder), "--out", str(out), "--min-df", "2", "--max-df", "1.0", "--stopwords", "none"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"Saved {folder} to {out}" in result.output
    row = next(line.split() for line in result.output.splitlines() if line.startswith("train"))
    assert row == ["train", "9", "8", "2", "9", "40", "5.0", "1"]  # loaded, kept, labels, W, tokens, mean, dropped
    assert "train: 1 empty after cleaning, 0 no word in the vocabulary" in result.output
    assert "stop words: none (0 words)" in result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["summary"]["train"]["documents"] == 8
    assert sorted(p.name for p in (out / "train").iterdir()) == [
        "corpus.json", "counts.npz", "documents.json", "texts.txt.gz", "vocabulary.json"]

    again = runner.invoke(main, args)
    _check_one_line_error(again, "already holds a saved corpus", "--overwrite")
    assert runner.invoke(main, [*args, "--overwrite"]).exit_code == 0

    summary = runner.invoke(main, ["corpus", str(out)])  # a saved corpus as the source
    assert summary.exit_code == 0 and "nothing written" in summary.output and "train" in summary.output


def test_corpus_warns_about_files_that_are_not_text(runner, folder, tmp_path):
    (folder / "space" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 4)
    result = runner.invoke(main, ["corpus", str(folder), "--out", str(tmp_path / "o"), "--min-df", "1",
                                  "--max-df", "1.0", "--stopwords", "none"])
    assert result.exit_code == 0, result.output
    assert "Warning: skipped 1 of 10 files" in result.output
    assert "1 not a text file" in result.output
    # the summary's counts add up: loaded = documents + dropped; the picture is not a document
    row = next(line.split() for line in result.output.splitlines() if line.startswith("train"))
    loaded, documents, dropped = int(row[1]), int(row[2]), int(row[-1])
    assert (loaded, documents, dropped) == (9, 8, 1)


@pytest.mark.parametrize(
    "make, extra, fragments",
    [
        (lambda p: None, [], ["does not exist", "give 20newsgroups"]),
        (lambda p: p.mkdir(), [], ["is empty", "put text files in it"]),
        (lambda p: (p.mkdir(), (p / "x.bin").write_bytes(b"\x00" * 64)), [], ["has no text files"]),
        ("folder", ["--min-df", "50"], ["min_df=50", "lower --min-df"]),
        ("folder", ["--min-df", "5", "--max-df", "1.0", "--stopwords", "sklearn", "--vocab-size", "3"], []),
        ("folder", ["--min-df", "0.5", "--max-df", "0.2"], ["max_df=0.2 is below min_df=0.5", "raise --max-df"]),
        ("folder", ["--min-df", "5", "--max-df", "7"], ["vocabulary is empty", "lower --min-df"]),
        ("folder", ["--stopwords", "klingon"], ["unknown stop-word list"]),
        ("folder", ["--categories", "boats"], ["unknown labels"]),
        ("folder", ["--min-df", "1", "--test-size", "0.01"], ["too few to hold out 0.01", "--test-size"]),
        ("folder", ["--test-size", "1.5"], ["--test-size", "1.5"]),
        (lambda p: None, ["--test-size", "0.2"], ["does not exist"]),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(runner, folder, tmp_path, make, extra, fragments):
    if make == "folder":
        source = folder
    else:
        source = tmp_path / "bad"
        make(source)
    args = ["corpus", str(source), "--out", str(tmp_path / "out"), "--stopwords", "none", *extra]  # last wins
    result = runner.invoke(main, args)
    if not fragments:  # a valid corner case (3 words out of 9): must succeed
        assert result.exit_code == 0, result.output
        return
    _check_one_line_error(result, *fragments)
    assert not (tmp_path / "out").exists()


def test_bad_numbers_are_usage_errors(runner, folder):
    result = runner.invoke(main, ["corpus", str(folder), "--min-df", "lots"])
    assert result.exit_code == 2 and "is not a number" in result.output


def test_help_has_examples(runner):
    result = runner.invoke(main, ["corpus", "--help"])
    assert result.exit_code == 0
    for option in ("--out", "--vocab-size", "--min-df", "--max-df", "--stopwords", "--data-home", "--overwrite"):
        assert option in result.output
    assert "Examples:" in result.output and "bpetopics corpus 20newsgroups --out corpora/20ng" in result.output


def test_corpus_20newsgroups_small_run(runner, shared_data, tmp_path):
    out = tmp_path / "ng"
    result = runner.invoke(main, [
        "corpus", "20newsgroups", "--out", str(out), "--data-home", str(shared_data / "sklearn"),
        "--categories", "sci.space,rec.autos", "--max-docs", "200", "--vocab-size", "300",
        "--stopwords", str(shared_data / "stopwords" / "nltk_english.txt"),
    ])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split() for line in result.output.splitlines() if line.startswith(("train", "test"))}
    assert rows["train"][1] == "200" and rows["test"][1] == "200" and rows["train"][3] == "2"
    assert rows["train"][4] == "300"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["splits"] == ["train", "test"]


def test_test_size_holds_out_a_test_split_and_20newsgroups_keeps_its_own(runner, folder, tmp_path):
    result = runner.invoke(main, ["corpus", str(folder), "--out", str(tmp_path / "o"), "--min-df", "1",
                                  "--max-df", "1.0", "--stopwords", "none", "--test-size", "0.25"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split() for line in result.output.splitlines() if line.startswith(("train", "test"))}
    assert (rows["train"][1], rows["test"][1]) == ("7", "2")        # 9 files, round(0.25 x 9) = 2 held out
    _check_one_line_error(runner.invoke(main, ["corpus", "20newsgroups", "--test-size", "0.2",
                                               "--out", str(tmp_path / "ng")]), "has its own test split")
    _check_one_line_error(runner.invoke(main, ["corpus", str(folder), "--format", "sharded", "--test-size", "0.2",
                                               "--out", str(tmp_path / "sh")]), "--test-size", "sharded")


def test_passages_split_each_document_and_a_sharded_build_refuses_them(runner, tmp_path):
    root = tmp_path / "long"
    root.mkdir()
    paragraph = " ".join(["orbit launch rocket moon crew"] * 7)       # 35 words: a paragraph of its own
    for i in range(3):
        (root / f"{i}.txt").write_text(f"From: a@b.c\nSubject: {i}\n\n{paragraph}\n\n{paragraph}\n\nBye.\n")
    out = tmp_path / "o"
    result = runner.invoke(main, ["corpus", str(root), "--out", str(out), "--min-df", "1", "--max-df", "1.0",
                                  "--stopwords", "none", "--passages", "paragraphs"])
    assert result.exit_code == 0, result.output
    row = next(line.split() for line in result.output.splitlines() if line.startswith("train"))
    assert row[:3] == ["train", "6", "6"]                  # two paragraphs a file ("Bye." joined to the second)
    assert "passages: each row counts paragraphs (ids DOC#k), cut from 3 (train) documents" in result.output
    documents = json.loads((out / "train" / "documents.json").read_text())
    assert documents["ids"] == [f"{i}.txt#{k}" for i in range(3) for k in (1, 2)]
    vocabulary = json.loads((out / "train" / "vocabulary.json").read_text())
    assert "subject" not in vocabulary and "bye" in vocabulary     # headers stripped before the split
    _check_one_line_error(runner.invoke(main, ["corpus", str(root), "--format", "sharded", "--passages",
                                               "sentences", "--out", str(tmp_path / "sh")]), "--passages", "sharded")
    bad = runner.invoke(main, ["corpus", str(root), "--passages", "pages", "--out", str(tmp_path / "b")])
    assert bad.exit_code == 2 and "pages" in bad.output
