"""The quality grid's bookkeeping on planted rows: generic topics, aggregation over
seeds, and PoissBPE's verdict against the best baseline (leads, ties, loses)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from bpetopics.experiments.quality_grid import (aggregate, corpus_tables, count_generic_topics, frequent_words,
                                                losses, summarize_grid, summary_table, verdict)


def test_frequent_words_are_the_words_with_most_tokens():
    counts = sp.csr_matrix(np.array([[5, 0, 1, 2], [4, 1, 0, 9]]))
    assert frequent_words(counts, ["a", "b", "c", "d"], n=2) == {"a", "d"}


def test_a_topic_is_generic_from_six_of_its_top_ten_frequent_words():
    frequent = {f"f{i}" for i in range(100)}
    rare = [f"r{i}" for i in range(10)]
    topics = [[f"f{i}" for i in range(k)] + rare[: 10 - k] for k in (0, 5, 6, 10)]
    assert count_generic_topics(topics, frequent) == 2
    # only the first top_n words count: a frequent 11th word does not make a topic generic
    assert count_generic_topics([topics[1] + ["f99"]], frequent) == 0
    assert count_generic_topics(topics, frequent, min_frequent=5) == 3


@pytest.mark.parametrize("ours, ours_std, best, best_std, direction, expected", [
    (0.10, 0.01, 0.05, 0.01, "+", "leads"),
    (0.05, 0.01, 0.10, 0.01, "+", "loses"),
    (0.10, 0.03, 0.08, 0.01, "+", "ties"),      # within the larger std
    (0.10, 0.0, 0.08, 0.03, "+", "ties"),
    (800.0, 5.0, 900.0, 5.0, "-", "leads"),     # lower perplexity is better
    (900.0, 5.0, 800.0, 5.0, "-", "loses"),
    (0.10, 0.0, 0.10, 0.0, "+", "ties"),        # one seed: a tie only when equal
    (0.1001, 0.0, 0.10, 0.0, "+", "leads"),
    (math.nan, 0.0, 0.10, 0.0, "+", "n/a"),
])
def test_verdict(ours, ours_std, best, best_std, direction, expected):
    assert verdict(ours, ours_std, best, best_std, direction) == expected


def test_verdict_refuses_a_measure_without_direction():
    with pytest.raises(ValueError, match="direction"):
        verdict(0.1, 0.0, 0.2, 0.0, "")


def _rows():
    """Two cells, three models, two seeds; planted so that PoissBPE leads NPMI in the
    first cell, ties it in the second, and loses perplexity to NMF in the second."""
    planted = {  # (corpus, T, model): (npmi per seed, diversity per seed, perplexity per seed)
        ("c", 20, "PoissBPE"): ((0.20, 0.22), (0.90, 0.90), (800, 810)),
        ("c", 20, "LDA"): ((0.10, 0.12), (0.80, 0.82), (900, 910)),
        ("c", 20, "NMF"): ((0.05, 0.07), (0.95, 0.97), (1000, 1010)),
        ("c", 50, "PoissBPE"): ((0.15, 0.19), (0.80, 0.80), (900, 905)),
        ("c", 50, "LDA"): ((0.16, 0.18), (0.70, 0.70), (950, 955)),
        ("c", 50, "NMF"): ((0.10, 0.10), (0.60, 0.60), (700, 705)),
    }
    rows = []
    for (corpus, t, model), (npmi, div, ppl) in planted.items():
        for seed in (0, 1):
            rows.append({"corpus": corpus, "n_topics": t, "model": model, "seed": seed, "n_train": 90,
                         "n_test": 10, "n_words": 50, "npmi": npmi[seed], "npmi_corpus": npmi[seed],
                         "diversity_top10": div[seed], "diversity": div[seed], "perplexity": ppl[seed],
                         "accuracy": None, "fit_cpu_seconds": 1.0 + seed, "generic_topics": seed})
    return pd.DataFrame(rows)


def test_aggregate_gives_mean_and_std_over_seeds_per_cell_and_model():
    cells = aggregate(_rows())
    assert len(cells) == 6 and list(cells["model"][:3]) == ["PoissBPE", "LDA", "NMF"]
    first = cells.iloc[0]
    assert first["seeds"] == 2 and first["npmi_mean"] == pytest.approx(0.21)
    assert first["npmi_std"] == pytest.approx(np.std([0.20, 0.22], ddof=1))
    assert first["generic_topics_mean"] == pytest.approx(0.5)
    assert math.isnan(first["accuracy_mean"])      # no labels: no accuracy


def test_summary_names_the_best_baseline_and_the_verdict_per_cell():
    summary = summarize_grid(aggregate(_rows()))
    t20, t50 = summary.iloc[0], summary.iloc[1]
    assert (t20["npmi_best"], t20["npmi_verdict"]) == ("LDA", "leads")
    assert (t20["diversity_best"], t20["diversity_verdict"]) == ("NMF", "loses")
    assert (t20["perplexity_best"], t20["perplexity_verdict"]) == ("LDA", "leads")
    assert (t50["npmi_best"], t50["npmi_verdict"]) == ("LDA", "ties")
    assert (t50["perplexity_best"], t50["perplexity_verdict"]) == ("NMF", "loses")
    assert t50["perplexity_best_mean"] == pytest.approx(702.5)
    assert (t50["npmi_corpus_best"], t50["npmi_corpus_verdict"]) == ("LDA", "ties")
    lost = losses(summary, {"NMF": "NMF (KL)"})
    assert lost == ["c, T = 20: diversity top 25 0.900 against NMF (KL)'s 0.960",
                    "c, T = 50: perplexity 902 against NMF (KL)'s 702"]


def test_the_tables_show_every_model_and_bold_the_best_mean():
    cells = aggregate(_rows())
    text = corpus_tables(cells, {"LDA": "LDA (gensim)"})
    assert "### c" in text and "| 20 | LDA (gensim) |" in text and "accuracy" not in text
    assert "| 20 | PoissBPE | **0.210 ± 0.014** |" in text
    summary = summary_table(summarize_grid(cells), {"LDA": "LDA (gensim)"})
    assert "| c | 50 | LDA (gensim) 0.170 / 0.170: **ties** |" in summary
    assert "NMF 702 / 902: **loses** |" in summary


def test_a_rerun_fits_only_the_seeds_a_model_lacks():
    from benchmarks.bench_quality_grid import missing_seeds

    done = {("c", 20, "A", 0), ("c", 20, "B", 0), ("c", 20, "B", 1), ("c", 50, "A", 0)}
    assert missing_seeds(done, "c", 20, ["A", "B", "C"], [0, 1, 2]) == [([1, 2], ["A"]), ([2], ["B"]),
                                                                         ([0, 1, 2], ["C"])]
    assert missing_seeds(done, "c", 20, ["B"], [0, 1]) == []


def test_the_generalisation_gap_is_train_npmi_minus_held_out_npmi():
    from types import SimpleNamespace

    from benchmarks.bench_generalisation import measure
    from bpetopics.evaluation.coherence import npmi_coherence
    from bpetopics.experiments.text_comparison import encode_texts

    vocabulary = [f"w{i}" for i in range(20)]
    first, second = vocabulary[:10], vocabulary[10:]
    # each topic's ten words always meet in the training texts, and never in the held-out ones
    train = [first, first, first, second]
    test = [[first[i], second[i]] for i in range(10)]
    references = {"train": encode_texts(train, vocabulary), "test": encode_texts(test, vocabulary),
                  "corpus": encode_texts(train + test, vocabulary)}
    topic_word = np.full((2, 20), 0.01)
    topic_word[0, :10] = topic_word[1, 10:] = 0.09
    model = SimpleNamespace(topic_word_=topic_word / topic_word.sum(1, keepdims=True))
    document_frequency = np.asarray([3] * 10 + [1] * 10)
    frequent = np.zeros(20, dtype=bool)
    frequent[0] = True                   # the first topic's top words hold a frequent word, the second's none
    (npmi_train, npmi_test, npmi_corpus, gap, median_df, n_rare, rare_npmi,
     diversity) = measure(model, references, document_frequency, frequent, vocabulary)
    assert npmi_test < npmi_corpus < npmi_train
    assert npmi_test < -0.5 and npmi_train > 0.5    # no top-word pair meets in a held-out window
    assert gap == pytest.approx(npmi_train - npmi_test, abs=1e-12)
    assert median_df == 2.0    # ten top words in 3 training documents, ten in 1
    assert n_rare == 1.0
    second_topic = npmi_coherence(np.arange(10, 20)[None, :], references["test"], vocabulary).per_topic[0]
    assert rare_npmi == pytest.approx(second_topic, abs=1e-12)
    assert diversity == pytest.approx(0.5, abs=1e-12)    # each topic lists all 20 words: 20 distinct of 40
    # no topic without a frequent word: no mean to report
    values = measure(model, references, document_frequency, np.ones(20, dtype=bool), vocabulary)
    assert values[5] == 0.0 and np.isnan(values[6])
