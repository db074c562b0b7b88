# inferscope_add_tests(<prefix> LIBS <libs...> [SERIAL <stems...>]): one GoogleTest executable per
# *_test.cpp in the calling folder. Files ending in _integration_test.cpp (real servers, subprocesses,
# promtool) get the ctest label "integration"; the rest get "unit", which the sanitizer build runs.
# SERIAL names test files whose verdicts depend on the machine's real speed (a simulated server
# judged on its latency): ctest runs them alone even under -j.
function(inferscope_add_tests prefix)
  cmake_parse_arguments(ARG "" "" "LIBS;SERIAL" ${ARGN})
  file(GLOB test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  foreach(source ${test_sources})
    get_filename_component(stem ${source} NAME_WE)
    set(target ${prefix}_${stem})
    add_executable(${target} ${source})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main Threads::Threads)
    target_compile_definitions(${target} PRIVATE
      INFERSCOPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      INFERSCOPE_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
    # Tests that drive the CLI as a subprocess find it through INFERSCOPE_BINARY; only they wait
    # for the whole binary to build.
    file(READ ${source} test_text)
    string(FIND "${test_text}" "INFERSCOPE_BINARY" uses_binary)
    if(TARGET inferscope AND uses_binary GREATER -1)
      target_compile_definitions(${target} PRIVATE INFERSCOPE_BINARY="$<TARGET_FILE:inferscope>")
      add_dependencies(${target} inferscope)
    endif()
    if(stem MATCHES "_integration_test$")
      set(label integration)
      set(timeout 300)
    else()
      set(label unit)
      set(timeout 120)
      set_property(GLOBAL APPEND PROPERTY INFERSCOPE_UNIT_TEST_TARGETS ${target})
    endif()
    set(serial FALSE)
    if(stem IN_LIST ARG_SERIAL)
      set(serial TRUE)
    endif()
    gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS ${label} TIMEOUT ${timeout} RUN_SERIAL ${serial})
  endforeach()
endfunction()
