# Helpers the cluster benchmark scripts share (cluster_bench.sh, churn_bench.sh,
# soak.sh); sourced, never run. The caller sets `set -euo pipefail`.

# Waits for the coordinator's "listening on HOST:PORT" line in LOG; prints the address.
# NAME prefixes the message when it does not come up.
coordinator_address() { # LOG [NAME]
  local i
  for i in $(seq 150); do
    if grep -qs '^listening on ' "$1"; then
      sed -n 's/^listening on //p' "$1" | head -n 1
      return
    fi
    sleep 0.1
  done
  echo "${2:-bench}: the coordinator did not come up:" >&2
  cat "$1" >&2
  exit 1
}

# Starts a command in a session of its own (setsid: a process group to kill as one), its
# output appended to $tmp/NAME.log; sets `spawned` to its pid, which is the group's id.
start_session() { # NAME COMMAND...
  local name=$1
  shift
  setsid "$@" >>"$tmp/$name.log" 2>&1 &
  spawned=$!
}
