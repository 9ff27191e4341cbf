#!/bin/sh
# check_install.sh BUILD_DIR SOURCE_DIR CMAKE: installs tally from BUILD_DIR
# into a temporary prefix and builds and runs the order-counter examples
# (examples/orders/) against it, the ways docs/embedding.md tells users to:
#   1. CMake, find_package(tally), tally::tally (libtally.so) and
#      tally::tally_static (libtally.a), with FlatBuffers made unfindable
#      (the installed package must not require it: a private, header-only
#      dependency);
#   2. pkg-config tally (C++) and tally-c (C) against the shared library;
#   3. the Python example with the installed libtally.so;
#   4. the same pkg-config links against a static-only install (libtally.so removed, the
#      static variant of the .pc files, which names RocksDB, or RocksDB's
#      compression libraries where libtally.a holds the release RocksDB):
#      the programs must not need libtally.so.
# Each example counts 40 orders delivered twice and exits non-zero unless
# it finds 40, 40 markers and the revenue of the 40.
set -eu
build="$1" src="$2" cmake="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$cmake" --install "$build" --prefix "$tmp/prefix" >/dev/null
pcdir="$(dirname "$(find "$tmp/prefix" -name tally.pc)")"
libdir="$(dirname "$pcdir")"

echo "== find_package(tally), without FlatBuffers"
"$cmake" --no-warn-unused-cli -S "$src/examples/orders" -B "$tmp/cmake" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_FlatBuffers=ON -DCMAKE_BUILD_TYPE=Release \
  >/dev/null
"$cmake" --build "$tmp/cmake" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/cmake/orders" "$tmp/db-cmake"
ldd "$tmp/cmake/orders" | grep -q 'libtally\.so' || {
  echo "check_install: tally::tally did not link libtally.so" >&2
  exit 1
}
echo "== find_package(tally), tally::tally_static"
"$cmake" --no-warn-unused-cli -S "$src/examples/orders" -B "$tmp/cmake-static" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" -DORDERS_STATIC=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_FlatBuffers=ON -DCMAKE_BUILD_TYPE=Release \
  >/dev/null
"$cmake" --build "$tmp/cmake-static" >/dev/null
"$tmp/cmake-static/orders" "$tmp/db-cmake-static"
if ldd "$tmp/cmake-static/orders" | grep -q 'libtally\.so'; then
  echo "check_install: tally::tally_static linked libtally.so" >&2
  exit 1
fi

# link_and_run NAME: the C++ and the C example with pkg-config from $pcdir.
link_and_run() {
  c++ "$src/examples/orders/orders.cc" -o "$tmp/$1-cxx" \
    $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs tally)
  cc -std=c11 -Wall -Werror "$src/examples/orders/orders.c" -o "$tmp/$1-c" \
    $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs tally-c)
  "$tmp/$1-cxx" "$tmp/db-$1-cxx"
  "$tmp/$1-c" "$tmp/db-$1-c"
}

echo "== pkg-config, shared library"
export LD_LIBRARY_PATH="$libdir"
link_and_run shared
ldd "$tmp/shared-c" | grep -q 'libtally\.so' || {
  echo "check_install: the pkg-config link did not use libtally.so" >&2
  exit 1
}
unset LD_LIBRARY_PATH

echo "== Python (bindings/python), the installed libtally.so"
TALLY_LIBRARY="$(ls "$libdir"/libtally.so.*.*.* | head -1)" \
PYTHONPATH="$src/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
  /usr/bin/python3 "$src/examples/orders/orders.py" "$tmp/db-python"

echo "== pkg-config, static-only install"
rm -f "$libdir"/libtally.so*
cp "$build/pkgconfig/static/tally.pc" "$build/pkgconfig/static/tally-c.pc" \
  "$pcdir/"
link_and_run static
if ldd "$tmp/static-c" | grep -q 'libtally\.so'; then
  echo "check_install: the static link needs libtally.so" >&2
  exit 1
fi
echo "installed package used by CMake, pkg-config (shared and static) and Python"
