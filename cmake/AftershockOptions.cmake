# Warning and sanitizer options shared by every Aftershock target.
option(AFTERSHOCK_WERROR "Treat warnings in our code as errors (CI turns this on)" OFF)
set(AFTERSHOCK_SANITIZE "" CACHE STRING "Sanitizer build: '' (none), 'address' (ASan+UBSan) or 'thread' (TSan)")
set_property(CACHE AFTERSHOCK_SANITIZE PROPERTY STRINGS "" address thread)

# Debug info without variable tracking, for gcc: the DWARF keeps types, inline frames and line
# tables (backtraces, perf, sanitizer reports and gdb's `bt` are as before), but not the
# instruction ranges where each local lives, so gdb shows more locals of an optimised frame as
# <optimized out>. That pass is about a sixth of the compile time at -O2 -g: in 11 sources
# compiled alternately with and without it, 157 s against 130 s (-18%; per source -9% to -23%;
# `tools/compile_ab.py --drop ' -fno-var-tracking' SOURCES...` repeats the comparison).
# Turn it back on for a debugging session: -DAFTERSHOCK_VAR_TRACKING=ON.
option(AFTERSHOCK_VAR_TRACKING "gcc's variable tracking in the debug info (slower to compile)" OFF)
if(NOT AFTERSHOCK_VAR_TRACKING)
  add_compile_options($<$<CXX_COMPILER_ID:GNU>:-fno-var-tracking>)
endif()

# Floats follow the source's operations, one rounding each: no a * b + c fused into one
# multiply-add. Replay must reproduce the live world bit for bit (docs/game.md, "Determinism"),
# and a data directory must recover to the same world whatever flags built the binary. Neither
# -std=c++20 nor the compilers' defaults promise that: on a target with FMA (an x86-64 build
# with -march=native or -mfma, or any aarch64 build) gcc 12 and clang 14 fuse by default. On
# 2026-11-30 a -march=native build recovered a 5-minute dm_arena log to another state than the
# default build (1b83f7db04893961 against 5a69eae7fa0205db); with this flag added, to the same one
# (docs/recovery-measurements.md, "Two build levers, and the logs again", has the commands).
# core_test's "floats are not contracted" compiles a probe with FMA enabled to keep it so.
add_compile_options(-ffp-contract=off)

add_library(aftershock_flags INTERFACE)
target_compile_options(aftershock_flags INTERFACE -Wall -Wextra)
if(AFTERSHOCK_WERROR)
  target_compile_options(aftershock_flags INTERFACE -Werror)
endif()

if(AFTERSHOCK_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # gcc 12 + ASan reports a false maybe-uninitialized inside std::regex (tests/ops/metrics_test.cc).
  target_compile_options(aftershock_flags INTERFACE -Wno-maybe-uninitialized)
elseif(AFTERSHOCK_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT AFTERSHOCK_SANITIZE STREQUAL "")
  message(FATAL_ERROR "AFTERSHOCK_SANITIZE must be '', 'address' or 'thread', not '${AFTERSHOCK_SANITIZE}'")
endif()
