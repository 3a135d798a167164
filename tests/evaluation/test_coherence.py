import warnings

import numpy as np
import pytest

from bpetopics.evaluation import (
    encode_texts,
    gensim_coherence,
    npmi_coherence,
    top_word_ids,
    window_cooccurrence,
)

VOCAB = ["a", "b", "c", "x", "y"]


def test_npmi_hand_computed():
    # One document "a b x x c", window 2 -> 4 windows: {a,b} {b,x} {x} {x,c}.
    # P(a) = 1/4, P(b) = 2/4, P(c) = 1/4, P(a,b) = 1/4, P(a,c) = P(b,c) = 0, eps = 1e-12.
    # NPMI(a,b) = log((1/4) / (1/4 * 1/2)) / -log(1/4) = log 2 / (2 log 2) = 0.5
    # NPMI(a,c) = log(eps / (1/16)) / -log(eps) = -1 + log 16 / -log(eps) = -0.899657...
    # NPMI(b,c) = log(eps / (1/8)) / -log(eps)  = -1 + log 8 / -log(eps)  = -0.924743...
    # topic [a, b, c]: the mean over ordered pairs = (0.5 - 0.899657 - 0.924743) / 3
    texts = [["a", "b", "x", "x", "c"]]
    L = -np.log(1e-12)
    ab, ac, bc = 0.5, -1 + np.log(16) / L, -1 + np.log(8) / L
    res = npmi_coherence([["a", "b", "c"], ["a", "b"]], texts, VOCAB, window_size=2)
    np.testing.assert_allclose(res.per_topic, [(ab + ac + bc) / 3, ab], atol=1e-9)
    assert res.n_nonfinite == 0
    ref = gensim_coherence([["a", "b", "c"], ["a", "b"]], texts, VOCAB, window_size=2)
    np.testing.assert_allclose(res.per_topic, ref.per_topic, atol=1e-12)


def test_window_counts_follow_gensim_quirk():
    # "a x a x x", window 3 -> windows [a x a] [x a x] [a x x]. gensim marks "a" absent
    # when the token at position 0 leaves (step 1), although position 2 is still inside,
    # and "a" never re-enters: it counts 1 window, not 3. Empty documents count one window.
    enc = encode_texts([["a", "x", "a", "x", "x"], []], VOCAB)
    counts, n_windows = window_cooccurrence(enc, np.array([0, 3]), window_size=3)
    assert n_windows == 4
    assert counts[0, 0] == 1 and counts[1, 1] == 3 and counts[0, 1] == 1


def test_window_counts_equal_gensim_accumulator_on_random_texts():
    from gensim.corpora import Dictionary
    from gensim.topic_coherence.text_analysis import WordOccurrenceAccumulator

    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(8)]
    dictionary = Dictionary([vocab])
    for _ in range(20):
        texts = [
            [vocab[j] if j < 8 else "oov" for j in rng.integers(0, 10, size=rng.integers(0, 25))]
            for _ in range(rng.integers(1, 6))
        ]
        ws = int(rng.integers(2, 9))
        words = sorted(rng.choice(8, size=5, replace=False).tolist())
        acc = WordOccurrenceAccumulator({dictionary.token2id[vocab[w]] for w in words}, dictionary)
        acc.accumulate(texts, ws)
        counts, n_windows = window_cooccurrence(encode_texts(texts, vocab), np.array(words), ws)
        assert n_windows == acc.num_docs
        for i, wi in enumerate(words):
            for j, wj in enumerate(words):
                assert counts[i, j] == acc[(dictionary.token2id[vocab[wi]], dictionary.token2id[vocab[wj]])]


def _mixed_topics(news3, n_random=5, seed=0):
    """3 class topics' top-10 words plus random 10-word topics, ids (T x 10)."""
    rng = np.random.default_rng(seed)
    W = len(news3["vocabulary"])
    random = np.vstack([rng.choice(W, 10, replace=False) for _ in range(n_random)])
    return np.vstack([top_word_ids(news3["class_topics"], 10), random])


def test_npmi_equals_gensim_on_20newsgroups(news3):
    topics = _mixed_topics(news3)
    ours = npmi_coherence(topics, news3["test_texts"], news3["vocabulary"])
    ref = gensim_coherence(topics, news3["test_texts"], news3["vocabulary"], measure="c_npmi")
    assert ours.n_nonfinite == ref.n_nonfinite == 0
    np.testing.assert_allclose(ours.per_topic, ref.per_topic, atol=1e-6)
    assert ours.seconds < ref.seconds


def test_coherent_topics_outscore_shuffled(news3):
    coherent = top_word_ids(news3["class_topics"], 10)
    # deal the same 30 words at random across the 3 topics
    shuffled = np.random.default_rng(1).permutation(coherent.ravel()).reshape(coherent.shape)
    a = npmi_coherence(coherent, news3["test_texts"], news3["vocabulary"])
    b = npmi_coherence(shuffled, news3["test_texts"], news3["vocabulary"])
    assert a.mean > b.mean + 0.02
    assert a.mean > 0.05


def test_unseen_word_topic_scored_minus_one_and_counted():
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel

    texts = [["a", "b", "c", "a", "b"], ["b", "c"]]
    topics = [["a", "b", "c"], ["a", "y"], ["x", "y"]]  # x, y never occur
    ours = npmi_coherence(topics, texts, VOCAB)
    ref = gensim_coherence(topics, texts, VOCAB, measure="c_npmi")
    # gensim's raw value for such a topic really is non-finite
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        raw = CoherenceModel(
            topics=[["a", "y"]], texts=texts, dictionary=Dictionary([VOCAB]),
            coherence="c_npmi", processes=1,
        ).get_coherence_per_topic()
    assert not np.isfinite(raw[0])
    for res in (ours, ref):
        assert res.n_nonfinite == 2
        assert res.nonfinite.tolist() == [False, True, True]
        assert res.per_topic[1] == res.per_topic[2] == -1.0
        assert len(res.per_topic) == 3  # nothing dropped
    np.testing.assert_allclose(ours.per_topic, ref.per_topic, atol=1e-12)
    assert ours.mean == pytest.approx((ours.per_topic[0] - 2) / 3)


@pytest.mark.parametrize("measure", ["c_v", "c_uci", "u_mass"])
def test_other_gensim_measures_run(measure):
    texts = [["a", "b", "c", "a", "b"], ["b", "c", "x"], ["a", "c"]]
    res = gensim_coherence([["a", "b", "c"], ["a", "b", "x"]], texts, VOCAB, measure=measure)
    assert res.per_topic.shape == (2,) and np.isfinite(res.per_topic).all()


def test_unknown_top_word_raises():
    with pytest.raises(KeyError):
        npmi_coherence([["a", "zzz"]], [["a"]], VOCAB)
    with pytest.raises(KeyError):
        gensim_coherence([["a", "zzz"]], [["a"]], VOCAB)
