#!/bin/sh
# pip_install.sh SOURCE_DIR [PYTHON]: pip-installs the Python package
# (SOURCE_DIR/bindings/python) offline into a fresh venv in a temporary
# directory (the venv sees the system's site-packages, for setuptools and
# pytest: --no-build-isolation --no-index), then runs the pytest suite
# (SOURCE_DIR/tests/python) with that venv's python, without PYTHONPATH, so
# the installed copy is the one tested. TALLY_LIBRARY names the library.
# The package is copied first: pip builds in the tree it is given, and the
# checkout stays clean.
set -eu
src="$1" python="${2:-/usr/bin/python3}"
: "${TALLY_LIBRARY:?set TALLY_LIBRARY to the path of libtally.so.*}"
unset PYTHONPATH
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -R "$src/bindings/python" "$tmp/pkg"
rm -rf "$tmp/pkg/build" "$tmp/pkg"/*.egg-info
"$python" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-build-isolation --no-index \
  --no-cache-dir --disable-pip-version-check "$tmp/pkg"
cd "$tmp"
where="$("$tmp/venv/bin/python" -c 'import tally; print(tally.__file__)')"
case "$where" in
  "$tmp/venv/"*) ;;
  *) echo "pip_install.sh: tally imported from $where, not the venv" >&2
     exit 1 ;;
esac
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp "$tmp/pytest" \
  "$src/tests/python"
echo "pip-installed package passed the suite ($where)"
