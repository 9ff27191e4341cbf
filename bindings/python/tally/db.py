"""tally's Python classes: Db (an open database), Batch, the errors, the
enums and the result types, over the C API (tally._lib).

Ownership: a Db owns its C handle (tally_db) and closes it in close(), at
the end of a `with` block, when it is garbage collected, or at interpreter
exit, whichever comes first; a Batch owns its tally_batch likewise. Every
list the C API returns is copied into Python objects and destroyed before
the method returns. Results are frozen dataclasses the caller owns.

Thread safety: a Db may be used from many threads at once, as the C handle
(ctypes releases the GIL around each C call, so calls run in parallel).
close() waits for calls in flight on other threads, then closes; any call
after close() raises ClosedError (an InvalidArgumentError), never crashes.
A Batch is not synchronized: fill it from one thread (its operations are in
the order of the add calls); an internal lock only keeps misuse from
corrupting memory. The `clock` callable of open() is called from the
engine's threads, concurrently, and must be thread-safe.

Strings: names, keys, event ids, holders and results are passed as `str`
(encoded as UTF-8 with errors="surrogateescape") or `bytes`; every string
the engine returns is a `str`, decoded as UTF-8 with
errors="surrogateescape", so any bytes round-trip (str -> engine -> str ->
engine names the same thing).

Integers: a value that does not fit the C parameter (int64_t, uint32_t,
size_t, ...) raises OverflowError before the call; a float, None or bool
where an int is expected raises TypeError. Everything else is checked by the
engine and raised as the tally.Error subclass of its code.
"""

from __future__ import annotations

import ctypes
import enum
import logging
import operator
import os
import threading
import time
import weakref
from ctypes import byref, c_int64, c_size_t, c_uint64, c_void_p
from dataclasses import dataclass
from typing import (
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
)

from . import _lib
from ._lib import lib

__all__ = [
    "AlreadyExistsError",
    "BackupInfo",
    "Batch",
    "Bucket",
    "BusyError",
    "CachedValue",
    "ClaimAnswer",
    "ClaimFilter",
    "ClaimInfo",
    "ClaimResult",
    "ClaimState",
    "ClosedError",
    "CorruptionError",
    "CounterInfo",
    "Db",
    "EngineStats",
    "Error",
    "HeldValue",
    "HoldState",
    "IncrementResult",
    "InvalidArgumentError",
    "KeyValue",
    "MarkerInfo",
    "NotFoundError",
    "NotSupportedError",
    "OutOfRangeError",
    "Outcome",
    "OutboxEntry",
    "OutboxStatus",
    "Policy",
    "QuotaState",
    "Reads",
    "ReservationInfo",
    "ReservationResult",
    "SyncReport",
    "TallyIOError",
    "TopKeysResult",
    "VerifyReport",
    "create_backup",
    "list_backups",
    "open",
    "restore_backup",
    "storage_engine_version",
    "verify_backup",
    "version",
]

_log = logging.getLogger("tally")

Text = Union[str, bytes]
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

# ---------------------------------------------------------------- errors


class Error(Exception):
    """A tally error: the C API returned a code other than TALLY_OK.

    `code` is the tally_code (int), `code_name` its name ("NotFound", ...)
    and `message` (also str(error)) the engine's message, which names the
    value or counter at fault. Each code has its subclass; catch Error for
    all of them. Raised to the caller, who owns it; not shared by threads.
    """

    code: int = -1

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    @property
    def code_name(self) -> str:
        return _code_name(self.code)


class NotFoundError(Error):
    """TALLY_NOT_FOUND: a counter, key, marker, claim or backup does not
    exist.

    Raised to the caller, who owns it; not shared by threads.
    """

    code = _lib.TALLY_NOT_FOUND


class InvalidArgumentError(Error):
    """TALLY_INVALID_ARGUMENT: bad input; nothing was written.
    Raised to the caller, who owns it; not shared by threads.
    """

    code = _lib.TALLY_INVALID_ARGUMENT


class CorruptionError(Error):
    """TALLY_CORRUPTION: stored bytes failed validation.
    Raised to the caller, who owns it; not shared by threads.
    """

    code = _lib.TALLY_CORRUPTION


class TallyIOError(Error):
    """TALLY_IO_ERROR: the file system failed. (Not the builtin IOError,
    which is OSError.)

    Raised to the caller, who owns it; not shared by threads.
    """

    code = _lib.TALLY_IO_ERROR


class OutOfRangeError(Error):
    """TALLY_OUT_OF_RANGE: a value does not fit int64, or a bound refused
    a batch.

    Raised to the caller, who owns it; not shared by threads.
    """

    code = _lib.TALLY_OUT_OF_RANGE


class BusyError(Error):
    """TALLY_BUSY: the database is held by another writer (also in this
    process), or a full outbox.

    Raised to the caller, who owns it; not shared by threads.
    """

    code = _lib.TALLY_BUSY


class AlreadyExistsError(Error):
    """TALLY_ALREADY_EXISTS: a counter with that name exists.
    Raised to the caller, who owns it; not shared by threads.
    """

    code = _lib.TALLY_ALREADY_EXISTS


class NotSupportedError(Error):
    """TALLY_NOT_SUPPORTED: e.g. a write to a read-only database.
    Raised to the caller, who owns it; not shared by threads.
    """

    code = _lib.TALLY_NOT_SUPPORTED


class ClosedError(InvalidArgumentError):
    """A call on a Db after close() (the C API's answer to a NULL handle:
    InvalidArgument).

    Raised to the caller, who owns it; not shared by threads.
    """


_ERRORS: Dict[int, Type[Error]] = {
    cls.code: cls
    for cls in (NotFoundError, InvalidArgumentError, CorruptionError,
                TallyIOError, OutOfRangeError, BusyError, AlreadyExistsError,
                NotSupportedError)
}


def _code_name(code: int) -> str:
    raw: Optional[bytes] = lib.tally_code_name(code)
    return raw.decode("ascii", "replace") if raw else "unknown"


def _take_string(ptr: c_void_p) -> Optional[str]:
    """Copies a NUL-terminated string tally allocated, then frees it."""
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "surrogateescape")
    finally:
        lib.tally_free(ptr)
        ptr.value = None


def _error(code: int, err: c_void_p) -> Error:
    message = _take_string(err)
    if message is None:
        message = _code_name(code)
    cls = _ERRORS.get(code, Error)
    return cls(message, code)


def _check(code: int, err: c_void_p) -> None:
    if code != _lib.TALLY_OK:
        raise _error(code, err)


# ---------------------------------------------------------------- enums


class _Named(str, enum.Enum):
    """A str enum that prints as its value ("applied", not
    "Outcome.APPLIED"): the base of the enums below."""

    def __str__(self) -> str:
        return str.__str__(self)


class Outcome(_Named):
    """The outcome of one increment (tally::Outcome); compares equal to its
    name ("applied", ...).

    Immutable; safe to share between threads.
    """

    APPLIED = "applied"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"
    OUTSIDE_WINDOW = "outside_window"
    REFUSED = "refused"


class HoldState(_Named):
    """A reservation's state (tally::HoldState).
    Immutable; safe to share between threads.
    """

    HELD = "held"
    COMMITTED = "committed"
    RELEASED = "released"
    EXPIRED = "expired"
    REFUSED = "refused"


class ClaimState(_Named):
    """A claim's state (tally::ClaimState).
    Immutable; safe to share between threads.
    """

    HELD = "held"
    EXPIRED = "expired"
    RELEASED = "released"
    DONE = "done"


class ClaimAnswer(_Named):
    """What a claim call answers (tally::ClaimAnswer).
    Immutable; safe to share between threads.
    """

    ACQUIRED = "acquired"
    BUSY = "busy"
    DONE = "done"
    COMPLETED = "completed"
    RELEASED = "released"
    STALE_TOKEN = "stale_token"


class Policy(_Named):
    """How a plain increment picks its shard (tally::ShardPolicy).
    Immutable; safe to share between threads.
    """

    RANDOM = "random"
    AFFINITY = "affinity"


class Bucket(_Named):
    """Time buckets of a bucketed counter (tally::BucketWidth; None for
    an unbucketed counter).

    Immutable; safe to share between threads.
    """

    MINUTE = "minute"
    HOUR = "hour"
    DAY = "day"


class ClaimFilter(_Named):
    """Which claims list_claims returns (tally::ClaimFilter).
    Immutable; safe to share between threads.
    """

    ALL = "all"
    HELD = "held"
    DONE = "done"


class Reads(enum.IntFlag):
    """What a read-only database reads (Options::reads), combinable with |.
    Immutable; safe to share between threads.
    """

    NONE = 0
    VALUES = _lib.TALLY_READ_VALUES
    MARKERS = _lib.TALLY_READ_MARKERS
    ROLLUPS = _lib.TALLY_READ_ROLLUPS
    OUTBOX = _lib.TALLY_READ_OUTBOX
    ALL = _lib.TALLY_READ_ALL


# The C values are the members' positions.
_OUTCOMES: Tuple[Outcome, ...] = tuple(Outcome)
_HOLD_STATES: Tuple[HoldState, ...] = tuple(HoldState)
_CLAIM_STATES: Tuple[ClaimState, ...] = tuple(ClaimState)
_CLAIM_ANSWERS: Tuple[ClaimAnswer, ...] = tuple(ClaimAnswer)
_POLICIES: Tuple[Policy, ...] = tuple(Policy)
_BUCKETS: Tuple[Optional[Bucket], ...] = (None,) + tuple(Bucket)
_CLAIM_FILTERS: Tuple[ClaimFilter, ...] = tuple(ClaimFilter)


def _member(table: Sequence[Any], value: int, what: str) -> Any:
    if 0 <= value < len(table):
        return table[value]
    raise Error(f"tally: the library answered unknown {what} {value}",
                _lib.TALLY_CORRUPTION)


def _choice(enum_cls: Type[enum.Enum], name: str, value: Any,
            table: Sequence[Any]) -> int:
    """An enum argument (a member or its name) -> its C value."""
    if isinstance(value, enum_cls):
        return table.index(value)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be str or {enum_cls.__name__}, "
                        f"not {type(value).__name__}")
    try:
        return table.index(enum_cls(value))
    except ValueError:
        names = ", ".join(repr(m.value) for m in enum_cls)
        raise ValueError(f"{name} {value!r} is not one of {names}") from None


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class IncrementResult:
    """What an increment, once-increment, reset or batch operation answers
    (tally::IncrementResult).

    A frozen value the caller owns; safe to share between threads.
    """

    outcome: Outcome
    shard: int
    value: int
    applied: int
    remaining: int
    window_ends_ms: int


@dataclass(frozen=True)
class CounterInfo:
    """A counter's description (tally::CounterInfo); min/max None when that
    bound is not set, bucket None for a counter without time buckets.

    A frozen value the caller owns; safe to share between threads.
    """

    name: str
    id: int
    schema_version: int
    created_at_ms: int
    flags: int
    shards: int
    policy: Policy
    dedupe_window_ms: int
    bucket: Optional[Bucket]
    retention_ms: int
    outbox: bool
    keyed: bool
    min: Optional[int]
    max: Optional[int]
    sliding: bool

    @property
    def has_plain_increments(self) -> bool:
        """flags bit 0 (kCounterFlagPlainIncrements)."""
        return bool(self.flags & 1)

    @property
    def strict(self) -> bool:
        """Whether a bound is set."""
        return self.min is not None or self.max is not None


@dataclass(frozen=True)
class CachedValue:
    """A counter's cached total (tally::CachedValue); lag_increments None
    when not known.

    A frozen value the caller owns; safe to share between threads.
    """

    value: int
    as_of_ms: int
    lag_ms: int
    lag_increments: Optional[int]


@dataclass(frozen=True)
class QuotaState:
    """A quota's window now (tally::QuotaState).
    A frozen value the caller owns; safe to share between threads.
    """

    used: int
    remaining: int
    window_start_ms: int
    window_ends_ms: int
    previous_used: int


@dataclass(frozen=True)
class KeyValue:
    """One key of a keyed counter and its value (tally::KeyValue).
    A frozen value the caller owns; safe to share between threads.
    """

    key: str
    value: int
    out_of_range: bool = False


@dataclass(frozen=True)
class TopKeysResult:
    """What top_keys answers (tally::TopKeysResult).
    A frozen value the caller owns; safe to share between threads.
    """

    keys: Tuple[KeyValue, ...]
    key_count: int
    total: int
    out_of_range_keys: int
    first_out_of_range_key: str
    as_of_ms: int
    lag_ms: int
    exact: bool


@dataclass(frozen=True)
class MarkerInfo:
    """One idempotency marker (tally::MarkerInfo); key "" for a named
    counter's.

    A frozen value the caller owns; safe to share between threads.
    """

    event_id: str
    key: str
    shard: int
    delta: int
    created_at_ms: int
    expires_at_ms: int
    pinned: bool
    strict: bool
    refused: bool
    asked: int
    value: int
    window_ends_ms: int
    remaining: int
    reset: bool
    remaining_kept: bool


@dataclass(frozen=True)
class ReservationResult:
    """What reserve, commit_reservation and release_reservation answer
    (tally::ReservationResult).

    A frozen value the caller owns; safe to share between threads.
    """

    outcome: Outcome
    state: HoldState
    units: int
    expires_at_ms: int
    value: int
    available: int


@dataclass(frozen=True)
class ReservationInfo:
    """One stored reservation (tally::ReservationInfo).
    A frozen value the caller owns; safe to share between threads.
    """

    reservation_id: str
    state: HoldState
    units: int
    created_at_ms: int
    expires_at_ms: int
    closed_at_ms: int


@dataclass(frozen=True)
class HeldValue:
    """A strict counter's value with its reservations (tally::HeldValue).
    A frozen value the caller owns; safe to share between threads.
    """

    value: int
    held: int
    available: int
    open: int
    next_expiry_ms: int


@dataclass(frozen=True)
class ClaimInfo:
    """One claim as stored (tally::ClaimInfo).
    A frozen value the caller owns; safe to share between threads.
    """

    key: str
    state: ClaimState
    token: int
    holder: str
    granted_at_ms: int
    lease_until_ms: int
    ended_at_ms: int
    result: str


@dataclass(frozen=True)
class ClaimResult:
    """What claim, complete_claim and release_claim answer
    (tally::ClaimResult): the answer and the claim after the call.

    A frozen value the caller owns; safe to share between threads.
    """

    answer: ClaimAnswer
    repeated: bool
    claim: ClaimInfo
    counted: Tuple[IncrementResult, ...] = ()


@dataclass(frozen=True)
class OutboxEntry:
    """One outbox entry (tally::OutboxEntry); key and event_id "" when
    absent.

    A frozen value the caller owns; safe to share between threads.
    """

    seq: int
    counter: str
    key: str
    event_id: str
    delta: int
    time_ms: int
    origin: str
    origin_seq: int


@dataclass(frozen=True)
class OutboxStatus:
    """Where a database's outbox stands (tally::OutboxStatus).
    A frozen value the caller owns; safe to share between threads.
    """

    entries: int
    acked_through: int
    last_seq: int
    oldest_time_ms: int
    age_ms: int


@dataclass(frozen=True)
class SyncReport:
    """What sync_outbox did (tally::SyncReport).
    A frozen value the caller owns; safe to share between threads.
    """

    entries: int
    applied: int
    duplicates: int
    batches: int
    acked_through: int


@dataclass(frozen=True)
class VerifyReport:
    """What verify found (tally::VerifyReport): `problems` holds one line
    per broken invariant; `ok` when there are none.

    A frozen value the caller owns; safe to share between threads.
    """

    counters: int
    shard_keys: int
    markers: int
    sums_compared: int
    keys_compared: int
    reservations: int
    problems: Tuple[str, ...]
    problems_dropped: int

    @property
    def ok(self) -> bool:
        return not self.problems and not self.problems_dropped


@dataclass(frozen=True)
class EngineStats:
    """Engine-wide figures since open (tally::EngineStats' counts).
    A frozen value the caller owns; safe to share between threads.
    """

    applied: int
    duplicates: int
    conflicts: int
    outside_window: int
    refused: int
    rejected: int
    group_commits: int
    group_members: int


@dataclass(frozen=True)
class BackupInfo:
    """One backup (tally::BackupInfo).
    A frozen value the caller owns; safe to share between threads.
    """

    id: int
    created_at_s: int
    bytes: int
    files: int


# ---------------------------------------------------------------- checks


def _int(name: str, value: Any, lo: int, hi: int, ctype: str) -> int:
    """An int argument (or an object with __index__; never a bool, float,
    str or None) that fits [lo, hi]: else TypeError, OverflowError."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        number: int = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not "
                        f"{type(value).__name__}") from None
    if not lo <= number <= hi:
        raise OverflowError(f"{name} {number} does not fit {ctype} "
                            f"({lo}..{hi})")
    return number


def _i64(name: str, value: Any) -> int:
    return _int(name, value, _lib.INT64_MIN, _lib.INT64_MAX, "int64")


def _u64(name: str, value: Any) -> int:
    return _int(name, value, 0, _lib.UINT64_MAX, "uint64")


def _u32(name: str, value: Any) -> int:
    return _int(name, value, 0, _lib.UINT32_MAX, "uint32")


def _size(name: str, value: Any) -> int:
    return _int(name, value, 0, _lib.SIZE_MAX, "size_t")


def _time(name: str, value: Optional[int]) -> int:
    """An optional event time: None is TALLY_EVENT_TIME_NOW."""
    return _lib.TALLY_EVENT_TIME_NOW if value is None else _i64(name, value)


def _bytes(name: str, value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{name} must be str or bytes, not "
                    f"{type(value).__name__}")


def _opt_bytes(name: str, value: Any) -> Optional[bytes]:
    return None if value is None else _bytes(name, value)


def _blen(b: Optional[bytes]) -> int:
    return 0 if b is None else len(b)


def _path(name: str, value: Any) -> bytes:
    try:
        raw = os.fsencode(value)
    except TypeError:
        raise TypeError(f"{name} must be a path (str, bytes or os.PathLike), "
                        f"not {type(value).__name__}") from None
    if b"\0" in raw:
        raise ValueError(f"{name} holds a NUL byte")
    return raw


def _text(ptr: Any, length: int) -> str:
    """A borrowed (pointer, length) string -> str (surrogateescape)."""
    if not length or not ptr:
        return ""
    return ctypes.string_at(ptr, length).decode("utf-8", "surrogateescape")


def _flag(value: Any) -> int:
    return 1 if value else 0


# ---------------------------------------------------------------- conversions


def _increment_result(r: _lib.tally_increment_result) -> IncrementResult:
    return IncrementResult(
        outcome=_member(_OUTCOMES, r.outcome, "outcome"),
        shard=r.shard, value=r.value, applied=r.applied,
        remaining=r.remaining, window_ends_ms=r.window_ends_ms)


def _counter_info(i: _lib.tally_counter_info,
                  name: Optional[str] = None) -> CounterInfo:
    s = i.spec
    return CounterInfo(
        name=_text(i.name, i.name_len) if name is None else name,
        id=i.id, schema_version=i.schema_version,
        created_at_ms=i.created_at_ms, flags=i.flags, shards=s.shards,
        policy=_member(_POLICIES, s.policy, "policy"),
        dedupe_window_ms=s.dedupe_window_ms,
        bucket=_member(_BUCKETS, s.bucket, "bucket"),
        retention_ms=s.retention_ms, outbox=bool(s.outbox),
        keyed=bool(s.keyed), min=s.min if s.has_min else None,
        max=s.max if s.has_max else None, sliding=bool(s.sliding))


def _marker_info(m: _lib.tally_marker_info) -> MarkerInfo:
    return MarkerInfo(
        event_id=_text(m.event_id, m.event_id_len),
        key=_text(m.key, m.key_len), shard=m.shard, delta=m.delta,
        created_at_ms=m.created_at_ms, expires_at_ms=m.expires_at_ms,
        pinned=bool(m.pinned), strict=bool(m.strict),
        refused=bool(m.refused), asked=m.asked, value=m.value,
        window_ends_ms=m.window_ends_ms, remaining=m.remaining,
        reset=bool(m.reset), remaining_kept=bool(m.remaining_kept))


def _claim_info(c: _lib.tally_claim_info) -> ClaimInfo:
    return ClaimInfo(
        key=_text(c.key, c.key_len),
        state=_member(_CLAIM_STATES, c.state, "claim state"),
        token=c.token, holder=_text(c.holder, c.holder_len),
        granted_at_ms=c.granted_at_ms, lease_until_ms=c.lease_until_ms,
        ended_at_ms=c.ended_at_ms, result=_text(c.result, c.result_len))


def _reservation_result(
        r: _lib.tally_reservation_result) -> ReservationResult:
    return ReservationResult(
        outcome=_member(_OUTCOMES, r.outcome, "outcome"),
        state=_member(_HOLD_STATES, r.state, "hold state"),
        units=r.units, expires_at_ms=r.expires_at_ms, value=r.value,
        available=r.available)


_T = TypeVar("_T")


def _items(lst: Any, count: Any, get: Any, item: Any,
           convert: Callable[[Any], _T]) -> List[_T]:
    """Copies the items of a C list handle (its _count and _get functions,
    the C struct `item` they fill) into Python values; does not destroy
    the list."""
    out = []
    for i in range(count(lst)):
        get(lst, i, byref(item))
        out.append(convert(item))
    return out


def _key_values(lst: Any) -> List[KeyValue]:
    """Copies a tally_key_list (not destroying it)."""
    return _items(lst, lib.tally_key_list_count, lib.tally_key_list_get,
                  _lib.tally_key_value(),
                  lambda kv: KeyValue(_text(kv.key, kv.key_len), kv.value,
                                      bool(kv.out_of_range)))


def _markers(lst: Any) -> List[MarkerInfo]:
    try:
        return _items(lst, lib.tally_marker_list_count,
                      lib.tally_marker_list_get, _lib.tally_marker_info(),
                      _marker_info)
    finally:
        lib.tally_marker_list_destroy(lst)


def _claims(lst: Any) -> List[ClaimInfo]:
    try:
        return _items(lst, lib.tally_claim_list_count,
                      lib.tally_claim_list_get, _lib.tally_claim_info(),
                      _claim_info)
    finally:
        lib.tally_claim_list_destroy(lst)


def _claim_result(res: Any) -> ClaimResult:
    try:
        info = _lib.tally_claim_info()
        lib.tally_claim_result_claim(res, byref(info))
        r = _lib.tally_increment_result()
        counted = []
        for i in range(lib.tally_claim_result_counted_count(res)):
            lib.tally_claim_result_counted(res, i, byref(r))
            counted.append(_increment_result(r))
        return ClaimResult(
            answer=_member(_CLAIM_ANSWERS,
                           lib.tally_claim_result_answer(res), "answer"),
            repeated=bool(lib.tally_claim_result_repeated(res)),
            claim=_claim_info(info), counted=tuple(counted))
    finally:
        lib.tally_claim_result_destroy(res)


def _write_options(affinity_key: Optional[bytes], event_time_ms: int,
                   saturate: bool) -> Optional[_lib.tally_write_options]:
    """A tally_write_options, or None for the defaults. The struct keeps a
    reference to affinity_key's bytes (ctypes' _objects)."""
    if (affinity_key is None and event_time_ms == _lib.TALLY_EVENT_TIME_NOW
            and not saturate):
        return None
    o = _lib.tally_write_options()
    lib.tally_write_options_init(byref(o))
    if affinity_key is not None:
        o.affinity_key = ctypes.cast(ctypes.c_char_p(affinity_key),
                                     _lib.CharP)
        o.affinity_key_len = len(affinity_key)
    o.event_time_ms = event_time_ms
    o.saturate = _flag(saturate)
    return o


def _opts_ref(o: Optional[_lib.tally_write_options]) -> Any:
    return None if o is None else byref(o)


# ---------------------------------------------------------------- the clock


# Set on a thread while it runs a clock callable for the engine (often on
# one of the engine's own threads): a Db garbage-collected there is closed
# from a new thread, since tally_close joins the engine's threads.
_in_clock = threading.local()


def _clock_function(clock: Callable[[], int]) -> Any:
    """Wraps a Python callable as the C clock. Nothing raised in it reaches
    C: a failure (an exception, a value that is not an int64) is logged
    once on the "tally" logger and the last good value is answered (the
    system clock's before the first). The callable must not call into the
    Db it is the clock of."""
    if not callable(clock):
        raise TypeError(f"clock must be callable, not {type(clock).__name__}")
    last = [time.time_ns() // 1_000_000]
    warned = [False]

    def now_ms(_ctx: Any) -> int:
        _in_clock.active = True
        try:
            value = clock()
            if isinstance(value, bool) or not isinstance(value, int):
                value = operator.index(value)
            if not _lib.INT64_MIN <= value <= _lib.INT64_MAX:
                raise OverflowError(f"clock returned {value}: not an int64")
            last[0] = value
        except BaseException:  # noqa: B036 - must never unwind into C
            try:
                if not warned[0]:
                    warned[0] = True
                    _log.exception("tally: the clock callable failed; "
                                   "using its last value %d", last[0])
            except BaseException:  # noqa: B036
                pass
        finally:
            _in_clock.active = False
        return last[0]

    return _lib.CLOCK_FN(now_ms)


# ---------------------------------------------------------------- handles


class _Handle:
    """A tally_db* with the bookkeeping that makes close() safe while other
    threads call in: each call holds the handle (active count) for its
    duration; close() marks it closed, waits for calls in flight, then
    calls tally_close. Holds the clock's CFUNCTYPE object until then."""

    __slots__ = ("ptr", "clock", "cond", "active", "closed")

    def __init__(self, ptr: Any, clock: Any) -> None:
        self.ptr = ptr
        self.clock = clock
        self.cond = threading.Condition(threading.Lock())
        self.active = 0
        self.closed = False

    def acquire(self) -> Any:
        with self.cond:
            if self.closed:
                raise ClosedError("tally: the database is closed",
                                  _lib.TALLY_INVALID_ARGUMENT)
            self.active += 1
            return self.ptr

    def release(self) -> None:
        with self.cond:
            self.active -= 1
            if self.active == 0:
                self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            if self.closed:
                return
            self.closed = True
            while self.active:
                self.cond.wait()
            ptr, self.ptr = self.ptr, None
        lib.tally_close(ptr)
        self.clock = None


def _finalize(handle: _Handle) -> None:
    """Closes a Db that was garbage collected (or left open at exit)."""
    if getattr(_in_clock, "active", False):
        threading.Thread(target=handle.close, name="tally-close",
                         daemon=True).start()
    else:
        handle.close()


class Batch:
    """Operations committed by Db.apply in one atomic write (tally::Batch;
    also the counts of Db.complete_claim).

    Ownership: owns a tally_batch, destroyed when the Batch is garbage
    collected. Operations are checked by apply, as the C++ API does. Thread
    safety: not synchronized; fill and use it from one thread at a time
    (an internal lock only keeps misuse from corrupting memory). A Batch
    may be applied many times, to several databases.
    """

    def __init__(self) -> None:
        ptr = lib.tally_batch_create()
        if not ptr:
            raise MemoryError("tally_batch_create failed")
        self._ptr = ptr
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, lib.tally_batch_destroy, ptr)

    def add(self, counter: Text, delta: int, *, key: Optional[Text] = None,
            affinity_key: Optional[Text] = None,
            event_time_ms: Optional[int] = None,
            saturate: bool = False) -> "Batch":
        """Batch::Add: a plain increment. Returns the batch."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        d = _i64("delta", delta)
        o = _write_options(_opt_bytes("affinity_key", affinity_key),
                           _time("event_time_ms", event_time_ms), saturate)
        err = c_void_p()
        with self._lock:
            code = lib.tally_batch_add(self._ptr, c, len(c), k, _blen(k), d,
                                       _opts_ref(o), byref(err))
        _check(code, err)
        return self

    def add_once(self, counter: Text, event_id: Text, delta: int, *,
                 key: Optional[Text] = None,
                 affinity_key: Optional[Text] = None,
                 event_time_ms: Optional[int] = None,
                 saturate: bool = False) -> "Batch":
        """Batch::AddOnce: a once-increment. Returns the batch."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        e = _bytes("event_id", event_id)
        d = _i64("delta", delta)
        o = _write_options(_opt_bytes("affinity_key", affinity_key),
                           _time("event_time_ms", event_time_ms), saturate)
        err = c_void_p()
        with self._lock:
            code = lib.tally_batch_add_once(self._ptr, c, len(c), k, _blen(k),
                                            e, len(e), d, _opts_ref(o),
                                            byref(err))
        _check(code, err)
        return self

    def clear(self) -> None:
        """Removes every operation."""
        with self._lock:
            lib.tally_batch_clear(self._ptr)

    def __len__(self) -> int:
        with self._lock:
            return int(lib.tally_batch_count(self._ptr))

    def __repr__(self) -> str:
        return f"<tally.Batch of {len(self)} operations>"


class Db:
    """An open tally database (tally::Db), from tally.open().

    Ownership: owns its C handle; close() (idempotent), the end of a `with`
    block, garbage collection or interpreter exit closes it. After close()
    every method raises ClosedError. Thread safety: every method may be
    called from many threads at once; close() waits for calls in flight.
    Methods mirror tally::Db and the free functions of tally/admin.h,
    outbox.h, sync.h and checkpoint.h, in snake_case.
    """

    _h: _Handle
    _path: str
    _finalizer: weakref.finalize

    def __init__(self) -> None:
        raise TypeError("use tally.open(path, ...) to open a database")

    @classmethod
    def _adopt(cls, ptr: Any, path: str, clock: Any) -> "Db":
        self = cls.__new__(cls)
        self._h = _Handle(ptr, clock)
        self._path = path
        # Closes at garbage collection or interpreter exit, without keeping
        # the Db alive (the finalizer references the handle only).
        self._finalizer = weakref.finalize(self, _finalize, self._h)
        return self

    # ---- lifetime ----

    @property
    def path(self) -> str:
        """The path the database was opened at."""
        return self._path

    @property
    def closed(self) -> bool:
        return self._h.closed

    def close(self) -> None:
        """Closes the database (idempotent); waits for calls in flight."""
        self._h.close()

    def __enter__(self) -> "Db":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<tally.Db {self._path!r} {state}>"

    def _call(self, fn: Any, *args: Any) -> None:
        """fn(db, *args, &errmsg), holding the handle; raises on error."""
        ptr = self._h.acquire()
        err = c_void_p()
        try:
            code = fn(ptr, *args, byref(err))
        finally:
            self._h.release()
        _check(code, err)

    # ---- counters ----

    def create_counter(self, name: Text, *, shards: int = 1,
                       policy: Union[str, Policy] = "random",
                       dedupe_window_ms: int = 0,
                       bucket: Union[None, str, Bucket] = None,
                       retention_ms: int = 0, outbox: bool = False,
                       keyed: bool = False, min: Optional[int] = None,
                       max: Optional[int] = None,
                       sliding: bool = False) -> None:
        """Db::CreateCounter. min/max set a strict counter's bounds."""
        n = _bytes("name", name)
        spec = _lib.tally_counter_spec()
        lib.tally_counter_spec_init(byref(spec))
        spec.shards = _u32("shards", shards)
        spec.policy = _choice(Policy, "policy", policy, _POLICIES)
        spec.dedupe_window_ms = _i64("dedupe_window_ms", dedupe_window_ms)
        spec.bucket = (0 if bucket is None
                       else _choice(Bucket, "bucket", bucket, _BUCKETS))
        spec.retention_ms = _i64("retention_ms", retention_ms)
        spec.outbox = _flag(outbox)
        spec.keyed = _flag(keyed)
        if min is not None:
            spec.has_min, spec.min = 1, _i64("min", min)
        if max is not None:
            spec.has_max, spec.max = 1, _i64("max", max)
        spec.sliding = _flag(sliding)
        self._call(lib.tally_create_counter, n, len(n), byref(spec))

    def describe_counter(self, name: Text) -> CounterInfo:
        """Db::DescribeCounter."""
        n = _bytes("name", name)
        info = _lib.tally_counter_info()
        self._call(lib.tally_describe_counter, n, len(n), byref(info))
        return _counter_info(info, n.decode("utf-8", "surrogateescape"))

    def list_counters(self) -> List[CounterInfo]:
        """Db::ListCounters: every counter, ordered by name."""
        lst = _lib.CounterListP()
        self._call(lib.tally_list_counters, byref(lst))
        try:
            return _items(lst, lib.tally_counter_list_count,
                          lib.tally_counter_list_get,
                          _lib.tally_counter_info(), _counter_info)
        finally:
            lib.tally_counter_list_destroy(lst)

    def delete_counter(self, name: Text) -> None:
        """Db::DeleteCounter: the counter, its shards and markers."""
        n = _bytes("name", name)
        self._call(lib.tally_delete_counter, n, len(n))

    # ---- writes ----

    def increment(self, counter: Text, delta: int, *,
                  key: Optional[Text] = None,
                  affinity_key: Optional[Text] = None,
                  event_time_ms: Optional[int] = None,
                  saturate: bool = False) -> IncrementResult:
        """Db::Increment: adds `delta` to one shard. Not safe to retry
        after an error (use increment_once)."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        d = _i64("delta", delta)
        o = _write_options(_opt_bytes("affinity_key", affinity_key),
                           _time("event_time_ms", event_time_ms), saturate)
        r = _lib.tally_increment_result()
        self._call(lib.tally_increment, c, len(c), k, _blen(k), d,
                   _opts_ref(o), byref(r))
        return _increment_result(r)

    def increment_once(self, counter: Text, event_id: Text, delta: int, *,
                       key: Optional[Text] = None,
                       affinity_key: Optional[Text] = None,
                       event_time_ms: Optional[int] = None,
                       saturate: bool = False) -> IncrementResult:
        """Db::IncrementOnce: adds `delta` once per (counter, key,
        event_id)."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        e = _bytes("event_id", event_id)
        d = _i64("delta", delta)
        o = _write_options(_opt_bytes("affinity_key", affinity_key),
                           _time("event_time_ms", event_time_ms), saturate)
        r = _lib.tally_increment_result()
        self._call(lib.tally_increment_once, c, len(c), k, _blen(k), e,
                   len(e), d, _opts_ref(o), byref(r))
        return _increment_result(r)

    def reset(self, counter: Text, reset_id: Text, value: int = 0, *,
              key: Optional[Text] = None,
              event_time_ms: Optional[int] = None) -> IncrementResult:
        """Db::Reset: sets the value, once per (counter, key, reset_id)."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        rid = _bytes("reset_id", reset_id)
        v = _i64("value", value)
        o = _write_options(None, _time("event_time_ms", event_time_ms), False)
        r = _lib.tally_increment_result()
        self._call(lib.tally_reset, c, len(c), k, _blen(k), rid, len(rid), v,
                   _opts_ref(o), byref(r))
        return _increment_result(r)

    def apply(self, batch: Batch) -> List[IncrementResult]:
        """Db::Apply: every operation of `batch` in one atomic write; one
        result per operation, in order."""
        if not isinstance(batch, Batch):
            raise TypeError(f"batch must be a tally.Batch, not "
                            f"{type(batch).__name__}")
        with batch._lock:
            n = int(lib.tally_batch_count(batch._ptr))
            results = (_lib.tally_increment_result * n)()
            self._call(lib.tally_apply, batch._ptr,
                       results if n else None, n)
        return [_increment_result(r) for r in results]

    # ---- reads ----

    def read_exact(self, counter: Text, *, key: Optional[Text] = None) -> int:
        """Db::ReadExact: the sum of every shard, from one snapshot."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        v = c_int64()
        self._call(lib.tally_read_exact, c, len(c), k, _blen(k), byref(v))
        return v.value

    def read_range(self, counter: Text, from_ms: int, to_ms: int, *,
                   key: Optional[Text] = None) -> int:
        """Db::ReadRange: a bucketed counter's sum over [from_ms, to_ms)."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        f = _i64("from_ms", from_ms)
        t = _i64("to_ms", to_ms)
        v = c_int64()
        self._call(lib.tally_read_range, c, len(c), k, _blen(k), f, t,
                   byref(v))
        return v.value

    def shard_counts(self, counter: Text, *,
                     key: Optional[Text] = None) -> List[int]:
        """Db::ShardCounts: each shard's value, index 0..shards-1."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        capacity = 64
        while True:
            values = (c_int64 * capacity)()
            count = c_size_t(0)
            ptr = self._h.acquire()
            err = c_void_p()
            try:
                code = lib.tally_shard_counts(ptr, c, len(c), k, _blen(k),
                                              values, capacity, byref(count),
                                              byref(err))
            finally:
                self._h.release()
            if (code == _lib.TALLY_INVALID_ARGUMENT
                    and count.value > capacity):
                lib.tally_free(err)  # too small: retry with room for all
                capacity = count.value
                continue
            _check(code, err)
            return list(values[:count.value])

    def read_keys(self, counter: Text, keys: Sequence[Text]) -> List[int]:
        """Db::ReadKeys: the values of `keys` of a keyed counter, in order,
        from one snapshot."""
        if isinstance(keys, (str, bytes, bytearray, memoryview)):
            raise TypeError("keys must be a sequence of keys, not one key")
        c = _bytes("counter", counter)
        encoded = [_bytes(f"keys[{i}]", k) for i, k in enumerate(keys)]
        n = len(encoded)
        ptrs = (ctypes.c_char_p * n)(*encoded)
        lens = (c_size_t * n)(*[len(b) for b in encoded])
        values = (c_int64 * n)()
        self._call(lib.tally_read_keys, c, len(c), ptrs, lens, n, values)
        return list(values)

    def read_cached(self, counter: Text) -> CachedValue:
        """Db::ReadCached: the counter's cached total with its age."""
        c = _bytes("counter", counter)
        v = _lib.tally_cached_value()
        self._call(lib.tally_read_cached, c, len(c), byref(v))
        return CachedValue(
            value=v.value, as_of_ms=v.as_of_ms, lag_ms=v.lag_ms,
            lag_increments=(v.lag_increments if v.lag_increments_known
                            else None))

    def rollup_now(self, counter: Optional[Text] = None) -> None:
        """Db::RollupNow: one counter, or every counter when None."""
        c = _opt_bytes("counter", counter)
        self._call(lib.tally_rollup_now, c, _blen(c))

    def refresh(self) -> None:
        """Db::Refresh: a read-only database catches up with the writer."""
        self._call(lib.tally_refresh)

    def read_quota(self, counter: Text, *,
                   key: Optional[Text] = None) -> QuotaState:
        """Db::ReadQuota: a quota's window now."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        q = _lib.tally_quota_state()
        self._call(lib.tally_read_quota, c, len(c), k, _blen(k), byref(q))
        return QuotaState(q.used, q.remaining, q.window_start_ms,
                          q.window_ends_ms, q.previous_used)

    # ---- keyed counters ----

    def list_keys(self, counter: Text, *, prefix: Text = "",
                  start_after: Text = "",
                  limit: int = 100) -> List[KeyValue]:
        """Db::ListKeys: keys starting with `prefix`, after `start_after`,
        at most `limit`, in key byte order."""
        c = _bytes("counter", counter)
        p = _bytes("prefix", prefix)
        s = _bytes("start_after", start_after)
        n = _size("limit", limit)
        lst = _lib.KeyListP()
        self._call(lib.tally_list_keys, c, len(c), p, len(p), s, len(s), n,
                   byref(lst))
        try:
            return _key_values(lst)
        finally:
            lib.tally_key_list_destroy(lst)

    def iter_keys(self, counter: Text, *, prefix: Text = "",
                  page_size: int = 1000) -> Iterator[KeyValue]:
        """Every key (with `prefix`) of a keyed counter, paging list_keys
        with start_after; each page is one snapshot."""
        start: Text = ""
        while True:
            page = self.list_keys(counter, prefix=prefix, start_after=start,
                                  limit=page_size)
            yield from page
            if len(page) < page_size:
                return
            start = _bytes("key", page[-1].key)

    def top_keys(self, counter: Text, n: int = 10, *,
                 exact: bool = False) -> TopKeysResult:
        """Db::TopKeys: the `n` keys with the largest values."""
        c = _bytes("counter", counter)
        count = _size("n", n)
        lst = _lib.KeyListP()
        info = _lib.tally_top_keys_info()
        self._call(lib.tally_top_keys, c, len(c), count, _flag(exact),
                   byref(lst), byref(info))
        try:
            keys = _key_values(lst)
            first = _text(info.first_out_of_range_key,
                          info.first_out_of_range_key_len)
        finally:
            lib.tally_key_list_destroy(lst)
        return TopKeysResult(
            keys=tuple(keys), key_count=info.key_count, total=info.total,
            out_of_range_keys=info.out_of_range_keys,
            first_out_of_range_key=first, as_of_ms=info.as_of_ms,
            lag_ms=info.lag_ms, exact=bool(info.exact))

    def delete_key(self, counter: Text, key: Text) -> None:
        """Db::DeleteKey: one key's shards, markers and reservations."""
        c = _bytes("counter", counter)
        k = _bytes("key", key)
        self._call(lib.tally_delete_key, c, len(c), k, len(k))

    # ---- markers ----

    def count_markers(self, counter: Text, *,
                      key: Optional[Text] = None) -> int:
        """Db::CountMarkers (of every key of a keyed counter when key is
        None)."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        n = c_uint64()
        self._call(lib.tally_count_markers, c, len(c), k, _blen(k), byref(n))
        return n.value

    def list_markers(self, counter: Text, *, key: Optional[Text] = None,
                     limit: int = 100, since_ms: Optional[int] = None,
                     start_after: Text = "") -> List[MarkerInfo]:
        """Db::ListMarkers: in event-id byte order, after `start_after`,
        created at or after `since_ms` (None: any), at most `limit`."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        n = _size("limit", limit)
        since = _lib.INT64_MIN if since_ms is None else _i64("since_ms",
                                                             since_ms)
        s = _bytes("start_after", start_after)
        lst = _lib.MarkerListP()
        self._call(lib.tally_list_markers, c, len(c), k, _blen(k), n, since,
                   s, len(s), byref(lst))
        return _markers(lst)

    def iter_markers(self, counter: Text, *, key: Optional[Text] = None,
                     since_ms: Optional[int] = None,
                     page_size: int = 1000) -> Iterator[MarkerInfo]:
        """Every marker, paging list_markers with start_after."""
        start: Text = ""
        while True:
            page = self.list_markers(counter, key=key, limit=page_size,
                                     since_ms=since_ms, start_after=start)
            yield from page
            if len(page) < page_size:
                return
            start = _bytes("event_id", page[-1].event_id)

    def get_marker(self, counter: Text, event_id: Text, *,
                   key: Optional[Text] = None) -> MarkerInfo:
        """Db::GetMarker: NotFoundError when the event was never
        counted."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        e = _bytes("event_id", event_id)
        lst = _lib.MarkerListP()
        self._call(lib.tally_get_marker, c, len(c), k, _blen(k), e, len(e),
                   byref(lst))
        markers = _markers(lst)
        if len(markers) != 1:
            raise Error(f"tally_get_marker answered {len(markers)} markers",
                        _lib.TALLY_CORRUPTION)
        return markers[0]

    # ---- reservations ----

    def reserve(self, counter: Text, reservation_id: Text, units: int,
                hold_for_ms: int, *,
                key: Optional[Text] = None) -> ReservationResult:
        """Db::Reserve: holds `units` for `hold_for_ms` of the engine's
        clock."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        rid = _bytes("reservation_id", reservation_id)
        u = _i64("units", units)
        h = _i64("hold_for_ms", hold_for_ms)
        r = _lib.tally_reservation_result()
        self._call(lib.tally_reserve, c, len(c), k, _blen(k), rid, len(rid),
                   u, h, byref(r))
        return _reservation_result(r)

    def commit_reservation(self, counter: Text, reservation_id: Text, *,
                           key: Optional[Text] = None) -> ReservationResult:
        """Db::CommitReservation: takes a held reservation's units."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        rid = _bytes("reservation_id", reservation_id)
        r = _lib.tally_reservation_result()
        self._call(lib.tally_commit_reservation, c, len(c), k, _blen(k), rid,
                   len(rid), byref(r))
        return _reservation_result(r)

    def release_reservation(self, counter: Text, reservation_id: Text, *,
                            key: Optional[Text] = None) -> ReservationResult:
        """Db::ReleaseReservation: gives a held reservation's units back."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        rid = _bytes("reservation_id", reservation_id)
        r = _lib.tally_reservation_result()
        self._call(lib.tally_release_reservation, c, len(c), k, _blen(k),
                   rid, len(rid), byref(r))
        return _reservation_result(r)

    def get_reservation(self, counter: Text, reservation_id: Text, *,
                        key: Optional[Text] = None) -> ReservationInfo:
        """Db::GetReservation: one reservation as stored now."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        rid = _bytes("reservation_id", reservation_id)
        i = _lib.tally_reservation_info()
        self._call(lib.tally_get_reservation, c, len(c), k, _blen(k), rid,
                   len(rid), byref(i))
        return ReservationInfo(
            reservation_id=rid.decode("utf-8", "surrogateescape"),
            state=_member(_HOLD_STATES, i.state, "hold state"),
            units=i.units, created_at_ms=i.created_at_ms,
            expires_at_ms=i.expires_at_ms, closed_at_ms=i.closed_at_ms)

    def read_held(self, counter: Text, *,
                  key: Optional[Text] = None) -> HeldValue:
        """Db::ReadHeld: value, held units and what is available."""
        c = _bytes("counter", counter)
        k = _opt_bytes("key", key)
        h = _lib.tally_held_value()
        self._call(lib.tally_read_held, c, len(c), k, _blen(k), byref(h))
        return HeldValue(h.value, h.held, h.available, h.open,
                         h.next_expiry_ms)

    # ---- claims ----

    def claim(self, key: Text, holder: Text, lease_ms: int) -> ClaimResult:
        """Db::Claim: asks for `key` for `holder` for `lease_ms`."""
        k = _bytes("key", key)
        h = _bytes("holder", holder)
        lease = _i64("lease_ms", lease_ms)
        res = _lib.ClaimResultP()
        self._call(lib.tally_claim, k, len(k), h, len(h), lease, byref(res))
        return _claim_result(res)

    def complete_claim(self, key: Text, token: int, result: Text = "",
                       counts: Optional[Batch] = None) -> ClaimResult:
        """Db::CompleteClaim: records `result` and applies `counts` in the
        same atomic write, if `token` still holds the claim."""
        k = _bytes("key", key)
        t = _u64("token", token)
        r = _bytes("result", result)
        if counts is not None and not isinstance(counts, Batch):
            raise TypeError(f"counts must be a tally.Batch or None, not "
                            f"{type(counts).__name__}")
        res = _lib.ClaimResultP()
        if counts is None:
            self._call(lib.tally_complete_claim, k, len(k), t, r, len(r),
                       None, byref(res))
        else:
            with counts._lock:
                self._call(lib.tally_complete_claim, k, len(k), t, r, len(r),
                           counts._ptr, byref(res))
        return _claim_result(res)

    def release_claim(self, key: Text, token: int) -> ClaimResult:
        """Db::ReleaseClaim: gives up the claim `token` holds."""
        k = _bytes("key", key)
        t = _u64("token", token)
        res = _lib.ClaimResultP()
        self._call(lib.tally_release_claim, k, len(k), t, byref(res))
        return _claim_result(res)

    def get_claim(self, key: Text) -> ClaimInfo:
        """Db::GetClaim: NotFoundError for a key never claimed."""
        k = _bytes("key", key)
        lst = _lib.ClaimListP()
        self._call(lib.tally_get_claim, k, len(k), byref(lst))
        claims = _claims(lst)
        if len(claims) != 1:
            raise Error(f"tally_get_claim answered {len(claims)} claims",
                        _lib.TALLY_CORRUPTION)
        return claims[0]

    def list_claims(self, *, filter: Union[str, ClaimFilter] = "all",
                    limit: int = 100,
                    start_after: Text = "") -> List[ClaimInfo]:
        """Db::ListClaims: in key byte order, filtered ("all", "held",
        "done"), after `start_after`, at most `limit`."""
        f = _choice(ClaimFilter, "filter", filter, _CLAIM_FILTERS)
        n = _size("limit", limit)
        s = _bytes("start_after", start_after)
        lst = _lib.ClaimListP()
        self._call(lib.tally_list_claims, f, n, s, len(s), byref(lst))
        return _claims(lst)

    def iter_claims(self, *, filter: Union[str, ClaimFilter] = "all",
                    page_size: int = 1000) -> Iterator[ClaimInfo]:
        """Every claim (filtered), paging list_claims with start_after."""
        start: Text = ""
        while True:
            page = self.list_claims(filter=filter, limit=page_size,
                                    start_after=start)
            yield from page
            if len(page) < page_size:
                return
            start = _bytes("key", page[-1].key)

    # ---- the outbox and sync ----

    def read_outbox(self, after_seq: int = 0,
                    limit: int = 1000) -> List[OutboxEntry]:
        """tally::ReadOutbox: entries with seq > after_seq, at most
        `limit`."""
        a = _u64("after_seq", after_seq)
        n = _size("limit", limit)
        lst = _lib.OutboxListP()
        self._call(lib.tally_read_outbox, a, n, byref(lst))
        try:
            return _items(
                lst, lib.tally_outbox_list_count, lib.tally_outbox_list_get,
                _lib.tally_outbox_entry(),
                lambda e: OutboxEntry(
                    seq=e.seq, counter=_text(e.counter, e.counter_len),
                    key=_text(e.key, e.key_len),
                    event_id=_text(e.event_id, e.event_id_len),
                    delta=e.delta, time_ms=e.time_ms,
                    origin=_text(e.origin, e.origin_len),
                    origin_seq=e.origin_seq))
        finally:
            lib.tally_outbox_list_destroy(lst)

    def ack_outbox(self, through_seq: int) -> None:
        """tally::AckOutbox: deletes every entry with seq <= through_seq."""
        self._call(lib.tally_ack_outbox, _u64("through_seq", through_seq))

    def outbox_status(self) -> OutboxStatus:
        """tally::GetOutboxStatus."""
        s = _lib.tally_outbox_status()
        self._call(lib.tally_get_outbox_status, byref(s))
        return OutboxStatus(s.entries, s.acked_through, s.last_seq,
                            s.oldest_time_ms, s.age_ms)

    def database_id(self) -> str:
        """tally::DatabaseId: 32 hex characters."""
        out = c_void_p()
        self._call(lib.tally_database_id, byref(out))
        return _take_string(out) or ""

    def sync_outbox(self, hub: "Db", batch_entries: int = 1000,
                    shard_by_edge: bool = True) -> SyncReport:
        """tally::SyncOutbox: this (edge) database's outbox into `hub`."""
        if not isinstance(hub, Db):
            raise TypeError(f"hub must be a tally.Db, not "
                            f"{type(hub).__name__}")
        n = _size("batch_entries", batch_entries)
        report = _lib.tally_sync_report()
        hub_ptr = hub._h.acquire()
        try:
            self._call(lib.tally_sync_outbox, hub_ptr, n,
                       _flag(shard_by_edge), byref(report))
        finally:
            hub._h.release()
        return SyncReport(report.entries, report.applied, report.duplicates,
                          report.batches, report.acked_through)

    # ---- administration and copies ----

    def verify(self) -> VerifyReport:
        """tally::Verify: raises only when the check could not run; what it
        found is the report's `problems`."""
        r = _lib.tally_verify_report()
        problems = c_void_p()
        try:
            self._call(lib.tally_verify, byref(r), byref(problems))
        finally:
            text = _take_string(problems)
        lines = tuple(line for line in (text or "").split("\n") if line)
        return VerifyReport(
            counters=r.counters, shard_keys=r.shard_keys, markers=r.markers,
            sums_compared=r.sums_compared, keys_compared=r.keys_compared,
            reservations=r.reservations, problems=lines,
            problems_dropped=r.problems_dropped)

    def compact(self) -> None:
        """tally::Compact: flushes and compacts every column family."""
        self._call(lib.tally_compact)

    def stats(self) -> EngineStats:
        """tally::GetStats' engine counts."""
        s = _lib.tally_engine_stats()
        self._call(lib.tally_get_stats, byref(s))
        return EngineStats(s.applied, s.duplicates, s.conflicts,
                           s.outside_window, s.refused, s.rejected,
                           s.group_commits, s.group_members)

    def checkpoint(self, dir: PathLike) -> None:
        """tally::Checkpoint: a consistent copy in `dir` (must not
        exist)."""
        self._call(lib.tally_checkpoint, _path("dir", dir))


# ---------------------------------------------------------------- module


def open(path: PathLike, *, create_if_missing: bool = True,
         read_only: bool = False, sync: bool = False,
         reads: Union[int, Reads] = Reads.ALL,
         block_cache_bytes: Optional[int] = None,
         write_buffer_bytes: Optional[int] = None,
         max_wal_bytes: Optional[int] = None,
         rollup_interval_ms: Optional[int] = None,
         group_commit_max_delay_us: Optional[int] = None,
         max_pending_operands: Optional[int] = None,
         event_lock_stripes: Optional[int] = None,
         stats_publish_interval_ms: Optional[int] = None,
         expiry_sweep_seconds: Optional[int] = None,
         outbox_max_entries: Optional[int] = None,
         group_commit_max_bytes: Optional[int] = None,
         group_commit_max_ops: Optional[int] = None,
         salvage_wal: bool = False,
         clock: Optional[Callable[[], int]] = None) -> Db:
    """Opens (or creates) the database at `path` (Db::Open). None leaves an
    option at tally's default (tally/options.h). `clock`: a callable
    returning ms since the Unix epoch, called from the engine's threads.
    Use the Db as a context manager, or close() it."""
    target = _path("path", path)
    reads_v = _u32("reads", reads)
    setters: List[Tuple[Any, int]] = []
    for fn, name, value, check in (
            (lib.tally_options_set_block_cache_bytes, "block_cache_bytes",
             block_cache_bytes, _size),
            (lib.tally_options_set_write_buffer_bytes, "write_buffer_bytes",
             write_buffer_bytes, _size),
            (lib.tally_options_set_max_wal_bytes, "max_wal_bytes",
             max_wal_bytes, _u64),
            (lib.tally_options_set_rollup_interval_ms, "rollup_interval_ms",
             rollup_interval_ms, _u32),
            (lib.tally_options_set_group_commit_max_delay_us,
             "group_commit_max_delay_us", group_commit_max_delay_us, _u32),
            (lib.tally_options_set_max_pending_operands,
             "max_pending_operands", max_pending_operands, _size),
            (lib.tally_options_set_event_lock_stripes,
             "event_lock_stripes", event_lock_stripes, _u32),
            (lib.tally_options_set_stats_publish_interval_ms,
             "stats_publish_interval_ms", stats_publish_interval_ms, _u32),
            (lib.tally_options_set_expiry_sweep_seconds,
             "expiry_sweep_seconds", expiry_sweep_seconds, _u64),
            (lib.tally_options_set_outbox_max_entries,
             "outbox_max_entries", outbox_max_entries, _u64),
            (lib.tally_options_set_group_commit_max_bytes,
             "group_commit_max_bytes", group_commit_max_bytes, _size),
            (lib.tally_options_set_group_commit_max_ops,
             "group_commit_max_ops", group_commit_max_ops, _size)):
        if value is not None:
            setters.append((fn, check(name, value)))
    clock_fn = None if clock is None else _clock_function(clock)

    options = lib.tally_options_create()
    if not options:
        raise MemoryError("tally_options_create failed")
    try:
        lib.tally_options_set_create_if_missing(options,
                                                _flag(create_if_missing))
        lib.tally_options_set_read_only(options, _flag(read_only))
        lib.tally_options_set_reads(options, reads_v)
        lib.tally_options_set_sync(options, _flag(sync))
        lib.tally_options_set_salvage_wal(options, _flag(salvage_wal))
        for fn, value in setters:
            fn(options, value)
        if clock_fn is not None:
            lib.tally_options_set_clock(options, clock_fn, None)
        ptr = _lib.DbP()
        err = c_void_p()
        code = lib.tally_open(options, target, byref(ptr), byref(err))
    finally:
        lib.tally_options_destroy(options)
    _check(code, err)
    return Db._adopt(ptr, os.fsdecode(target), clock_fn)


def create_backup(db: Db, dir: PathLike) -> BackupInfo:
    """tally::CreateBackup: adds a backup of the open `db` to `dir`
    (created if missing)."""
    if not isinstance(db, Db):
        raise TypeError(f"db must be a tally.Db, not {type(db).__name__}")
    info = _lib.tally_backup_info()
    db._call(lib.tally_create_backup, _path("dir", dir), byref(info))
    return BackupInfo(info.id, info.created_at_s, info.bytes, info.files)


def list_backups(dir: PathLike) -> List[BackupInfo]:
    """tally::ListBackups: the backups in `dir`, oldest first;
    NotFoundError when there is none."""
    d = _path("dir", dir)
    capacity = 16
    while True:
        infos = (_lib.tally_backup_info * capacity)()
        count = c_size_t(0)
        err = c_void_p()
        code = lib.tally_list_backups(d, infos, capacity, byref(count),
                                      byref(err))
        if code == _lib.TALLY_INVALID_ARGUMENT and count.value > capacity:
            lib.tally_free(err)
            capacity = count.value
            continue
        _check(code, err)
        return [BackupInfo(i.id, i.created_at_s, i.bytes, i.files)
                for i in infos[:count.value]]


def verify_backup(dir: PathLike, id: int) -> None:
    """tally::VerifyBackup: CorruptionError names what differs."""
    err = c_void_p()
    _check(lib.tally_verify_backup(_path("dir", dir), _u32("id", id),
                                   byref(err)), err)


def restore_backup(dir: PathLike, id: int, db_path: PathLike) -> None:
    """tally::RestoreBackup: backup `id` into `db_path` (empty or
    missing)."""
    err = c_void_p()
    _check(lib.tally_restore_backup(_path("dir", dir), _u32("id", id),
                                    _path("db_path", db_path), byref(err)),
           err)


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    raw: bytes = lib.tally_version()
    return raw.decode("ascii")


def storage_engine_version() -> str:
    """The storage engine's version ("rocksdb 7.8.3")."""
    raw: bytes = lib.tally_storage_engine_version()
    return raw.decode("ascii", "replace")
