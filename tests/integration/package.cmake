# package.cmake - the Debian package (label interop; slow: lintian alone takes
# most of a minute): tests/integration/package.sh builds it with cpack from
# this build tree and checks its files and modes, lintian (no errors), and
# dpkg -i / -r / --purge in a throw-away overlay of / (the group, the state
# directory, the unit, DKMS registration, the man pages). Root only (77).
# Not in the sanitizer build: the package is made from the plain one.
if(NOT LCPI_SANITIZE)
  add_test(NAME interop.package
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/package.sh ${CMAKE_BINARY_DIR} ${PROJECT_VERSION})
  set_tests_properties(interop.package PROPERTIES
    LABELS "interop;slow" SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()

# The package's group as postinst and postrm handle it (a pre-existing
# ordinary group lcpi refused, a system one adopted and kept at purge, one
# the package made deleted), run on the scripts themselves in a throw-away
# overlay of /: seconds, no package built. Root only (77).
add_test(NAME interop.package-scripts
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/package_scripts.sh ${CMAKE_SOURCE_DIR}/cmake/debian
          ${PROJECT_VERSION})
set_tests_properties(interop.package-scripts PROPERTIES
  LABELS interop SKIP_RETURN_CODE 77 TIMEOUT 120)
