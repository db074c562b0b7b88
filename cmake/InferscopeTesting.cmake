# inferscope_add_tests(<prefix> LIBS <libs...> [SERIAL <stems...>]): the GoogleTest suites of the
# calling folder, as at most three executables:
#   <prefix>_unit_tests         every *_test.cpp that is not an integration test (ctest label "unit",
#                               which the sanitizer build runs);
#   <prefix>_integration_tests  the *_integration_test.cpp files (real servers, subprocesses,
#                               promtool; label "integration");
#   <prefix>_serial_tests       the integration files named in SERIAL, whose verdicts depend on the
#                               machine's real speed (a simulated server judged on its latency):
#                               ctest runs each of their tests alone even under -j.
# One executable per part and kind rather than one per file: each link pulls gtest and, for most
# parts, Boost.Asio/Beast objects, and ~150 links of those dominated the build. ctest still sees
# every test case on its own (gtest_discover_tests), so selection, timeouts and parallelism are as
# fine-grained as before. Files of one executable share a link, so helpers that are not in an
# anonymous namespace must have names unique across the folder.
function(inferscope_add_tests prefix)
  cmake_parse_arguments(ARG "" "" "LIBS;SERIAL" ${ARGN})
  file(GLOB test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  set(unit_sources "")
  set(integration_sources "")
  set(serial_sources "")
  set(stems "")
  foreach(source ${test_sources})
    get_filename_component(stem ${source} NAME_WE)
    list(APPEND stems ${stem})
    if(stem IN_LIST ARG_SERIAL)
      if(NOT stem MATCHES "_integration_test$")
        message(FATAL_ERROR "${prefix}: SERIAL names ${stem}, which is not an integration test")
      endif()
      list(APPEND serial_sources ${source})
    elseif(stem MATCHES "_integration_test$")
      list(APPEND integration_sources ${source})
    else()
      list(APPEND unit_sources ${source})
    endif()
  endforeach()
  foreach(stem ${ARG_SERIAL})
    if(NOT stem IN_LIST stems)
      message(FATAL_ERROR "${prefix}: SERIAL names ${stem}, which has no ${stem}.cpp here")
    endif()
  endforeach()
  inferscope_test_executable(${prefix}_unit_tests unit "${unit_sources}" "${ARG_LIBS}")
  inferscope_test_executable(${prefix}_integration_tests integration "${integration_sources}" "${ARG_LIBS}")
  inferscope_test_executable(${prefix}_serial_tests serial "${serial_sources}" "${ARG_LIBS}")
endfunction()

# inferscope_test_executable(<target> <unit|integration|serial> <sources> <libs>): one test
# executable and its ctest entries; nothing when <sources> is empty.
function(inferscope_test_executable target kind sources libs)
  if(NOT sources)
    return()
  endif()
  add_executable(${target} ${sources})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${target} PRIVATE ${libs} GTest::gtest GTest::gmock GTest::gtest_main Threads::Threads)
  target_compile_definitions(${target} PRIVATE INFERSCOPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  # The code under test comes from the libraries, built with the build type's flags; the test
  # sources themselves are assertions, fixtures and drivers that wait on the code under test, and
  # compile at -Og in Release: tests are half of a cold build's compile time, and a unity batch of
  # tests takes less CPU at -Og than at -O1 (g++ 12, one compile at a time: doctor_unit_tests
  # 21.7 -> 14.1 s, trace_integration_tests 29.4 -> 20.8 s, up_cli_integration_tests 30.2 ->
  # 27.7 s). Not -O0: without __OPTIMIZE__ simdjson turns on its development checks, which change
  # the layout of classes the libraries compiled without them, and the loadgen tests that parse
  # JSON through the library crashed.
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-Og>)
  # Tests that drive the CLI as a subprocess find it through INFERSCOPE_BINARY; only executables
  # holding one wait for the whole binary to build.
  set(uses_binary FALSE)
  foreach(source ${sources})
    file(READ ${source} test_text)
    string(FIND "${test_text}" "INFERSCOPE_BINARY" found)
    if(found GREATER -1)
      set(uses_binary TRUE)
    endif()
  endforeach()
  if(TARGET inferscope AND uses_binary)
    target_compile_definitions(${target} PRIVATE INFERSCOPE_BINARY="$<TARGET_FILE:inferscope>")
    add_dependencies(${target} inferscope)
  endif()
  if(kind STREQUAL "unit")
    set(label unit)
    set(timeout 120)
    set_property(GLOBAL APPEND PROPERTY INFERSCOPE_UNIT_TEST_TARGETS ${target})
  else()
    set(label integration)
    set(timeout 300)
    set_property(GLOBAL APPEND PROPERTY INFERSCOPE_INTEGRATION_TEST_TARGETS ${target})
  endif()
  set(serial FALSE)
  if(kind STREQUAL "serial")
    set(serial TRUE)
  endif()
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS ${label} TIMEOUT ${timeout} RUN_SERIAL ${serial})
endfunction()
