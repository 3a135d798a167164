"""Document timestamps: a JSONL or CSV field read as a date or a number.

A value is a number (a JSON number or text such as ``1995`` or ``3.5``: a year, a step,
seconds) or an ISO 8601 date (``2021-03-04``, ``2021-03-04T10:20:00Z``, with or without
an offset; an offset is converted to UTC, a date without one is taken as UTC). A
corpus's timestamps are all numbers (``float64``) or all dates (``datetime64[s]``);
:func:`time_array` refuses a mix.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

import numpy as np

from bpetopics.text.errors import CorpusError

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
#: What a bad timestamp is called in a malformed-line message.
EXPECTED = "a date (ISO 8601, e.g. 2021-03-04) or a number"


def parse_time(value):
    """``value`` as a float (a number) or a ``numpy.datetime64`` in seconds (a date);
    None when it is neither (a missing value, an empty or unparseable string)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _NUMBER.fullmatch(text):
        return float(text)
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(timezone.utc).replace(tzinfo=None)
    return np.datetime64(stamp, "s")


def time_array(values, source) -> np.ndarray:
    """Parsed timestamps (from :func:`parse_time`, none of them None) as one array:
    ``float64`` when all are numbers, ``datetime64[s]`` when all are dates; a
    :class:`CorpusError` naming ``source`` when they mix."""
    values = list(values)
    dates = sum(isinstance(v, np.datetime64) for v in values)
    if dates == len(values):
        return np.array(values, dtype="datetime64[s]")
    if dates == 0:
        return np.array(values, dtype=np.float64)
    raise CorpusError(f"the timestamps of {source} mix dates ({dates:,}) and numbers ({len(values) - dates:,}): "
                      "give every document the same kind (--time-field)")


def times_to_json(times) -> list | None:
    """Timestamps as JSON values: ISO strings for dates, numbers for numbers."""
    if times is None:
        return None
    times = np.asarray(times)
    if np.issubdtype(times.dtype, np.datetime64):
        return [str(t) for t in times.astype("datetime64[s]")]
    return [float(t) for t in times]


def times_from_json(values) -> np.ndarray | None:
    """The inverse of :func:`times_to_json`."""
    if values is None:
        return None
    return time_array([parse_time(v) for v in values], "the saved corpus")


def is_datetime(times) -> bool:
    """True for dates (``datetime64``), False for numbers."""
    return np.issubdtype(np.asarray(times).dtype, np.datetime64)
