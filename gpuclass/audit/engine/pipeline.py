"""Batches of a device table audited two at a time: one on a worker thread, one here.

The compiled core's pass over a batch runs without the GIL, so with a second core a
worker thread audits every other batch while the calling thread audits the next one and
holds the runs of those before, in the order of the batches.  Each batch is audited alone
(its first row's number is known before), so the answers are those of auditing the
batches one at a time; so is the error raised: the first in the batches' order, whether
a batch's audit or the batches' source raised it.

>>> held = []
>>> feed(lambda batch, fields, errors, row: (row, len(batch)), lambda runs, n: held.append(runs),
...      [([1, 2], None, None), ([], None, None), ([3], None, None), ([4, 5, 6], None, None)])
>>> held
[(0, 2), (2, 1), (3, 3)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["feed"]


def _rows(batch: Any) -> int:
    return batch.num_rows if hasattr(batch, "num_rows") else len(batch)


class _Later(tuple):
    """A batch's audit not yet begun: the worker starts only once a second batch comes (a
    table of one batch starts no thread)."""


def feed(audit: Callable[[Any, Any, Any, int], Any], hold: Callable[[Any, int], None],
         items: Iterable[tuple[Any, Any, Any]], done: Callable[[int], None] | None = None) -> None:
    """``hold(audit(batch, fields, errors, first_row), rows)`` for each ``(batch, fields,
    errors)`` of ``items`` that has rows, in order, every other ``audit`` on a worker
    thread; ``done(rows)`` after each item (an empty one too)."""
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    # (future, runs or error; rows) of each batch not yet held, in order: at most one
    # batch is on the worker and one waits for it
    pending: deque[tuple[Any, int]] = deque()

    def take() -> None:
        job, n = pending.popleft()
        if n:
            if isinstance(job, Exception):
                raise job
            if isinstance(job, _Later):
                job = audit(*job)
            hold(job.result() if isinstance(job, Future) else job, n)
        if done is not None:
            done(n)

    it = iter(items)
    row, turn = 0, 0
    pool = None
    try:
        while True:
            try:
                item = next(it, None)
            except BaseException:
                # the items fail here: the batches before are held first (their errors are
                # raised first, as one batch at a time raises them)
                while pending:
                    take()
                raise
            if item is None:
                break
            batch, fields, errors = item
            n = _rows(batch)
            if n and pending and isinstance(pending[0][0], _Later):  # a second batch: begin the first
                pool = ThreadPoolExecutor(1, thread_name_prefix="gpuclass-audit")
                pending[0] = (pool.submit(audit, *pending[0][0]), pending[0][1])
            if not n:
                pending.append((None, 0))
            elif turn:  # here, while the worker runs
                try:
                    pending.append((audit(batch, fields, errors, row), n))
                except Exception as exc:  # raised when its turn comes
                    pending.append((exc, n))
            elif pool is None:
                pending.append((_Later((batch, fields, errors, row)), n))
            else:
                pending.append((pool.submit(audit, batch, fields, errors, row), n))
            row += n
            turn ^= bool(n)
            while len(pending) > 2 or (pending and not isinstance(pending[0][0], _Later)
                                       and not (isinstance(pending[0][0], Future) and not pending[0][0].done())):
                take()
        while pending:
            take()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
