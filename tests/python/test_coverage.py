"""Every public method and function of the package is called by some test:
a new one without a test fails here."""

from __future__ import annotations

import inspect
import pathlib
import re

import tally

HERE = pathlib.Path(__file__).resolve().parent


def _test_sources() -> str:
    return "\n".join(p.read_text() for p in sorted(HERE.glob("test_*.py"))
                     if p.name != pathlib.Path(__file__).name)


def _public(members):
    return sorted(name for name, _ in members if not name.startswith("_"))


def test_every_public_method_is_called():
    sources = _test_sources()
    functions = _public(inspect.getmembers(tally, inspect.isfunction))
    methods = {
        cls.__name__: _public(inspect.getmembers(cls, inspect.isfunction))
        for cls in (tally.Db, tally.Batch)
    }
    properties = {
        cls.__name__: _public(inspect.getmembers(
            cls, lambda m: isinstance(m, property)))
        for cls in (tally.Db, tally.Batch)
    }
    # Sanity: the lists are what the package offers.
    assert "open" in functions and "create_backup" in functions
    assert "increment_once" in methods["Db"] and "add_once" in methods["Batch"]
    assert len(methods["Db"]) >= 45

    missing = [f"tally.{name}()" for name in functions
               if not re.search(r"\btally\.%s\(" % name, sources)]
    for cls, names in methods.items():
        missing += [f"{cls}.{name}()" for name in names
                    if not re.search(r"\.%s\(" % name, sources)]
    for cls, names in properties.items():
        missing += [f"{cls}.{name}" for name in names
                    if not re.search(r"\.%s\b" % name, sources)]
    assert not missing, f"public names no test calls: {missing}"


def test_batch_and_db_protocols_are_used():
    sources = _test_sources()
    assert "len(batch)" in sources  # Batch.__len__
    assert re.search(r"with tally\.open\(", sources)  # Db.__enter__/__exit__
