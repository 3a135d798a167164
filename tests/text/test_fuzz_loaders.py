"""Fuzzing the text loaders (issue #11): random bytes, truncated UTF-8, huge lines, deep
folders, symlink loops and non-UTF-8 file names. Every case either loads (and the
corpus saves and loads back) or raises the library's one-line CorpusError; nothing else
escapes. Seeded; a few hundred cases in seconds."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

from bpetopics.text import CorpusError, load_folder, prepare_corpus
from bpetopics.text.decoding import decode_bytes

WORDS = ["orbit", "shuttle", "launch", "hockey", "goalie", "café", "naïve", "Ünïcode", "straße", "日本語", "x11"]


def _random_text_bytes(rng, n) -> bytes:
    """Mostly text: words in UTF-8, some latin-1, some cut multi-byte sequences, some noise."""
    parts, size = [], 0
    while size < n:
        kind = rng.integers(6)
        word = WORDS[rng.integers(len(WORDS))]
        if kind <= 2:
            parts.append(word.encode("utf-8") + b" ")
        elif kind == 3:
            parts.append(word.encode("latin-1", errors="replace") + b" ")
        elif kind == 4:
            parts.append(word.encode("utf-8")[:-1])  # a truncated multi-byte sequence
        else:
            parts.append(rng.integers(0, 256, size=rng.integers(1, 8), dtype=np.uint8).tobytes())
        size += len(parts[-1])
    return b"".join(parts)[:n]


def _one_case(root, rng):
    """A folder of 1-6 files of one seeded kind of damage."""
    root.mkdir()
    kind = int(rng.integers(8))
    for i in range(int(rng.integers(1, 7))):
        name = f"f{i}.txt"
        if kind == 0:  # random bytes of any length, empty included
            data = rng.integers(0, 256, size=int(rng.integers(0, 3000)), dtype=np.uint8).tobytes()
        elif kind == 1:  # text cut anywhere (inside a UTF-8 sequence too)
            full = " ".join(WORDS * 20).encode("utf-8")
            data = full[: int(rng.integers(0, len(full)))]
        elif kind == 2:  # one huge line
            data = (_random_text_bytes(rng, 2000) * 100).replace(b"\n", b" ")  # 200 kB, no newline
        elif kind == 3:  # UTF-16 / UTF-32 with a BOM, possibly truncated
            enc = ["utf-16", "utf-32", "utf-16-le"][int(rng.integers(3))]
            data = ("\ufeff" if enc == "utf-16-le" else "").encode(enc) + " ".join(WORDS).encode(enc)
            data = data[: int(rng.integers(2, len(data) + 1))]
        else:
            data = _random_text_bytes(rng, int(rng.integers(0, 4000)))
        if kind == 4:  # deep folders
            sub = root.joinpath(*[f"d{j}" for j in range(int(rng.integers(1, 40)))])
            sub.mkdir(parents=True, exist_ok=True)
            (sub / name).write_bytes(data)
        elif kind == 5:  # a non-UTF-8 file name
            with open(os.path.join(os.fsencode(root), b"n\xff\xfe" + str(i).encode() + b".txt"), "wb") as f:
                f.write(data)
        else:
            (root / name).write_bytes(data)
    if kind == 6:  # symlink loops: a folder linking to its parent, two files linking to each other
        (root / "sub").mkdir()
        os.symlink(root, root / "sub" / "loop")
        os.symlink(root / "a", root / "b")
        os.symlink(root / "b", root / "a")
        os.symlink(root / "missing", root / "dangling")
    if kind == 7:  # a file that cannot be read
        (root / "locked.txt").write_bytes(b"orbit shuttle")
        os.chmod(root / "locked.txt", 0)
    return kind


@pytest.mark.parametrize("seed", range(6))
def test_folders_load_or_give_one_line(tmp_path, seed):
    rng = np.random.default_rng(seed)
    for case in range(40):
        root = tmp_path / f"case{case}"
        kind = _one_case(root, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                docs = load_folder(root)
            except CorpusError as exc:
                assert "\n" not in str(exc), (kind, str(exc))
                continue
            assert len(docs.texts) == len(docs.ids) >= 1
            assert all(isinstance(t, str) for t in docs.texts)
            try:
                splits = prepare_corpus(str(root), stopwords="none", min_df=1, max_df=1.0)
            except CorpusError as exc:
                assert "\n" not in str(exc), (kind, str(exc))
                continue
        out = tmp_path / f"saved{case}"
        splits["train"].save(out)
        from bpetopics.text import Corpus

        back = Corpus.load(out)
        assert back.ids == splits["train"].ids and back.n_words == splits["train"].n_words, kind


def test_decode_bytes_never_fails_and_counts(tmp_path):
    rng = np.random.default_rng(0)
    for _ in range(300):
        raw = rng.integers(0, 256, size=int(rng.integers(0, 200)), dtype=np.uint8).tobytes()
        text, n_bad = decode_bytes(raw)
        assert isinstance(text, str) and 0 <= n_bad <= len(raw)
        assert not any(0xDC80 <= ord(c) <= 0xDCFF for c in text)  # no lone surrogate left
        text.encode("utf-8")  # always writable
