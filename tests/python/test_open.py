"""Opening and closing: options, the context manager, close() from any
thread, read-only databases, Busy, and the clock callable."""

from __future__ import annotations

import gc
import logging
import threading

import pytest

import tally
from conftest import FakeClock


def test_open_creates_and_the_context_manager_closes(db_path):
    with tally.open(db_path) as db:
        assert isinstance(db, tally.Db)
        assert db.path == db_path
        assert not db.closed
        assert "open" in repr(db)
        db.create_counter("c")
    assert db.closed
    assert "closed" in repr(db)
    # Closed for good: reopening finds the counter.
    with tally.open(db_path) as db2:
        assert [c.name for c in db2.list_counters()] == ["c"]


def test_open_takes_a_path_object_and_bytes(tmp_path):
    with tally.open(tmp_path / "a") as db:
        assert db.path == str(tmp_path / "a")
    with tally.open(str(tmp_path / "b").encode()) as db:
        assert db.path == str(tmp_path / "b")


def test_close_is_idempotent_and_calls_after_it_raise(db):
    db.create_counter("c")
    db.close()
    db.close()
    with pytest.raises(tally.ClosedError, match="closed") as e:
        db.read_exact("c")
    assert isinstance(e.value, tally.Error)
    assert e.value.code == tally.InvalidArgumentError.code
    for call in (lambda: db.increment("c", 1), db.list_counters, db.verify,
                 db.stats, lambda: db.apply(tally.Batch()),
                 lambda: tally.create_backup(db, "/nonexistent")):
        with pytest.raises(tally.ClosedError):
            call()


def test_a_db_cannot_be_constructed_directly():
    with pytest.raises(TypeError, match="tally.open"):
        tally.Db()


def test_every_option_is_passed(db_path, clock):
    with tally.open(db_path, create_if_missing=True, read_only=False,
                    sync=True, reads=tally.Reads.ALL,
                    block_cache_bytes=8 << 20, write_buffer_bytes=1 << 20,
                    max_wal_bytes=4 << 20, rollup_interval_ms=0,
                    group_commit_max_delay_us=100, max_pending_operands=64,
                    event_lock_stripes=1024,
                    stats_publish_interval_ms=1000,
                    expiry_sweep_seconds=86400,
                    outbox_max_entries=1000000,
                    group_commit_max_bytes=1048576,
                    group_commit_max_ops=16384,
                    salvage_wal=False, clock=clock) as db:
        db.create_counter("c")
        db.increment("c", 1)
        # sync=True goes through tally's group commit.
        assert db.stats().group_commits >= 1
        assert db.describe_counter("c").created_at_ms == clock.now


@pytest.mark.parametrize("option, value, text", [
    ("block_cache_bytes", 5, "block_cache_bytes 5"),
    ("write_buffer_bytes", 1, "write_buffer_bytes 1"),
    ("max_wal_bytes", 1, "max_wal_bytes 1"),
    ("rollup_interval_ms", 86_400_001, "rollup_interval_ms"),
    ("group_commit_max_delay_us", 100_001, "group_commit_max_delay_us"),
    ("reads", 16, "reads"),
    ("max_pending_operands", 65537, "max_pending_operands"),
    ("event_lock_stripes", 0, "event_lock_stripes"),
    ("stats_publish_interval_ms", 50, "stats_publish_interval_ms"),
    ("expiry_sweep_seconds", 1, "expiry_sweep_seconds"),
    ("outbox_max_entries", 0, "outbox_max_entries"),
    ("group_commit_max_bytes", 0, "group_commit_max_bytes"),
    ("group_commit_max_ops", 0, "group_commit_max_ops"),
])
def test_an_option_out_of_its_range_is_invalid_argument(db_path, option,
                                                        value, text):
    with pytest.raises(tally.InvalidArgumentError, match=text) as e:
        tally.open(db_path, **{option: value})
    assert e.value.code_name == "InvalidArgument"


@pytest.mark.parametrize("option, value", [
    ("rollup_interval_ms", 1 << 32),
    ("group_commit_max_delay_us", -1),
    ("block_cache_bytes", -1),
    ("max_wal_bytes", 1 << 64),
])
def test_an_option_beyond_its_c_type_is_overflow_not_wrapped(db_path, option,
                                                             value):
    with pytest.raises(OverflowError, match=option):
        tally.open(db_path, **{option: value})


@pytest.mark.parametrize("option, value", [
    ("rollup_interval_ms", 1.5), ("block_cache_bytes", "1"),
    ("reads", None), ("clock", 5)])
def test_an_option_of_the_wrong_type_is_type_error(db_path, option, value):
    with pytest.raises(TypeError):
        tally.open(db_path, **{option: value})


def test_a_bad_path_is_refused(tmp_path):
    with pytest.raises(TypeError):
        tally.open(None)
    with pytest.raises(ValueError, match="NUL"):
        tally.open(str(tmp_path / "a\0b"))
    with pytest.raises(tally.InvalidArgumentError, match="empty"):
        tally.open("")


def test_create_if_missing_false_is_not_found(tmp_path):
    with pytest.raises(tally.NotFoundError, match="create_if_missing"):
        tally.open(tmp_path / "none", create_if_missing=False)


def test_a_redis_target_opens_the_cluster_backend():
    # Nothing listens on port 1: the cluster backend was chosen and names
    # the node it could not reach.
    with pytest.raises(tally.TallyIOError, match="127.0.0.1:1"):
        tally.open("redis://127.0.0.1:1")
    with pytest.raises(tally.NotSupportedError, match="TLS"):
        tally.open("rediss://127.0.0.1:1")


def test_a_file_where_a_directory_is_needed_is_io_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(tally.TallyIOError, match="Not a directory") as e:
        tally.open(tmp_path / "file" / "db")
    assert e.value.code_name == "IOError"


def test_a_second_writer_is_busy(db, db_path):
    with pytest.raises(tally.BusyError, match="in use") as e:
        tally.open(db_path)
    assert db_path in str(e.value)
    assert e.value.code == 6


def test_read_only_reads_and_refuses_writes(db_path):
    with tally.open(db_path) as w:
        w.create_counter("c")
        w.increment("c", 5)
        # A reader beside the writer, catching up with refresh().
        with tally.open(db_path, read_only=True) as r:
            assert r.read_exact("c") == 5
            w.increment("c", 2)
            r.refresh()
            assert r.read_exact("c") == 7
            with pytest.raises(tally.NotSupportedError, match="read-only"):
                r.increment("c", 1)
            with pytest.raises(tally.NotSupportedError):
                r.rollup_now()
        w.refresh()  # a writer is always current: nothing to do


def test_reads_limits_what_a_read_only_db_reads(db_path):
    with tally.open(db_path) as w:
        w.create_counter("c")
        w.increment_once("c", "e", 1)
    with tally.open(db_path, read_only=True,
                    reads=tally.Reads.VALUES) as r:
        assert r.read_exact("c") == 1
        with pytest.raises(tally.NotSupportedError, match="kReadMarkers"):
            r.count_markers("c")
    with tally.open(db_path, read_only=True,
                    reads=tally.Reads.VALUES | tally.Reads.MARKERS) as r:
        assert r.count_markers("c") == 1
    with pytest.raises(tally.InvalidArgumentError, match="a writer reads all"):
        tally.open(db_path, reads=tally.Reads.VALUES)


def test_garbage_collection_closes_the_database(db_path):
    db = tally.open(db_path)
    db.create_counter("c")
    del db
    gc.collect()
    with tally.open(db_path) as again:  # not Busy: the first was closed
        assert again.describe_counter("c").name == "c"


def test_close_waits_for_calls_in_flight_on_other_threads(db):
    db.create_counter("c", shards=4)
    start = threading.Barrier(5)
    outcomes = []
    lock = threading.Lock()

    def worker():
        start.wait()
        done = 0
        try:
            while True:
                db.increment("c", 1)
                done += 1
        except tally.ClosedError:
            with lock:
                outcomes.append(done)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    start.wait()
    while db.stats().applied < 200:  # let them run a while
        pass
    db.close()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive()
    assert len(outcomes) == 4 and sum(outcomes) >= 200


def test_the_clock_drives_the_engine_time(db_path):
    clock = FakeClock()
    with tally.open(db_path, clock=clock, rollup_interval_ms=0) as db:
        db.create_counter("a")
        clock.advance(60_000)
        db.create_counter("b")
        assert db.describe_counter("a").created_at_ms == clock.now - 60_000
        assert db.describe_counter("b").created_at_ms == clock.now


def test_a_clock_that_raises_never_reaches_c(db_path, caplog):
    state = {"now": 1_700_000_000_000, "fail": False}

    def clock():
        if state["fail"]:
            raise RuntimeError("clock broke")
        return state["now"]

    with caplog.at_level(logging.ERROR, logger="tally"):
        with tally.open(db_path, clock=clock, rollup_interval_ms=0) as db:
            db.create_counter("a")
            state["fail"] = True
            db.create_counter("b")  # the clock raises: its last value
            db.create_counter("c")
            state["fail"] = False
            assert db.describe_counter("b").created_at_ms == state["now"]
            assert db.describe_counter("c").created_at_ms == state["now"]
    failures = [r for r in caplog.records if "clock" in r.getMessage()]
    assert len(failures) == 1  # logged once, not at every call
    assert failures[0].exc_info[0] is RuntimeError


def test_a_clock_returning_a_non_int_uses_its_last_value(db_path):
    state: dict = {"value": 1_700_000_000_000}

    with tally.open(db_path, clock=lambda: state["value"],
                    rollup_interval_ms=0) as db:
        db.create_counter("a")
        state["value"] = "soon"
        db.create_counter("b")
        state["value"] = 1 << 70  # not an int64 either
        db.create_counter("c")
        assert db.describe_counter("b").created_at_ms == 1_700_000_000_000
        assert db.describe_counter("c").created_at_ms == 1_700_000_000_000


def test_a_db_collected_inside_a_clock_callable_is_closed(tmp_path):
    """The cyclic GC may run inside a clock callable, on an engine thread
    that tally_close would join: the binding closes from another thread."""
    state = {"collect": False}

    def clock():
        if state["collect"]:
            state["collect"] = False
            gc.collect()
        return 1_700_000_000_000

    class Cycle:
        pass

    gc.disable()
    try:
        with tally.open(tmp_path / "b", clock=clock,
                        rollup_interval_ms=0) as b:
            holder = Cycle()
            holder.me = holder  # only the cyclic GC frees it
            holder.db = tally.open(tmp_path / "a")
            del holder
            state["collect"] = True
            b.create_counter("c")  # calls the clock, which collects
            assert not state["collect"]
    finally:
        gc.enable()
    for t in threading.enumerate():
        if t.name == "tally-close":
            t.join(timeout=60)
    with tally.open(tmp_path / "a") as again:  # closed: not Busy
        assert again.list_counters() == []
