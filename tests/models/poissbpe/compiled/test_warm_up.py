"""``bpetopics compile`` compiles what a training on a real corpus uses: after it, a fit
on integer counts (as a corpus built by ``bpetopics corpus`` holds) compiles nothing."""

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("numba")

from bpetopics import PoissBPE  # noqa: E402
from bpetopics.bpe.compile_clock import CompileClock  # noqa: E402
from bpetopics.models.poissbpe.compiled.warm_up import compile_kernels, planted_corpus  # noqa: E402


def test_planted_corpus_has_the_asked_shape_and_no_empty_document():
    X = planted_corpus(n_docs=50, n_words=40, n_topics=3, seed=1)
    assert X.shape == (50, 40) and (np.asarray(X.sum(1)).ravel() >= 20).all()


def test_after_compile_kernels_a_fit_on_integer_counts_compiles_nothing():
    compile_kernels()
    X = sp.csr_matrix(planted_corpus(n_docs=300, n_words=200, seed=3).toarray().astype(np.int64))
    with CompileClock().listening() as clock:
        PoissBPE(n_topics=6, epochs=2, random_state=1, progress=False, device="cpu").fit(X).transform(X)
    assert clock.seconds == 0.0


def test_the_compile_command_says_what_it_did():
    from click.testing import CliRunner

    from bpetopics.cli import main

    result = CliRunner().invoke(main, ["compile"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1].startswith("Done: ")
    assert CliRunner().invoke(main, ["compile", "--quiet"]).output == ""
