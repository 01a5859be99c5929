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
