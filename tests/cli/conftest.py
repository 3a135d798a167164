"""Fixtures of the command-line tests: a small saved 20 Newsgroups corpus (300 training
documents of 4 groups, 500 words, cut from ``newsgroups_small``) and a run trained on it
through ``bpetopics train`` once per session (5 topics, 8 bits, 2 epochs, CPU), and the
same training documents saved with 300 test documents."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from bpetopics.cli import main

#: The tiny model every CLI test trains: fast on 2 shared CPU cores.
TINY = ["--topics", "5", "--bits", "8", "--epochs", "2", "--device", "cpu"]


@pytest.fixture
def runner():
    return CliRunner()


def one_line_error(result, *fragments):
    """Assert that a command failed with exit code 2 and one line 'Error: ...'."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="session")
def saved_corpus(newsgroups_small, tmp_path_factory):
    """A saved corpus folder (train split only): the first 300 documents of newsgroups_small."""
    from bpetopics.text import Corpus, save_splits

    c = newsgroups_small["train"]
    n = 300
    small = Corpus(counts=c.counts[:n], vocabulary=c.vocabulary, texts=c.texts[:n], ids=c.ids[:n], split="train",
                   labels=c.labels[:n], label_names=c.label_names, pipeline=c.pipeline, source=c.source)
    return save_splits({"train": small}, tmp_path_factory.mktemp("corpus") / "ng300")


@pytest.fixture(scope="session")
def trained_run(saved_corpus, tmp_path_factory):
    """(run folder, CliRunner result) of ``bpetopics train`` on ``saved_corpus``."""
    out = tmp_path_factory.mktemp("runs") / "ng"
    result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), "--quiet", *TINY])
    assert result.exit_code == 0, result.output
    return out, result


@pytest.fixture
def raw_folder(tmp_path):
    """A folder of three raw messages, one without any word of the vocabulary."""
    root = tmp_path / "new"
    root.mkdir()
    (root / "space.txt").write_text("From: a@b.c\nSubject: launch\n\nThe shuttle launch into orbit, "
                                    "nasa space station and the moon.\n")
    (root / "hockey.txt").write_text("The hockey team won the game; the players and the fans of the "
                                     "league cheered the goal.\n")
    (root / "nothing.txt").write_text("zzzz qqqq xxxx\n")
    return root


@pytest.fixture(scope="session")
def corpus_with_test(newsgroups_small, tmp_path_factory):
    """A saved corpus: the training documents of ``trained_run`` and 300 test documents."""
    from bpetopics.text import Corpus, save_splits

    parts = {}
    for split in ("train", "test"):
        c = newsgroups_small[split]
        parts[split] = Corpus(counts=c.counts[:300], vocabulary=c.vocabulary, texts=c.texts[:300], ids=c.ids[:300],
                              split=split, labels=c.labels[:300], label_names=c.label_names, pipeline=c.pipeline,
                              source=c.source)
    return save_splits(parts, tmp_path_factory.mktemp("corpus") / "ng300-test")
