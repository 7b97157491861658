#!/usr/bin/env bash
# apt-install-missing.sh LABEL PACKAGE...: installs the Debian packages that are not
# installed yet, and asks apt nothing when all are (so the install scripts are cheap to
# run on every build). Shared by install-deps.sh and install-bench-deps.sh. Run as root
# (or with sudo available).
set -euo pipefail

label=$1
shift
missing=()
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "$label: all $# packages present"
  exit 0
fi

echo "$label: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
