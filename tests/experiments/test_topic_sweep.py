"""The comparison over T: its table names the coherence reference actually used."""

import numpy as np
import pandas as pd

from bpetopics.experiments.quality_grid import aggregate
from bpetopics.experiments.topic_sweep import sweep_folder, topic_sweep_markdown, write_topic_sweep


def _rows(n_topics, shift):
    rng = np.random.default_rng(n_topics)
    return pd.DataFrame({"model": ["PoissBPE", "NMF"] * 2, "seed": [0, 0, 1, 1], "n_train": 90, "n_test": 10,
                         "n_words": 50, "npmi": rng.uniform(size=4), "npmi_corpus": rng.uniform(size=4) + shift,
                         "diversity": rng.uniform(size=4), "perplexity": rng.uniform(500, 600, size=4)})


def test_the_sweep_tables_every_t_and_names_the_reference(tmp_path):
    results = {10: _rows(10, 0.0), 20: _rows(20, 1.0)}
    paths = write_topic_sweep(results, "mine", tmp_path, "20% of the documents", reference="test")
    cells = pd.read_csv(paths["csv"])
    assert list(zip(cells["n_topics"], cells["model"])) == [(10, "PoissBPE"), (10, "NMF"), (20, "PoissBPE"),
                                                            (20, "NMF")]
    nmf_20 = results[20][results[20]["model"] == "NMF"]["perplexity"]
    assert cells["perplexity_mean"].iloc[3] == nmf_20.mean()
    assert cells["perplexity_std"].iloc[3] == nmf_20.std(ddof=1)
    md = paths["md"].read_text()
    assert "| T | model | NPMI (test split) | NPMI (whole corpus) |" in md and "(20% of the documents)" in md
    assert sweep_folder(tmp_path, 20) == tmp_path / "T20"

    runs = pd.concat([r.assign(corpus="mine", n_topics=t) for t, r in results.items()], ignore_index=True)
    cells = aggregate(runs)
    assert "| T | model | NPMI (training split) | NPMI (whole corpus) |" in topic_sweep_markdown(
        cells, "mine", "-", reference="train")
    whole = topic_sweep_markdown(cells, "mine", "-", reference="corpus")
    assert "| T | model | NPMI (whole corpus) |" in whole and "split" not in whole
