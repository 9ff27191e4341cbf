"""Idempotency markers (count, list, iterate, get) and dedupe windows on a
clock the test moves."""

from __future__ import annotations

import pytest

import tally

MINUTE = 60_000


def test_markers_of_a_named_counter(clock_db, clock):
    clock_db.create_counter("c", shards=4)
    for i in range(5):
        clock_db.increment_once("c", f"e{i}", i + 1)
    clock_db.increment("c", 100)  # plain: no marker
    assert clock_db.count_markers("c") == 5
    markers = clock_db.list_markers("c")
    assert [m.event_id for m in markers] == [f"e{i}" for i in range(5)]
    m = markers[2]
    assert isinstance(m, tally.MarkerInfo)
    assert (m.delta, m.key, m.created_at_ms, m.expires_at_ms) == (
        3, "", clock.now, 0)
    assert not (m.pinned or m.strict or m.refused or m.reset)
    assert clock_db.get_marker("c", "e2") == m
    page = clock_db.list_markers("c", limit=2, start_after="e1")
    assert [m.event_id for m in page] == ["e2", "e3"]
    assert [m.event_id for m in clock_db.iter_markers("c", page_size=2)] == [
        f"e{i}" for i in range(5)]
    with pytest.raises(tally.NotFoundError):
        clock_db.get_marker("c", "never")
    with pytest.raises(tally.InvalidArgumentError):
        clock_db.list_markers("c", limit=0)


def test_list_markers_since(clock_db, clock):
    clock_db.create_counter("c")
    clock_db.increment_once("c", "old", 1)
    clock.advance(1000)
    clock_db.increment_once("c", "new", 1)
    since = [m.event_id for m in clock_db.list_markers("c",
                                                       since_ms=clock.now)]
    assert since == ["new"]
    assert [m.event_id for m in clock_db.iter_markers(
        "c", since_ms=clock.now - 1000)] == ["new", "old"]


def test_markers_of_a_keyed_counter(db):
    db.create_counter("k", keyed=True)
    db.increment_once("k", "e1", 1, key="a")
    db.increment_once("k", "e1", 1, key="b")  # one id counts in each key
    db.increment_once("k", "e2", 1, key="b")
    assert db.count_markers("k") == 3  # every key
    assert db.count_markers("k", key="b") == 2
    assert [(m.key, m.event_id) for m in db.list_markers("k", key="b")] == [
        ("b", "e1"), ("b", "e2")]
    assert db.get_marker("k", "e1", key="a").key == "a"
    assert [m.event_id for m in db.iter_markers("k", key="a")] == ["e1"]
    with pytest.raises(tally.InvalidArgumentError):
        db.list_markers("k")  # the key is required


def test_a_dedupe_window_refuses_old_events_and_drops_markers(clock_db,
                                                             clock):
    clock_db.create_counter("c", dedupe_window_ms=10 * MINUTE)
    with pytest.raises(tally.InvalidArgumentError, match="event time"):
        clock_db.increment_once("c", "e", 1)  # a window needs event times
    t0 = clock.now
    first = clock_db.increment_once("c", "e1", 1, event_time_ms=t0)
    assert first.outcome is tally.Outcome.APPLIED
    m = clock_db.get_marker("c", "e1")
    assert m.expires_at_ms == t0 + 10 * MINUTE
    # Within the window a redelivery is a duplicate.
    clock.advance(5 * MINUTE)
    again = clock_db.increment_once("c", "e1", 1, event_time_ms=t0)
    assert again.outcome is tally.Outcome.DUPLICATE
    # An event older than the window is not counted.
    late = clock_db.increment_once("c", "e2", 1,
                                   event_time_ms=clock.now - 11 * MINUTE)
    assert late.outcome is tally.Outcome.OUTSIDE_WINDOW
    assert clock_db.read_exact("c") == 1
    # Past the window the marker no longer counts (not listed)...
    clock.advance(10 * MINUTE)
    assert clock_db.count_markers("c") == 0
    assert clock_db.list_markers("c") == []
    # ...and a late redelivery of the first event is still not counted
    # again: outside the window, or a duplicate of its marker until
    # compaction drops it.
    late_copy = clock_db.increment_once("c", "e1", 1, event_time_ms=t0)
    assert late_copy.outcome in (tally.Outcome.OUTSIDE_WINDOW,
                                 tally.Outcome.DUPLICATE)
    assert clock_db.read_exact("c") == 1
    stats = clock_db.stats()
    assert stats.outside_window == 1 + (late_copy.outcome ==
                                        tally.Outcome.OUTSIDE_WINDOW)
    assert stats.duplicates >= 1


def test_reset_needs_its_event_time_on_a_window(clock_db, clock):
    clock_db.create_counter("c", dedupe_window_ms=MINUTE)
    clock_db.increment_once("c", "e", 5, event_time_ms=clock.now)
    with pytest.raises(tally.InvalidArgumentError):
        clock_db.reset("c", "r", 0)
    old = clock_db.reset("c", "r", 0, event_time_ms=clock.now - 2 * MINUTE)
    assert old.outcome is tally.Outcome.OUTSIDE_WINDOW
    assert clock_db.reset("c", "r", 0,
                          event_time_ms=clock.now).outcome == "applied"
    assert clock_db.read_exact("c") == 0
