#!/bin/sh
# check_install.sh BUILD_DIR SOURCE_DIR CMAKE: installs tally from BUILD_DIR
# into a temporary prefix, then configures, builds and runs the consumer
# project in SOURCE_DIR against it with FlatBuffers made unfindable: the
# installed package must not require it (a private, header-only dependency).
set -eu
build="$1" src="$2" cmake="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$cmake" --install "$build" --prefix "$tmp/prefix" >/dev/null
"$cmake" -S "$src" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_FlatBuffers=ON -DCMAKE_BUILD_TYPE=Release \
  >/dev/null
"$cmake" --build "$tmp/build" >/dev/null
"$tmp/build/consumer" "$tmp/db"
echo "installed package found and used without FlatBuffers"
