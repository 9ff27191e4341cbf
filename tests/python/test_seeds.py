"""The seeds' check: a worker pool receives 40 order events, each delivered
twice, and counts each once with `apply` of a batch holding an `add_once`
on "orders" (delta 1) and one on "revenue_cents" (the amount)."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor

import tally


def test_forty_orders_delivered_twice_count_once(db):
    db.create_counter("orders", shards=4)
    db.create_counter("revenue_cents", shards=4)
    orders = [(f"order-{i:03}", 100 + 37 * i) for i in range(40)]
    deliveries = orders * 2
    random.Random(7).shuffle(deliveries)
    start = threading.Barrier(8)

    def handle(event):
        order_id, amount = event
        batch = tally.Batch()
        batch.add_once("orders", order_id, 1)
        batch.add_once("revenue_cents", order_id, amount)
        return db.apply(batch)

    def worker(events):
        start.wait()  # all eight run at once
        return [handle(e) for e in events]

    chunks = [deliveries[i::8] for i in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = [r for rs in pool.map(worker, chunks) for r in rs]

    assert db.read_exact("orders") == 40
    assert db.read_exact("revenue_cents") == sum(a for _, a in orders)
    assert db.count_markers("orders") == 40
    assert db.count_markers("revenue_cents") == 40
    # Each delivery's two ops share one outcome: the first copy counts,
    # the second is a duplicate of it.
    outcomes = [tuple(r.outcome for r in results) for results in answers]
    applied = (tally.Outcome.APPLIED, tally.Outcome.APPLIED)
    duplicate = (tally.Outcome.DUPLICATE, tally.Outcome.DUPLICATE)
    assert outcomes.count(applied) == 40
    assert outcomes.count(duplicate) == 40
    markers = {m.event_id: m.delta for m in db.iter_markers("revenue_cents")}
    assert markers == dict(orders)
    assert db.verify().ok
