"""core/atomics.py: claims by two threads at once are each taken exactly once, and a
release store reaches a thread waiting with acquire loads."""

import threading

import numpy as np
import pytest

from bpetopics.models.poissbpe.compiled import kernels

pytestmark = pytest.mark.skipif(not kernels.available("cpu"), reason="numba is not installed")


def _compiled():
    from numba import njit

    from bpetopics.models.poissbpe.compiled.atomics import cpu_relax, fetch_add, load_acquire, store_release

    @njit(nogil=True)
    def claim_all(counter, n, taken):
        """Claim tickets until n are gone; mark each ticket this thread got."""
        count = 0
        while True:
            ticket = fetch_add(counter, 0, 1)
            if ticket >= n:
                return count
            taken[ticket] += 1
            count += 1

    @njit(nogil=True)
    def wait_then_read(flag, payload):
        while load_acquire(flag, 0) == 0:
            cpu_relax()
        return payload[0]

    @njit(nogil=True)
    def publish(flag, payload, value):
        payload[0] = value
        store_release(flag, 0, 1)

    return claim_all, wait_then_read, publish


def test_two_threads_claiming_at_once_take_every_ticket_exactly_once():
    claim_all, _, _ = _compiled()
    n = 400_000
    counter = np.zeros(1, dtype=np.int64)
    taken = [np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)]
    claim_all(np.zeros(1, dtype=np.int64), 1, np.zeros(1, dtype=np.int64))          # compile first
    counts = [0, 0]

    def work(i):
        counts[i] = claim_all(counter, n, taken[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert np.array_equal(taken[0] + taken[1], np.ones(n, dtype=np.int64))          # none lost, none twice
    assert sum(counts) == n and counter[0] == n + 2                                  # one failed claim each


def test_a_released_value_reaches_the_waiting_thread():
    _, wait_then_read, publish = _compiled()
    flag, payload = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    seen = []
    waiter = threading.Thread(target=lambda: seen.append(wait_then_read(flag, payload)))
    waiter.start()
    publish(flag, payload, 42)
    waiter.join(timeout=30)
    assert not waiter.is_alive() and seen == [42]


def test_atomics_refuse_arrays_of_another_type():
    from numba import njit
    from numba.core.errors import TypingError

    from bpetopics.models.poissbpe.compiled.atomics import fetch_add

    @njit
    def add(a):
        return fetch_add(a, 0, 1)

    with pytest.raises(TypingError):
        add(np.zeros(2, dtype=np.int32))
