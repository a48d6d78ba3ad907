# layering.cmake - the parts of libprofile depend only downward
# (docs/internals.md), and these tests (label "style") fail when a link line
# lets a part see a part it must not. Each compiles one line,
# `#include "libprofile/<other>/<a header>"`, with exactly the include path
# CMake gives the part (its own directory plus those of the parts it links):
#   layering.<part>-sees-<other>     must compile (a part it may use);
#   layering.<part>-blind-to-<other> must fail because the header is not
#                                    found (gcc: "No such file", clang:
#                                    "file not found").
# The build itself fails on a wrong-direction include in the sources; these
# catch the link line that would quietly allow one.

# lcpi_layering(PART SEES parts... BLIND parts...)
function(lcpi_layering part)
  cmake_parse_arguments(L "" "" "SEES;BLIND" ${ARGN})
  foreach(other ${part} ${L_SEES} ${L_BLIND})
    file(GLOB headers ${CMAKE_SOURCE_DIR}/libprofile/${other}/*.h)
    list(SORT headers)
    list(GET headers 0 header)
    get_filename_component(header ${header} NAME)
    set(probe ${CMAKE_CURRENT_BINARY_DIR}/layering/${part}-${other}.cpp)
    file(WRITE ${probe} "#include \"libprofile/${other}/${header}\"\n")
    if(other IN_LIST L_BLIND)
      set(name layering.${part}-blind-to-${other})
    else()
      set(name layering.${part}-sees-${other})
    endif()
    add_test(NAME ${name}
      COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only
        "-I$<JOIN:$<TARGET_PROPERTY:lcpi_${part},INCLUDE_DIRECTORIES>,;-I>" ${probe}
      COMMAND_EXPAND_LISTS)
    set_tests_properties(${name} PROPERTIES LABELS style)
    if(other IN_LIST L_BLIND)
      set_tests_properties(${name} PROPERTIES
        PASS_REGULAR_EXPRESSION "libprofile/${other}/${header}(: No such file|' file not found)")
    endif()
  endforeach()
endfunction()

lcpi_layering(base BLIND collect image attribute store aggregate report fleet budget)
lcpi_layering(collect SEES base BLIND image attribute store aggregate report fleet budget)
lcpi_layering(image SEES base BLIND collect attribute store aggregate report fleet budget)
lcpi_layering(attribute SEES base collect image BLIND store aggregate report fleet budget)
lcpi_layering(store SEES base BLIND collect image attribute aggregate report fleet budget)
lcpi_layering(aggregate SEES base collect image attribute store BLIND report fleet budget)
lcpi_layering(report SEES base image store fleet BLIND collect attribute aggregate budget)
lcpi_layering(fleet SEES base BLIND collect image attribute store aggregate report budget)
lcpi_layering(budget SEES base BLIND collect image attribute store aggregate report fleet)
