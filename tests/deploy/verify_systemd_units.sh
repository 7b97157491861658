#!/usr/bin/env bash
# `systemd-analyze verify` on deploy/systemd's units, with ExecStart pointed at the stipple
# just built (verify requires the executable to exist). Any complaint fails the test: verify
# exits 0 on an unknown key and only warns.
#   verify_systemd_units.sh SOURCE_DIR STIPPLE_BINARY
set -euo pipefail
source_dir=$1
stipple=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for unit in "$source_dir"/deploy/systemd/*.service "$source_dir"/deploy/systemd/*.timer; do
  sed "s#/usr/local/bin/stipple#$stipple#g" "$unit" >"$work/$(basename "$unit")"
done
cd "$work"
set +e
out=$(systemd-analyze verify --man=no ./*.service ./*.timer 2>&1)
rc=$?
set -e
if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
  echo "systemd-analyze verify (exit $rc):"
  echo "$out"
  exit 1
fi
echo "systemd-analyze verify accepts: $(ls)"
