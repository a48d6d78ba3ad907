// demangle_test.cpp - names as reports show them.
#include <catch2/catch.hpp>

#include "libprofile/image/demangle.h"

using lcpi::Demangle;

TEST_CASE("C names and junk pass through unchanged") {
  CHECK(Demangle("main") == "main");
  CHECK(Demangle("") == "");
  CHECK(Demangle("_Zjunk") == "_Zjunk");
}

TEST_CASE("C++ names lose their parameter lists, keep scopes and templates") {
  CHECK(Demangle("_Z17push_to_top_levelv") == "push_to_top_level");
  CHECK(Demangle("_ZN4lcpi10Aggregator3AddERKNS_12RecordBufferE") == "lcpi::Aggregator::Add");
  CHECK(Demangle("_ZNK4lcpi10Aggregator7entriesEv") == "lcpi::Aggregator::entries");
  CHECK(Demangle("_Z3fooIiEvT_") == "void foo<int>");
  // a function-pointer parameter nests parentheses
  CHECK(Demangle("_Z5applyPFviEi") == "apply");
}
