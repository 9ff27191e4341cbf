"""Writes: increment, increment_once, reset, Batch and apply; strict
counters' refusals and saturation; int64 edges."""

from __future__ import annotations

import pytest

import tally

INT64_MAX = (1 << 63) - 1
Outcome = tally.Outcome


def test_increment_adds_to_one_shard(db):
    db.create_counter("c", shards=4)
    r = db.increment("c", 5)
    assert isinstance(r, tally.IncrementResult)
    assert r.outcome is Outcome.APPLIED and r.applied == 5
    assert 0 <= r.shard < 4
    assert (r.value, r.remaining, r.window_ends_ms) == (0, 0, 0)
    db.increment("c", -2)
    assert db.read_exact("c") == 3


def test_an_affinity_key_picks_a_stable_shard(db):
    db.create_counter("c", shards=16, policy="affinity")
    shards = {db.increment("c", 1, affinity_key="device-7").shard
              for _ in range(5)}
    assert len(shards) == 1
    assert db.increment("c", 1, affinity_key=b"device-7").shard in shards
    with pytest.raises(tally.InvalidArgumentError, match="affinity"):
        db.increment("c", 1)  # the affinity policy needs a key


def test_increment_once_counts_an_event_once(db):
    db.create_counter("c", shards=4)
    first = db.increment_once("c", "evt-1", 3)
    again = db.increment_once("c", b"evt-1", 3)
    other = db.increment_once("c", "evt-1", 4)
    assert first.outcome == "applied" and first.applied == 3
    assert again.outcome is Outcome.DUPLICATE and again.shard == first.shard
    assert again.applied == 3
    assert other.outcome is Outcome.CONFLICT and other.applied == 0
    assert db.read_exact("c") == 3


def test_once_with_an_affinity_key_is_pinned(db):
    db.create_counter("c", shards=8)
    r = db.increment_once("c", "e", 1, affinity_key="edge-1")
    m = db.get_marker("c", "e")
    assert m.pinned and m.shard == r.shard


def test_reset_sets_the_value_once(db):
    db.create_counter("c")
    db.increment("c", 7)
    r = db.reset("c", "reset-1", 2)
    assert r.outcome is Outcome.APPLIED and r.applied == -5
    assert db.read_exact("c") == 2
    assert db.reset("c", "reset-1", 2).outcome is Outcome.DUPLICATE
    assert db.reset("c", "reset-1", 3).outcome is Outcome.CONFLICT
    assert db.reset("c", "reset-2").outcome is Outcome.APPLIED  # value=0
    assert db.read_exact("c") == 0
    assert db.get_marker("c", "reset-1").reset


def test_a_bucketed_write_goes_to_its_event_time(clock_db, clock):
    clock_db.create_counter("c", bucket="minute")
    clock_db.increment("c", 1, event_time_ms=clock.now - 120_000)
    clock_db.increment_once("c", "e", 2, event_time_ms=clock.now - 60_000)
    clock_db.increment("c", 4)
    clock_db.reset("c", "r", 10, event_time_ms=clock.now)
    assert clock_db.read_range("c", clock.now - 120_000,
                               clock.now - 60_000) == 1
    assert clock_db.read_range("c", clock.now - 60_000, clock.now) == 2
    assert clock_db.read_range("c", clock.now, clock.now + 60_000) == 10
    assert clock_db.read_exact("c") == 13


def test_strict_counter_refuses_and_saturates(db):
    db.create_counter("stock", min=0, max=10)
    assert db.increment("stock", 8).remaining == 2
    r = db.increment("stock", 5)
    assert r.outcome is Outcome.REFUSED and r.value == 8
    s = db.increment("stock", 5, saturate=True)
    assert (s.outcome, s.applied, s.value, s.remaining) == (
        Outcome.APPLIED, 2, 10, 0)
    once = db.increment_once("stock", "take", -20, saturate=True)
    assert (once.applied, once.value) == (-10, 0)
    assert db.get_marker("stock", "take").strict


def test_reset_refuses_an_affinity_key_or_saturate_by_signature(db):
    db.create_counter("c")
    with pytest.raises(TypeError):
        db.reset("c", "r", 1, affinity_key="x")
    with pytest.raises(TypeError):
        db.reset("c", "r", 1, saturate=True)


def test_write_errors(db):
    db.create_counter("c")
    db.create_counter("k", keyed=True)
    with pytest.raises(tally.NotFoundError):
        db.increment("missing", 1)
    with pytest.raises(tally.InvalidArgumentError, match="not keyed"):
        db.increment("c", 1, key="x")
    with pytest.raises(tally.InvalidArgumentError):
        db.increment("k", 1)  # a keyed counter needs its key
    with pytest.raises(tally.InvalidArgumentError):
        db.increment_once("c", "", 1)  # an empty event id
    with pytest.raises(tally.InvalidArgumentError):
        db.increment("c", 1, event_time_ms=-1)
    with pytest.raises(tally.InvalidArgumentError):
        db.increment("c", -(1 << 63))  # kMinDelta is INT64_MIN + 1


def test_ints_are_checked_before_c(db):
    db.create_counter("c")
    with pytest.raises(TypeError, match="delta"):
        db.increment("c", 1.0)
    with pytest.raises(TypeError):
        db.increment("c", "1")
    with pytest.raises(TypeError):
        db.increment("c", None)
    with pytest.raises(TypeError):
        db.increment("c", True)
    with pytest.raises(OverflowError, match="delta"):
        db.increment("c", 1 << 63)
    with pytest.raises(OverflowError):
        db.increment_once("c", "e", -(1 << 63) - 1)
    with pytest.raises(OverflowError, match="event_time_ms"):
        db.increment("c", 1, event_time_ms=1 << 64)
    with pytest.raises(TypeError):
        db.increment("c", 1, affinity_key=7)
    assert db.read_exact("c") == 0


def test_an_int64_sum_is_kept_and_read_as_out_of_range(db):
    db.create_counter("c")
    db.increment("c", INT64_MAX)
    db.increment("c", INT64_MAX)
    with pytest.raises(tally.OutOfRangeError, match="int64") as e:
        db.read_exact("c")
    assert e.value.code_name == "OutOfRange"
    db.increment("c", -INT64_MAX)
    assert db.read_exact("c") == INT64_MAX


def test_batch_add_and_add_once_apply_atomically(db):
    db.create_counter("a", shards=4)
    db.create_counter("b")
    batch = tally.Batch()
    assert len(batch) == 0 and not batch
    ret = batch.add("a", 2).add_once("b", "e1", 5).add_once("b", "e1", 5)
    assert ret is batch
    batch.add("a", 1, affinity_key="x", event_time_ms=None, saturate=False)
    batch.add_once("a", "e2", 1, affinity_key="y")
    assert len(batch) == 5 and "5 operations" in repr(batch)
    results = db.apply(batch)
    assert [r.outcome for r in results] == [
        Outcome.APPLIED, Outcome.APPLIED, Outcome.DUPLICATE, Outcome.APPLIED,
        Outcome.APPLIED]
    assert results[2].shard == results[1].shard
    assert db.read_exact("a") == 4 and db.read_exact("b") == 5
    # Applied again: the once-ops are duplicates, the plain ones count.
    again = db.apply(batch)
    assert [r.outcome for r in again][1:3] == [Outcome.DUPLICATE] * 2
    assert db.read_exact("a") == 7
    batch.clear()
    assert len(batch) == 0
    assert db.apply(batch) == []


def test_one_bad_op_refuses_the_whole_batch(db):
    db.create_counter("a")
    batch = tally.Batch().add("a", 1).add("missing", 1)
    with pytest.raises(tally.NotFoundError, match="1"):
        db.apply(batch)
    assert db.read_exact("a") == 0
    db.create_counter("stock", min=0)
    batch = tally.Batch().add("stock", 3).add("stock", -5)
    with pytest.raises(tally.OutOfRangeError, match="batch op 1"):
        db.apply(batch)
    assert db.read_exact("stock") == 0
    batch = tally.Batch().add("a", INT64_MAX).add("a", INT64_MAX)
    with pytest.raises(tally.Error) as e:
        db.apply(batch)
    assert isinstance(e.value, (tally.OutOfRangeError,
                                tally.InvalidArgumentError))
    assert db.read_exact("a") == 0


def test_a_batch_with_a_keyed_op(db):
    db.create_counter("likes", keyed=True)
    batch = tally.Batch().add("likes", 1, key="post-1")
    batch.add_once("likes", "u1", 1, key="post-2")
    db.apply(batch)
    assert db.read_keys("likes", ["post-1", "post-2"]) == [1, 1]


def test_batch_checks_its_arguments(db):
    batch = tally.Batch()
    with pytest.raises(TypeError):
        batch.add("a", 1.5)
    with pytest.raises(TypeError):
        batch.add_once("a", None, 1)
    with pytest.raises(OverflowError):
        batch.add("a", 1 << 63)
    with pytest.raises(TypeError):
        db.apply([("a", 1)])
    assert len(batch) == 0
