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


def canonical_safetensors(data: bytes) -> bytes:
    """The same safetensors file with its header's keys in sorted order.

    safetensors writes ``__metadata__`` from a hash map, so its key order (and the
    file's bytes) changes from one call to the next; sorting the keys makes identical
    models give identical files. The header is JSON after an 8-byte little-endian
    length and is padded with spaces: the sorted header has the same length, so the
    tensor data (addressed by offsets relative to the header's end) is untouched.
    """
    import json

    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if len(text) > n:  # cannot happen for a header safetensors wrote; keep the file as it is
        return data
    return data[:8] + text + b" " * (n - len(text)) + data[8 + n:]
