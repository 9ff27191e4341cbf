# Sourced by the shell tests of tests/cluster/: `use_cluster NAME ENV_FILE`
# exports the test cluster's env file (scripts/redis_cluster writes it) and
# makes a scratch directory $work, removed on exit; it exits 77 (skipped)
# when the file does not exist (no cluster was started).
use_cluster() {
  if [[ ! -f "$2" ]]; then
    echo "$1: no cluster ($2; see cluster.Start)"
    exit 77
  fi
  set -a
  # shellcheck disable=SC1090
  . "$2"
  set +a
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
}
