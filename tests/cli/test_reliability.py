"""Issue #11: no hang, no traceback, no lost run, on what a user can throw at the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import one_line_error

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with this checkout first on the path (a hang
    fails the test through the timeout instead of hanging the suite)."""
    full_env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def test_corpus_errors_returns_after_an_ordinary_warning():
    done = _python("import warnings\nfrom bpetopics.cli import corpus_errors\n"
                   "with corpus_errors():\n    warnings.warn('x')\nprint('returned')", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "returned"
    assert "UserWarning: x" in done.stderr  # re-emitted once, after the block


def test_corpus_20newsgroups_without_data_fails_fast_with_one_line(tmp_path):
    empty = tmp_path / "sklearn"
    empty.mkdir()
    # no download can succeed: every URL goes through a proxy that refuses connections
    env = {"SCIKIT_LEARN_DATA": str(empty), "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    done = _python("from bpetopics.cli import main\nmain(['corpus', '20newsgroups', '--out', "
                   f"{str(tmp_path / 'out')!r}])", env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: cannot load 20 Newsgroups"), done.stderr
    assert not (tmp_path / "out").exists()


def _big_document(path: Path, n_words: int, seed: int = 0) -> None:
    """A long plain-text document of seeded random words, 12 to a line."""
    import numpy as np

    words = np.array(["orbit", "shuttle", "launch", "hockey", "goalie", "season", "graphics", "image",
                      "pixel", "israel", "peace", "treaty", "x11", "386dx", "the", "and"])
    rng = np.random.default_rng(seed)
    picks = words[rng.integers(len(words), size=n_words)].reshape(-1, 12)
    path.write_text("\n".join(" ".join(line) for line in picks) + "\n", encoding="utf-8")


def test_a_30mb_document_is_tokenised_without_a_time_limit(runner, tmp_path):
    """nltk's tokenizer raised TimeoutError (5 s wall-clock) on such a file."""
    from bpetopics.cli import main

    folder = tmp_path / "texts"
    folder.mkdir()
    _big_document(folder / "big.txt", 4_800_000)            # ~32 MB
    assert (folder / "big.txt").stat().st_size > 30e6
    for i in range(3):
        _big_document(folder / f"small{i}.txt", 120, seed=i + 1)
    result = runner.invoke(main, ["corpus", str(folder), "--out", str(tmp_path / "c"), "--min-df", "1",
                                  "--max-df", "1.0", "--stopwords", "none"])
    assert result.exit_code == 0, result.output
    from bpetopics.text import Corpus

    corpus = Corpus.load(tmp_path / "c" / "train")
    big = corpus.ids.index("big.txt")
    # every letter-only word of 3+ letters counted: 14 of the 16 words (not x11, 386dx)
    assert corpus.counts[big].sum() > 0.8 * 4_800_000
    assert "x11" not in corpus.vocabulary and "orbit" in corpus.vocabulary


def test_tokenising_has_no_wall_clock_limit(monkeypatch):
    """nltk's regex guard is out of the path: with its limit at a nanosecond, a 2 MB text
    is still tokenised."""
    import nltk.redos

    from bpetopics.text import cleaning

    monkeypatch.setattr(nltk.redos, "DEFAULT_TIMEOUT", 1e-9)
    cleaning._tokenizer.cache_clear()
    try:
        tokens = cleaning.tokenize("orbit launch 386dx x11 of " * 80_000)
    finally:
        cleaning._tokenizer.cache_clear()
    assert tokens == ["orbit", "launch"] * 80_000


def test_tokens_are_nltks_on_20_newsgroups(shared_data):
    """The tokenizer keeps nltk's tokens (RegexpTokenizer, same pattern) on 300 real messages."""
    from nltk.tokenize import RegexpTokenizer

    from bpetopics.text.cleaning import clean_message, tokenize
    from bpetopics.text.loaders import load_20newsgroups

    raw = load_20newsgroups(shared_data / "sklearn", subsets=("train",), download_if_missing=False)["train"]
    reference = RegexpTokenizer(r"\b[^\W\d_]{3,}\b").tokenize
    texts = [clean_message(t).lower() for t in raw.texts[::37][:300]] + ["a\u0301bc def\u0308g café naïve straße"]
    assert [tokenize(t, lowercase=False) for t in texts] == [reference(t) for t in texts]


# ------------------------------------------------------ item 3: nothing overwritten silently
def test_graph_refuses_its_files_without_overwrite_and_names_them_after_out(runner, trained_run, tmp_path):
    from bpetopics.cli import main

    run_dir = trained_run[0]
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert runner.invoke(main, ["graph", str(run_dir), "--out", str(a)]).exit_code == 0
    assert runner.invoke(main, ["graph", str(run_dir), "--out", str(b), "--threshold", "0.3"]).exit_code == 0
    # two graphs in one folder: each has its own side files
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{n}.{ext}" for n in "ab" for ext in ("png", "graphml", "gexf", "bits.csv"))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    one_line_error(runner.invoke(main, ["graph", str(run_dir), "--out", str(a), "--threshold", "0.5"]),
                   "already exists", "--overwrite")
    (tmp_path / "a.png").unlink()  # a side file alone is protected too
    del before["a.png"]
    one_line_error(runner.invoke(main, ["graph", str(run_dir), "--out", str(a)]), "a.graphml", "--overwrite")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert runner.invoke(main, ["graph", str(run_dir), "--out", str(a), "--overwrite"]).exit_code == 0
    assert (tmp_path / "a.png").is_file()


def test_graph_on_a_full_disk_writes_none_of_its_files(runner, trained_run, tmp_path, monkeypatch):
    import errno

    from matplotlib.figure import Figure

    from bpetopics.cli import main

    def full(self, *args, **kwargs):    # the PNG is the last file drawn: the others were written
        raise OSError(errno.ENOSPC, "No space left on device")

    out = tmp_path / "figs" / "g.png"
    with monkeypatch.context() as m:
        m.setattr(Figure, "savefig", full)
        result = runner.invoke(main, ["graph", str(trained_run[0]), "--out", str(out)])
    one_line_error(result, "no space left", str(out.parent))
    assert list(out.parent.iterdir()) == []      # no side file, no temporary folder
    result = runner.invoke(main, ["graph", str(trained_run[0]), "--out", str(out)])   # no --overwrite needed
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.parent.iterdir()) == ["g.bits.csv", "g.gexf", "g.graphml", "g.png"]


def test_ldavis_refuses_an_existing_page_without_overwrite(runner, trained_run, tmp_path):
    from bpetopics.cli import main

    page = tmp_path / "t.html"
    page.write_text("mine")
    one_line_error(runner.invoke(main, ["ldavis", str(trained_run[0]), "--out", str(page)]), "already exists")
    assert page.read_text() == "mine"
    assert runner.invoke(main, ["ldavis", str(trained_run[0]), "--out", str(page), "--overwrite"]).exit_code == 0
    assert "LDAvis" in page.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["t.html"]


def test_images_table_refuses_a_folder_with_files_without_overwrite(runner, tmp_path):
    from bpetopics.cli import main

    out = tmp_path / "table1"
    out.mkdir()
    (out / "table1.csv").write_text("committed")
    result = runner.invoke(main, ["images", "table", "--out", str(out), "--budget", "tiny",
                                  "--data-root", str(tmp_path / "none"), "--datasets", "mnist"])
    one_line_error(result, "already exists", "--overwrite")
    assert (out / "table1.csv").read_text() == "committed" and len(list(out.iterdir())) == 1
    # with --overwrite it goes on (and stops here at the missing data, with one line)
    result = runner.invoke(main, ["images", "table", "--out", str(out), "--budget", "tiny", "--overwrite",
                                  "--data-root", str(tmp_path / "none"), "--datasets", "mnist"])
    one_line_error(result, "MNIST", "--data-root")


# ------------------------------------------------------------------ item 8: smaller ones
def test_encode_gives_no_top_topics_to_documents_without_a_vocabulary_word(runner, trained_run, raw_folder,
                                                                            tmp_path):
    import csv
    import json

    from bpetopics.cli import main

    target = tmp_path / "codes.json"
    result = runner.invoke(main, ["encode", str(trained_run[0]), str(raw_folder), "--out", str(target)])
    assert result.exit_code == 0, result.output
    assert "1 had no word of the run's vocabulary" in result.output
    docs = json.loads(target.read_text())["documents"]
    assert sorted((d["n_words"] == 0, len(d["top_topics"])) for d in docs) == [(False, 3), (False, 3), (True, 0)]
    target = tmp_path / "codes.csv"
    assert runner.invoke(main, ["encode", str(trained_run[0]), str(raw_folder), "--out", str(target)]).exit_code == 0
    with open(target, newline="") as f:
        rows = list(csv.DictReader(f))
    assert all((r["top_topics"] == "") == (r["n_words"] == "0") for r in rows)


def test_encode_reads_a_utf16_file_and_counts_bad_bytes(runner, trained_run, tmp_path):
    import json

    from bpetopics.cli import main

    doc = tmp_path / "utf16.txt"
    doc.write_text("The hockey team won the game against the rival team.", encoding="utf-16")
    result = runner.invoke(main, ["encode", str(trained_run[0]), str(doc), "--out", str(tmp_path / "a.json")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "a.json").read_text())["documents"][0]["n_words"] > 0
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"The hockey team \xff\xfe won the game.")
    result = runner.invoke(main, ["encode", str(trained_run[0]), str(bad), "--out", str(tmp_path / "b.json")])
    assert result.exit_code == 0 and "Warning: 2 bytes that are not valid UTF-8" in result.stderr, result.output


# ------------------------------------------------------------------------ item 9: README
def test_readme_says_how_to_use_the_cli_by_hand_after_make():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    for needed in (". .venv/bin/activate", "SCIKIT_LEARN_DATA=", "NLTK_DATA=", "BPETOPICS_DATA=",
                   "fetch_20newsgroups", "nltk.downloader abc state_union", "torch_threads", "OMP_NUM_THREADS"):
        assert needed in setup, needed


# --------------------------------------------------- every command: one line, exit code 2
def test_every_command_fails_with_one_line(runner, tmp_path):
    from bpetopics.cli import main

    missing = str(tmp_path / "missing")
    cases = {
        "corpus": ["corpus", missing],
        "train": ["train", missing, "--out", str(tmp_path / "run")],
        "topics": ["topics", missing],
        "encode": ["encode", missing, missing, "--out", str(tmp_path / "c.csv")],
        "info": ["info", missing],
        "evaluate": ["evaluate", missing],
        "compare": ["compare", missing, "--topics", "5", "--out", str(tmp_path / "cmp")],
        "graph": ["graph", missing, "--out", str(tmp_path / "g.png")],
        "ldavis": ["ldavis", missing, "--out", str(tmp_path / "t.html")],
        "images": ["images", "table", "--out", str(tmp_path / "t"), "--data-root", missing, "--datasets", "mnist"],
        "search": ["search", missing, "space shuttle"],
        "similar": ["similar", missing, "0"],
        "update": ["update", missing, missing, "--out", str(tmp_path / "updated")],
        "over-time": ["over-time", missing, "--out", str(tmp_path / "shares.csv")],
        "explore": ["explore", missing, "--out", str(tmp_path / "explore.html")],
        "compile": ["compile", "--bogus"],          # it reads no input: a bad option is its bad input
    }
    assert set(cases) == set(main.commands)  # a new command needs a case here
    expected = {"images": "MNIST", "compile": "--bogus"}
    for name, args in cases.items():
        one_line_error(runner.invoke(main, args), expected.get(name, missing))
    # usage errors (an unknown command or option, a missing argument) are one line too
    one_line_error(runner.invoke(main, ["nosuch"]), "No such command")
    one_line_error(runner.invoke(main, ["--bogus"]), "--bogus")
    one_line_error(runner.invoke(main, ["topics"]), "Missing argument", "bpetopics topics --help")
    one_line_error(runner.invoke(main, ["train", "--out"]), "--out")
    one_line_error(runner.invoke(main, ["images", "table", "--frobnicate"]), "--frobnicate")
    assert [p.name for p in tmp_path.iterdir()] == []  # nothing written


def test_a_download_that_stalls_fails_instead_of_hanging(tmp_path):
    """A network that accepts and never answers (a black-holed proxy): the fetch gives up
    after the per-operation timeout and its retries, with one CorpusError line."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held = []

    def accept_and_stay_silent():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept_and_stay_silent, daemon=True).start()
    proxy = f"http://127.0.0.1:{server.getsockname()[1]}"
    empty = tmp_path / "sklearn"
    empty.mkdir()
    try:
        done = _python("import bpetopics.text.loaders as L\nL.DOWNLOAD_TIMEOUT = 0.3\n"
                       "from bpetopics.text import CorpusError\n"
                       f"try:\n    L.load_20newsgroups({str(empty)!r})\n"
                       "except CorpusError as exc:\n    print('CorpusError:', exc)\n",
                       env={"https_proxy": proxy, "HTTPS_PROXY": proxy, "http_proxy": proxy,
                            "HTTP_PROXY": proxy, "no_proxy": "", "NO_PROXY": ""}, timeout=90)
    finally:
        server.close()
        for conn in held:
            conn.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("CorpusError: cannot load 20 Newsgroups"), done.stdout + done.stderr
    assert len(done.stdout.strip().splitlines()) == 1


def test_ctrl_c_in_a_command_without_its_own_cleanup_exits_130(monkeypatch):
    """Not click's "Aborted!" and exit 1: "Interrupted." and 130 (143 after SIGTERM), also
    when the interruption came back as a compiled kernel's SystemError."""
    import signal

    from click.testing import CliRunner

    import bpetopics.models.poissbpe.compiled.warm_up as warm_up
    from bpetopics.cli import main
    from bpetopics.runs.launch import Stopped

    def returned_with_interrupt_set():
        raise SystemError("CPUDispatcher(<function kernel>) returned a result with an exception set") \
            from KeyboardInterrupt()

    def raise_(exc):
        raise exc

    for interrupt, code in ((lambda: raise_(KeyboardInterrupt()), 130), (returned_with_interrupt_set, 130),
                            (lambda: raise_(Stopped(signal.SIGTERM)), 143)):
        monkeypatch.setattr(warm_up, "compile_kernels", lambda progress=False, stop=interrupt: stop())
        result = CliRunner().invoke(main, ["compile", "--quiet"])
        assert result.exit_code == code, result.output
        assert result.output.strip().splitlines()[-1] == "Interrupted." and "Aborted" not in result.output
