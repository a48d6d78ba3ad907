# packaging.cmake - the Debian package of lcpi: `cpack -G DEB` in the build
# directory (after `cmake --build build`) writes build/lcpi_VERSION_ARCH.deb.
#
# Why CPack and not a debian/ directory with dpkg-buildpackage: the package is
# made from the build tree the tests already built (no second full build from
# a clean source copy: 12 minutes for the full build on these loaded 2-CPU
# hosts), the version has one source (project() in the root CMakeLists.txt;
# dkms.conf and the changelog are written from it), and the output stays
# inside build/
# (dpkg-buildpackage always writes to the parent of the source tree, here the
# folder shared by every worktree). The price: what debhelper would generate
# (maintainer-script snippets for systemd and DKMS, the changelog and
# copyright files, compressed man pages) is written by hand in
# cmake/debian/; tests/integration/package.cmake checks the result with
# lintian, dpkg -i and dpkg --purge.
#
# The package holds: lcpid (/usr/sbin), lcpictl, lcpiprof, lcpilist, lcpidiff,
# lcpi-ship (/usr/bin), their man pages (help2man from the real --help, gzip
# -9n), the systemd units (scripts/lcpid.service, ship/lcpi-ship.service: not
# enabled, it needs a ClickHouse URL; libcurl comes in through shlibdeps), the module's source for DKMS
# (/usr/src/lcpi-VERSION), and the operator's and tools' guides. postinst
# creates the lcpi group and /var/lib/lcpi (0750 root:lcpi) and registers the
# module with DKMS when dkms is installed; postrm purge removes both.

set(LCPI_DEB_DIR ${CMAKE_SOURCE_DIR}/cmake/debian)
set(LCPI_DEB_GEN ${CMAKE_BINARY_DIR}/debian)
set(LCPI_DKMS_SRC /usr/src/lcpi-${PROJECT_VERSION})

# --- man pages, from each program's own --help ---------------------------------
# Built with the programs (target lcpi_man, part of ALL) when help2man is
# there; without it the package has no man pages and says so at configure.
find_program(LCPI_HELP2MAN help2man)
find_program(LCPI_GZIP gzip)
set(LCPI_MAN_PAGES)
if(LCPI_HELP2MAN AND LCPI_GZIP)
  set(LCPI_MAN_lcpid_SECTION 8)
  set(LCPI_MAN_lcpid_NAME "the lcpi continuous profiling daemon")
  set(LCPI_MAN_lcpictl_NAME "control a running lcpid: status, flush, new epoch, stop")
  set(LCPI_MAN_lcpiprof_NAME "where the samples went, per image, procedure or process")
  set(LCPI_MAN_lcpilist_NAME "samples per instruction of one procedure")
  set(LCPI_MAN_lcpidiff_NAME "what changed between two epochs or two databases")
  set(LCPI_MAN_lcpi-ship_NAME "send closed profile windows to ClickHouse, each exactly once")
  foreach(prog lcpid lcpictl lcpiprof lcpilist lcpidiff lcpi-ship)
    set(section 1)
    if(DEFINED LCPI_MAN_${prog}_SECTION)
      set(section ${LCPI_MAN_${prog}_SECTION})
    endif()
    set(page ${CMAKE_BINARY_DIR}/man/${prog}.${section})
    add_custom_command(OUTPUT ${page}.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
      COMMAND ${LCPI_HELP2MAN} --no-info --no-discard-stderr --section=${section}
              --version-string=${PROJECT_VERSION} --source=lcpi
              "--name=${LCPI_MAN_${prog}_NAME}"
              --include=${LCPI_DEB_DIR}/man-common.h2m
              --output=${page} $<TARGET_FILE:${prog}>
      COMMAND ${LCPI_GZIP} -9nf ${page}
      DEPENDS ${prog} ${LCPI_DEB_DIR}/man-common.h2m
      COMMENT "Man page ${prog}(${section}) from ${prog} --help"
      VERBATIM)
    list(APPEND LCPI_MAN_PAGES ${page}.gz)
    install(FILES ${page}.gz DESTINATION share/man/man${section})
  endforeach()
  add_custom_target(lcpi_man ALL DEPENDS ${LCPI_MAN_PAGES})
else()
  message(WARNING "help2man or gzip not found: no man pages (scripts/setup.sh installs help2man)")
endif()

# --- files beside the programs (their install() rules are in daemon/, tools/) --
# Debian 12 keeps units in /lib/systemd/system (files do not move between /
# and /usr during bookworm; debhelper 13.11 installs them there too).
install(FILES ${CMAKE_SOURCE_DIR}/scripts/lcpid.service DESTINATION /lib/systemd/system)
# lcpi-ship's unit: installed, not enabled (it needs the server's URL; docs/fleet.md)
install(FILES ${CMAKE_SOURCE_DIR}/ship/lcpi-ship.service DESTINATION /lib/systemd/system)
install(FILES ${CMAKE_SOURCE_DIR}/docs/operators.md ${CMAKE_SOURCE_DIR}/docs/tools.md
        ${CMAKE_SOURCE_DIR}/docs/fleet.md
        DESTINATION share/doc/lcpi)

# The changelog (a native package: changelog.gz) and the copyright file.
configure_file(${LCPI_DEB_DIR}/changelog.in ${LCPI_DEB_GEN}/changelog @ONLY)
add_custom_command(OUTPUT ${LCPI_DEB_GEN}/changelog.gz
  COMMAND ${LCPI_GZIP} -9nc ${LCPI_DEB_GEN}/changelog > ${LCPI_DEB_GEN}/changelog.gz
  DEPENDS ${LCPI_DEB_GEN}/changelog VERBATIM)
add_custom_target(lcpi_changelog ALL DEPENDS ${LCPI_DEB_GEN}/changelog.gz)
install(FILES ${LCPI_DEB_GEN}/changelog.gz ${LCPI_DEB_DIR}/copyright DESTINATION share/doc/lcpi)

# The module's source for DKMS: the Kbuild files and sources of kmod/ (no
# build products), and dkms.conf with the package's version.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/kmod/ DESTINATION ${LCPI_DKMS_SRC}
  FILES_MATCHING PATTERN "*.c" PATTERN "*.h" PATTERN "Kbuild" PATTERN "Makefile")
file(READ ${CMAKE_SOURCE_DIR}/kmod/dkms.conf LCPI_DKMS_CONF)
string(REGEX REPLACE "PACKAGE_VERSION=\"[^\"]*\"" "PACKAGE_VERSION=\"${PROJECT_VERSION}\""
       LCPI_DKMS_CONF "${LCPI_DKMS_CONF}")
file(WRITE ${LCPI_DEB_GEN}/dkms.conf "${LCPI_DKMS_CONF}")
install(FILES ${LCPI_DEB_GEN}/dkms.conf DESTINATION ${LCPI_DKMS_SRC})

# --- maintainer scripts --------------------------------------------------------
foreach(script postinst prerm postrm)
  configure_file(${LCPI_DEB_DIR}/${script}.in ${LCPI_DEB_GEN}/${script} @ONLY)
endforeach()

# --- CPack ---------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME lcpi)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "lcpi maintainers <maintainers@users.noreply.a-seed-a1b80242.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "always-on system-wide sampling profiler (DCPI-style)")
# The extended description only: CPack puts the summary above it and indents
# each line by one space itself ("." is an empty paragraph line).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "lcpi samples every CPU all the time, aggregates the samples per process,
instruction and event, resolves each to an ELF image and offset, and merges
the counts into per-image profiles in an SQLite database. lcpid is the
daemon; lcpiprof, lcpilist and lcpidiff report per image, procedure and
instruction without root; lcpictl controls the daemon; lcpi-ship sends
closed windows to ClickHouse for fleet-wide reports.
.
The sampling module lcpi.ko is shipped as source and built by DKMS when dkms
is installed; without it lcpid samples through perf_event_open().")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dpkg-shlibdeps: the libraries' own packages
# adduser: addgroup/delgroup in the maintainer scripts; init-system-helpers:
# deb-systemd-helper and deb-systemd-invoke.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, init-system-helpers (>= 1.54~)")
# dkms is recommended, not required: lcpid works without the module (perf
# events), and dkms pulls in a compiler and the kernel headers.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dkms")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${LCPI_DEB_GEN}/postinst ${LCPI_DEB_GEN}/prerm ${LCPI_DEB_GEN}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_STRIP_FILES TRUE)
# Only what is installed by the rules above and in daemon/, tools/: nothing
# from the test or bench trees (they install nothing today; this keeps it so).
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};lcpi;ALL;/")
include(CPack)
