"""The module itself: versions, finding the library, the ctypes declarations
against include/tally/c.h, the enums' names and the error classes."""

from __future__ import annotations

import ctypes.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import tally
from tally import _lib

REPO = pathlib.Path(__file__).resolve().parents[2]
C_H = REPO / "include" / "tally" / "c.h"


def test_version_matches_package():
    assert tally.__version__ == "0.1.0"
    v = tally.version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", v)
    assert v.split(".")[:2] == tally.__version__.split(".")[:2]
    major, minor, patch = (int(x) for x in v.split("."))
    assert _lib.lib.tally_version_number() == (
        major * 1_000_000 + minor * 1000 + patch)


def test_storage_engine_version_names_rocksdb():
    assert "rocksdb" in tally.storage_engine_version().lower()


def _import_in_child(env_library, cwd):
    """Imports tally in a fresh interpreter with TALLY_LIBRARY set as
    given (None: unset); returns (returncode, stderr)."""
    env = dict(os.environ)
    env.pop("TALLY_LIBRARY", None)
    if env_library is not None:
        env["TALLY_LIBRARY"] = env_library
    # The package the parent imported, wherever it came from.
    env["PYTHONPATH"] = str(pathlib.Path(tally.__file__).parents[1])
    env["LD_LIBRARY_PATH"] = ""
    p = subprocess.run([sys.executable, "-c", "import tally"], env=env,
                       cwd=cwd, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


@pytest.mark.skipif(ctypes.util.find_library("tally") is not None,
                    reason="a libtally is installed where find_library looks")
def test_a_missing_library_is_an_import_error_naming_what_was_tried(
        tmp_path):
    bad = str(tmp_path / "libtally.so.0.1")
    code, err = _import_in_child(bad, tmp_path)
    assert code != 0
    assert "ImportError" in err
    assert "TALLY_LIBRARY=" + bad in err
    assert 'find_library("tally")' in err
    assert '"libtally.so"' in err
    assert "Set TALLY_LIBRARY" in err


def test_the_library_is_found_through_tally_library():
    code, err = _import_in_child(os.environ.get("TALLY_LIBRARY")
                                 or _lib.library_path, os.getcwd())
    assert code == 0, err


def test_a_library_of_another_minor_version_is_refused():
    class OtherVersion:  # a stand-in for a CDLL: only the version is read
        @staticmethod
        def tally_version():
            return b"0.99.0"

    with pytest.raises(ImportError, match=r"0\.99\.0.*0\.1\.0"):
        _lib._check_version(OtherVersion(), "/x/libtally.so.0.99")
    assert _lib._check_version(_lib.lib, _lib.library_path) == tally.version()


def _c_h_functions():
    text = C_H.read_text()
    return set(re.findall(r"TALLY_EXPORT[^;(]*?\b(tally_\w+)\s*\(", text))


def test_every_c_h_function_is_declared_and_nothing_else():
    assert _c_h_functions() == set(_lib.SIGNATURES)
    for name in _lib.SIGNATURES:
        fn = getattr(_lib.lib, name)
        assert fn.argtypes is not None, name


_SCALARS = {
    "int": "c_int", "size_t": "c_size_t", "uint32_t": "c_uint32",
    "uint64_t": "c_uint64", "int64_t": "c_int64", "void*": "c_void_p",
    "const char*": "c_char_p", "char**": "ErrP", "tally_code": "c_int",
    "const char* const*": "POINTER(c_char_p)",
}


def _ctype_of(c_type):
    """A c.h parameter or return type -> the ctypes type it must be."""
    c_type = re.sub(r"\s*\*", "*", c_type.strip())
    if c_type == "void":
        return None
    if c_type in _SCALARS:
        name = _SCALARS[c_type]
        if name.startswith("POINTER("):
            return _lib.POINTER(getattr(_lib.ctypes, name[8:-1]))
        return getattr(_lib, name, None) or getattr(_lib.ctypes, name)
    base = c_type.replace("const ", "")
    stars = len(base) - len(base.rstrip("*"))
    base = base.rstrip("*")
    if base in _SCALARS:  # int64_t*, size_t*, ...
        t = _ctype_of(base)
    else:
        t = getattr(_lib, base)
        if not getattr(t, "_fields_", None):
            t, stars = _lib.POINTER(t), stars - 1  # an opaque handle
    for _ in range(stars):
        t = _lib.POINTER(t)
    return t


def test_every_signature_matches_c_h():
    text = re.sub(r"/\*.*?\*/", "", C_H.read_text(), flags=re.S)
    decls = re.findall(r"TALLY_EXPORT\s+([^;]*?)\b(tally_\w+)\s*\((.*?)\);",
                       text, re.S)
    assert len(decls) == len(_lib.SIGNATURES)
    for ret, name, params in decls:
        restype, argtypes = _lib.SIGNATURES[name]
        assert _ctype_of(ret) is restype, name
        params = " ".join(params.split())
        if params == "void":
            assert argtypes == [], name
            continue
        if "(*" in params:  # the clock: int64_t (*now_ms)(void* ctx)
            params = re.sub(r"int64_t \(\*now_ms\)\(void\* ctx\)",
                            "CLOCK now_ms", params)
        want = []
        for param in params.split(","):
            c_type = param.strip().rsplit(" ", 1)[0]
            want.append(_lib.CLOCK_FN if c_type == "CLOCK"
                        else _ctype_of(c_type))
        assert argtypes == want, name


def _c_h_constants():
    text = C_H.read_text()
    return dict((n, int(v)) for n, v in
                re.findall(r"\b(TALLY_[A-Z_]+)\s*=\s*(\d+)", text))


def test_every_c_h_constant_has_its_value():
    constants = _c_h_constants()
    assert len(constants) > 40
    for name, value in constants.items():
        assert getattr(_lib, name) == value, name


STRUCTS = [name for name in dir(_lib)
           if name.startswith("tally_")
           and isinstance(getattr(_lib, name), type)
           and issubclass(getattr(_lib, name), _lib.Structure)
           and getattr(getattr(_lib, name), "_fields_", None)]


def test_every_c_h_struct_is_declared():
    text = C_H.read_text()
    declared = set(re.findall(r"typedef struct (tally_\w+) \{", text))
    assert declared == set(STRUCTS)


def test_struct_fields_follow_c_h_in_order():
    text = C_H.read_text()
    for name in STRUCTS:
        found = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name),
                          text, re.S)
        assert found, name
        body = found.group(1)
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        c_fields = re.findall(r"(\w+);", body)
        py_fields = [f for f, _ in getattr(_lib, name)._fields_]
        assert py_fields == c_fields, name


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_struct_layout_matches_the_c_compiler(tmp_path):
    """sizeof and offsetof of every struct, by the C compiler, against
    ctypes (the package needs no compiler; this check uses one if there
    is one)."""
    lines = []
    for name in STRUCTS:
        lines.append(f'  printf("{name} %zu\\n", sizeof({name}));')
        for field, _ in getattr(_lib, name)._fields_:
            lines.append(f'  printf("{name}.{field} %zu\\n", '
                         f'offsetof({name}, {field}));')
    src = tmp_path / "layout.c"
    src.write_text(textwrap.dedent("""\
        #include <stddef.h>
        #include <stdio.h>
        #include "tally/c.h"
        int main(void) {
        %s
          return 0;
        }
        """) % "\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run(["cc", "-std=c99", "-I", str(REPO / "include"), str(src),
                    "-o", str(exe)], check=True, timeout=120)
    out = subprocess.run([str(exe)], check=True, capture_output=True,
                         text=True).stdout
    got = dict(line.split() for line in out.splitlines())
    for name in STRUCTS:
        cls = getattr(_lib, name)
        assert int(got[name]) == _lib.ctypes.sizeof(cls), name
        for field, _ in cls._fields_:
            assert int(got[f"{name}.{field}"]) == getattr(cls, field).offset, \
                f"{name}.{field}"


@pytest.mark.parametrize("enum_cls, c_name", [
    (tally.Outcome, "tally_outcome_name"),
    (tally.HoldState, "tally_hold_state_name"),
    (tally.ClaimState, "tally_claim_state_name"),
    (tally.ClaimAnswer, "tally_claim_answer_name"),
])
def test_enum_values_are_the_c_names_in_c_order(enum_cls, c_name):
    fn = getattr(_lib.lib, c_name)
    for i, member in enumerate(enum_cls):
        assert fn(i).decode() == member.value
    assert fn(len(enum_cls)) == b"unknown"


def test_enums_compare_with_their_names():
    assert tally.Outcome.APPLIED == "applied"
    assert str(tally.Outcome.OUTSIDE_WINDOW) == "outside_window"
    assert tally.Bucket("minute") is tally.Bucket.MINUTE
    assert int(tally.Reads.VALUES | tally.Reads.MARKERS) == 3
    assert tally.Reads.ALL == 15


ERRORS = [
    (tally.NotFoundError, 1, "NotFound"),
    (tally.InvalidArgumentError, 2, "InvalidArgument"),
    (tally.CorruptionError, 3, "Corruption"),
    (tally.TallyIOError, 4, "IOError"),
    (tally.OutOfRangeError, 5, "OutOfRange"),
    (tally.BusyError, 6, "Busy"),
    (tally.AlreadyExistsError, 7, "AlreadyExists"),
    (tally.NotSupportedError, 8, "NotSupported"),
]


@pytest.mark.parametrize("cls, code, name", ERRORS)
def test_each_error_class_has_its_code(cls, code, name):
    assert issubclass(cls, tally.Error)
    assert issubclass(cls, Exception)
    assert cls.code == code
    e = cls("a message")
    assert e.code == code and e.code_name == name
    assert str(e) == "a message" and e.message == "a message"
    assert _lib.lib.tally_code_name(code).decode() == name


def test_closed_error_is_an_invalid_argument():
    assert issubclass(tally.ClosedError, tally.InvalidArgumentError)
    assert _lib.lib.tally_code_name(99) == b"unknown"


def test_public_names_are_exported():
    for name in tally.__all__:
        assert hasattr(tally, name), name
