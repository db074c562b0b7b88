# Adds a toy cause to one family, in copies of that family's two files only, and compiles the
# family's file (syntax only, one TU) against the real tree twice (ctest doctor_toy_cause_check):
#  1. the toy cause listed in causes_errors.h without its spec must not compile, and the error
#     must be the family check's own message (INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE in cause_spec.h);
#  2. listed and given its spec in causes_errors.cpp, it must compile: CauseId, the table's check
#     and every header the family includes take it with no other file changed.
# Usage: cmake -DCXX=<c++ compiler> -DSOURCE_DIR=<repository root> -DWORK_DIR=<scratch dir> -P toy_cause_check.cmake
foreach(var CXX SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "toy_cause_check.cmake: -D${var}=... is required")
  endif()
endforeach()

set(family_header ${SOURCE_DIR}/src/doctor/causes_errors.h)
set(family_source ${SOURCE_DIR}/src/doctor/causes_errors.cpp)
set(list_macro "#define INFERSCOPE_DOCTOR_ERROR_CAUSES(CAUSE)")
set(table_start "constexpr CauseSpec kErrorCauses[] = {")
set(missing_spec_message "every cause of INFERSCOPE_DOCTOR_ERROR_CAUSES needs its one CauseSpec in kErrorCauses")

# add_once replaces `anchor` in `text` by `replacement`; the anchor must be there once, else the
# family file changed shape and this check must be updated with it.
function(add_once text anchor replacement out)
  string(FIND "${text}" "${anchor}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "toy_cause_check.cmake: '${anchor}' not found; update the check with the family file")
  endif()
  string(REPLACE "${anchor}" "${replacement}" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/doctor)
file(READ ${family_header} header)
add_once("${header}" "${list_macro}" "${list_macro} CAUSE(kToyCause)" header)
file(WRITE ${WORK_DIR}/doctor/causes_errors.h "${header}")

# compile runs the compiler on one family file; the copy in WORK_DIR shadows the real header.
function(compile source result_var output_var)
  execute_process(
    COMMAND ${CXX} -std=c++20 -fsyntax-only -I${WORK_DIR} -I${SOURCE_DIR}/src -I${SOURCE_DIR}/include ${source}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(${result_var} ${result} PARENT_SCOPE)
  set(${output_var} "${out}" PARENT_SCOPE)
endfunction()

compile(${family_source} result output)
if(result EQUAL 0)
  message(FATAL_ERROR "a CauseId listed in causes_errors.h without a spec compiled")
endif()
string(FIND "${output}" "${missing_spec_message}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "a CauseId without a spec failed to compile, but not with the family check's message "
                      "'${missing_spec_message}':\n${output}")
endif()
message(STATUS "listed without a spec: fails with \"${missing_spec_message}\"")

file(READ ${family_source} source)
add_once("${source}" "${table_start}" "${table_start}
    {.id = CauseId::kToyCause, .name = \"toy_cause\", .next_steps = {\"Look at the toy.\"}}," source)
file(WRITE ${WORK_DIR}/doctor/causes_errors.cpp "${source}")
compile(${WORK_DIR}/doctor/causes_errors.cpp result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "a toy cause listed in causes_errors.h with its spec in causes_errors.cpp did not compile:\n${output}")
endif()
message(STATUS "listed with its spec in the family's file: compiles")
