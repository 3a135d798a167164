"""The .zst reader: frames one after another, and a damaged or truncated file raises."""

import pytest
import zstandard

from bpetopics.text.zstd_reader import ERRORS, open_zstd

DATA = b"".join(b'{"id": %d, "text": "rocket orbit engine %d"}\n' % (i, i) for i in range(5000))


def write(tmp_path, payload: bytes):
    path = tmp_path / "docs.jsonl.zst"
    path.write_bytes(payload)
    return path


def test_one_frame_and_several_give_back_the_bytes(tmp_path):
    one = zstandard.ZstdCompressor(level=3).compress(DATA)
    frames = b"".join(zstandard.ZstdCompressor(level=1).compress(DATA[i:i + 7000]) for i in range(0, len(DATA), 7000))
    for payload in (one, frames):
        with open_zstd(write(tmp_path, payload)) as f:
            assert f.read() == DATA
        with open_zstd(write(tmp_path, payload)) as f:
            assert sum(1 for _ in f) == 5000                 # read line by line, as the loaders do


def test_a_streamed_frame_without_its_size_reads_too(tmp_path):
    """Frames written by a stream (no content size in the header, as `zstd` of a pipe)."""
    with open(tmp_path / "docs.jsonl.zst", "wb") as raw:
        with zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=False) as writer:
            for i in range(0, len(DATA), 1000):
                writer.write(DATA[i:i + 1000])
    with open_zstd(tmp_path / "docs.jsonl.zst") as f:
        assert f.read() == DATA


def test_an_empty_file_is_no_bytes(tmp_path):
    with open_zstd(write(tmp_path, b"")) as f:
        assert f.read() == b""


@pytest.mark.parametrize("cut", [4, 100, -1])
def test_a_truncated_file_raises_rather_than_ending_early(tmp_path, cut):
    payload = zstandard.ZstdCompressor(level=3).compress(DATA)
    with pytest.raises(EOFError, match="ends inside a zstd frame"):
        with open_zstd(write(tmp_path, payload[:cut])) as f:
            f.read()


def test_bytes_that_are_not_zstd_raise(tmp_path):
    with pytest.raises(ERRORS):
        with open_zstd(write(tmp_path, DATA)) as f:
            f.read()
