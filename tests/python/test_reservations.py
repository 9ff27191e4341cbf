"""Reservations (units held for a while) on a clock the test moves:
reserve, commit, release, expiry, get_reservation and read_held."""

from __future__ import annotations

import pytest

import tally

Outcome, Hold = tally.Outcome, tally.HoldState


@pytest.fixture
def stock(clock_db):
    clock_db.create_counter("stock", min=0)
    clock_db.increment("stock", 10)
    return clock_db


def test_reserve_then_commit(stock, clock):
    r = stock.reserve("stock", "cart-1", 4, 1000)
    assert isinstance(r, tally.ReservationResult)
    assert (r.outcome, r.state, r.units, r.expires_at_ms, r.value,
            r.available) == (Outcome.APPLIED, Hold.HELD, 4, clock.now + 1000,
                             10, 6)
    # Held units count against the minimum for every other op.
    assert stock.increment("stock", -7).outcome is Outcome.REFUSED
    held = stock.read_held("stock")
    assert isinstance(held, tally.HeldValue)
    assert (held.value, held.held, held.available, held.open,
            held.next_expiry_ms) == (10, 4, 6, 1, clock.now + 1000)
    c = stock.commit_reservation("stock", "cart-1")
    assert (c.outcome, c.state, c.value, c.available) == (
        Outcome.APPLIED, Hold.COMMITTED, 6, 6)
    assert stock.commit_reservation("stock", "cart-1").outcome is \
        Outcome.DUPLICATE
    assert stock.release_reservation("stock", "cart-1").outcome is \
        Outcome.REFUSED
    info = stock.get_reservation("stock", "cart-1")
    assert isinstance(info, tally.ReservationInfo)
    assert (info.reservation_id, info.state, info.units, info.created_at_ms,
            info.closed_at_ms) == ("cart-1", Hold.COMMITTED, 4, clock.now,
                                   clock.now)
    assert stock.read_exact("stock") == 6


def test_reserve_is_idempotent_and_refuses_what_is_not_there(stock):
    stock.reserve("stock", "a", 4, 1000)
    assert stock.reserve("stock", "a", 4, 1000).outcome is Outcome.DUPLICATE
    assert stock.reserve("stock", "a", 5, 1000).outcome is Outcome.CONFLICT
    too_many = stock.reserve("stock", "b", 7, 1000)
    assert (too_many.outcome, too_many.state) == (Outcome.REFUSED,
                                                  Hold.REFUSED)
    again = stock.reserve("stock", "b", 7, 1000)  # the refusal is kept
    assert (again.outcome, again.state) == (Outcome.DUPLICATE, Hold.REFUSED)


def test_release_gives_units_back(stock):
    stock.reserve("stock", "a", 3, 1000)
    r = stock.release_reservation("stock", "a")
    assert (r.outcome, r.state, r.available) == (Outcome.APPLIED,
                                                 Hold.RELEASED, 10)
    assert stock.release_reservation("stock", "a").outcome is \
        Outcome.DUPLICATE
    assert stock.commit_reservation("stock", "a").outcome is Outcome.REFUSED


def test_a_hold_runs_out_on_the_clock(stock, clock):
    stock.reserve("stock", "a", 8, 1000)
    assert stock.read_held("stock").available == 2
    clock.advance(999)
    assert stock.get_reservation("stock", "a").state is Hold.HELD
    clock.advance(1)
    assert stock.get_reservation("stock", "a").state is Hold.EXPIRED
    assert stock.read_held("stock").available == 10
    late = stock.commit_reservation("stock", "a")
    assert (late.outcome, late.state) == (Outcome.REFUSED, Hold.EXPIRED)
    assert stock.read_exact("stock") == 10


def test_reservation_errors(stock):
    with pytest.raises(tally.NotFoundError, match="never"):
        stock.commit_reservation("stock", "never")
    with pytest.raises(tally.NotFoundError):
        stock.release_reservation("stock", "never")
    with pytest.raises(tally.NotFoundError):
        stock.get_reservation("stock", "never")
    with pytest.raises(tally.InvalidArgumentError):
        stock.reserve("stock", "a", 0, 1000)  # units 1..
    with pytest.raises(tally.InvalidArgumentError):
        stock.reserve("stock", "a", 1, 0)  # hold_for_ms 1..
    with pytest.raises(OverflowError):
        stock.reserve("stock", "a", 1 << 63, 1000)
    stock.create_counter("plain")
    with pytest.raises(tally.InvalidArgumentError):
        stock.reserve("plain", "a", 1, 1000)  # not strict with a minimum
    with pytest.raises(tally.InvalidArgumentError):
        stock.read_held("plain")


def test_reservations_of_a_keyed_counter(clock_db):
    clock_db.create_counter("seats", keyed=True, min=0)
    clock_db.increment("seats", 2, key="show-1")
    r = clock_db.reserve("seats", "r1", 2, 5000, key="show-1")
    assert r.available == 0
    assert clock_db.reserve("seats", "r2", 1, 5000,
                            key="show-1").state is Hold.REFUSED
    assert clock_db.read_held("seats", key="show-1").held == 2
    assert clock_db.get_reservation("seats", "r1", key="show-1").units == 2
    clock_db.release_reservation("seats", "r1", key="show-1")
    clock_db.reserve("seats", "r3", 1, 5000, key="show-1")
    assert clock_db.commit_reservation("seats", "r3",
                                       key="show-1").value == 1
