"""TextPipeline: vocabulary options, transform on the train vocabulary, JSON round trip, errors."""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics.text import CorpusError, TextPipeline

def _docs():
    # "worda".."wordj": worda in 0 docs, wordb in 1, ..., wordj in 9 (the digits-free names
    # keep them tokens); plus "common" in 10 and "rare" in 1. Repeat "heavy" to make it
    # the most frequent word of document 9 only.
    letters = "abcdefghij"
    docs = []
    for i in range(10):
        words = ["common"] + [f"word{letters[k]}" for k in range(10) if i < k]
        if i == 0:
            words.append("rare")
        if i == 9:
            words += ["heavy"] * 50
        docs.append(" ".join(words))
    return docs


def _fit(**kw):
    kw.setdefault("stopwords", "none")
    return TextPipeline(**kw).fit(_docs())


def test_min_df_and_max_df_cut_by_document_frequency():
    # df: common 10, rare 1, heavy 1, word{b..j} = 1..9 (wordb in 1 doc, wordj in 9).
    vocab = _fit(min_df=1, max_df=1.0, vocab_size=None).vocabulary_
    assert vocab == sorted(["common", "rare", "heavy"] + [f"word{c}" for c in "bcdefghij"])
    vocab = _fit(min_df=3, max_df=1.0, vocab_size=None).vocabulary_
    assert vocab == ["common"] + [f"word{c}" for c in "defghij"]
    vocab = _fit(min_df=3, max_df=0.5, vocab_size=None).vocabulary_  # at most 5 of 10 docs
    assert vocab == [f"word{c}" for c in "def"]
    vocab = _fit(min_df=0.3, max_df=5, vocab_size=None).vocabulary_  # count and fraction mixed
    assert vocab == [f"word{c}" for c in "def"]


def test_vocab_size_keeps_the_most_frequent_words():
    pipe = _fit(min_df=1, max_df=1.0, vocab_size=3)
    # total counts: heavy 50, common 10, wordj 9, wordi 8, ...
    assert pipe.vocabulary_ == ["common", "heavy", "wordj"]


def test_transform_uses_the_train_vocabulary_and_stays_sparse():
    pipe = _fit(min_df=1, max_df=1.0, vocab_size=None)
    X = pipe.transform(["common common wordj unseen", "nothing known here", "rare"])
    assert sp.isspmatrix_csr(X) and X.dtype == np.int64
    assert X.shape == (3, len(pipe.vocabulary_))
    row = dict(zip(pipe.vocabulary_, X.toarray()[0]))
    assert row["common"] == 2 and row["wordj"] == 1 and X[0].sum() == 3
    assert X[1].nnz == 0  # kept as an empty row: rows stay aligned with the input
    assert X[2, pipe.vocabulary_.index("rare")] == 1


def test_fit_transform_equals_fit_then_transform():
    a = TextPipeline(stopwords="none", min_df=1, max_df=1.0).fit_transform(_docs())
    b = _fit(min_df=1, max_df=1.0).transform(_docs())
    assert (a != b).nnz == 0


def test_transform_tokens_texts_match_counts():
    pipe = _fit(min_df=1, max_df=1.0, vocab_size=None)
    counts, texts = pipe.transform_tokens([["common", "zzz", "common", "rare"], []])
    assert texts == [["common", "common", "rare"], []]
    assert counts.sum(axis=1).A1.tolist() == [3, 0]


def test_stop_words_never_enter_the_vocabulary():
    pipe = TextPipeline(stopwords=["common", "wordj"], min_df=1, max_df=1.0).fit(_docs())
    assert "common" not in pipe.vocabulary_ and "wordj" not in pipe.vocabulary_
    assert "wordi" in pipe.vocabulary_


def test_to_dict_round_trip_is_json_and_needs_no_stop_word_data():
    pipe = TextPipeline(stopwords="sklearn", min_df=1, max_df=1.0, vocab_size=5, strip_quotes=False).fit(_docs())
    d = json.loads(json.dumps(pipe.to_dict()))
    again = TextPipeline.from_dict(d)
    assert again.get_params() == pipe.get_params()
    assert again.vocabulary_ == pipe.vocabulary_ and again.stop_words == pipe.stop_words
    docs = _docs() + ["> quoted common\ncommon heavy the"]
    assert (again.transform(docs) != pipe.transform(docs)).nnz == 0
    assert isinstance(d["params"]["min_df"], int) and isinstance(d["params"]["max_df"], float)


def test_unfitted_pipeline_refuses_to_transform():
    with pytest.raises(RuntimeError, match="not fitted"):
        TextPipeline(stopwords="none").transform(["text"])


@pytest.mark.parametrize(
    "kw, pattern",
    [
        (dict(min_df=10, max_df=1.0, stopwords=["common"]), r"vocabulary is empty: no word is in at least min_df=10 .*"
                                                             r"lower --min-df or raise --max-df"),
        (dict(min_df=20), r"min_df=20 asks for words in at least 20 documents but there are only 10"),
        (dict(min_df=0.92, max_df=0.95), r"vocabulary is empty"),
        (dict(min_df=5, max_df=0.2), r"max_df=0.2 \(2 of 10 documents\) is below min_df=5 .*raise --max-df"),
        (dict(min_df=0.5, max_df=0.1), r"max_df=0.1 is below min_df=0.5: raise --max-df"),
        (dict(min_df=8, max_df=3), r"max_df=3 is below min_df=8"),
        (dict(min_df=-1), r"min_df=-1 is too small"),
        (dict(max_df=1.5), r"max_df=1.5 is outside \[0, 1\]"),
        (dict(min_df="five"), r"min_df='five' is not a number"),
        (dict(vocab_size=0), r"vocab_size=0 is not a positive integer"),
    ],
)
def test_bad_settings_give_one_line_errors(kw, pattern):
    with pytest.raises(CorpusError, match=pattern) as info:
        TextPipeline(**{"stopwords": "none", **kw}).fit(_docs())
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_no_tokens_at_all_is_an_error():
    with pytest.raises(CorpusError, match="no document has any word left after cleaning"):
        TextPipeline(stopwords="none", min_df=1).fit(["12 34", "!!", ""])
