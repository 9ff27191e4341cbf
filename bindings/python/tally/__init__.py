"""tally: sharded counters with exactly-once increments, embedded (on
RocksDB), for Python: a ctypes binding of libtally's C API
(include/tally/c.h).

    import tally
    with tally.open("/tmp/counts") as db:
        db.create_counter("orders", shards=4)
        db.increment_once("orders", "order-17", 1)
        db.read_exact("orders")  # 1

Public names: open() and the Db it returns, Batch, the errors (Error and
one subclass per code), the enums and result types, the backup functions,
version() and storage_engine_version(). Ownership: a Db owns its database
until close() (or a `with` block's end); results are frozen values the
caller owns. Thread safety: a Db may be used from many threads at once; a
Batch is not synchronized. tally.db has the details. The library is found
through TALLY_LIBRARY, then ctypes.util.find_library("tally"), then
"libtally.so" (tally._lib).
"""

from ._lib import __version__
from . import db as _db
from .db import *  # noqa: F401,F403 (the names of tally.db.__all__)

# One list of public names: tally.db's, and the version.
__all__ = ["__version__"] + list(_db.__all__)
