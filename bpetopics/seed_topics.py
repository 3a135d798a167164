"""Seed words of guided topics: read from a file, mapped to a vocabulary's word ids.

Pure Python (the command line reads the file before importing torch); the prior they
feed is :mod:`bpetopics.models.poissbpe.topic_seeds` (``PoissBPE(seed_words=...)``).
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["read_seed_topics", "seed_word_ids", "seed_words_for"]


def read_seed_topics(path) -> list[list[str]]:
    """The seed topics of a text file: one topic per line, its words separated by commas
    or spaces (``space, nasa, orbit``); blank lines and lines starting with ``#`` are
    skipped. Words are lower-cased (the vocabulary's are). ValueError (one line) for a
    file that cannot be read or holds no seed word."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"the seed-topics file {path} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"{path} is a folder: give a text file, one seed topic per line") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text: give a text file, one seed topic per line") from None
    topics = [[w.lower() for w in re.split(r"[,\s]+", line.strip()) if w]
              for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not topics:
        raise ValueError(f"{path} holds no seed word: write one topic per line, its words separated by commas "
                         "or spaces")
    return topics


def seed_word_ids(seed_topics, vocabulary) -> tuple[list[list[int]], list[str]]:
    """Each seed topic's words as ids of ``vocabulary`` (a word outside it dropped):
    (ids, one list per topic in order, possibly empty; the unknown words, in order)."""
    if isinstance(seed_topics, str) or any(isinstance(t, str) for t in seed_topics):
        raise ValueError("seed topics are lists of words, one list per topic: [['space', 'nasa'], ...]")
    index = {w: j for j, w in enumerate(vocabulary)}
    ids, unknown = [], []
    for topic in seed_topics:
        words = [str(w).strip().lower() for w in topic]
        ids.append(sorted({index[w] for w in words if w in index}))
        unknown += [w for w in words if w not in index and w not in unknown]
    return ids, unknown


def seed_words_for(seed_topics, vocabulary, note=print) -> list[list[int]]:
    """:func:`seed_word_ids` for training: ``note`` gets one line naming the words outside
    the vocabulary (dropped); ValueError (one line) for a seed topic left without a word."""
    ids, unknown = seed_word_ids(seed_topics, vocabulary)
    empty = [t for t, words in enumerate(ids) if not words]
    if empty:
        raise ValueError(f"none of the words of seed topic {empty[0]} (line {empty[0] + 1}) is in the vocabulary: "
                         "change its words, or the vocabulary options")
    if unknown:
        note(f"Note: seed words not in the vocabulary (dropped): {', '.join(unknown)}")
    return ids
