"""Fixtures of the Python binding's tests (tests/python): real databases in
pytest's tmp_path (no mocks) and a clock the test moves (no sleeps).

The package under test is whatever `import tally` finds: the source tree
(PYTHONPATH=bindings/python, as ctest's python.Pytest runs it) or an
installed copy (python.PipInstall); the library is TALLY_LIBRARY's.

Ownership: each fixture's database is closed at the end of its test.
Thread safety: FakeClock may be read from the engine's threads while the
test moves it (an int attribute: reads and writes are atomic in CPython).
"""

from __future__ import annotations

import pathlib
from typing import Iterator

import pytest

import tally

# 2023-11-14T00:00:00Z: a fixed start, on a day (so also an hour and a
# minute) boundary, for every FakeClock (each test's database is fresh, so
# the engine's high-water mark of time starts there too).
START_MS = 1_699_920_000_000
assert START_MS % 86_400_000 == 0


class FakeClock:
    """A clock for tally.open(clock=...): ms since the Unix epoch, moved by
    the test with advance() (forward only: the engine never steps back
    anyway)."""

    def __init__(self, start: int = START_MS) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        assert ms >= 0
        self.now += ms
        return self.now


@pytest.fixture
def db_path(tmp_path: pathlib.Path) -> str:
    return str(tmp_path / "db")


@pytest.fixture
def db(db_path: str) -> Iterator[tally.Db]:
    """A fresh database on the system clock, roll-up thread off."""
    with tally.open(db_path, rollup_interval_ms=0) as d:
        yield d


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def clock_db(db_path: str, clock: FakeClock) -> Iterator[tally.Db]:
    """A fresh database on `clock`, roll-up thread off."""
    with tally.open(db_path, clock=clock, rollup_interval_ms=0) as d:
        yield d
