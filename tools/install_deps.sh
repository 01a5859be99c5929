#!/usr/bin/env bash
# Installs the Debian 12 packages Aftershock needs, only those missing (qstat and prometheus:
# tests drive the real programs; clang-14: tools/check_thread_safety.py).
# Checks each with dpkg first; runs `apt-get update` once, then `apt-get install -y`.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config clang-14
  libenet-dev libbullet-dev libspdlog-dev catch2 libcxxopts-dev libcpp-httplib-dev
  qstat prometheus
  python3 python3-matplotlib python3-numpy
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install_deps: missing packages (${missing[*]}) and not root; install them and retry" >&2
    exit 1
  fi
fi

echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
