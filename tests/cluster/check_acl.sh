#!/usr/bin/env bash
# check_acl.sh ENV_FILE: the local cluster of scripts/redis_cluster (its
# DIR/env) holds the app user `tally` to least privilege and keeps its
# secrets: as tally, every command tally has no use for (and a key outside
# tally:*) is refused with NOPERM on every node, GET tally:x and
# FCALL_RO tally_version are allowed on every master; the unauthenticated
# default user gets nothing; the passwords directory is 0700 and its files
# 0600; neither the aclfile nor any node's command line holds a password.
# Exit 0; 1 with a line naming the first failing check; 77 (skip) when
# there is no cluster (redis-server not installed: cluster.Start skipped).
set -euo pipefail

env_file="$1"
if ! command -v redis-cli >/dev/null || [[ ! -r "$env_file" ]]; then
  echo "check_acl: no cluster ($env_file) or no redis-cli: skipped" >&2
  exit 77
fi
# shellcheck source=/dev/null  # written by scripts/redis_cluster start
source "$env_file"

fail() {
  echo "check_acl: FAILED: $*" >&2
  exit 1
}

# redis-cli as USER on PORT, the password from FILE in the environment (never
# on a command line). Prints the reply, error replies included.
as_user() {  # as_user USER PASSWORD_FILE PORT ARGS...
  local user="$1" file="$2" port="$3"
  shift 3
  REDISCLI_AUTH="$(<"$file")" timeout 10 \
    redis-cli -h 127.0.0.1 -p "$port" --user "$user" "$@" 2>&1 || true
}

tally() {  # tally PORT ARGS...
  as_user tally "$TALLY_REDIS_PASSWORD_FILE" "$@"
}

read -r -a ports <<<"$TALLY_REDIS_PORTS"
((${#ports[@]} == 6)) || fail "TALLY_REDIS_PORTS holds ${#ports[@]} ports, not 6"
masters=()
for port in "${ports[@]}"; do
  role="$(as_user admin "$TALLY_REDIS_ADMIN_PASSWORD_FILE" "$port" ROLE | head -n1)"
  [[ "$role" == master ]] && masters+=("$port")
done
((${#masters[@]} == 3)) || fail "found ${#masters[@]} masters, not 3"

# Refused on every node, replicas too: ACLs are per node, and a node checks
# them before any cluster redirection. SHUTDOWN and FLUSHALL last: were they
# allowed, the node would stop or be emptied (and the check fail).
forbidden=(
  "KEYS *"
  "CONFIG GET *"
  "FUNCTION FLUSH"
  "FUNCTION LOAD #!lua name=evil
redis.register_function('evil', function() return 1 end)"
  "EVAL return 1 0"
  "SCAN 0"
  "ACL LIST"
  "GET other:x"
  "CLUSTER RESET"
  "FLUSHALL"
  "SHUTDOWN"
)
for port in "${ports[@]}"; do
  for cmd in "${forbidden[@]}"; do
    if [[ "$cmd" == FUNCTION\ LOAD* ]]; then
      args=(FUNCTION LOAD "${cmd#FUNCTION LOAD }")
    else
      read -r -a args <<<"$cmd"
    fi
    reply="$(tally "$port" "${args[@]}")"
    [[ "$reply" == *NOPERM* || "$reply" == *"no permissions"* ]] ||
      fail "tally's '${cmd%%$'\n'*}' on node $port was not refused: ${reply:0:200}"
  done
done

for port in "${masters[@]}"; do
  # -c: tally:x lives on one master; the others redirect (after their ACL
  # check passed) and redis-cli follows.
  reply="$(tally "$port" -c GET tally:x)"
  [[ "$reply" != *NOPERM* && "$reply" != *ERR* && "$reply" != *rror* ]] ||
    fail "tally's GET tally:x on master $port: $reply"
  reply="$(tally "$port" FCALL_RO tally_version 0)"
  [[ -n "$reply" && "$reply" != *NOPERM* && "$reply" != *ERR* &&
     "$reply" != *rror* ]] ||
    fail "tally's FCALL_RO tally_version 0 on master $port: $reply"
done

# The default user is off: a connection without AUTH may run nothing.
reply="$(timeout 10 redis-cli -h 127.0.0.1 -p "${masters[0]}" PING 2>&1 || true)"
[[ "$reply" == *NOAUTH* ]] ||
  fail "an unauthenticated PING on ${masters[0]} was not refused: $reply"

pwdir="$(dirname "$TALLY_REDIS_PASSWORD_FILE")"
[[ "$(stat -c %a "$pwdir")" == 700 ]] ||
  fail "$pwdir has mode $(stat -c %a "$pwdir"), not 700"
aclfile="$TALLY_REDIS_DIR/users.acl"
[[ "$(stat -c %a "$aclfile")" == 600 ]] ||
  fail "$aclfile has mode $(stat -c %a "$aclfile"), not 600"
grep -q '^user tally on #[0-9a-f]\{64\} ' "$aclfile" ||
  fail "$aclfile holds no SHA-256 hash for tally"
for user in admin repl tally; do
  file="$pwdir/$user"
  [[ "$(stat -c %a "$file")" == 600 ]] ||
    fail "$file has mode $(stat -c %a "$file"), not 600"
  password="$(<"$file")"
  ((${#password} >= 20)) || fail "$file holds a password of ${#password} chars"
  # grep -f: the password is read from a file, never an argument.
  if grep -qF -f "$file" "$aclfile"; then
    fail "$aclfile holds the plaintext password of $user"
  fi
  for pidfile in "$TALLY_REDIS_DIR"/node-*/redis.pid; do
    if tr '\0' '\n' 2>/dev/null <"/proc/$(<"$pidfile")/cmdline" | grep -qF -f "$file"; then
      fail "the command line of $(dirname "$pidfile")'s server holds $user's password"
    fi
  done
done
echo "check_acl: ok (${#forbidden[@]} commands refused on ${#ports[@]} nodes;" \
     "GET tally:x and FCALL_RO allowed on ${#masters[@]} masters)"
