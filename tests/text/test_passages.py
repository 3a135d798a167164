"""Passages: documents split into paragraphs or sentences, no word lost, each passage
keeping its document's label and time; through prepare_corpus, whole documents are held
out before the split."""

import numpy as np
import pytest

from bpetopics.text import CorpusError, RawDocuments, prepare_corpus
from bpetopics.text.passages import (PASSAGE_UNITS, WRAP_WIDTH, join_short, paragraphs, sentences, source_documents,
                                     split_passages, split_text)

WRAPPED = "The first paragraph is\nwrapped over three\nlines of text.\n\n  The second one\nalso wraps.\n"


def test_paragraphs_are_blank_line_blocks_with_wrapped_lines_joined():
    assert paragraphs(WRAPPED) == ["The first paragraph is wrapped over three lines of text.",
                                   "The second one also wraps."]
    assert paragraphs("\r\n\r\nOne\r\nblock\r\n\r\n\r\n") == ["One block"]
    assert paragraphs("   \n \n") == []


def test_a_block_with_a_long_line_has_one_paragraph_a_line():
    long_a, long_b = "a " * WRAP_WIDTH, "b " * WRAP_WIDTH
    text = f"Title\n\n{long_a}\n{long_b}\nshort last line"
    assert paragraphs(text) == ["Title", long_a.strip(), long_b.strip(), "short last line"]
    # a block of lines at a wrap width stays one paragraph
    wrapped = "\n".join(["w" * (WRAP_WIDTH - 1)] * 3)
    assert paragraphs(wrapped) == [" ".join(["w" * (WRAP_WIDTH - 1)] * 3)]


def test_sentences_end_at_a_stop_and_white_space():
    assert sentences("Is it?  Yes!\nIt is. 3.5 million people.") == ["Is it?", "Yes!", "It is.", "3.5 million people."]


@pytest.mark.parametrize("pieces", [["one two", "three", "four five six", "seven"], ["a"], ["a b c d"],
                                    ["x y", "z"], []])
def test_join_short_keeps_every_word_in_order(pieces):
    joined = join_short(pieces, 3)
    assert " ".join(joined).split() == " ".join(pieces).split()
    total = len(" ".join(pieces).split())
    assert all(len(p.split()) >= 3 for p in joined) or (len(joined) == 1 and total < 3)
    if pieces:
        assert len(joined) >= 1


def test_join_short_joins_a_short_last_piece_to_the_one_before():
    assert join_short(["a b c", "d e f", "g"], 3) == ["a b c", "d e f g"]
    assert join_short(["a", "b c d", "e f g"], 3) == ["a b c d", "e f g"]


def test_split_text_uses_each_units_minimum():
    words = " ".join(f"w{i}" for i in range(PASSAGE_UNITS["paragraphs"]))
    text = f"Heading\n\n{words}\n\n{words}\n\nThanks."
    assert split_text(text, "paragraphs") == [f"Heading {words}", f"{words} Thanks."]
    assert split_text("Hi. This is a sentence. And another one here.", "sentences") == [
        "Hi. This is a sentence.", "And another one here."]


def test_split_passages_keeps_labels_times_and_order():
    docs = RawDocuments(texts=["One sentence here. Two sentences here.", "   ", "Third sentence is alone."],
                        ids=["a.txt", "b.txt", "c.txt"], labels=np.array([1, 0, 1]), label_names=["x", "y"],
                        times=np.array([10.0, 20.0, 30.0]), skipped={"not a text file": ["d.bin"]})
    out = split_passages(docs, "sentences")
    assert out.ids == ["a.txt#1", "a.txt#2", "b.txt#1", "c.txt#1"]
    assert out.texts == ["One sentence here.", "Two sentences here.", "", "Third sentence is alone."]
    assert out.labels.tolist() == [1, 1, 0, 1] and out.label_names == ["x", "y"]
    assert out.times.tolist() == [10.0, 10.0, 20.0, 30.0] and out.skipped == docs.skipped
    assert split_passages(docs, None) is docs
    assert source_documents(out.ids) == 3 and source_documents(["a#b.txt#1", "a#b.txt#2", "c#1"]) == 2
    with pytest.raises(CorpusError, match="'pages' is not a unit"):
        split_passages(docs, "pages")


def test_prepare_corpus_holds_out_whole_documents_then_splits_them(tmp_path):
    root = tmp_path / "texts"
    root.mkdir()
    rng = np.random.default_rng(0)
    words = [f"word{c}" for c in "abcdefghijklmnopqrst"]
    for i in range(20):
        body = "\n\n".join(" ".join(rng.choice(words, size=40)) for _ in range(3))
        (root / f"d{i:02d}.txt").write_text(f"Title line\n\n{body}\n")
    settings = dict(vocab_size=None, min_df=1, max_df=1.0, stopwords="none", random_state=1)
    whole = prepare_corpus(root, test_size=0.25, **settings)
    split = prepare_corpus(root, test_size=0.25, passages="paragraphs", **settings)
    train, test = split["train"], split["test"]
    assert (train.n_docs, test.n_docs) == (45, 15)          # 3 paragraphs a document, the title joined
    owner = {s: {i.split("#")[0] for i in c.ids} for s, c in split.items()}
    assert owner["train"] == set(whole["train"].ids) and owner["test"] == set(whole["test"].ids)
    assert np.array_equal(np.asarray(train.counts.sum(0)).ravel(),
                          np.asarray(whole["train"].counts.sum(0)).ravel())        # no word lost
    with pytest.raises(CorpusError, match="passages='chapters'"):
        prepare_corpus(root, passages="chapters", **settings)
