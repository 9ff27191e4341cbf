#!/bin/sh
# check_exports.sh LIBRARY SONAME C_H: the shared library's dynamic symbol
# table holds the public API and nothing else, every function of tally/c.h
# among it, and its SONAME is the versioned one (docs/embedding.md, "ABI").
#
# Public: the C API (tally_*, unmangled) and the C++ names of include/tally/
# (tally::..., their typeinfo and vtables), except the namespaces that hold
# the implementation (tally::engine, wal, core, schema, and tally::internal
# but for DieReadingFailedResult, which Result<T>'s inline code calls).
# Anything else (rocksdb::, flatbuffers::, std:: instantiations, an engine
# class) fails, named.
set -eu
lib="$1" want="$2" c_h="$3"
soname="$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')"
if [ "$soname" != "$want" ]; then
  echo "check_exports: $lib has SONAME '$soname', not '$want'" >&2
  exit 1
fi
echo "SONAME $soname"
nm -D --defined-only "$lib" | awk '{print $NF}' | c++filt >"${TMPDIR:-/tmp}/exports.$$"
trap 'rm -f "${TMPDIR:-/tmp}/exports.$$"' EXIT
bad="$(sed -e 's/^typeinfo name for //' -e 's/^typeinfo for //' \
           -e 's/^vtable for //' "${TMPDIR:-/tmp}/exports.$$" |
  grep -v -E '^tally_[a-z0-9_]+$' |
  grep -v -E '^tally::internal::DieReadingFailedResult\(' |
  grep -v -E '^tally::(engine|wal|core|schema|internal|commit)::' |
  grep -v -E '^tally::' || true)"
private="$(grep -E '(^|[^A-Za-z_])tally::(engine|wal|core|schema|commit)::' \
  "${TMPDIR:-/tmp}/exports.$$" | head -20 || true)"
internal="$(grep -E '^tally::internal::' "${TMPDIR:-/tmp}/exports.$$" |
  grep -v DieReadingFailedResult || true)"
c_api="$(grep -c -E '^tally_[a-z0-9_]+$' "${TMPDIR:-/tmp}/exports.$$" || true)"
cxx_api="$(grep -c -E '^tally::' "${TMPDIR:-/tmp}/exports.$$" || true)"
total="$(wc -l <"${TMPDIR:-/tmp}/exports.$$")"
status=0
if [ -n "$bad" ] || [ -n "$private" ] || [ -n "$internal" ]; then
  echo "check_exports: $lib exports what is not the public API:" >&2
  printf '%s\n%s\n%s\n' "$bad" "$private" "$internal" | sed '/^$/d' | head -40 >&2
  status=1
fi
declared="$(grep -o -E '\btally_[a-z0-9_]+ *\(' "$c_h" | tr -d ' (' | sort -u)"
for f in $declared; do
  grep -q -x "$f" "${TMPDIR:-/tmp}/exports.$$" || {
    echo "check_exports: $f (tally/c.h) is not exported" >&2
    status=1
  }
done
echo "exports: $total symbols: $c_api C API functions, $cxx_api C++ names"
exit $status
