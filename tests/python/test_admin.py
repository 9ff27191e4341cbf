"""Administration and copies: verify, compact, stats, checkpoint, and the
backup functions (create, list, verify, restore)."""

from __future__ import annotations

import pytest

import tally


def test_verify_reports_what_it_checked(db):
    db.create_counter("c", shards=2)
    db.create_counter("k", keyed=True)
    db.increment_once("c", "e1", 1)
    db.increment_once("c", "e2", 2)
    db.increment_once("k", "e1", 1, key="a")
    report = db.verify()
    assert isinstance(report, tally.VerifyReport)
    assert report.ok and report.problems == ()
    assert report.problems_dropped == 0
    assert (report.counters, report.markers) == (2, 3)
    assert report.shard_keys >= 2
    assert report.sums_compared >= 1 and report.keys_compared >= 1
    assert report.reservations == 0


def test_compact_keeps_every_value(db):
    db.create_counter("c", shards=4)
    for i in range(200):
        db.increment("c", 1)
        db.increment_once("c", f"e{i}", 1)
    db.delete_counter("c")
    db.create_counter("d")
    db.increment("d", 5)
    db.compact()
    assert db.read_exact("d") == 5
    assert db.verify().ok


def test_compact_of_a_read_only_db_is_not_supported(db_path):
    with tally.open(db_path) as w:
        w.create_counter("c")
        with tally.open(db_path, read_only=True) as r:
            with pytest.raises(tally.NotSupportedError):
                r.compact()


def test_stats_count_outcomes(db):
    db.create_counter("c")
    db.create_counter("s", min=0)
    db.increment_once("c", "e", 1)
    db.increment_once("c", "e", 1)
    db.increment_once("c", "e", 2)
    db.increment("s", -1)
    with pytest.raises(tally.NotFoundError):
        db.increment("missing", 1)
    s = db.stats()
    assert isinstance(s, tally.EngineStats)
    assert (s.applied, s.duplicates, s.conflicts, s.outside_window,
            s.refused, s.rejected) == (1, 1, 1, 0, 1, 1)
    assert (s.group_commits, s.group_members) == (0, 0)  # sync is off


def test_checkpoint_is_an_openable_copy(db, tmp_path):
    db.create_counter("c")
    db.increment("c", 4)
    db.checkpoint(tmp_path / "cp")
    db.increment("c", 1)
    with tally.open(tmp_path / "cp") as copy:
        assert copy.read_exact("c") == 4
    with pytest.raises(tally.InvalidArgumentError, match="exists"):
        db.checkpoint(tmp_path / "cp")


def test_checkpoint_under_a_file_is_io_error(db, tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(tally.TallyIOError) as e:
        db.checkpoint(tmp_path / "file" / "cp")
    assert e.value.code == 4


def test_backups_create_list_verify_restore(db, tmp_path):
    backups = tmp_path / "backups"
    db.create_counter("c")
    db.increment_once("c", "e1", 3)
    first = tally.create_backup(db, backups)
    assert isinstance(first, tally.BackupInfo)
    assert first.id >= 1 and first.files > 0 and first.bytes > 0
    assert first.created_at_s > 0
    db.increment_once("c", "e2", 4)
    second = tally.create_backup(db, str(backups))
    assert second.id > first.id
    listed = tally.list_backups(backups)
    assert [b.id for b in listed] == [first.id, second.id]
    assert listed[0] == first
    tally.verify_backup(backups, first.id)
    tally.restore_backup(backups, first.id, tmp_path / "restored")
    with tally.open(tmp_path / "restored") as restored:
        assert restored.read_exact("c") == 3
        assert restored.increment_once("c", "e1", 3).outcome == "duplicate"
    with pytest.raises(tally.NotFoundError):
        tally.verify_backup(backups, 99)
    with pytest.raises(tally.NotFoundError):
        tally.restore_backup(backups, 99, tmp_path / "nothing")
    with pytest.raises(tally.NotFoundError):
        tally.list_backups(tmp_path / "no-backups")
    with pytest.raises(OverflowError):
        tally.verify_backup(backups, 1 << 32)
    with pytest.raises(TypeError):
        tally.create_backup("not a db", backups)


def test_many_backups_are_all_listed(db, tmp_path):
    # More than the binding's first buffer: it asks again.
    db.create_counter("c")
    for i in range(20):
        db.increment("c", 1)
        tally.create_backup(db, tmp_path / "b")
    assert len(tally.list_backups(tmp_path / "b")) == 20
