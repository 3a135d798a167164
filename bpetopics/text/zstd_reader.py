"""Reading a zstd-compressed file (``.zst``) as a stream of bytes that fails loudly.

Large public text dumps come as zstd (Reddit's monthly comment and submission files, for
one), often compressed with a long window (``zstd --long=31``), so the reader allows
windows up to 2 GiB. The ``zstandard`` package's own stream reader ends quietly at the
end of its input, also in the middle of a frame, which would make a truncated download
a shorter corpus; :class:`ZstdReader` decompresses frame by frame and raises
``EOFError`` when the input ends inside one, and ``zstandard.ZstdError`` for data that
is not zstd (both in :data:`ERRORS`).
"""

from __future__ import annotations

import io

import zstandard

__all__ = ["ERRORS", "ZstdReader", "open_zstd"]

#: Windows up to 2 GiB, as ``zstd --long=31`` writes them.
MAX_WINDOW = 1 << 31
#: Compressed bytes read from the file at a time.
CHUNK = 1 << 20
#: What reading a damaged or truncated ``.zst`` file raises.
ERRORS = (zstandard.ZstdError, EOFError)


class ZstdReader(io.RawIOBase):
    """The decompressed bytes of a zstd file object ``raw`` (one frame or several, one
    after another), read-only, not seekable."""

    def __init__(self, raw):
        self._raw = raw
        self._decompressor = zstandard.ZstdDecompressor(max_window_size=MAX_WINDOW)
        self._frame = None             # the frame being decompressed, None between frames
        self._pending = b""            # compressed bytes read but not yet given to a frame
        self._out = b""                # decompressed bytes, returned up to _at
        self._at = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self._at == len(self._out):
            if not self._fill():
                return 0
        n = min(len(buffer), len(self._out) - self._at)
        buffer[:n] = memoryview(self._out)[self._at:self._at + n]
        self._at += n
        return n

    def _fill(self) -> bool:
        """Decompress more into ``_out``; False at the end of the input between frames."""
        data = self._pending or self._raw.read(CHUNK)
        self._pending = b""
        if not data:
            if self._frame is not None:
                raise EOFError("the input ends inside a zstd frame (truncated)")
            return False
        if self._frame is None:
            self._frame = self._decompressor.decompressobj()
        self._out, self._at = self._frame.decompress(data), 0
        if self._frame.eof:            # the frame is complete: what follows starts the next
            self._pending = self._frame.unused_data
            self._frame = None
        return True

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def open_zstd(path) -> io.BufferedReader:
    """``path`` (a ``.zst`` file) opened for reading its decompressed bytes."""
    return io.BufferedReader(ZstdReader(open(path, "rb")), buffer_size=CHUNK)
