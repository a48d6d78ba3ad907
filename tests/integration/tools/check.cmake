# check.cmake - runs one analysis tool for tests/integration/tools.cmake and
# judges it: exit status RC, stdout equal to GOLDEN_DIR/GOLDEN after the
# fixture directory is replaced by @DIR@ (and build-ids and epoch times by
# @ID@ and @TIME@), stdout/stderr matching the STDOUT and
# STDERR regexes, and JSON fields (path=value, '.'-separated, '|' between).
cmake_minimum_required(VERSION 3.25)
string(REPLACE "@DIR@" "${DIR}" ARGS "${ARGS}")
string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
set(ctx "command: ${TOOL} ${ARGS}\nexit: ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT rc STREQUAL RC)
  message(FATAL_ERROR "exit status ${rc}, expected ${RC}\n${ctx}")
endif()
if(GOLDEN)
  string(REPLACE "${DIR}" "@DIR@" actual "${out}")
  # The fixture's build-id depends on the compiler and the build directory.
  string(REGEX REPLACE "build-id:[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+(:[0-9a-f]+)?"
    "build-id:@ID@" actual "${actual}")
  # The epochs' start and end times (JSON) are those of the fixture's run.
  string(REGEX REPLACE "\"(started|ended)\": [0-9]+" "\"\\1\": @TIME@" actual "${actual}")
  file(READ "${GOLDEN_DIR}/${GOLDEN}" expected)
  if(NOT actual STREQUAL expected)
    file(WRITE "${DIR}/${GOLDEN}.actual" "${actual}")
    message(FATAL_ERROR "stdout differs from tests/golden/${GOLDEN} "
      "(actual output in ${DIR}/${GOLDEN}.actual)\n${ctx}")
  endif()
endif()
if(STDOUT AND NOT out MATCHES "${STDOUT}")
  message(FATAL_ERROR "stdout does not match '${STDOUT}'\n${ctx}")
endif()
if(STDERR AND NOT err MATCHES "${STDERR}")
  message(FATAL_ERROR "stderr does not match '${STDERR}'\n${ctx}")
endif()
if(JSON)
  string(REPLACE "|" ";" checks "${JSON}")
  foreach(check ${checks})
    string(FIND "${check}" "=" eq)
    string(SUBSTRING "${check}" 0 ${eq} path)
    math(EXPR vstart "${eq} + 1")
    string(SUBSTRING "${check}" ${vstart} -1 want)
    string(REPLACE "." ";" keys "${path}")
    string(JSON got ERROR_VARIABLE jerr GET "${out}" ${keys})
    if(jerr)
      message(FATAL_ERROR "JSON ${path}: ${jerr}\n${ctx}")
    endif()
    if(NOT got STREQUAL want)
      message(FATAL_ERROR "JSON ${path} is '${got}', expected '${want}'\n${ctx}")
    endif()
  endforeach()
endif()
