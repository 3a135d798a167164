"""``bpetopics update RUN DOCUMENTS --out RUN2``: training a run further on new documents."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bpetopics.cli import main
from tests.cli.conftest import one_line_error


def _config(run):
    return json.loads((run / "config.json").read_text(encoding="utf-8"))


def test_update_writes_a_new_run_and_reports_the_topics_movement(runner, trained_run, raw_folder, tmp_path):
    from bpetopics.runs import load_run

    run, _ = trained_run
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    out = tmp_path / "updated"
    result = runner.invoke(main, ["update", str(run), str(raw_folder), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "1 document(s) left out (1 no word in the vocabulary): nothing.txt" in result.output
    assert "outside it (dropped)" in result.output
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before       # RUN is never written
    config, old = _config(out), _config(run)
    update = config["corpus"]["update"]
    assert update["from"] == str(run.resolve()) and update["epochs"] == 1
    assert update["from_epoch"] == old["training"]["epoch"] == 2
    assert config["training"]["epoch"] == 3 and config["n_data"] == 2
    assert len(update["topic_cosine"]) == 5
    assert all(0.0 < c <= 1.0 + 1e-9 for c in update["topic_cosine"])
    assert update["mean_topic_cosine"] == pytest.approx(np.mean(update["topic_cosine"]), abs=1e-6)
    assert "mean cosine to the old topics" in result.output
    assert (out / "vocabulary.txt").read_bytes() == (run / "vocabulary.txt").read_bytes()
    # the recorded cosines are those of the saved topics
    new, previous = load_run(out).model.topic_word_, load_run(run).model.topic_word_
    cos = (new * previous).sum(1) / np.linalg.norm(new, axis=1) / np.linalg.norm(previous, axis=1)
    np.testing.assert_allclose(update["topic_cosine"], cos, atol=1e-5)
    assert sorted(np.load(out / "doc_topics.npz")["ids"].tolist()) == ["hockey.txt", "space.txt"]


def test_an_interrupted_update_resumes_to_the_same_model(runner, trained_run, raw_folder, tmp_path):
    from bpetopics.runs import load_run, run_job
    from bpetopics.runs.update import finish_update, start_update

    run, _ = trained_run
    whole = tmp_path / "whole"
    job, _, _ = start_update(run, raw_folder, whole, epochs=2, device="cpu")
    run_job(job.training)
    finish_update(job)

    out = tmp_path / "stopped"
    job, _, _ = start_update(run, raw_folder, out, epochs=2, device="cpu")

    def stop(model, info):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_job(job.training, stop)
    job.training.lock.release()
    result = runner.invoke(main, ["train", "--out", str(out), "--resume", "--quiet"])
    one_line_error(result, "holds an update", "bpetopics update --out")
    result = runner.invoke(main, ["update", "--out", str(out), "--resume", "--quiet"])
    assert result.exit_code == 0, result.output
    np.testing.assert_allclose(load_run(out).model.topic_word_, load_run(whole).model.topic_word_, atol=1e-6)
    assert _config(out)["corpus"]["update"]["topic_cosine"] == pytest.approx(
        _config(whole)["corpus"]["update"]["topic_cosine"], abs=1e-6)


def test_update_refusals_are_one_line(runner, trained_run, raw_folder, tmp_path):
    run, _ = trained_run
    one_line_error(runner.invoke(main, ["update", str(run), str(raw_folder), "--out", str(run)]),
                   "is the run being updated")
    one_line_error(runner.invoke(main, ["update", str(run), "--out", str(tmp_path / "x")]), "give the RUN")
    one_line_error(runner.invoke(main, ["update", str(tmp_path), str(raw_folder), "--out", str(tmp_path / "x")]),
                   "is not a finished run")
    one_line_error(runner.invoke(main, ["update", str(run), str(raw_folder), "--out", str(run.parent)]),
                   "is not a run folder")
    one_line_error(runner.invoke(main, ["update", str(run), str(raw_folder), "--epochs", "0",
                                        "--out", str(tmp_path / "x")]), "--epochs")
    unknown = tmp_path / "unknown"
    unknown.mkdir()
    (unknown / "a.txt").write_text("zzzz qqqq xxxx wwww\n")
    one_line_error(runner.invoke(main, ["update", str(run), str(unknown), "--out", str(tmp_path / "y")]),
                   "none of the 1 documents", "vocabulary")
    assert not (tmp_path / "y").exists() and not (tmp_path / "y.partial").exists()
    one_line_error(runner.invoke(main, ["update", "--out", str(tmp_path / "z"), "--resume"]), "nothing to resume")
    assert runner.invoke(main, ["update", "--help"]).exit_code == 0


def test_a_run_with_merged_topics_is_not_updated(runner, trained_run, raw_folder, tmp_path):
    from bpetopics.models.poissbpe.topic_merging import merge_topics
    from bpetopics.runs import load_run, save_run
    from bpetopics.runs.corpus import run_train_counts

    run = load_run(trained_run[0])
    counts = run_train_counts(run)
    merge_topics(run.model, counts, [[0, 1]])
    merged = save_run(tmp_path / "merged", run.model, vocabulary=run.vocabulary, pipeline=run.pipeline,
                      counts=counts)
    one_line_error(runner.invoke(main, ["update", str(merged), str(raw_folder), "--out", str(tmp_path / "u")]),
                   "has merged topics")
    assert not (tmp_path / "u").exists() and not (tmp_path / "u.partial").exists()


def test_an_updated_run_is_rebuilt_on_its_vocabulary(runner, trained_run, raw_folder, tmp_path):
    """The commands that rebuild a run's corpus (evaluate, labels, explore) count an
    updated run's new documents on the run's vocabulary, as the update did, rather than
    fitting a vocabulary on them; having no test split, evaluate asks for --reference
    train and measures on them."""
    from bpetopics.runs import load_run
    from bpetopics.runs.corpus import run_splits

    run, _ = trained_run
    out = tmp_path / "updated"
    assert runner.invoke(main, ["update", str(run), str(raw_folder), "--out", str(out), "--quiet"]).exit_code == 0
    splits = run_splits(load_run(out))
    assert list(splits) == ["train"] and sorted(map(str, splits["train"].ids)) == ["hockey.txt", "space.txt"]
    assert list(splits["train"].vocabulary) == (run / "vocabulary.txt").read_text(encoding="utf-8").split()
    one_line_error(runner.invoke(main, ["evaluate", str(out), "--no-gensim"]), "has no test split: use --reference train")
    result = runner.invoke(main, ["evaluate", str(out), "--no-gensim", "--reference", "train"])
    assert result.exit_code == 0, result.output
    assert "perplexity" in result.output


def test_a_run_of_passages_is_updated_on_passages(runner, tmp_path):
    """A run trained with --passages splits its new documents the same way, records it,
    and the updated run's corpus is rebuilt with the same passages."""
    from bpetopics.runs import load_run
    from bpetopics.runs.corpus import run_splits
    from tests.cli.conftest import TINY

    rng = np.random.default_rng(0)
    themes = [["orbit", "launch", "rocket", "moon", "crew"], ["puck", "goal", "season", "team", "ice"]]

    def write(folder, n):
        folder.mkdir()
        for i in range(n):
            body = "\n\n".join(" ".join(rng.choice(themes[k], size=35)) for k in (0, 1))
            (folder / f"d{i:02d}.txt").write_text(body + "\n", encoding="utf-8")

    write(tmp_path / "old", 12)
    write(tmp_path / "new", 3)
    run, out = tmp_path / "run", tmp_path / "updated"
    trained = runner.invoke(main, ["train", str(tmp_path / "old"), "--out", str(run), "--quiet", "--min-df", "1",
                                   "--max-df", "1.0", "--stopwords", "none", "--passages", "paragraphs", *TINY])
    assert trained.exit_code == 0, trained.output
    assert runner.invoke(main, ["update", str(run), str(tmp_path / "new"), "--out", str(out), "--quiet"]).exit_code == 0
    assert _config(out)["corpus"]["settings"]["passages"] == "paragraphs"
    ids = [f"d{i:02d}.txt#{k}" for i in range(3) for k in (1, 2)]
    assert sorted(np.load(out / "doc_topics.npz")["ids"].tolist()) == ids
    assert list(map(str, run_splits(load_run(out))["train"].ids)) == ids
