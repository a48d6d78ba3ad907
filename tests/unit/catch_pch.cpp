// The object of the precompiled Catch2 header every test file shares
// (tests/CMakeLists.txt); it has no code of its own.
