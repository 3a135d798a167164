"""A planted corpus whose topic shifts over time: documents about space grow from a
tenth to nine tenths of each month's documents over a year, the rest about hockey."""

from __future__ import annotations

import json

import numpy as np

SPACE = ("orbit shuttle launch rocket nasa planet moon satellite astronaut telescope mission lunar "
         "spacecraft galaxy comet").split()
HOCKEY = ("hockey puck goalie skate league playoff team season score coach player rink penalty "
          "stick arena").split()
MONTHS = 12


def planted_records(n_docs: int = 240, seed: int = 0) -> list[dict]:
    """Records ``{"id", "text", "date", "group"}``: month m's documents are about space
    with probability 0.1 + 0.8 m / 11 (``group`` says which), dated 2020-(m+1)-DD."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n_docs):
        month = i * MONTHS // n_docs
        space = rng.random() < 0.1 + 0.8 * month / (MONTHS - 1)
        words = rng.choice(SPACE if space else HOCKEY, size=25)
        records.append({"id": f"d{i:04d}", "text": " ".join(words), "group": "space" if space else "hockey",
                        "date": f"2020-{month + 1:02d}-{1 + i % 28:02d}"})
    return records


def write_jsonl(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
