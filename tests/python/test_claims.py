"""Claims (a side effect done once) on a clock the test moves: claim,
complete_claim with counts, release_claim, get_claim, list_claims and
iter_claims."""

from __future__ import annotations

import pytest

import tally

Answer, State = tally.ClaimAnswer, tally.ClaimState


def test_claim_busy_renew_and_complete_with_counts(clock_db, clock):
    clock_db.create_counter("items")
    first = clock_db.claim("item:1", "worker-a", 30_000)
    assert isinstance(first, tally.ClaimResult)
    assert (first.answer, first.repeated, first.counted) == (
        Answer.ACQUIRED, False, ())
    c = first.claim
    assert isinstance(c, tally.ClaimInfo)
    assert (c.key, c.state, c.token, c.holder, c.granted_at_ms,
            c.lease_until_ms, c.ended_at_ms, c.result) == (
        "item:1", State.HELD, 1, "worker-a", clock.now, clock.now + 30_000,
        0, "")
    busy = clock_db.claim("item:1", "worker-b", 30_000)
    assert busy.answer is Answer.BUSY and busy.claim.holder == "worker-a"
    clock.advance(1000)
    renewed = clock_db.claim("item:1", "worker-a", 30_000)
    assert (renewed.answer, renewed.repeated, renewed.claim.token) == (
        Answer.ACQUIRED, True, 1)
    assert renewed.claim.lease_until_ms == clock.now + 30_000

    counts = tally.Batch().add_once("items", "item:1", 1)
    done = clock_db.complete_claim("item:1", 1, "row-17", counts)
    assert (done.answer, done.repeated) == (Answer.COMPLETED, False)
    assert (done.claim.state, done.claim.result, done.claim.ended_at_ms) == (
        State.DONE, "row-17", clock.now)
    assert [r.outcome for r in done.counted] == [tally.Outcome.APPLIED]
    # A retry is repeated and counts nothing again.
    retry = clock_db.complete_claim("item:1", 1, "row-17", counts)
    assert (retry.answer, retry.repeated, retry.counted) == (
        Answer.COMPLETED, True, ())
    assert clock_db.read_exact("items") == 1
    # Done for good, whoever asks.
    later = clock_db.claim("item:1", "worker-b", 30_000)
    assert later.answer is Answer.DONE and later.claim.result == "row-17"
    assert clock_db.release_claim("item:1", 1).answer is Answer.DONE
    assert clock_db.get_claim("item:1").state is State.DONE


def test_an_expired_lease_is_taken_over_and_the_old_token_is_stale(clock_db,
                                                                   clock):
    clock_db.claim("job", "a", 1000)
    clock.advance(1000)
    assert clock_db.get_claim("job").state is State.EXPIRED
    taken = clock_db.claim("job", "b", 1000)
    assert (taken.answer, taken.claim.token) == (Answer.ACQUIRED, 2)
    stale = clock_db.complete_claim("job", 1, "late")
    assert stale.answer is Answer.STALE_TOKEN
    assert clock_db.release_claim("job", 1).answer is Answer.STALE_TOKEN
    released = clock_db.release_claim("job", 2)
    assert released.answer is Answer.RELEASED
    assert clock_db.release_claim("job", 2).repeated
    assert clock_db.get_claim("job").state is State.RELEASED
    assert clock_db.claim("job", "c", 1000).claim.token == 3
    # complete_claim's default result is "" and counts None.
    assert clock_db.complete_claim("job", 3).claim.result == ""


def test_a_refused_counts_batch_leaves_the_claim_held(clock_db):
    clock_db.claim("job", "a", 10_000)
    with pytest.raises(tally.NotFoundError):
        clock_db.complete_claim("job", 1, "x",
                                tally.Batch().add("missing", 1))
    assert clock_db.get_claim("job").state is State.HELD
    with pytest.raises(TypeError):
        clock_db.complete_claim("job", 1, "x", counts=[("c", 1)])


def test_claim_errors(clock_db):
    with pytest.raises(tally.NotFoundError, match="never claimed"):
        clock_db.get_claim("nothing")
    with pytest.raises(tally.NotFoundError):
        clock_db.complete_claim("nothing", 1)
    with pytest.raises(tally.NotFoundError):
        clock_db.release_claim("nothing", 1)
    clock_db.claim("job", "a", 1000)
    with pytest.raises(tally.InvalidArgumentError, match="never granted"):
        clock_db.complete_claim("job", 9, "x")
    with pytest.raises(tally.InvalidArgumentError):
        clock_db.claim("job", "", 1000)  # a holder is 1.. bytes
    with pytest.raises(tally.InvalidArgumentError):
        clock_db.claim("job", "a", 0)  # lease 1..
    with pytest.raises(OverflowError):
        clock_db.release_claim("job", -1)  # a token is a uint64
    with pytest.raises(OverflowError):
        clock_db.release_claim("job", 1 << 64)


def test_list_and_iter_claims(clock_db, clock):
    for i in range(5):
        clock_db.claim(f"k{i}", "w", 10_000)
    clock_db.complete_claim("k1", 1, "r1")
    clock_db.complete_claim("k3", 1, "r3")
    every = clock_db.list_claims()
    assert [c.key for c in every] == [f"k{i}" for i in range(5)]
    assert [c.key for c in clock_db.list_claims(filter="done")] == [
        "k1", "k3"]
    held = clock_db.list_claims(filter=tally.ClaimFilter.HELD)
    assert [c.key for c in held] == ["k0", "k2", "k4"]
    page = clock_db.list_claims(limit=2, start_after="k1")
    assert [c.key for c in page] == ["k2", "k3"]
    assert [c.key for c in clock_db.iter_claims(page_size=2)] == [
        f"k{i}" for i in range(5)]
    assert [c.result for c in clock_db.iter_claims(filter="done")] == [
        "r1", "r3"]
    clock.advance(10_000)  # every lease ran out
    assert clock_db.list_claims(filter="held") == []
    with pytest.raises(ValueError, match="filter"):
        clock_db.list_claims(filter="open")
    with pytest.raises(tally.InvalidArgumentError):
        clock_db.list_claims(limit=0)
