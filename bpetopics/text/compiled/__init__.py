"""The text package's only numba code: the compiled reads of sharded corpora's rows."""
