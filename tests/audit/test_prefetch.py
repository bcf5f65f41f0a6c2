"""``ingest.streams.prefetch``: items from a background thread, in order, errors where the
consumer reaches them, ``depth`` ahead, and up to ``lead`` ahead before the first is taken
(a Parquet audit's reader decodes while the command still loads numpy and the engine)."""

from __future__ import annotations

import threading
import time

import pytest

from gpuclass.audit.ingest.streams import prefetch


class Counted:
    """Items 0..n-1, counting how many the producer has made (drawn from this)."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.n, self.fail_at, self.made = n, fail_at, 0
        self.lock = threading.Lock()

    def __iter__(self):
        for i in range(self.n):
            if i == self.fail_at:
                raise ValueError(f"item {i} unreadable")
            with self.lock:
                self.made += 1
            yield i


def settled(items: Counted, want: int, timeout: float = 30.0) -> int:
    """The producer's count once it reached ``want`` and went no further for a moment (it
    waits on a full queue); what it reached if it never got to ``want``."""
    end = time.monotonic() + timeout
    while items.made < want and time.monotonic() < end:
        time.sleep(0.005)
    time.sleep(0.2)  # a producer not held back would go on
    return items.made


@pytest.mark.parametrize("depth, lead", [(2, None), (2, 2), (2, 5), (1, 8), (3, 4)])
def test_the_producer_goes_lead_ahead_then_depth(depth, lead):
    """Before the first take, ``lead`` items are queued (and one more made, waiting); once
    ``t`` are taken, the queue holds what is left of the lead or ``depth``, whichever is more."""
    items = Counted(40)
    it = prefetch(items, depth=depth, lead=lead)
    ahead = max(depth, lead or depth)
    assert settled(items, ahead + 1) == ahead + 1
    for t in range(1, ahead + 4):
        assert next(it) == t - 1
        want = t + max(depth, ahead - t) + 1
        assert settled(items, want) == want, t
    assert list(it) == list(range(ahead + 3, 40))


def test_items_in_order_and_an_error_where_the_consumer_reaches_it():
    it = prefetch(Counted(10, fail_at=6), depth=2, lead=8)
    assert [next(it) for _ in range(6)] == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="item 6 unreadable"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def test_closing_stops_a_producer_that_went_ahead():
    items = Counted(1000)
    it = prefetch(items, depth=2, lead=6)
    assert settled(items, 7) == 7
    it.close()
    assert settled(items, 7) == 7  # stopped: it made no more
    with pytest.raises(StopIteration):
        next(it)
