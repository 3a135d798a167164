"""The dependency rule of DESIGN.md: the core imports none of the heavy text/plot stack."""

import subprocess
import sys

FORBIDDEN = ["gensim", "sklearn", "nltk", "networkx", "pandas", "pyLDAvis", "matplotlib"]


def test_core_and_models_import_no_text_or_plotting_library():
    code = ("import sys, bpetopics.core.model, bpetopics.core.pursuit, bpetopics.models, "
            "bpetopics.image_models; "
            f"print([m for m in {FORBIDDEN!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_command_line_starts_without_torch():
    code = "import sys, bpetopics.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
