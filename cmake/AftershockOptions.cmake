# Warning and sanitizer options shared by every Aftershock target.
option(AFTERSHOCK_WERROR "Treat warnings in our code as errors (CI turns this on)" OFF)
set(AFTERSHOCK_SANITIZE "" CACHE STRING "Sanitizer build: '' (none), 'address' (ASan+UBSan) or 'thread' (TSan)")
set_property(CACHE AFTERSHOCK_SANITIZE PROPERTY STRINGS "" address thread)

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
