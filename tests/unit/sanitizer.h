// sanitizer.h - whether this test is built with AddressSanitizer, for the
// unit tests (test_files.h) and the integration tests (reliability_util.h)
// alike: GCC defines __SANITIZE_ADDRESS__, clang answers __has_feature.
#ifndef LCPI_TESTS_UNIT_SANITIZER_H
#define LCPI_TESTS_UNIT_SANITIZER_H

namespace lcpi::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
inline constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_SANITIZER_H
