"""The catalog (create, describe, list, delete counters) and how names are
passed: str or bytes, checked types, ints that do not fit."""

from __future__ import annotations

import pytest

import tally


def test_create_describe_list_delete(db):
    db.create_counter("orders", shards=8)
    info = db.describe_counter("orders")
    assert info == db.list_counters()[0]
    assert (info.name, info.shards, info.policy) == ("orders", 8,
                                                     tally.Policy.RANDOM)
    assert info.id >= 1 and info.schema_version >= 1
    assert info.created_at_ms > 0
    assert info.bucket is None and info.min is None and info.max is None
    assert not (info.outbox or info.keyed or info.sliding)
    assert not info.has_plain_increments and not info.strict
    db.increment("orders", 1)
    assert db.describe_counter("orders").has_plain_increments
    db.delete_counter("orders")
    assert db.list_counters() == []
    with pytest.raises(tally.NotFoundError, match="orders"):
        db.describe_counter("orders")
    with pytest.raises(tally.NotFoundError):
        db.delete_counter("orders")


def test_every_spec_field_round_trips(db):
    db.create_counter("a", shards=3, policy="affinity", dedupe_window_ms=60_000,
                      bucket="hour", retention_ms=86_400_000, outbox=True,
                      keyed=True)
    db.create_counter("q", bucket=tally.Bucket.MINUTE, min=0, max=10,
                      sliding=True)
    db.create_counter("s", min=-5, max=5)
    a, q, s = db.list_counters()  # ordered by name
    assert (a.name, a.shards, a.policy, a.dedupe_window_ms, a.bucket,
            a.retention_ms, a.outbox, a.keyed) == (
        "a", 3, tally.Policy.AFFINITY, 60_000, tally.Bucket.HOUR,
        86_400_000, True, True)
    assert a.policy == "affinity" and a.bucket == "hour"
    assert (q.bucket, q.min, q.max, q.sliding, q.strict) == (
        tally.Bucket.MINUTE, 0, 10, True, True)
    assert (s.min, s.max, s.bucket, s.sliding) == (-5, 5, None, False)


def test_a_taken_name_is_already_exists(db):
    db.create_counter("c")
    with pytest.raises(tally.AlreadyExistsError, match="already exists") as e:
        db.create_counter("c")
    assert (e.value.code, e.value.code_name) == (7, "AlreadyExists")


@pytest.mark.parametrize("kwargs, text", [
    ({"shards": 0}, "shard count 0"),
    ({"shards": 5000}, "4096"),
    ({"dedupe_window_ms": -1}, "dedupe"),
    ({"min": 1}, "min"),
    ({"max": -1}, "max"),
    ({"sliding": True}, "sliding"),
])
def test_a_bad_spec_is_invalid_argument(db, kwargs, text):
    with pytest.raises(tally.InvalidArgumentError, match=text):
        db.create_counter("c", **kwargs)
    assert db.list_counters() == []


def test_a_bad_name_is_invalid_argument(db):
    with pytest.raises(tally.InvalidArgumentError):
        db.create_counter("")
    with pytest.raises(tally.InvalidArgumentError):
        db.create_counter("x" * 129)
    with pytest.raises(tally.InvalidArgumentError):
        db.create_counter("tab\there")
    with pytest.raises(tally.InvalidArgumentError):
        db.create_counter(b"\xff\xfe")  # not UTF-8


def test_str_and_bytes_name_the_same_counter(db):
    db.create_counter("caf\u00e9")
    db.increment(b"caf\xc3\xa9", 2)
    db.increment(bytearray(b"caf\xc3\xa9"), 3)
    assert db.read_exact("caf\u00e9") == 5
    assert db.describe_counter(b"caf\xc3\xa9").name == "caf\u00e9"
    assert db.list_counters()[0].name == "caf\u00e9"


def test_a_name_of_another_type_is_type_error(db):
    for bad in (None, 5, ["c"]):
        with pytest.raises(TypeError):
            db.create_counter(bad)
        with pytest.raises(TypeError):
            db.read_exact(bad)


@pytest.mark.parametrize("kwargs, exc", [
    ({"policy": "sticky"}, ValueError),
    ({"bucket": "week"}, ValueError),
    ({"policy": 1}, TypeError),
    ({"shards": 2.0}, TypeError),
    ({"shards": True}, TypeError),
    ({"shards": -1}, OverflowError),
    ({"shards": 1 << 32}, OverflowError),
    ({"min": 1 << 63}, OverflowError),
    ({"retention_ms": -(1 << 63) - 1}, OverflowError),
])
def test_python_side_checks_come_before_c(db, kwargs, exc):
    with pytest.raises(exc):
        db.create_counter("c", **kwargs)
    assert db.list_counters() == []


def test_a_deleted_name_starts_again_from_zero(db):
    db.create_counter("c")
    first = db.describe_counter("c").id
    db.increment_once("c", "e", 4)
    db.delete_counter("c")
    db.create_counter("c")
    assert db.describe_counter("c").id > first
    assert db.read_exact("c") == 0
    assert db.increment_once("c", "e", 4).outcome == tally.Outcome.APPLIED
