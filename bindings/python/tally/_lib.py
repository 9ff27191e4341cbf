"""ctypes declarations of tally's C API (include/tally/c.h), one to one.

What it is: the library handle `lib`, loaded once at import, with argtypes
and restype set on every function c.h declares, and the structs of c.h as
ctypes.Structure subclasses with their fields in c.h's order and types.
Nothing here is public API: tally.db builds the Python classes on top.

Finding the library, in this order: the environment variable
TALLY_LIBRARY (a path to libtally.so.*), then ctypes.util.find_library(
"tally"), then plain "libtally.so" (the dynamic loader's search path). A
failure raises ImportError naming every place tried. The library's version
(tally_version()) must match this package's major.minor (the ABI policy of
docs/embedding.md: before 1.0 every minor release may change the ABI).

Ownership: the handle types are opaque pointers; the caller of each C
function owns what it returns, as c.h says (tally.db destroys every one).
Thread safety: the declarations are set once at import and never changed;
calling the functions is as thread-safe as c.h says (ctypes releases the
GIL around each call).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_int,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import List, Optional, Tuple

__version__ = "0.1.0"

# ---- constants (c.h's enums) ----

TALLY_OK = 0
TALLY_NOT_FOUND = 1
TALLY_INVALID_ARGUMENT = 2
TALLY_CORRUPTION = 3
TALLY_IO_ERROR = 4
TALLY_OUT_OF_RANGE = 5
TALLY_BUSY = 6
TALLY_ALREADY_EXISTS = 7
TALLY_NOT_SUPPORTED = 8

TALLY_POLICY_RANDOM = 0
TALLY_POLICY_AFFINITY = 1

TALLY_BUCKET_NONE = 0
TALLY_BUCKET_MINUTE = 1
TALLY_BUCKET_HOUR = 2
TALLY_BUCKET_DAY = 3

TALLY_APPLIED = 0
TALLY_DUPLICATE = 1
TALLY_CONFLICT = 2
TALLY_OUTSIDE_WINDOW = 3
TALLY_REFUSED = 4

TALLY_HOLD_HELD = 0
TALLY_HOLD_COMMITTED = 1
TALLY_HOLD_RELEASED = 2
TALLY_HOLD_EXPIRED = 3
TALLY_HOLD_REFUSED = 4

TALLY_CLAIM_HELD = 0
TALLY_CLAIM_EXPIRED = 1
TALLY_CLAIM_RELEASED = 2
TALLY_CLAIM_DONE = 3

TALLY_ANSWER_ACQUIRED = 0
TALLY_ANSWER_BUSY = 1
TALLY_ANSWER_DONE = 2
TALLY_ANSWER_COMPLETED = 3
TALLY_ANSWER_RELEASED = 4
TALLY_ANSWER_STALE_TOKEN = 5

TALLY_CLAIMS_ALL = 0
TALLY_CLAIMS_HELD = 1
TALLY_CLAIMS_DONE = 2

TALLY_READ_VALUES = 1
TALLY_READ_MARKERS = 2
TALLY_READ_ROLLUPS = 4
TALLY_READ_OUTBOX = 8
TALLY_READ_ALL = 15

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT32_MAX = (1 << 32) - 1
UINT64_MAX = (1 << 64) - 1
SIZE_MAX = (1 << (8 * ctypes.sizeof(c_size_t))) - 1

TALLY_EVENT_TIME_NOW = INT64_MIN

# ---- opaque handles ----


class tally_options(Structure):
    """Opaque: tally_options."""


class tally_db(Structure):
    """Opaque: tally_db."""


class tally_batch(Structure):
    """Opaque: tally_batch."""


class tally_counter_list(Structure):
    """Opaque: tally_counter_list."""


class tally_key_list(Structure):
    """Opaque: tally_key_list."""


class tally_marker_list(Structure):
    """Opaque: tally_marker_list."""


class tally_claim_result(Structure):
    """Opaque: tally_claim_result."""


class tally_claim_list(Structure):
    """Opaque: tally_claim_list."""


class tally_outbox_list(Structure):
    """Opaque: tally_outbox_list."""


OptionsP = POINTER(tally_options)
DbP = POINTER(tally_db)
BatchP = POINTER(tally_batch)
CounterListP = POINTER(tally_counter_list)
KeyListP = POINTER(tally_key_list)
MarkerListP = POINTER(tally_marker_list)
ClaimResultP = POINTER(tally_claim_result)
ClaimListP = POINTER(tally_claim_list)
OutboxListP = POINTER(tally_outbox_list)

# A borrowed `const char*` with a length beside it: POINTER(c_char), read
# with ctypes.string_at(ptr, len) (c_char_p would stop at a NUL byte).
CharP = POINTER(c_char)
# `char** errmsg` and the other strings tally allocates: read as an address,
# copied, then given back with tally_free.
ErrP = POINTER(c_void_p)

# int64_t (*now_ms)(void* ctx)
CLOCK_FN = CFUNCTYPE(c_int64, c_void_p)

# ---- structs, fields in c.h's order and types ----


class tally_counter_spec(Structure):
    _fields_ = [
        ("shards", c_uint32),
        ("policy", c_int),
        ("dedupe_window_ms", c_int64),
        ("bucket", c_int),
        ("retention_ms", c_int64),
        ("outbox", c_int),
        ("keyed", c_int),
        ("has_min", c_int),
        ("min", c_int64),
        ("has_max", c_int),
        ("max", c_int64),
        ("sliding", c_int),
    ]


class tally_counter_info(Structure):
    _fields_ = [
        ("name", CharP),
        ("name_len", c_size_t),
        ("id", c_uint64),
        ("schema_version", c_uint32),
        ("created_at_ms", c_int64),
        ("flags", c_uint32),
        ("spec", tally_counter_spec),
    ]


class tally_write_options(Structure):
    _fields_ = [
        ("affinity_key", CharP),
        ("affinity_key_len", c_size_t),
        ("event_time_ms", c_int64),
        ("saturate", c_int),
    ]


class tally_increment_result(Structure):
    _fields_ = [
        ("outcome", c_int),
        ("shard", c_uint32),
        ("value", c_int64),
        ("applied", c_int64),
        ("remaining", c_int64),
        ("window_ends_ms", c_int64),
    ]


class tally_cached_value(Structure):
    _fields_ = [
        ("value", c_int64),
        ("as_of_ms", c_int64),
        ("lag_ms", c_int64),
        ("lag_increments", c_uint64),
        ("lag_increments_known", c_int),
    ]


class tally_quota_state(Structure):
    _fields_ = [
        ("used", c_int64),
        ("remaining", c_int64),
        ("window_start_ms", c_int64),
        ("window_ends_ms", c_int64),
        ("previous_used", c_int64),
    ]


class tally_key_value(Structure):
    _fields_ = [
        ("key", CharP),
        ("key_len", c_size_t),
        ("value", c_int64),
        ("out_of_range", c_int),
    ]


class tally_top_keys_info(Structure):
    _fields_ = [
        ("key_count", c_uint64),
        ("total", c_int64),
        ("out_of_range_keys", c_uint64),
        ("first_out_of_range_key", CharP),
        ("first_out_of_range_key_len", c_size_t),
        ("as_of_ms", c_int64),
        ("lag_ms", c_int64),
        ("exact", c_int),
    ]


class tally_marker_info(Structure):
    _fields_ = [
        ("event_id", CharP),
        ("event_id_len", c_size_t),
        ("key", CharP),
        ("key_len", c_size_t),
        ("shard", c_uint32),
        ("delta", c_int64),
        ("created_at_ms", c_int64),
        ("expires_at_ms", c_int64),
        ("pinned", c_int),
        ("strict", c_int),
        ("refused", c_int),
        ("asked", c_int64),
        ("value", c_int64),
        ("window_ends_ms", c_int64),
        ("remaining", c_int64),
        ("reset", c_int),
        ("remaining_kept", c_int),
    ]


class tally_reservation_result(Structure):
    _fields_ = [
        ("outcome", c_int),
        ("state", c_int),
        ("units", c_int64),
        ("expires_at_ms", c_int64),
        ("value", c_int64),
        ("available", c_int64),
    ]


class tally_reservation_info(Structure):
    _fields_ = [
        ("state", c_int),
        ("units", c_int64),
        ("created_at_ms", c_int64),
        ("expires_at_ms", c_int64),
        ("closed_at_ms", c_int64),
    ]


class tally_held_value(Structure):
    _fields_ = [
        ("value", c_int64),
        ("held", c_int64),
        ("available", c_int64),
        ("open", c_uint64),
        ("next_expiry_ms", c_int64),
    ]


class tally_claim_info(Structure):
    _fields_ = [
        ("key", CharP),
        ("key_len", c_size_t),
        ("state", c_int),
        ("token", c_uint64),
        ("holder", CharP),
        ("holder_len", c_size_t),
        ("granted_at_ms", c_int64),
        ("lease_until_ms", c_int64),
        ("ended_at_ms", c_int64),
        ("result", CharP),
        ("result_len", c_size_t),
    ]


class tally_outbox_entry(Structure):
    _fields_ = [
        ("seq", c_uint64),
        ("counter", CharP),
        ("counter_len", c_size_t),
        ("key", CharP),
        ("key_len", c_size_t),
        ("event_id", CharP),
        ("event_id_len", c_size_t),
        ("delta", c_int64),
        ("time_ms", c_int64),
        ("origin", CharP),
        ("origin_len", c_size_t),
        ("origin_seq", c_uint64),
    ]


class tally_outbox_status(Structure):
    _fields_ = [
        ("entries", c_uint64),
        ("acked_through", c_uint64),
        ("last_seq", c_uint64),
        ("oldest_time_ms", c_int64),
        ("age_ms", c_int64),
    ]


class tally_sync_report(Structure):
    _fields_ = [
        ("entries", c_uint64),
        ("applied", c_uint64),
        ("duplicates", c_uint64),
        ("batches", c_uint64),
        ("acked_through", c_uint64),
    ]


class tally_verify_report(Structure):
    _fields_ = [
        ("counters", c_uint64),
        ("shard_keys", c_uint64),
        ("markers", c_uint64),
        ("sums_compared", c_uint64),
        ("keys_compared", c_uint64),
        ("reservations", c_uint64),
        ("problems", c_uint64),
        ("problems_dropped", c_uint64),
    ]


class tally_engine_stats(Structure):
    _fields_ = [
        ("applied", c_uint64),
        ("duplicates", c_uint64),
        ("conflicts", c_uint64),
        ("outside_window", c_uint64),
        ("refused", c_uint64),
        ("rejected", c_uint64),
        ("group_commits", c_uint64),
        ("group_members", c_uint64),
    ]


class tally_backup_info(Structure):
    _fields_ = [
        ("id", c_uint32),
        ("created_at_s", c_int64),
        ("bytes", c_uint64),
        ("files", c_uint32),
    ]


# ---- functions: name -> (restype, argtypes), in c.h's order ----

_code = c_int  # tally_code
_s = c_char_p  # a byte string's pointer (paired with a c_size_t length)
_n = c_size_t

SIGNATURES = {
    # codes, names, version, memory
    "tally_code_name": (c_char_p, [c_int]),
    "tally_version": (c_char_p, []),
    "tally_version_number": (c_int, []),
    "tally_storage_engine_version": (c_char_p, []),
    "tally_free": (None, [c_void_p]),
    "tally_outcome_name": (c_char_p, [c_int]),
    "tally_hold_state_name": (c_char_p, [c_int]),
    "tally_claim_state_name": (c_char_p, [c_int]),
    "tally_claim_answer_name": (c_char_p, [c_int]),
    # options and opening
    "tally_options_create": (OptionsP, []),
    "tally_options_destroy": (None, [OptionsP]),
    "tally_options_set_create_if_missing": (None, [OptionsP, c_int]),
    "tally_options_set_read_only": (None, [OptionsP, c_int]),
    "tally_options_set_reads": (None, [OptionsP, c_uint32]),
    "tally_options_set_sync": (None, [OptionsP, c_int]),
    "tally_options_set_block_cache_bytes": (None, [OptionsP, c_size_t]),
    "tally_options_set_write_buffer_bytes": (None, [OptionsP, c_size_t]),
    "tally_options_set_max_wal_bytes": (None, [OptionsP, c_uint64]),
    "tally_options_set_rollup_interval_ms": (None, [OptionsP, c_uint32]),
    "tally_options_set_group_commit_max_delay_us": (None, [OptionsP, c_uint32]),
    "tally_options_set_max_pending_operands": (None, [OptionsP, c_size_t]),
    "tally_options_set_event_lock_stripes": (None, [OptionsP, c_uint32]),
    "tally_options_set_stats_publish_interval_ms": (None, [OptionsP, c_uint32]),
    "tally_options_set_expiry_sweep_seconds": (None, [OptionsP, c_uint64]),
    "tally_options_set_outbox_max_entries": (None, [OptionsP, c_uint64]),
    "tally_options_set_group_commit_max_bytes": (None, [OptionsP, c_size_t]),
    "tally_options_set_group_commit_max_ops": (None, [OptionsP, c_size_t]),
    "tally_options_set_salvage_wal": (None, [OptionsP, c_int]),
    "tally_options_set_clock": (None, [OptionsP, CLOCK_FN, c_void_p]),
    "tally_open": (_code, [OptionsP, c_char_p, POINTER(DbP), ErrP]),
    "tally_close": (None, [DbP]),
    # counters
    "tally_counter_spec_init": (None, [POINTER(tally_counter_spec)]),
    "tally_create_counter": (
        _code, [DbP, _s, _n, POINTER(tally_counter_spec), ErrP]),
    "tally_describe_counter": (
        _code, [DbP, _s, _n, POINTER(tally_counter_info), ErrP]),
    "tally_list_counters": (_code, [DbP, POINTER(CounterListP), ErrP]),
    "tally_counter_list_count": (c_size_t, [CounterListP]),
    "tally_counter_list_get": (
        c_int, [CounterListP, c_size_t, POINTER(tally_counter_info)]),
    "tally_counter_list_destroy": (None, [CounterListP]),
    "tally_delete_counter": (_code, [DbP, _s, _n, ErrP]),
    # writes
    "tally_write_options_init": (None, [POINTER(tally_write_options)]),
    "tally_increment": (
        _code, [DbP, _s, _n, _s, _n, c_int64, POINTER(tally_write_options),
                POINTER(tally_increment_result), ErrP]),
    "tally_increment_once": (
        _code, [DbP, _s, _n, _s, _n, _s, _n, c_int64,
                POINTER(tally_write_options),
                POINTER(tally_increment_result), ErrP]),
    "tally_reset": (
        _code, [DbP, _s, _n, _s, _n, _s, _n, c_int64,
                POINTER(tally_write_options),
                POINTER(tally_increment_result), ErrP]),
    "tally_batch_create": (BatchP, []),
    "tally_batch_destroy": (None, [BatchP]),
    "tally_batch_clear": (None, [BatchP]),
    "tally_batch_count": (c_size_t, [BatchP]),
    "tally_batch_add": (
        _code, [BatchP, _s, _n, _s, _n, c_int64,
                POINTER(tally_write_options), ErrP]),
    "tally_batch_add_once": (
        _code, [BatchP, _s, _n, _s, _n, _s, _n, c_int64,
                POINTER(tally_write_options), ErrP]),
    "tally_apply": (
        _code, [DbP, BatchP, POINTER(tally_increment_result), c_size_t, ErrP]),
    # reads
    "tally_read_exact": (
        _code, [DbP, _s, _n, _s, _n, POINTER(c_int64), ErrP]),
    "tally_read_range": (
        _code, [DbP, _s, _n, _s, _n, c_int64, c_int64, POINTER(c_int64),
                ErrP]),
    "tally_shard_counts": (
        _code, [DbP, _s, _n, _s, _n, POINTER(c_int64), c_size_t,
                POINTER(c_size_t), ErrP]),
    "tally_read_keys": (
        _code, [DbP, _s, _n, POINTER(c_char_p), POINTER(c_size_t), c_size_t,
                POINTER(c_int64), ErrP]),
    "tally_read_cached": (
        _code, [DbP, _s, _n, POINTER(tally_cached_value), ErrP]),
    "tally_rollup_now": (_code, [DbP, _s, _n, ErrP]),
    "tally_refresh": (_code, [DbP, ErrP]),
    "tally_read_quota": (
        _code, [DbP, _s, _n, _s, _n, POINTER(tally_quota_state), ErrP]),
    # keyed counters
    "tally_key_list_count": (c_size_t, [KeyListP]),
    "tally_key_list_get": (
        c_int, [KeyListP, c_size_t, POINTER(tally_key_value)]),
    "tally_key_list_destroy": (None, [KeyListP]),
    "tally_list_keys": (
        _code, [DbP, _s, _n, _s, _n, _s, _n, c_size_t, POINTER(KeyListP),
                ErrP]),
    "tally_top_keys": (
        _code, [DbP, _s, _n, c_size_t, c_int, POINTER(KeyListP),
                POINTER(tally_top_keys_info), ErrP]),
    "tally_delete_key": (_code, [DbP, _s, _n, _s, _n, ErrP]),
    # markers
    "tally_marker_list_count": (c_size_t, [MarkerListP]),
    "tally_marker_list_get": (
        c_int, [MarkerListP, c_size_t, POINTER(tally_marker_info)]),
    "tally_marker_list_destroy": (None, [MarkerListP]),
    "tally_count_markers": (
        _code, [DbP, _s, _n, _s, _n, POINTER(c_uint64), ErrP]),
    "tally_list_markers": (
        _code, [DbP, _s, _n, _s, _n, c_size_t, c_int64, _s, _n,
                POINTER(MarkerListP), ErrP]),
    "tally_get_marker": (
        _code, [DbP, _s, _n, _s, _n, _s, _n, POINTER(MarkerListP), ErrP]),
    # reservations
    "tally_reserve": (
        _code, [DbP, _s, _n, _s, _n, _s, _n, c_int64, c_int64,
                POINTER(tally_reservation_result), ErrP]),
    "tally_commit_reservation": (
        _code, [DbP, _s, _n, _s, _n, _s, _n,
                POINTER(tally_reservation_result), ErrP]),
    "tally_release_reservation": (
        _code, [DbP, _s, _n, _s, _n, _s, _n,
                POINTER(tally_reservation_result), ErrP]),
    "tally_get_reservation": (
        _code, [DbP, _s, _n, _s, _n, _s, _n,
                POINTER(tally_reservation_info), ErrP]),
    "tally_read_held": (
        _code, [DbP, _s, _n, _s, _n, POINTER(tally_held_value), ErrP]),
    # claims
    "tally_claim_result_answer": (c_int, [ClaimResultP]),
    "tally_claim_result_repeated": (c_int, [ClaimResultP]),
    "tally_claim_result_claim": (
        None, [ClaimResultP, POINTER(tally_claim_info)]),
    "tally_claim_result_counted_count": (c_size_t, [ClaimResultP]),
    "tally_claim_result_counted": (
        c_int, [ClaimResultP, c_size_t, POINTER(tally_increment_result)]),
    "tally_claim_result_destroy": (None, [ClaimResultP]),
    "tally_claim": (
        _code, [DbP, _s, _n, _s, _n, c_int64, POINTER(ClaimResultP), ErrP]),
    "tally_complete_claim": (
        _code, [DbP, _s, _n, c_uint64, _s, _n, BatchP,
                POINTER(ClaimResultP), ErrP]),
    "tally_release_claim": (
        _code, [DbP, _s, _n, c_uint64, POINTER(ClaimResultP), ErrP]),
    "tally_claim_list_count": (c_size_t, [ClaimListP]),
    "tally_claim_list_get": (
        c_int, [ClaimListP, c_size_t, POINTER(tally_claim_info)]),
    "tally_claim_list_destroy": (None, [ClaimListP]),
    "tally_get_claim": (_code, [DbP, _s, _n, POINTER(ClaimListP), ErrP]),
    "tally_list_claims": (
        _code, [DbP, c_int, c_size_t, _s, _n, POINTER(ClaimListP), ErrP]),
    # the outbox and sync
    "tally_outbox_list_count": (c_size_t, [OutboxListP]),
    "tally_outbox_list_get": (
        c_int, [OutboxListP, c_size_t, POINTER(tally_outbox_entry)]),
    "tally_outbox_list_destroy": (None, [OutboxListP]),
    "tally_read_outbox": (
        _code, [DbP, c_uint64, c_size_t, POINTER(OutboxListP), ErrP]),
    "tally_ack_outbox": (_code, [DbP, c_uint64, ErrP]),
    "tally_get_outbox_status": (
        _code, [DbP, POINTER(tally_outbox_status), ErrP]),
    "tally_database_id": (_code, [DbP, ErrP, ErrP]),
    "tally_sync_outbox": (
        _code, [DbP, DbP, c_size_t, c_int, POINTER(tally_sync_report), ErrP]),
    # administration, checkpoints, backups
    "tally_verify": (
        _code, [DbP, POINTER(tally_verify_report), ErrP, ErrP]),
    "tally_compact": (_code, [DbP, ErrP]),
    "tally_get_stats": (_code, [DbP, POINTER(tally_engine_stats), ErrP]),
    "tally_checkpoint": (_code, [DbP, c_char_p, ErrP]),
    "tally_create_backup": (
        _code, [DbP, c_char_p, POINTER(tally_backup_info), ErrP]),
    "tally_list_backups": (
        _code, [c_char_p, POINTER(tally_backup_info), c_size_t,
                POINTER(c_size_t), ErrP]),
    "tally_verify_backup": (_code, [c_char_p, c_uint32, ErrP]),
    "tally_restore_backup": (_code, [c_char_p, c_uint32, c_char_p, ErrP]),
}


def _candidates() -> List[Tuple[str, Optional[str]]]:
    """(how it was found, what to dlopen) in the documented order."""
    out: List[Tuple[str, Optional[str]]] = []
    env = os.environ.get("TALLY_LIBRARY")
    if env:
        out.append(("TALLY_LIBRARY=" + env, env))
    else:
        out.append(("TALLY_LIBRARY (not set)", None))
    found = ctypes.util.find_library("tally")
    if found:
        out.append(('ctypes.util.find_library("tally") = ' + found, found))
    else:
        out.append(('ctypes.util.find_library("tally") (found nothing)', None))
    out.append(('"libtally.so" (the dynamic loader\'s search path)',
                "libtally.so"))
    return out


def _load() -> Tuple[ctypes.CDLL, str]:
    tried: List[str] = []
    for how, name in _candidates():
        if name is None:
            tried.append(how)
            continue
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            tried.append(f"{how}: {e}")
    raise ImportError(
        "tally: cannot load libtally; tried, in order:\n  - "
        + "\n  - ".join(tried)
        + "\nSet TALLY_LIBRARY to the path of libtally.so.* (e.g. "
        "build/libtally.so.0.1 of a CMake build of tally).")


def _declare(cdll: ctypes.CDLL, path: str) -> None:
    missing = []
    for name, (restype, argtypes) in SIGNATURES.items():
        try:
            fn = getattr(cdll, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise ImportError(
            f"tally: {path} lacks C API functions {', '.join(missing)}: it "
            "is not a libtally built with bindings/c (or is another "
            "version); set TALLY_LIBRARY to the right libtally.so.*")


def _check_version(cdll: ctypes.CDLL, path: str) -> str:
    raw: Optional[bytes] = cdll.tally_version()
    got = raw.decode("ascii", "replace") if raw else ""
    want = __version__.split(".")[:2]
    if got.split(".")[:2] != want:
        raise ImportError(
            f"tally: {path} is libtally {got!r}, this package is "
            f"{__version__} and needs libtally {'.'.join(want)}.x; set "
            "TALLY_LIBRARY to a matching libtally.so.*")
    return got


lib, library_path = _load()
_declare(lib, library_path)
library_version = _check_version(lib, library_path)
