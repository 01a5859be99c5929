# aftershock_add_test(NAME SOURCES ... LIBS ... [TSAN] [LABELS ...])
# Builds a Catch2 v2 test executable (linked with Catch2WithMain) and registers its cases with CTest.
# TSAN marks a concurrency test: it gets the label "tsan", and in a ThreadSanitizer build
# (AFTERSHOCK_SANITIZE=thread) only TSAN tests are added, so CI pays for TSan only where it matters.
# The target `tsan_tests` (aftershock_add_tsan_tests_target, called once every test is added)
# builds them and what they link, without the programs under tools/ and the server's and bots'
# mains, which no TSAN test runs.
# Every ctest test names one case, so a test that matches no case must fail (--warn NoTests): a
# name catch_discover_tests cannot pass through whole then fails instead of passing empty, and
# the build rejects case names with ';' (CheckTestNames.cmake), the usual way to get one.
function(aftershock_add_test name)
  cmake_parse_arguments(T "TSAN" "" "SOURCES;LIBS;LABELS" ${ARGN})
  if(AFTERSHOCK_SANITIZE STREQUAL "thread" AND NOT T_TSAN)
    return()
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} Catch2::Catch2WithMain aftershock_flags)
  # Catch2's single header, precompiled once per build by the first test added and reused by the
  # others: parsing it took 1-2 s of every test source's compile (`tools/compile_ab.py --drop
  # ' -Winvalid-pch -include \S+cmake_pch.hxx' SOURCES...` compares). gcc checks that the
  # flags match (-Winvalid-pch, an error under -Werror), so a target that cannot use it fails the
  # build rather than silently compiling without it.
  get_property(pch_owner GLOBAL PROPERTY AFTERSHOCK_CATCH_PCH_OWNER)
  if(pch_owner)
    target_precompile_headers(${name} REUSE_FROM ${pch_owner})
  else()
    target_precompile_headers(${name} PRIVATE <catch2/catch.hpp>)
    set_property(GLOBAL PROPERTY AFTERSHOCK_CATCH_PCH_OWNER ${name})
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  set(labels ${T_LABELS})
  if(T_TSAN)
    list(APPEND labels tsan)
    set_property(GLOBAL APPEND PROPERTY AFTERSHOCK_TSAN_TESTS ${name})
  endif()
  # Tests run from the repository root so they can name maps/ and maps/librequake/ plainly.
  set(props)
  if(labels)
    set(props PROPERTIES LABELS "${labels}")
  endif()
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D TEST_EXECUTABLE=$<TARGET_FILE:${name}>
            -P ${PROJECT_SOURCE_DIR}/cmake/CheckTestNames.cmake
    VERBATIM)
  catch_discover_tests(${name} TEST_PREFIX "${name}: " WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       EXTRA_ARGS --warn NoTests ${props})
endfunction()

# aftershock_test_without_pch(TARGET SOURCE...): these sources of a test parse Catch2's header
# themselves. With the precompiled header gcc 12 inlines std::string differently in them and
# reports false -Warray-bounds / -Wstringop-overflow errors inside char_traits.h (memcpy and
# memset of a string's local buffer; each call site names the code). The warnings stay on.
function(aftershock_test_without_pch target)
  if(TARGET ${target})
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
endfunction()

# The target `tsan_tests`: every TSAN test added so far (see above).
function(aftershock_add_tsan_tests_target)
  get_property(tests GLOBAL PROPERTY AFTERSHOCK_TSAN_TESTS)
  add_custom_target(tsan_tests)
  if(tests)
    add_dependencies(tsan_tests ${tests})
  endif()
endfunction()
