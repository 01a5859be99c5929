# cmake -D TEST_EXECUTABLE=path -P CheckTestNames.cmake: fails if a Catch2 test case name holds ';'
# or starts with '-'.
# catch_discover_tests reads the names as a CMake list, so "a; b" would become two ctest tests
# that match no case; this check runs after each test executable is linked and names the culprit.
execute_process(COMMAND "${TEST_EXECUTABLE}" --list-test-names-only
                OUTPUT_VARIABLE names RESULT_VARIABLE result)
if(NOT result MATCHES "^[0-9]+$")  # Catch2 v2 exits with the number of cases
  message(FATAL_ERROR "CheckTestNames: cannot list the cases of ${TEST_EXECUTABLE}: ${result}")
endif()
string(REGEX MATCH "[^\n]*;[^\n]*" bad "${names}")
if(bad)
  message(FATAL_ERROR "CheckTestNames: ${TEST_EXECUTABLE} has a test case named \"${bad}\": "
                      "';' splits it into two ctest tests that run nothing. Reword it without ';'.")
endif()
# ctest passes the name as the executable's argument, where a leading '-' reads as a flag.
string(REGEX MATCH "(^|\n)-[^\n]*" dash "${names}")
if(dash)
  string(STRIP "${dash}" dash)
  message(FATAL_ERROR "CheckTestNames: ${TEST_EXECUTABLE} has a test case named \"${dash}\": "
                      "ctest passes it as an argument and Catch2 reads a leading '-' as a flag. Reword it.")
endif()
