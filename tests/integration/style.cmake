# style.cmake - style.clang-format (label style): the C++ follows the one
# .clang-format at the root; the test fails on any file clang-format would
# change and names it. The kernel module's C follows the kernel's style
# instead, checked by its scripts/checkpatch.pl (Debian ships that only
# inside linux-source, so it is run by hand: README.md, Tests).

file(GLOB_RECURSE LCPI_CXX_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/bench/*.cpp ${CMAKE_SOURCE_DIR}/bench/*.h
  ${CMAKE_SOURCE_DIR}/daemon/*.cpp ${CMAKE_SOURCE_DIR}/daemon/*.h
  ${CMAKE_SOURCE_DIR}/fuzz/*.cpp ${CMAKE_SOURCE_DIR}/fuzz/*.h
  ${CMAKE_SOURCE_DIR}/libprofile/*.cpp ${CMAKE_SOURCE_DIR}/libprofile/*.h
  ${CMAKE_SOURCE_DIR}/tests/*.cpp ${CMAKE_SOURCE_DIR}/tests/*.h
  ${CMAKE_SOURCE_DIR}/tools/*.cpp ${CMAKE_SOURCE_DIR}/tools/*.h)

find_program(LCPI_CLANG_FORMAT clang-format)
if(LCPI_CLANG_FORMAT)
  add_test(NAME style.clang-format
    COMMAND ${LCPI_CLANG_FORMAT} --dry-run --Werror ${LCPI_CXX_SOURCES})
else()
  add_test(NAME style.clang-format
    COMMAND sh -c "echo 'clang-format not found: scripts/setup.sh installs it' >&2; exit 1")
endif()
set_tests_properties(style.clang-format PROPERTIES LABELS style)
