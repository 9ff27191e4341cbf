"""The outbox (read, acknowledge, status), the database id, and
sync_outbox from an edge database to a hub, exactly once."""

from __future__ import annotations

import re

import pytest

import tally


@pytest.fixture
def edge(tmp_path):
    with tally.open(tmp_path / "edge", rollup_interval_ms=0) as db:
        db.create_counter("views", outbox=True)
        db.create_counter("likes", outbox=True, keyed=True)
        yield db


@pytest.fixture
def hub(tmp_path):
    with tally.open(tmp_path / "hub", rollup_interval_ms=0) as db:
        yield db


def test_read_and_ack_the_outbox(edge):
    assert edge.outbox_status() == tally.OutboxStatus(0, 0, 0, 0, 0)
    edge.increment("views", 3)
    edge.increment_once("views", "e1", 4)
    edge.increment("likes", 2, key="post-1")
    entries = edge.read_outbox()
    assert [e.seq for e in entries] == [1, 2, 3]
    e0, e1, e2 = entries
    assert isinstance(e0, tally.OutboxEntry)
    assert (e0.counter, e0.key, e0.event_id, e0.delta) == ("views", "", "",
                                                          3)
    assert (e1.event_id, e1.delta) == ("e1", 4)
    assert (e2.counter, e2.key) == ("likes", "post-1")
    assert re.fullmatch(r"[0-9a-f]{32}", e0.origin)
    assert [e.origin_seq for e in entries] == [1, 2, 3]
    assert e0.time_ms > 0
    assert [e.seq for e in edge.read_outbox(after_seq=1, limit=1)] == [2]
    status = edge.outbox_status()
    assert isinstance(status, tally.OutboxStatus)
    assert (status.entries, status.acked_through, status.last_seq) == (3, 0,
                                                                      3)
    edge.ack_outbox(2)
    edge.ack_outbox(2)  # idempotent
    assert [e.seq for e in edge.read_outbox()] == [3]
    assert edge.outbox_status().acked_through == 2
    with pytest.raises(tally.InvalidArgumentError, match="settled"):
        edge.ack_outbox(10)
    with pytest.raises(tally.InvalidArgumentError):
        edge.read_outbox(limit=0)
    with pytest.raises(OverflowError):
        edge.ack_outbox(-1)


def test_database_id_is_stable(edge, hub, tmp_path):
    ident = edge.database_id()
    assert re.fullmatch(r"[0-9a-f]{32}", ident)
    assert edge.database_id() == ident
    assert hub.database_id() != ident


def test_sync_outbox_ships_each_entry_once(edge, hub):
    edge.increment("views", 3)
    edge.increment_once("views", "e1", 4)
    edge.increment("likes", 2, key="post-1")
    with pytest.raises(tally.NotFoundError, match="views"):
        edge.sync_outbox(hub)  # the hub lacks the counters
    hub.create_counter("views", shards=4)
    hub.create_counter("likes", keyed=True)
    report = edge.sync_outbox(hub, batch_entries=2)
    assert isinstance(report, tally.SyncReport)
    assert (report.entries, report.applied, report.duplicates,
            report.batches, report.acked_through) == (3, 3, 0, 2, 3)
    assert hub.read_exact("views") == 7
    assert hub.read_keys("likes", ["post-1"]) == [2]
    assert edge.outbox_status().entries == 0
    again = edge.sync_outbox(hub)
    assert (again.entries, again.applied) == (0, 0)
    edge.increment("views", 1)
    edge.sync_outbox(hub, shard_by_edge=False)
    assert hub.read_exact("views") == 8
    with pytest.raises(TypeError):
        edge.sync_outbox("hub")


def test_a_hub_holding_an_entry_with_another_delta_is_corruption(edge, hub):
    edge.increment("views", 3)
    hub.create_counter("views")
    hub.create_counter("likes", keyed=True)
    e = edge.read_outbox()[0]
    hub.increment_once("views", f"{e.origin}/{e.origin_seq}", 999)
    with pytest.raises(tally.CorruptionError, match="another delta") as err:
        edge.sync_outbox(hub)
    assert err.value.code_name == "Corruption"
    assert edge.outbox_status().entries == 1  # not acknowledged


def test_sync_outbox_with_a_closed_hub_is_closed_error(edge, hub):
    hub.close()
    with pytest.raises(tally.ClosedError):
        edge.sync_outbox(hub)
