#!/usr/bin/env bash
# Builds Aftershock and runs every test: first clang's thread-safety analysis of the lock
# annotations (non-test sources, -fsyntax-only), then a ThreadSanitizer build of the concurrency
# tests alone (label "tsan", target tsan_tests) running them, then the normal build, the layering
# check of its includes against its link lines (tools/check_layering.py), and the whole suite.
# Installs missing Debian packages first. Ends with ctest's summary line. The normal suite runs
# 2 x nproc tests at a time: most of a test's time is waiting on servers and deadlines (on 2
# cores, 378 tests took 170 s at 2 at a time and 92-97 s at 4, all passing in 4 runs), and each
# test uses ports the system picks and a scratch directory of its own. The sanitizer suites,
# which are CPU-bound (TSan: 49-54 s at either), run nproc at a time.
# Usage: tools/test.sh [--asan] [--no-tsan]
set -euo pipefail
cd "$(dirname "$0")/.."

run_asan=0
run_tsan=1
for arg in "$@"; do
  case "$arg" in
    --asan) run_asan=1 ;;
    --no-tsan) run_tsan=0 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

tools/install_deps.sh
jobs=$(nproc)
test_jobs=$((2 * jobs))

configure_and_build() {  # dir, target ("all" for everything), extra cmake args...
  local dir=$1 target=$2; shift 2
  mkdir -p "$dir"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAFTERSHOCK_WERROR=ON "$@" > "$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; exit 1; }
  cmake --build "$dir" -j"$jobs" --target "$target"
}

echo "== Thread-safety analysis: clang-14 -Wthread-safety -Werror on the sources that see annotations"
/usr/bin/python3 tools/check_thread_safety.py --build-dir build-clang --jobs "$jobs"

if [ "$run_tsan" = 1 ]; then
  echo "== ThreadSanitizer build: concurrency tests"
  configure_and_build build-tsan tsan_tests -DAFTERSHOCK_SANITIZE=thread
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
    ctest --test-dir build-tsan -L tsan -j"$jobs" --output-on-failure --timeout 600
fi
if [ "$run_asan" = 1 ]; then
  echo "== AddressSanitizer+UBSan build: whole suite"
  configure_and_build build-asan all -DAFTERSHOCK_SANITIZE=address
  ctest --test-dir build-asan -j"$jobs" --output-on-failure --timeout 900
fi

echo "== Normal build: whole suite"
configure_and_build build all
echo "== Layering: every quoted include names a header of the target or of a library it links"
/usr/bin/python3 tools/check_layering.py --build-dir build
ctest --test-dir build -j"$test_jobs" --output-on-failure --timeout 600
