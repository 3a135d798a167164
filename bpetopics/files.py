"""Writing folders safely: build in a temporary sibling, then move into place."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def replace_folder(tmp: Path, out: Path, tag: str) -> None:
    """Move the finished folder ``tmp`` to ``out``.

    An existing ``out`` is first moved aside (``.NAME.old-TAG``) and deleted only once
    ``tmp`` is in place, so a crash never leaves ``out`` half written or missing.
    """
    if out.exists():
        old = out.parent / f".{out.name}.old-{tag}"
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)
