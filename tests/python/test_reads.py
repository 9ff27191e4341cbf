"""Reads: exact, ranges, shards, roll-ups, quotas, and keyed counters'
keys (read_keys, list_keys, iter_keys, top_keys, delete_key)."""

from __future__ import annotations

import pytest

import tally

MINUTE = 60_000


def test_read_exact_and_shard_counts(db):
    db.create_counter("c", shards=4)
    for i in range(20):
        db.increment("c", 1, affinity_key=f"k{i}")
    counts = db.shard_counts("c")
    assert len(counts) == 4 and sum(counts) == 20
    assert db.read_exact("c") == 20


def test_shard_counts_of_many_shards(db):
    # More shards than the first buffer holds: the binding asks again.
    db.create_counter("c", shards=300, policy="affinity")
    for i in range(50):
        db.increment("c", i, affinity_key=f"device-{i}")
    counts = db.shard_counts("c")
    assert len(counts) == 300 and sum(counts) == sum(range(50))


def test_read_errors(db):
    with pytest.raises(tally.NotFoundError):
        db.read_exact("missing")
    with pytest.raises(tally.NotFoundError):
        db.shard_counts("missing")
    db.create_counter("c")
    with pytest.raises(tally.InvalidArgumentError, match="bucket"):
        db.read_range("c", 0, 1000)  # not a bucketed counter
    db.create_counter("k", keyed=True)
    with pytest.raises(tally.InvalidArgumentError):
        db.read_exact("k")  # needs a key


def test_read_range_of_a_bucketed_counter(clock_db, clock):
    clock_db.create_counter("c", bucket="minute", retention_ms=10 * MINUTE)
    t0 = clock.now
    clock_db.increment("c", 1)
    clock.advance(MINUTE)
    clock_db.increment("c", 2)
    clock.advance(MINUTE)
    clock_db.increment("c", 4)
    assert clock_db.read_range("c", t0, t0 + MINUTE) == 1
    assert clock_db.read_range("c", t0, t0 + 2 * MINUTE) == 3
    assert clock_db.read_range("c", t0 + MINUTE, t0 + 3 * MINUTE) == 6
    assert clock_db.read_exact("c") == 7
    with pytest.raises(tally.InvalidArgumentError):
        clock_db.read_range("c", t0 + MINUTE, t0)  # from >= to
    # Past retention, buckets read as empty.
    clock.advance(20 * MINUTE)
    assert clock_db.read_exact("c") == 0


def test_read_cached_and_rollup_now(clock_db, clock):
    clock_db.create_counter("a")
    clock_db.create_counter("b")
    clock_db.increment("a", 5)
    first = clock_db.read_cached("a")  # rolled up at first read
    assert isinstance(first, tally.CachedValue)
    assert (first.value, first.as_of_ms, first.lag_ms) == (5, clock.now, 0)
    clock_db.increment("a", 1)
    clock.advance(1000)
    stale = clock_db.read_cached("a")
    assert (stale.value, stale.lag_ms) == (5, 1000)
    assert stale.lag_increments == 1
    clock_db.rollup_now("a")
    assert clock_db.read_cached("a").value == 6
    clock_db.increment("b", 3)
    clock_db.rollup_now()  # every counter
    assert clock_db.read_cached("b").value == 3
    with pytest.raises(tally.NotFoundError):
        clock_db.rollup_now("missing")


def test_read_cached_of_a_new_reader_is_not_known(db_path):
    with tally.open(db_path, rollup_interval_ms=0) as w:
        w.create_counter("c")
        w.increment("c", 2)
        w.rollup_now()
    with tally.open(db_path, rollup_interval_ms=0) as w:
        cached = w.read_cached("c")
        assert cached.value == 2
        assert cached.lag_increments is None  # rolled up by another process


def test_read_quota_of_a_fixed_window(clock_db, clock):
    clock_db.create_counter("api", bucket="minute", min=0, max=3)
    for _ in range(3):
        assert clock_db.increment("api", 1).outcome is tally.Outcome.APPLIED
    refused = clock_db.increment("api", 1)
    assert refused.outcome is tally.Outcome.REFUSED
    assert refused.window_ends_ms == clock.now + MINUTE
    q = clock_db.read_quota("api")
    assert isinstance(q, tally.QuotaState)
    assert (q.used, q.remaining, q.window_start_ms, q.window_ends_ms,
            q.previous_used) == (3, 0, clock.now, clock.now + MINUTE, 0)
    clock.advance(MINUTE)
    assert clock_db.read_quota("api").remaining == 3
    assert clock_db.increment("api", 1).outcome is tally.Outcome.APPLIED
    clock_db.create_counter("plain")
    with pytest.raises(tally.InvalidArgumentError, match="quota"):
        clock_db.read_quota("plain")


def test_read_quota_of_a_sliding_window(clock_db, clock):
    clock_db.create_counter("api", bucket="minute", min=0, max=10,
                            sliding=True, keyed=True)
    for _ in range(10):
        clock_db.increment("api", 1, key="user-1")
    clock.advance(MINUTE + MINUTE // 2)  # half way into the next window
    q = clock_db.read_quota("api", key="user-1")
    assert q.previous_used == 10 and q.used == 0
    assert q.remaining == 5  # 10 - 10 * (1/2)


@pytest.fixture
def likes(db):
    db.create_counter("likes", keyed=True, shards=2)
    for i, key in enumerate(["post-a", "post-b", "post-c", "user-x",
                             "user-y"]):
        db.increment("likes", i + 1, key=key)
    return db


def test_read_keys(likes):
    assert likes.read_keys("likes", ["post-c", b"post-a", "nothing",
                                     "post-c"]) == [3, 1, 0, 3]
    with pytest.raises(TypeError):
        likes.read_keys("likes", "post-a")  # one str is not a sequence
    with pytest.raises(TypeError):
        likes.read_keys("likes", [1])
    with pytest.raises(tally.InvalidArgumentError):
        likes.read_keys("likes", [])
    with pytest.raises(tally.InvalidArgumentError, match="1"):
        likes.read_keys("likes", ["ok", ""])
    with pytest.raises(tally.NotFoundError):
        likes.read_keys("missing", ["a"])


def test_list_keys_pages_and_prefixes(likes):
    page = likes.list_keys("likes", limit=2)
    assert [(kv.key, kv.value) for kv in page] == [("post-a", 1),
                                                   ("post-b", 2)]
    assert all(isinstance(kv, tally.KeyValue) and not kv.out_of_range
               for kv in page)
    page2 = likes.list_keys("likes", start_after=page[-1].key, limit=2)
    assert [kv.key for kv in page2] == ["post-c", "user-x"]
    users = likes.list_keys("likes", prefix="user-")
    assert [kv.key for kv in users] == ["user-x", "user-y"]
    with pytest.raises(tally.InvalidArgumentError):
        likes.list_keys("likes", limit=0)
    with pytest.raises(OverflowError):
        likes.list_keys("likes", limit=-1)


def test_iter_keys_walks_every_page(likes):
    assert [kv.key for kv in likes.iter_keys("likes", page_size=2)] == [
        "post-a", "post-b", "post-c", "user-x", "user-y"]
    assert [kv.value for kv in likes.iter_keys("likes", prefix="post-")] == [
        1, 2, 3]
    for i in range(30):
        likes.increment("likes", 1, key=f"z-{i:03}")
    keys = [kv.key for kv in likes.iter_keys("likes", prefix="z-",
                                             page_size=7)]
    assert keys == [f"z-{i:03}" for i in range(30)]


def test_top_keys_from_the_rollup_and_exact(likes):
    top = likes.top_keys("likes", 2)
    assert isinstance(top, tally.TopKeysResult)
    assert [(kv.key, kv.value) for kv in top.keys] == [("user-y", 5),
                                                       ("user-x", 4)]
    assert (top.key_count, top.total, top.out_of_range_keys,
            top.first_out_of_range_key) == (5, 15, 0, "")
    assert not top.exact and top.as_of_ms > 0 and top.lag_ms >= 0
    likes.increment("likes", 10, key="post-a")
    assert likes.top_keys("likes", 1).keys[0].key == "user-y"  # the roll-up
    exact = likes.top_keys("likes", 1, exact=True)
    assert exact.exact and exact.keys[0] == tally.KeyValue("post-a", 11)
    with pytest.raises(tally.InvalidArgumentError):
        likes.top_keys("likes", 0)
    likes.create_counter("plain")
    with pytest.raises(tally.InvalidArgumentError, match="not keyed"):
        likes.top_keys("plain")


def test_delete_key(likes):
    likes.increment_once("likes", "ev", 1, key="post-a")
    likes.delete_key("likes", "post-a")
    assert likes.read_keys("likes", ["post-a"]) == [0]
    assert "post-a" not in [kv.key for kv in likes.iter_keys("likes")]
    # A redelivered once-increment counts again after a delete.
    r = likes.increment_once("likes", "ev", 1, key="post-a")
    assert r.outcome is tally.Outcome.APPLIED
    likes.delete_key("likes", "never-there")  # OK: nothing to delete
    with pytest.raises(tally.InvalidArgumentError):
        likes.delete_key("likes", "")


def test_keys_round_trip_as_text(db):
    db.create_counter("k", keyed=True)
    db.increment("k", 1, key="\u00fcber")
    db.increment("k", 1, key="\u65e5\u672c")
    keys = [kv.key for kv in db.iter_keys("k")]
    assert keys == sorted(keys, key=lambda k: k.encode())
    assert set(keys) == {"\u00fcber", "\u65e5\u672c"}
    assert db.read_keys("k", keys) == [1, 1]
