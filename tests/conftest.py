"""Session-wide fixtures shared by every test folder.

``shared_data``: the read-only offline data (``../shared/data`` beside the repository, or
``$BPETOPICS_DATA``). ``newsgroups_small``: a small prepared 20 Newsgroups corpus
(4 groups, 800 train / 800 test documents, 500 words), built once per session; treat it
as read-only (copy before changing it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

#: The four groups of ``newsgroups_small``: four well separated topics.
NEWSGROUPS_SMALL_CATEGORIES = ("comp.graphics", "rec.sport.hockey", "sci.space", "talk.politics.mideast")


def _shared_data_path() -> Path:
    env = os.environ.get("BPETOPICS_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path to the offline data folder (``shared/data``); skips when it is missing."""
    path = _shared_data_path()
    if not (path / "sklearn" / "20news-bydate_py3.pkz").is_file():
        pytest.skip(f"offline data not found at {path} (expected ../shared/data beside the repo, or $BPETOPICS_DATA)")
    return path


@pytest.fixture(scope="session")
def newsgroups_small(shared_data):
    """A small prepared 20 Newsgroups corpus: ``{"train": Corpus, "test": Corpus}``.

    4 groups (:data:`NEWSGROUPS_SMALL_CATEGORIES`), at most 800 documents per split drawn
    with seed 0, vocabulary of 500 words (min_df=5, max_df=0.5), NLTK's English stop
    words read from ``shared/data/stopwords/nltk_english.txt`` (no NLTK data needed).
    Labels index the four groups in sorted order.
    """
    from bpetopics.text import prepare_corpus

    return prepare_corpus(
        "20newsgroups",
        vocab_size=500,
        min_df=5,
        max_df=0.5,
        stopwords=shared_data / "stopwords" / "nltk_english.txt",
        data_home=shared_data / "sklearn",
        categories=list(NEWSGROUPS_SMALL_CATEGORIES),
        max_docs=800,
        random_state=0,
        download_if_missing=False,
    )
