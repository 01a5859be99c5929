#!/usr/bin/env bash
# The demo: installs what is missing, builds Aftershock, then loads every map (ours and the real
# LibreQuake maps) and prints what it found.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > build.configure.log 2>&1 || { cat build.configure.log; exit 1; }
cmake --build build -j"$(nproc)" --target aftershock-mapcheck
maps=(maps/*.map)
[ -d ../shared/maps-real ] && maps+=(../shared/maps-real/*.map)
build/bin/aftershock-mapcheck "${maps[@]}"
