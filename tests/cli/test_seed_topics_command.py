"""``bpetopics train --seed-topics FILE``: seed words from a file, unknown ones named in
one line, the seeds recorded with the run."""

from __future__ import annotations

import json

from bpetopics.cli import main
from tests.cli.conftest import TINY, one_line_error


def test_train_with_seed_topics(runner, saved_corpus, tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("space, nasa\nhockey zzzz\n", encoding="utf-8")
    out = tmp_path / "run"
    result = runner.invoke(main, ["train", str(saved_corpus), "--out", str(out), "--quiet", "--seed-topics",
                                  str(seeds), *TINY])
    assert result.exit_code == 0, result.output
    assert "Note: seed words not in the vocabulary (dropped): zzzz" in result.output
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    vocabulary = (out / "vocabulary.txt").read_text(encoding="utf-8").split("\n")
    words = [[vocabulary[j] for j in topic] for topic in config["params"]["seed_words"]]
    assert words == [["nasa", "space"], ["hockey"]]


def test_seed_topic_refusals(runner, saved_corpus, tmp_path):
    out = str(tmp_path / "run")
    one_line_error(runner.invoke(main, ["train", str(saved_corpus), "--out", out, "--seed-topics",
                                        str(tmp_path / "none.txt"), *TINY]), "--seed-topics", "does not exist")
    many = tmp_path / "many.txt"
    many.write_text("".join(f"w{i}\n" for i in range(6)))
    one_line_error(runner.invoke(main, ["train", str(saved_corpus), "--out", out, "--seed-topics", str(many), *TINY]),
                   "6 seed topics but --topics is 5")
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("space\nzzzz qqqq\n")
    one_line_error(runner.invoke(main, ["train", str(saved_corpus), "--out", out, "--quiet", "--seed-topics",
                                        str(unknown), *TINY]), "seed topic 1 (line 2)")
    assert not (tmp_path / "run").exists()
