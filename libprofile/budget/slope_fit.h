// slope_fit.h - the arithmetic of the cost calibration (bench/cost/fit.py's,
// in C++ for lcpid): a line y = a + b x fitted by least squares or with an
// instrument, the slope's 95 % interval from Student's t on n - 2 degrees
// of freedom, and R^2. The slope is what one sample costs: work lost per
// sample taken.
#ifndef LCPI_LIBPROFILE_BUDGET_SLOPE_FIT_H
#define LCPI_LIBPROFILE_BUDGET_SLOPE_FIT_H

#include <optional>
#include <vector>

namespace lcpi {

struct SlopeFit {
  double slope = 0, intercept = 0;
  double se = 0;      // the slope's standard error
  double half95 = 0;  // half-width of its 95 % interval: t(n - 2) * se
  double r2 = 0;
  int n = 0;
};

// The two-sided 95 % critical value of Student's t for dof degrees of
// freedom (1.96 beyond 120); NaN below 1.
double T95(int dof);

// Least squares of ys on xs. Nothing for fewer than 3 points, lengths that
// differ, a non-finite value or all xs equal (no slope to find).
std::optional<SlopeFit> FitLine(const std::vector<double>& xs, const std::vector<double>& ys);

// The line by instrumental variables, zs the instrument: b = Cov(z, y) /
// Cov(z, x), standard error sigma^2 Szz / Szx^2 with sigma^2 from the
// residuals on n - 2 degrees of freedom. The calibration's x (samples taken)
// is the rate times the loop's own CPU time, so anything else that
// lengthens the loop raises x too and least squares leans towards 1/rate;
// the rate, set by the calibration, moves x only through sampling. Nothing
// where FitLine gives nothing, or z or x does not vary with each other.
std::optional<SlopeFit> FitInstrumented(const std::vector<double>& xs,
                                        const std::vector<double>& ys,
                                        const std::vector<double>& zs);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_SLOPE_FIT_H
