"""The PoissBPE vs LDA comparison driver: same documents, same measures, three files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bpetopics.baselines import LDABaseline
from bpetopics.evaluation import evaluate_topic_model
from bpetopics.experiments.text_comparison import (
    MODEL_NAMES,
    compare_models,
    holdout_split,
    summarize,
    summary_markdown,
    warm_up_models,
    write_comparison,
)

BPE = {"epochs": 2, "n_bits": 8, "device": "cpu"}
LDA = {"passes": 2}


@pytest.fixture(scope="module")
def small(newsgroups_small):
    """300 train and 300 test documents of ``newsgroups_small``."""
    from bpetopics.text import Corpus

    out = []
    for split in ("train", "test"):
        c = newsgroups_small[split]
        out.append(Corpus(counts=c.counts[:300], vocabulary=c.vocabulary, texts=c.texts[:300], ids=c.ids[:300],
                          split=split, labels=c.labels[:300], label_names=c.label_names))
    return out


@pytest.fixture(scope="module")
def results(small):
    train, test = small
    return compare_models(train, test, 5, seeds=(0, 1), bpe_params=BPE, lda_params=LDA, reference="test")


def test_both_models_every_seed_same_documents(results, small):
    train, test = small
    assert list(zip(results["model"], results["seed"])) == [("PoissBPE", 0), ("LDA", 0), ("PoissBPE", 1), ("LDA", 1)]
    assert (results["n_train"] == 300).all() and (results["n_test"] == 300).all()
    assert (results["n_words"] == len(train.vocabulary)).all() and (results["n_topics"] == 5).all()
    np.testing.assert_allclose(results["npmi"], results["gensim_c_npmi"], atol=1e-6)
    for column in ("npmi_nonfinite", "gensim_c_npmi_nonfinite", "diversity", "perplexity", "accuracy",
                   "fit_seconds", "infer_seconds"):
        assert results[column].notna().all(), column
    assert (results["fit_seconds"] > 0).all() and (results["perplexity_documents"] > 250).all()
    bpe = results[results["model"] == "PoissBPE"]
    lda = results[results["model"] == "LDA"]
    assert bpe["code_mean_active"].notna().all() and lda["code_mean_active"].isna().all()
    assert all(len(words) == 5 for words in results["top_words"])
    # seeds matter: different LDA fits
    assert lda["top_words"].iloc[0] != lda["top_words"].iloc[1]


def test_lda_row_is_evaluate_topic_model_of_the_default_baseline(results, small):
    """Measured exactly as evaluate_topic_model measures LDABaseline (defaults but passes) alone."""
    train, test = small
    model = LDABaseline(n_topics=5, passes=2, random_state=1).fit(train.counts)
    direct = evaluate_topic_model(model, train.counts, test.counts, test.texts, train.vocabulary,
                                  train.labels, test.labels, seed=1, gensim_measures=())
    row = results[(results["model"] == "LDA") & (results["seed"] == 1)].iloc[0]
    for key in ("npmi", "diversity", "perplexity", "accuracy", "unused_topics"):
        assert row[key] == pytest.approx(direct[key]), key


def test_write_comparison_files(results, tmp_path):
    paths = write_comparison(results, tmp_path / "out", settings={"LDA": "LDABaseline defaults"})
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["comparison.csv", "comparison.md",
                                                                     "comparison.png"]
    table = pd.read_csv(paths["csv"])
    assert len(table) == 4 and set(table["model"]) == set(MODEL_NAMES) and "top_words" not in table
    md = paths["md"].read_text()
    assert "| metric | PoissBPE | LDA |" in md and "- LDA: LDABaseline defaults" in md
    assert "NPMI (gensim c_npmi)" in md and "±" in md and "## Topics (seed 0" in md
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_is_mean_and_std_over_seeds():
    df = pd.DataFrame({"model": ["PoissBPE", "LDA", "PoissBPE", "LDA"], "seed": [0, 0, 1, 1],
                       "n_train": 10, "n_test": 5, "n_words": 7, "n_topics": 3,
                       "npmi": [0.1, -0.1, 0.3, -0.3], "npmi_nonfinite": [0, 1, 0, 1],
                       "perplexity": [100.0, 200.0, 300.0, 400.0],
                       "code_mean_active": [2.0, np.nan, 4.0, np.nan]})
    stats = summarize(df)
    assert stats.loc[("npmi", "PoissBPE"), "mean"] == pytest.approx(0.2)
    assert stats.loc[("npmi", "LDA"), "std"] == pytest.approx(np.std([-0.1, -0.3], ddof=1))
    assert stats.loc[("code_mean_active", "LDA"), "n"] == 0
    md = summary_markdown(df)
    assert "| NPMI (ours) ↑ | 0.2000 ± 0.1414 | -0.2000 ± 0.1414 |" in md
    assert "| completion perplexity ↓ | 200.0 ± 141.4 | 300.0 ± 141.4 |" in md
    assert "| topics with non-finite NPMI (ours) ↓ | 0.0 ± 0.0 | 1.0 ± 0.0 |" in md
    assert "| active bits per code (PoissBPE) | 3.000 ± 1.414 | — |" in md
    one = summary_markdown(df[df["seed"] == 0])
    assert "| NPMI (ours) ↑ | 0.1000 | -0.1000 |" in one and "±" not in one


def test_holdout_split_and_checks(small):
    train, test = small
    a, b = holdout_split(train, 0.2, seed=3)
    assert (a.n_docs, b.n_docs) == (240, 60)
    assert not set(a.ids) & set(b.ids) and sorted(a.ids + b.ids) == sorted(train.ids)
    i = a.ids.index(train.ids[5]) if train.ids[5] in a.ids else None
    if i is not None:
        assert (a.counts[i] != train.counts[5]).nnz == 0 and a.texts[i] == train.texts[5]
    one = holdout_split(train, 0.997)[0]
    assert one.n_docs == 1
    with pytest.raises(ValueError, match="too few"):
        holdout_split(one, 0.2)
    other = holdout_split(train, 0.5)[0]
    other.vocabulary = other.vocabulary[:-1] + ["zzz"]
    with pytest.raises(ValueError, match="vocabulary"):
        compare_models(other, test, 5, seeds=[0], warm_up=False)
    with pytest.raises(ValueError, match="reference"):
        compare_models(train, test, 5, seeds=[0], reference="dev", warm_up=False)


def test_models_come_from_the_registry_of_named_factories(small, monkeypatch):
    """Adding a baseline is one entry of TEXT_MODELS; the tables follow the models given."""
    from bpetopics.experiments import text_comparison as tc

    entry = tc.TextModel(lambda n_topics, seed, params: LDABaseline(n_topics=n_topics, random_state=seed,
                                                                   **{**LDA, **params}), {"passes": 1})
    monkeypatch.setitem(tc.TEXT_MODELS, "LDA-again", entry)
    train, test = small
    res = compare_models(train, test, 4, seeds=(0,), models=["LDA-again"], gensim_measures=(), warm_up=False)
    assert list(res["model"]) == ["LDA-again"] and "code_mean_active" not in res  # no codes
    md = summary_markdown(res)
    assert md.startswith("# LDA-again\n") and "| metric | LDA-again |" in md
    with pytest.raises(ValueError, match="unknown models"):
        compare_models(train, test, 4, seeds=(0,), models=["NoSuchModel"])


def test_every_baseline_by_name_with_the_standard_protocol(small):
    """PoissBPE, gensim LDA, tomotopy, NMF and ProdLDA on one bag of words, named in any
    case; the OCTIS/TopMost measures are reported for each; a 300-document held-out split
    is too small a coherence reference, so "auto" takes the whole corpus and says so."""
    train, test = small
    lines = []
    res = compare_models(train, test, 4, seeds=(0,), models=["poissbpe", "lda", "TOMOTOPY", "nmf", "ProdLDA"],
                         params={"PoissBPE": BPE, "LDA": {"passes": 1}, "Tomotopy": {"iterations": 20},
                                 "NMF": {"max_iter": 20}, "ProdLDA": {"epochs": 2}},
                         gensim_measures=(), warm_up=False, log=lines.append)
    assert list(res["model"]) == ["PoissBPE", "LDA", "Tomotopy", "NMF", "ProdLDA"]
    assert (res["reference"] == "corpus").all()
    assert any("whole corpus" in line and "300 documents" in line for line in lines)
    for column in ("npmi", "npmi_corpus", "npmi_corpus_nonfinite", "diversity", "diversity_top10",
                   "exclusive_diversity", "perplexity", "accuracy", "purity", "nmi"):
        assert res[column].notna().all(), column
    # with the whole corpus as reference, npmi and npmi_corpus are the same measure
    np.testing.assert_allclose(res["npmi"], res["npmi_corpus"])
    assert ((res["exclusive_diversity"] <= res["diversity"]) & (res["purity"] > 0)).all()
    explicit = compare_models(train, test, 4, seeds=(0,), models=["NMF"], params={"NMF": {"max_iter": 20}},
                              reference="test", gensim_measures=(), warm_up=False)
    assert explicit["reference"].iloc[0] == "test"
    assert explicit["npmi"].iloc[0] != pytest.approx(explicit["npmi_corpus"].iloc[0])


def test_the_warm_up_fits_more_topics_than_its_64_documents(small):
    """`compare --topics 100` failed in the untimed warm-up fit (100 topics on 64 documents)."""
    from bpetopics.experiments.text_comparison import warm_up_models

    train, _ = small
    warm_up_models(100, train.counts, ["PoissBPE"], {"PoissBPE": dict(BPE, epochs=1)})


def test_comparison_png_keeps_every_title_inside_the_image(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from bpetopics.experiments.comparison_report import FIGURE_METRICS, plot_comparison

    rng = np.random.default_rng(0)
    names = ["PoissBPE", "LDA", "Tomotopy", "NMF", "ProdLDA"]
    panels = FIGURE_METRICS[-6:]     # without NPMI (ours): accuracy's long title in the last column
    rows = [{"model": m, "seed": s, "n_topics": 20, **{c: float(rng.uniform(0.1, 3000)) for c in panels}}
            for s in (0, 1) for m in names]
    drawn, save = [], Figure.savefig

    def keep(fig, *args, **kwargs):
        drawn.append(fig)
        return save(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    plot_comparison(pd.DataFrame(rows), tmp_path / "c.png")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = drawn[0]
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer, box = canvas.get_renderer(), fig.bbox
    extents = [ax.title.get_window_extent(renderer) for ax in fig.axes]
    assert len(extents) == 6
    for ax, extent in zip(fig.axes, extents):
        assert box.x0 <= extent.x0 and extent.x1 <= box.x1 and extent.y1 <= box.y1, ax.title.get_text()
    assert not any(a.overlaps(b) for i, a in enumerate(extents) for b in extents[i + 1:])


def test_comparison_md_records_the_documents_left_out(tmp_path):
    from bpetopics.experiments.text_setup import comparison_data, describe_comparison

    folder = tmp_path / "texts"
    folder.mkdir()
    for i in range(12):
        (folder / f"{i}.txt").write_text(f"rocket orbit launch engine wheel {'brake' * (i % 2)} gear {i}\n")
    (folder / "empty.txt").write_text("12 34 !!\n")
    settings = {"min_df": 1, "max_df": 1.0, "stopwords": "none"}
    data = comparison_data(folder, settings, seed=0)
    described = describe_comparison(folder, settings, data, "test", ["LDA"], 3, {}, {})
    assert "1 empty after cleaning" in described["documents left out"]
    results = pd.DataFrame([{"model": "LDA", "seed": 0, "n_train": 10, "n_test": 2, "n_words": 6, "n_topics": 3,
                             "npmi": 0.1}])
    assert "- documents left out: train: 1 document(s) left out (1 empty after cleaning" in \
        summary_markdown(results, settings=described)


def test_the_warm_up_fits_keep_their_early_stops_quiet(small):
    """The untimed warm-up stops NMF after a few iterations on purpose: a user of
    `compare` must not be told its maximum number of iterations was reached."""
    import warnings

    train, _ = small
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warm_up_models(4, train.counts, ["NMF"], {"NMF": {}})
    assert [str(w.message) for w in caught] == []


def test_model_params_merges_each_models_objects_under_its_registry_name():
    from bpetopics.experiments.text_comparison import model_params

    got = model_params(['tomotopy-200={"alpha": 0.5}', 'NMF={"max_iter": 7}', 'TOMOTOPY-200={"eta": 0.05}'],
                       ["PoissBPE", "Tomotopy-200", "NMF"], n_topics=5)
    assert got == {"Tomotopy-200": {"alpha": 0.5, "eta": 0.05}, "NMF": {"max_iter": 7}}
    assert model_params([], ["PoissBPE"]) == {}
    with pytest.raises(ValueError, match="PoissBPE's n_bits"):
        model_params(['PoissBPE={"n_bits": 0}'], ["PoissBPE"], n_topics=5)
