#!/usr/bin/env python3
"""The order counter of docs/embedding.md, in Python: a pool of workers
receives "order accepted" events at least once (each of 40 orders is
delivered twice, the copies to different workers) and counts each order
once, with its amount in the same atomic write. The counter ends at 40,
with 40 markers, and the revenue is the sum of the 40 amounts.

Run: python3 orders.py DB_DIR (TALLY_LIBRARY names libtally.so when the
loader does not find it)."""

import sys
from concurrent.futures import ThreadPoolExecutor

import tally

ORDERS = 40


def amount_cents(order: int) -> int:
    return 1000 + 25 * order


def deliver(db: tally.Db, order: int) -> None:
    """One delivery: the order's count and its amount, once, in one write."""
    event_id = "ORDER_ACCEPTED:ord-%04d" % order
    batch = tally.Batch()
    batch.add_once("orders-today", event_id, 1)
    batch.add_once("revenue-cents", event_id, amount_cents(order))
    db.apply(batch)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: orders.py DB_DIR", file=sys.stderr)
        return 2
    with tally.open(sys.argv[1]) as db:
        for name in ("orders-today", "revenue-cents"):
            try:
                db.create_counter(name, shards=10)
            except tally.AlreadyExistsError:
                pass  # a second run
        deliveries = [order for order in range(ORDERS)] * 2
        with ThreadPoolExecutor(max_workers=4) as pool:
            for done in pool.map(lambda o: deliver(db, o), deliveries):
                pass
        orders = db.read_exact("orders-today")
        revenue = db.read_exact("revenue-cents")
        markers = db.count_markers("orders-today")
        shards = db.shard_counts("orders-today")
    print("orders %d, markers %d, revenue %d cents; shards: %s"
          % (orders, markers, revenue, " ".join(map(str, shards))))
    expected = sum(amount_cents(o) for o in range(ORDERS))
    if (orders, markers, revenue) != (ORDERS, ORDERS, expected):
        print("orders.py: WRONG (want 40, 40, %d)" % expected, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
