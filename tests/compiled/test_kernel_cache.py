"""numba's cache of the kernels follows every module of their ``compiled/`` folder
(bpetopics.compiled.kernel_cache): a kernel whose inlined helper changed in another
module is compiled again, not loaded from the cache."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

from bpetopics.compiled.kernel_cache import fingerprinted, sources_fingerprint  # noqa: E402
from bpetopics.models.poissbpe.compiled import screened_pursuit, two_means  # noqa: E402

HELPER = """
from numba import njit


@njit(inline="always")
def helper(x):
    return x + {step}
"""
KERNEL = """
from bpetopics.compiled.kernel_cache import cached_njit
from kernels.compiled.helpers import helper


@cached_njit(nogil=True)
def kernel(x):
    return helper(x)
"""


def _write_package(root: Path, step: int) -> Path:
    folder = root / "kernels" / "compiled"
    folder.mkdir(parents=True, exist_ok=True)
    for init in (root / "kernels" / "__init__.py", folder / "__init__.py"):
        init.write_text("")
    (folder / "helpers.py").write_text(textwrap.dedent(HELPER.format(step=step)))
    (folder / "kernel.py").write_text(textwrap.dedent(KERNEL))
    return folder


def _run_kernel(root: Path) -> int:
    """kernel(1) in a fresh process (numba reads its on-disk cache at the first call)."""
    code = "from kernels.compiled.kernel import kernel; print(kernel(1))"
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}   # in-tree cache
    env["PYTHONPATH"] = str(root)
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                         env=env)
    return int(out.stdout.strip())


def test_a_kernel_is_compiled_again_when_a_helper_module_changes(tmp_path):
    """Edit only the helper's module: plain ``njit(cache=True)`` would load the kernel's
    old machine code (its own file is unchanged); the fingerprinted kernel gives the new
    result, and the old cache entries are removed."""
    folder = _write_package(tmp_path, step=1)
    assert _run_kernel(tmp_path) == 2
    assert _run_kernel(tmp_path) == 2                         # loaded from the cache
    first = sorted(p.name for p in (folder / "__pycache__").glob("*.nb?"))
    assert first and all(sources_fingerprint.__wrapped__(str(folder)) in name for name in first)
    _write_package(tmp_path, step=100)
    assert _run_kernel(tmp_path) == 101
    second = sorted(p.name for p in (folder / "__pycache__").glob("*.nb?"))
    assert second and not set(first) & set(second)          # the old entries are gone


def test_the_fingerprint_follows_the_contents_not_the_times(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    fingerprint = sources_fingerprint.__wrapped__
    before = fingerprint(str(tmp_path))
    (tmp_path / "b.py").touch()
    assert fingerprint(str(tmp_path)) == before
    (tmp_path / "b.py").write_text("y = 3\n")
    assert fingerprint(str(tmp_path)) != before
    (tmp_path / "b.py").write_text("y = 2\n")
    assert fingerprint(str(tmp_path)) == before
    (tmp_path / "c.txt").write_text("not a module")
    assert fingerprint(str(tmp_path)) == before


def test_the_package_kernels_carry_their_folders_fingerprint():
    """The pursuit's loop and the split checks' 2-means are cached under their folder's
    fingerprint; the copy leaves the Python function as it was."""
    folder = str(Path(screened_pursuit.__file__).parent)
    suffix = "_" + sources_fingerprint(folder)
    assert screened_pursuit.screened_kernel.py_func.__qualname__ == "_screened_pursuit_py" + suffix
    assert two_means.two_means.py_func.__name__ == "two_means" + suffix
    assert screened_pursuit._screened_pursuit_py.__qualname__ == "_screened_pursuit_py"

    def add(x, y=2, *, z=3):
        return x + y + z

    copy = fingerprinted(add)
    assert copy(1) == 6 and copy(1, z=0) == 3 and copy.__doc__ == add.__doc__ and add.__name__ == "add"
