"""Absurd sizes are refused before anything is allocated: by ``bpetopics train``,
``bpetopics images train`` and the estimators (PoissBPE, GaussBPE, BernBPE) alike.

Every case runs in one child process whose address space is capped, after its imports,
at 2 GB above what it holds: a size check that came after an allocation of the size asked
for would fail there with a MemoryError or torch's "can't allocate memory" instead of the
one-line refusal (a control case checks that the cap bites)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
HUGE = 10**9

CHILD = r"""
import json, resource, sys
import numpy as np, scipy.sparse as sp, torch
from click.testing import CliRunner
from bpetopics.cli import main
import bpetopics.cli.train, bpetopics.cli.images, bpetopics.runs.image_job, bpetopics.text.prepare
from bpetopics.models import BernBPE, GaussBPE, PoissBPE
from bpetopics.bpe.sizes import SizeError

cli_cases, fit_cases = json.loads(sys.argv[1]), json.loads(sys.argv[2])
CLASSES = {"PoissBPE": PoissBPE, "GaussBPE": GaussBPE, "BernBPE": BernBPE}
rng = np.random.default_rng(0)
text = sp.csr_matrix(rng.poisson(1.0, size=(40, 30)).astype(np.float64))
pixels = rng.random((40, 16)).astype(np.float32)

size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + 2 * 2**30, resource.getrlimit(resource.RLIMIT_AS)[1]))
results = {}
try:
    torch.empty(2**30, dtype=torch.float32)             # 4 GB: the cap must refuse it
    results["control"] = "allocated"
except (RuntimeError, MemoryError):
    results["control"] = "refused"
for name, args in cli_cases.items():
    r = CliRunner().invoke(main, args)
    results[name] = [r.exit_code, r.output, repr(r.exception)]
for name, (cls, params, data) in fit_cases.items():
    try:
        CLASSES[cls](**params, device="cpu", progress=False).fit(text if data == "text" else pixels)
        results[name] = ["fitted", ""]
    except SizeError as exc:
        results[name] = ["SizeError", str(exc)]
    except BaseException as exc:
        results[name] = [type(exc).__name__, str(exc)[:300]]
print(json.dumps(results))
"""


def _image_folder(root: Path) -> Path:
    from PIL import Image

    folder = root / "pictures"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(6):
        Image.fromarray((rng.random((8, 8)) * 255).astype(np.uint8)).save(folder / f"{i}.png")
    return folder


def _text_folder(root: Path) -> Path:
    folder = root / "texts"
    folder.mkdir()
    words = "space shuttle orbit launch hockey player league goal engine wheel brake road".split()
    rng = np.random.default_rng(0)
    for i in range(12):
        (folder / f"{i}.txt").write_text(" ".join(rng.choice(words, 30)) + "\n")
    return folder


def _cli_cases(tmp: Path) -> dict:
    texts, pictures = _text_folder(tmp), _image_folder(tmp)
    train = ["train", str(texts), "--device", "cpu", "--quiet"]
    image = ["images", "train", str(pictures), "--device", "cpu", "--quiet"]
    return {
        "train --bits": [*train, "--out", str(tmp / "a"), "--topics", "5", "--bits", str(HUGE)],
        "train --topics": [*train, "--out", str(tmp / "b"), "--topics", str(HUGE)],
        "train --topics --bits 64": [*train, "--out", str(tmp / "c"), "--topics", str(HUGE), "--bits", "64"],
        "train --hidden": [*train, "--out", str(tmp / "d"), "--topics", "5", "--hidden", str(HUGE)],
        "train --batch-size": [*train, "--out", str(tmp / "e"), "--topics", "5", "--batch-size", str(HUGE)],
        "train --topic-init-docs": [*train, "--out", str(tmp / "f"), "--topics", "5", "--topic-init-docs",
                                    str(HUGE)],
        "train --nproc 2 --bits": [*train, "--out", str(tmp / "g"), "--topics", "5", "--bits", str(HUGE),
                                   "--nproc", "2"],
        "images gaussbpe --bits": [*image, "--model", "gaussbpe", "--out", str(tmp / "h"), "--bits", str(HUGE)],
        "images bernbpe --bits": [*image, "--model", "bernbpe", "--out", str(tmp / "i"), "--bits", str(HUGE)],
        "images gaussbpe --hidden": [*image, "--model", "gaussbpe", "--out", str(tmp / "j"), "--hidden",
                                     f"256,{HUGE}"],
        "images bernbpe --batch-size": [*image, "--model", "bernbpe", "--out", str(tmp / "k"), "--batch-size",
                                        str(HUGE)],
    }


#: (what the one line names, what it says) for each command.
CLI_EXPECTED = {
    "train --bits": ("--bits 1000000000", "65,536 bits"),
    "train --topics": ("--topics 1000000000", "more than the 65,536"),
    "train --topics --bits 64": ("--topics 1000000000", "of memory to train"),
    "train --hidden": ("--hidden 1000000000", "of memory to train"),
    "train --batch-size": ("--batch-size 1000000000", "of memory to train"),
    "train --topic-init-docs": ("--topic-init-docs 1000000000", "of memory to train"),
    "train --nproc 2 --bits": ("--bits 1000000000", "65,536 bits"),
    "images gaussbpe --bits": ("--bits 1000000000", "65,536 bits"),
    "images bernbpe --bits": ("--bits 1000000000", "65,536 bits"),
    "images gaussbpe --hidden": ("--hidden 256,1000000000", "of memory to train"),
    "images bernbpe --batch-size": ("--batch-size 1000000000", "of memory to train"),
}

FIT_CASES = {
    "PoissBPE n_bits": ["PoissBPE", {"n_topics": 5, "n_bits": HUGE}, "text"],
    "PoissBPE hidden": ["PoissBPE", {"n_topics": 25, "n_bits": 64, "hidden": [HUGE]}, "text"],
    "PoissBPE batch_size": ["PoissBPE", {"n_topics": 5, "batch_size": HUGE}, "text"],
    "PoissBPE topic_init_docs": ["PoissBPE", {"n_topics": 5, "topic_init_docs": HUGE}, "text"],
    "GaussBPE n_bits": ["GaussBPE", {"n_bits": HUGE}, "pixels"],
    "GaussBPE hidden": ["GaussBPE", {"n_bits": 8, "hidden": [HUGE]}, "pixels"],
    "BernBPE n_bits": ["BernBPE", {"n_bits": HUGE}, "pixels"],
    "BernBPE batch_size": ["BernBPE", {"n_bits": 8, "batch_size": HUGE}, "pixels"],
}

FIT_EXPECTED = {
    "PoissBPE n_bits": "n_bits=1000000000 is more than 65,536 bits",
    "PoissBPE hidden": "hidden=1000000000 needs about",
    "PoissBPE batch_size": "batch_size=1000000000 needs about",
    "PoissBPE topic_init_docs": "topic_init_docs=1000000000 needs about",
    "GaussBPE n_bits": "n_bits=1000000000 is more than 65,536 bits",
    "GaussBPE hidden": "hidden=1000000000 needs about",
    "BernBPE n_bits": "n_bits=1000000000 is more than 65,536 bits",
    "BernBPE batch_size": "batch_size=1000000000 needs about",
}


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    """What each case gave in the capped child: (exit code, output, exception) for the
    commands, (outcome, message) for the fits; and the folders they were given."""
    tmp = tmp_path_factory.mktemp("sizes")
    cases = _cli_cases(tmp)
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cases), json.dumps(FIT_CASES)],
                          capture_output=True, text=True, timeout=240, cwd=REPO,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), tmp


def test_the_cap_refuses_a_large_allocation(refusals):
    assert refusals[0]["control"] == "refused"


@pytest.mark.parametrize("case", list(CLI_EXPECTED))
def test_a_command_refuses_an_absurd_size_in_one_line_before_allocating(refusals, case):
    results, tmp = refusals
    code, output, exception = results[case]
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2, (output, exception)
    assert len(lines) == 1 and lines[0].startswith("Error: "), output
    named, says = CLI_EXPECTED[case]
    assert named in lines[0] and says in lines[0], lines[0]
    assert f"lower {named.split()[0]}" in lines[0], lines[0]
    # nothing written: no run, no working folder
    assert sorted(p.name for p in tmp.iterdir()) == ["pictures", "texts"]


@pytest.mark.parametrize("case", list(FIT_EXPECTED))
def test_an_estimator_refuses_an_absurd_size_before_allocating(refusals, case):
    outcome, message = refusals[0][case]
    assert outcome == "SizeError", message
    assert FIT_EXPECTED[case] in message and "; lower " in message, message


def test_validate_refuses_sizes_before_the_data_and_names_the_option():
    from bpetopics import PoissBPE
    from bpetopics.bpe.sizes import SizeError
    from bpetopics.models import GaussBPE

    with pytest.raises(SizeError, match=r"^--bits 1000000000 is more than 65,536 bits.*; lower --bits$"):
        PoissBPE(5, n_bits=HUGE, device="cpu").validate(label=lambda name: "--bits" if name == "n_bits" else name)
    with pytest.raises(SizeError, match=r"^n_topics=1000000000 gives default codes of 141,424 bits, more than the 65,536"):
        PoissBPE(HUGE, device="cpu").validate()
    with pytest.raises(SizeError, match=r"^hidden=10,1000000000 needs about .*; lower hidden$"):
        GaussBPE(64, hidden=(10, HUGE), device="cpu").validate(100)
    # sizes that fit some data pass: the check is a lower bound, not a guess
    PoissBPE(50, device="cpu").validate()
    GaussBPE(device="cpu").validate(60000)
