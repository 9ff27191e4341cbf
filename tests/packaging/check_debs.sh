#!/bin/sh
# check_debs.sh BUILD_DIR SOURCE_DIR [CPACK]: makes the Debian packages of
# the built tree BUILD_DIR with cpack (cmake/Packaging.cmake) into a
# temporary directory and checks them: the three packages and their control
# fields, the paths inside them, that every package they depend on exists in
# Debian, then, extracted into a scratch root (dpkg -x, nothing installed
# into /), counterctl runs from there without LD_LIBRARY_PATH (its RPATH
# finds the root's libtally), the library's SONAME, and the C example (examples/orders/orders.c) built
# against the root's headers and library through pkg-config (tally-c).
# SOURCE_DIR is the source tree (its public headers must all be packaged).
# One line per check; the first failure stops it with a message, exit 1.
#
# Two variants, told apart by the tree's CMakeCache.txt (TALLY_ROCKSDB_BUILD,
# cmake/Packaging.cmake): `system` (CI's trees) links Debian's librocksdb,
# so libtally0.1 must depend on librocksdb7.8 (and the library need
# librocksdb.so), libtally-dev on librocksdb-dev; `release` (the packages
# to ship, ./scripts/dev package) holds RocksDB: neither package may
# depend on librocksdb nor the library need librocksdb.so, libtally-dev
# depends on RocksDB's compression -dev packages, the runtime's and the
# dev package's copyright carry RocksDB's notices, and the installed CMake
# package links the order example (examples/orders) statically against
# the root's libtally.a with RocksDB's CMake package made unfindable. In
# both, the library exports the public API only
# (tests/install/check_exports.sh) and the installed CMake package names
# no path of the build machine.
set -eu

fail() {
  echo "check_debs: FAIL: $*" >&2
  exit 1
}
ok() { echo "ok: $*"; }

[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR SOURCE_DIR [CPACK]" >&2; exit 2; }
build="$(cd "$1" 2>/dev/null && pwd)" || fail "no build directory $1"
src="$(cd "$2" 2>/dev/null && pwd)" || fail "no source directory $2"
cpack="${3:-cpack}"

for tool in "$cpack" dpkg dpkg-deb dpkg-architecture dpkg-shlibdeps \
    apt-cache readelf nm c++filt pkg-config cc c++ ldd; do
  command -v "$tool" >/dev/null 2>&1 ||
    fail "$tool not found (dpkg-dev, apt, binutils, pkg-config, gcc, g++)"
done
[ -f "$build/CPackConfig.cmake" ] ||
  fail "$build/CPackConfig.cmake missing: the tree was configured without cmake/Packaging.cmake (or with TALLY_BUILD_SHARED off)"
variant="$(sed -n 's/^TALLY_ROCKSDB_BUILD:[A-Z]*=//p' "$build/CMakeCache.txt")"
case "$variant" in
  system|release) ok "variant: TALLY_ROCKSDB_BUILD=$variant ($build/CMakeCache.txt)" ;;
  *) fail "TALLY_ROCKSDB_BUILD in $build/CMakeCache.txt is '$variant', not system or release" ;;
esac
case "$cpack" in
  */*) cmake="$(dirname "$cpack")/cmake" ;;
  *) cmake=cmake ;;
esac

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
out="$tmp/out" root="$tmp/root"

# What the packages must be called, from the project's version: the
# runtime package is named from the SONAME, which names major.minor before
# 1.0 and the major after (cmake/TallyLibrary.cmake).
version="$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' \
  "$build/CPackConfig.cmake")"
[ -n "$version" ] || fail "no CPACK_PACKAGE_VERSION in $build/CPackConfig.cmake"
major="${version%%.*}"
minor="${version#*.}"
minor="${minor%%.*}"
if [ "$major" = 0 ]; then soversion="$major.$minor"; else soversion="$major"; fi
arch="$(dpkg --print-architecture)"
multiarch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)"
libdir="usr/lib/$multiarch"
runtime="libtally$soversion" dev="libtally-dev" tools="tally-tools"

# ---- cpack ----
if ! "$cpack" --config "$build/CPackConfig.cmake" -G DEB -B "$out" \
    >"$tmp/cpack.log" 2>&1; then
  cat "$tmp/cpack.log" >&2
  fail "cpack -G DEB failed (its output above)"
fi
ok "cpack -G DEB made $(cd "$out" && find . -maxdepth 1 -name '*.deb' | sed 's|^\./||' | sort | tr '\n' ' ')"
deb_of() { echo "$out/${1}_${version}_${arch}.deb"; }
for p in "$runtime" "$dev" "$tools"; do
  [ -f "$(deb_of "$p")" ] ||
    fail "$(basename "$(deb_of "$p")") missing; cpack made: $(ls "$out")"
done
ok "three packages: $runtime, $dev, $tools ($version, $arch)"

# ---- control fields ----
field() { dpkg-deb -f "$(deb_of "$1")" "$2"; }
expect_field() {  # PACKAGE FIELD VALUE
  v="$(field "$1" "$2")"
  [ "$v" = "$3" ] || fail "$1: $2 is '$v', not '$3'"
}
has_dep() {  # PACKAGE REGEX WHAT
  field "$1" Depends | tr ',' '\n' | sed 's/^ *//' | grep -Eq "$2" ||
    fail "$1: Depends '$(field "$1" Depends)' lacks $3"
}
lacks_dep() {  # PACKAGE REGEX WHY
  if field "$1" Depends | tr ',|' '\n' | sed 's/^ *//' | grep -Eq "$2"; then
    fail "$1: Depends '$(field "$1" Depends)' names $2, $3"
  fi
}
for p in "$runtime" "$dev" "$tools"; do
  expect_field "$p" Package "$p"
  expect_field "$p" Version "$version"
  expect_field "$p" Architecture "$arch"
  expect_field "$p" Maintainer "tally authors <tally@example.invalid>"
  [ -n "$(field "$p" Description)" ] || fail "$p: no Description"
done
expect_field "$runtime" Section libs
expect_field "$dev" Section libdevel
expect_field "$tools" Section utils
has_dep "$runtime" '^libc6( |$)' "libc6 (from dpkg-shlibdeps)"
has_dep "$runtime" '^libstdc\+\+6( |$)' "libstdc++6 (from dpkg-shlibdeps)"
has_dep "$dev" "^$runtime \\(= $version\\)\$" "$runtime (= $version)"
if [ "$variant" = system ]; then
  has_dep "$runtime" '^librocksdb[0-9.]+( |$)' "librocksdb (from dpkg-shlibdeps)"
  has_dep "$dev" '^librocksdb-dev( |$)' "librocksdb-dev"
else
  lacks_dep "$runtime" '^librocksdb' "though libtally.so contains RocksDB"
  lacks_dep "$dev" '^librocksdb' "though libtally.a contains RocksDB"
  has_dep "$runtime" '^libsnappy[0-9a-z.]*( |$)' "libsnappy (RocksDB's, from dpkg-shlibdeps)"
  has_dep "$dev" '^libsnappy-dev( |$)' "libsnappy-dev (libtally.a's RocksDB needs -lsnappy)"
fi
has_dep "$tools" "^$runtime \\(= $version\\)\$" "$runtime (= $version)"
for p in "$runtime" "$dev" "$tools"; do
  ok "$p: Depends: $(field "$p" Depends)"
done
dpkg-deb -I "$(deb_of "$runtime")" shlibs >"$tmp/shlibs" 2>/dev/null ||
  fail "$runtime: no shlibs control file"
grep -qx "libtally $soversion $runtime (>= $version)" "$tmp/shlibs" ||
  fail "$runtime: shlibs is '$(cat "$tmp/shlibs")'"
ok "$runtime: shlibs '$(cat "$tmp/shlibs")'"

# Every package named in a Depends line exists in Debian (apt's lists), the
# packages made here aside.
for p in "$runtime" "$dev" "$tools"; do field "$p" Depends; done |
  tr ',|' '\n' | sed 's/(.*)//; s/:any//; s/ //g' | grep -v '^$' |
  grep -vx -e "$runtime" -e "$dev" -e "$tools" | sort -u >"$tmp/deps"
while read -r name; do
  apt-cache show "$name" >/dev/null 2>&1 ||
    fail "Depends names $name, which apt-cache show does not know"
done <"$tmp/deps"
ok "every dependency is a Debian package: $(tr '\n' ' ' <"$tmp/deps")"

# ---- paths ----
# PACKAGE.all: every entry (./usr/...), PACKAGE.files: all but directories
# (files and links, which two packages cannot share).
for p in "$runtime" "$dev" "$tools"; do
  dpkg-deb -c "$(deb_of "$p")" |
    awk '{ n = $6; for (i = 7; i <= NF; i++) n = n " " $i
           sub(/ -> .*/, "", n); sub(/\/$/, "", n)
           print substr($1, 1, 1), n }' >"$tmp/$p.list"
  sed 's/^. //' "$tmp/$p.list" >"$tmp/$p.all"
  sed -n 's/^[^d] //p' "$tmp/$p.list" >"$tmp/$p.files"
  outside="$(grep -v -e '^\.$' -e '^\./usr$' -e '^\./usr/' "$tmp/$p.all" || true)"
  [ -z "$outside" ] || fail "$p holds paths outside /usr: $outside"
done
has_file() {  # PACKAGE PATH (without ./)
  grep -qx "\./$2" "$tmp/$1.files" ||
    fail "$1 lacks /$2; it holds: $(tr '\n' ' ' <"$tmp/$1.files")"
}
if ! grep -qx "\./$libdir/libtally\.so\.$soversion" "$tmp/$runtime.files"; then
  held="$(grep "/libtally\.so\.$soversion\$" "$tmp/$runtime.files" || true)"
  [ -z "$held" ] || fail "$runtime holds $held, not in /$libdir: the tree's CMAKE_INSTALL_LIBDIR is not lib/$multiarch (cmake/Packaging.cmake, 'Paths')"
fi
has_file "$runtime" "$libdir/libtally.so.$soversion"
has_file "$runtime" "$libdir/libtally.so.$version"
has_file "$dev" "$libdir/libtally.so"
has_file "$dev" "$libdir/libtally.a"
has_file "$dev" "$libdir/pkgconfig/tally.pc"
has_file "$dev" "$libdir/pkgconfig/tally-c.pc"
has_file "$dev" "$libdir/cmake/tally/tallyConfig.cmake"
has_file "$dev" "$libdir/cmake/tally/tallyConfigVersion.cmake"
has_file "$dev" "usr/include/tally/version.h"
for h in "$src"/include/tally/*.h; do
  has_file "$dev" "usr/include/tally/$(basename "$h")"
done
has_file "$tools" "usr/bin/counterctl"
has_file "$tools" "usr/share/man/man1/counterctl.1"
has_file "$tools" "usr/share/bash-completion/completions/counterctl"
has_file "$tools" "usr/share/zsh/vendor-completions/_counterctl"
for p in "$runtime" "$dev" "$tools"; do
  has_file "$p" "usr/share/doc/$p/copyright"
done
# dpkg refuses to install two packages that hold one file.
cat "$tmp/$runtime.files" "$tmp/$dev.files" "$tmp/$tools.files" | sort |
  uniq -d >"$tmp/shared"
[ ! -s "$tmp/shared" ] ||
  fail "files in more than one package: $(tr '\n' ' ' <"$tmp/shared")"
ok "paths: library in /$libdir, headers in /usr/include/tally (all $(find "$src/include/tally" -maxdepth 1 -name '*.h' | wc -l) of include/tally/), counterctl, man page, bash and zsh completion, a copyright file per package, no file in two packages"

# ---- a scratch root ----
mkdir -p "$root"
for p in "$runtime" "$dev" "$tools"; do dpkg -x "$(deb_of "$p")" "$root"; done
ok "extracted into $root"

lib="$root/$libdir/libtally.so.$soversion"
soname="$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[ "$soname" = "libtally.so.$soversion" ] ||
  fail "SONAME of $lib is '$soname', not libtally.so.$soversion"
ok "readelf: SONAME $soname"
needed="$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
case "$variant $needed" in
  "system "*librocksdb.so*|release*) ;;
  *) fail "$lib needs no librocksdb.so (NEEDED: $needed), though built on Debian's" ;;
esac
case "$variant $needed" in
  "release "*librocksdb*) fail "$lib needs librocksdb (NEEDED: $needed), though it contains RocksDB" ;;
esac
ok "readelf: NEEDED $needed"
exports="$("$src/tests/install/check_exports.sh" "$lib" "libtally.so.$soversion" \
  "$src/include/tally/c.h" 2>&1)" || { echo "$exports" >&2; fail "$lib exports more than the public API (above)"; }
ok "$(echo "$exports" | tail -n 1) (tests/install/check_exports.sh: no rocksdb::, no engine)"
for p in "$runtime" "$dev" "$tools"; do
  inside=no
  [ "$variant" = release ] && [ "$p" != "$tools" ] && inside=yes
  if grep -q '^Files: rocksdb/\*$' "$root/usr/share/doc/$p/copyright"; then
    [ "$inside" = yes ] || fail "$p's copyright names RocksDB, which $p does not contain"
  else
    [ "$inside" = no ] || fail "$p's copyright lacks RocksDB's notices (Files: rocksdb/*), though it contains RocksDB"
  fi
done
ok "copyright: RocksDB's notices where RocksDB is inside ($variant)"
cmakedir="$root/$libdir/cmake/tally"
leak="$(grep -l -r -e tally_rocksdb_release -e "$build" -e '/\.cache/' "$cmakedir" || true)"
[ -z "$leak" ] || fail "the CMake package names the build machine ($leak)"
ok "the CMake package names no build-machine path"

ctl="$root/usr/bin/counterctl"
rpath="$(readelf -d "$ctl" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')"
[ "$rpath" = "\$ORIGIN/../lib/$multiarch" ] ||
  fail "counterctl's RPATH is '$rpath', not \$ORIGIN/../lib/$multiarch"
# Where the loader finds a program's libtally (ldd), as a real path.
loaded() {  # PROGRAM (environment as the caller set it)
  l="$(ldd "$1" | sed -n 's/^[[:space:]]*libtally\.so[^ ]* => \(\/[^ ]*\).*/\1/p')"
  [ -n "$l" ] && realpath "$l"
}
resolved="$(unset LD_LIBRARY_PATH; loaded "$ctl")"
[ "$resolved" = "$(realpath "$lib")" ] ||
  fail "counterctl loads libtally from '$resolved', not the root's"
ok "counterctl: RPATH $rpath loads $root/$libdir/libtally.so.$soversion"

run_ctl() { env -u LD_LIBRARY_PATH "$ctl" --db "$tmp/ctl-db" "$@"; }
v="$(env -u LD_LIBRARY_PATH "$ctl" --version 2>&1)" ||
  fail "counterctl --version failed: $v"
echo "$v" | grep -q "$version" || fail "counterctl --version says '$v', not $version"
ok "counterctl --version: $(echo "$v" | head -n 1)"
run_ctl create orders --shards 2 >/dev/null || fail "counterctl create failed"
run_ctl incr orders --by 1 >/dev/null || fail "counterctl incr (1st) failed"
run_ctl incr orders --by 1 >/dev/null || fail "counterctl incr (2nd) failed"
got="$(run_ctl get orders | tail -n 1)" || fail "counterctl get failed"
[ "$got" = 2 ] || fail "counterctl get orders is '$got' after two incr, not 2"
ok "counterctl session: create, incr, incr, get -> 2"

head -c 200 "$root/usr/share/man/man1/counterctl.1" | grep -q '^\.TH' ||
  fail "usr/share/man/man1/counterctl.1 is not a man page (no .TH)"
grep -q counterctl "$root/usr/share/bash-completion/completions/counterctl" ||
  fail "the bash completion does not name counterctl"
grep -q '^#compdef counterctl' "$root/usr/share/zsh/vendor-completions/_counterctl" ||
  fail "the zsh completion has no #compdef counterctl line"
ok "man page and completions have content"

# ---- a C program against the root, found by pkg-config ----
pcdir="$root/$libdir/pkgconfig"
flags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs tally-c)" ||
  fail "pkg-config --cflags --libs tally-c failed with PKG_CONFIG_PATH=$pcdir"
# The files are relocatable (prefix=${pcfiledir}/../../..): their
# directories, made real, must be the root's.
for want in "I $root/usr/include" "L $root/$libdir"; do
  got="$(for w in $flags; do case "$w" in "-${want%% *}"*) realpath -m "${w#-?}" ;; esac; done)"
  [ "$got" = "$(realpath -m "${want#* }")" ] ||
    fail "pkg-config tally-c gives -${want%% *} '$got', not the root's ${want#* }"
done
ok "pkg-config tally-c: $flags"
# The C example (examples/orders/orders.c: 40 orders delivered twice,
# counted once with their amounts; it exits non-zero otherwise), built as
# a user would against the root.
# shellcheck disable=SC2086 # $flags is pkg-config's word list
cc -std=c99 -Wall -Wextra -Werror -o "$tmp/orders-c" \
  "$src/examples/orders/orders.c" $flags \
  2>"$tmp/cc.log" || { cat "$tmp/cc.log" >&2; fail "the C example did not build"; }
ok "C example (examples/orders/orders.c, C99) built with pkg-config's flags"
said="$(LD_LIBRARY_PATH="$root/$libdir" "$tmp/orders-c" "$tmp/c-db" 2>&1)" ||
  fail "the C example failed: $said"
[ "$said" = "orders 40, markers 40, revenue 59500 cents" ] ||
  fail "the C example said '$said', not 'orders 40, markers 40, revenue 59500 cents'"
resolved="$(LD_LIBRARY_PATH="$root/$libdir"; export LD_LIBRARY_PATH
             loaded "$tmp/orders-c")"
[ "$resolved" = "$(realpath "$lib")" ] ||
  fail "the C example loaded libtally from '$resolved', not the root's"
ok "C example: $said"

# The C++ headers compile from the root as pkg-config tally gives them.
cxxflags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags tally)" ||
  fail "pkg-config --cflags tally failed"
printf '#include <tally/tally.h>\n#include <tally/c.h>\nint main() { return 0; }\n' \
  >"$tmp/headers.cc"
# shellcheck disable=SC2086
c++ -fsyntax-only $cxxflags "$tmp/headers.cc" 2>"$tmp/cxx.log" ||
  { cat "$tmp/cxx.log" >&2; fail "tally/tally.h does not compile from the root"; }
ok "C++ headers compile with pkg-config tally's flags ($cxxflags)"

# ---- release: libtally.a holds RocksDB ----
# The order example, static, from the root's CMake package: with RocksDB's
# own package unfindable, linked, run, needing neither libtally.so nor
# librocksdb.so.
if [ "$variant" = release ]; then
  if ! { "$cmake" --no-warn-unused-cli -S "$src/examples/orders" \
           -B "$tmp/static" -DCMAKE_PREFIX_PATH="$root/usr" -DORDERS_STATIC=ON \
           -DCMAKE_DISABLE_FIND_PACKAGE_RocksDB=ON -DCMAKE_BUILD_TYPE=Release &&
         "$cmake" --build "$tmp/static"; } >"$tmp/static.log" 2>&1; then
    cat "$tmp/static.log" >&2
    fail "the static order example did not build from the root's CMake package"
  fi
  said="$("$tmp/static/orders" "$tmp/static-db" 2>&1)" ||
    fail "the static order example failed: $said"
  if ldd "$tmp/static/orders" | grep -E 'lib(tally|rocksdb)\.so'; then
    fail "the static order example needs the shared libraries above"
  fi
  ok "tally::tally_static (libtally.a with RocksDB inside): the order example linked without RocksDB's package, ran, needs no libtally.so nor librocksdb.so"
fi

echo "check_debs: all checks passed ($variant)"
