"""Topic shares over time and per class (bpetopics.runs.over_time), and the Hamming
neighbours of the explorer, on planted arrays."""

import numpy as np
import pytest

from bpetopics.runs.explorer import hamming_neighbours
from bpetopics.runs.over_time import time_bins, topics_over_time, topics_per_class


def planted(n=400, seed=0):
    """Mixtures over 3 topics whose topic-0 weight grows with the timestamp 0..99."""
    rng = np.random.default_rng(seed)
    times = rng.uniform(0, 100, size=n)
    first = 0.1 + 0.8 * times / 100
    doc_topic = np.stack([first, (1 - first) / 2, (1 - first) / 2], axis=1)
    return doc_topic + rng.normal(0, 0.01, size=doc_topic.shape), times


def test_shares_are_the_bins_means_with_their_standard_errors():
    doc_topic, times = planted()
    frame = topics_over_time(doc_topic, times, bins=4, labels=["a", "b", "c"])
    assert list(frame.columns) == ["bin", "start", "end", "topic", "label", "share", "se", "low", "high", "documents"]
    assert len(frame) == 4 * 3
    index, _, _ = time_bins(times, 4)
    for (b, t), row in frame.set_index(["bin", "topic"]).iterrows():
        rows = doc_topic[index == b, t]
        assert row["documents"] == len(rows)
        assert row["share"] == pytest.approx(rows.mean(), rel=1e-12)
        assert row["se"] == pytest.approx(rows.std(ddof=1) / np.sqrt(len(rows)), rel=1e-9)
        assert row["low"] == pytest.approx(max(0, rows.mean() - 1.96 * row["se"]), rel=1e-9)
    assert frame.drop_duplicates("bin")["documents"].sum() == len(times)
    topic0 = frame[frame["topic"] == 0]["share"].to_numpy()
    assert np.all(np.diff(topic0) > 0.1)        # the planted drift: each quarter about 0.2 more
    assert frame["label"].iloc[0] == "a"


def test_empty_spans_are_kept_without_shares():
    doc_topic = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    frame = topics_over_time(doc_topic, np.array([0.0, 1.0, 10.0]), bins=5)
    counts = frame.drop_duplicates("bin")["documents"].tolist()
    assert counts == [2, 0, 0, 0, 1]
    assert frame[frame["bin"] == 1]["share"].isna().all()
    last = frame[frame["bin"] == 4]
    assert last["share"].tolist() == [0.5, 0.5] and last["low"].isna().all()     # one document: no spread


def test_calendar_periods_of_dates():
    times = np.array(["2021-01-31T23:00", "2021-02-01", "2021-02-28", "2021-04-15"], dtype="datetime64[s]")
    doc_topic = np.eye(2)[[0, 1, 1, 0]]
    frame = topics_over_time(doc_topic, times, freq="M")
    bins = frame.drop_duplicates("bin")
    assert [str(s)[:10] for s in bins["start"]] == ["2021-01-01", "2021-02-01", "2021-03-01", "2021-04-01"]
    assert [str(s)[:10] for s in bins["end"]] == ["2021-02-01", "2021-03-01", "2021-04-01", "2021-05-01"]
    assert bins["documents"].tolist() == [1, 2, 0, 1]
    assert frame[(frame["bin"] == 1) & (frame["topic"] == 1)]["share"].item() == 1.0
    with pytest.raises(ValueError, match="needs dates"):
        topics_over_time(doc_topic, np.arange(4.0), freq="M")
    with pytest.raises(ValueError, match="not a pandas period frequency"):
        topics_over_time(doc_topic, times, freq="fortnight")


def test_bootstrap_intervals_hold_the_mean_and_repeat_with_the_seed():
    doc_topic, times = planted(200)
    a = topics_over_time(doc_topic, times, bins=3, interval="bootstrap", n_boot=300, seed=1)
    b = topics_over_time(doc_topic, times, bins=3, interval="bootstrap", n_boot=300, seed=1)
    se = topics_over_time(doc_topic, times, bins=3)
    assert a.equals(b)
    assert np.all(a["low"] <= a["share"]) and np.all(a["share"] <= a["high"])
    # the bootstrap's 95% width is close to the normal one, 2 x 1.96 se
    width, normal = (a["high"] - a["low"]).to_numpy(), (2 * 1.96 * se["se"]).to_numpy()
    assert np.allclose(width, normal, rtol=0.35)


def test_shares_per_class():
    doc_topic = np.array([[0.9, 0.1], [0.7, 0.3], [0.2, 0.8]])
    frame = topics_per_class(doc_topic, ["b", "b", "a"])
    assert frame["class"].tolist() == ["a", "a", "b", "b"]
    assert frame["share"].to_numpy() == pytest.approx([0.2, 0.8, 0.8, 0.2])
    assert frame["documents"].tolist() == [1, 1, 2, 2]
    named = topics_per_class(doc_topic, [1, 1, 0], class_names=["x", "y"])
    assert named["class"].tolist() == ["x", "x", "y", "y"]
    with pytest.raises(ValueError, match="3 documents"):
        topics_per_class(doc_topic, ["a"])


def test_hamming_neighbours_match_a_brute_force_search():
    rng = np.random.default_rng(0)
    codes = (rng.random((300, 20)) < 0.2).astype(np.uint8)
    index, distance = hamming_neighbours(codes, k=4)
    full = (codes[:, None, :] != codes[None]).sum(-1)
    np.fill_diagonal(full, 10**6)
    expected = np.argsort(full, axis=1, kind="stable")[:, :4]
    assert np.array_equal(index, expected)
    assert np.array_equal(distance, np.take_along_axis(full, expected, axis=1))
    assert not np.any(index == np.arange(300)[:, None])
    assert hamming_neighbours(codes[:1])[0].shape == (1, 0)
