// slope_fit.cpp - least squares and the one-instrument line, as
// bench/cost/fit.py computes them.
#include "libprofile/budget/slope_fit.h"

#include <cmath>
#include <limits>

namespace lcpi {

namespace {

// Two-sided 95 % critical values of t for 1..30 degrees of freedom.
constexpr double kT95[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                           2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                           2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

bool Usable(const std::vector<double>& v, size_t n) {
  if (v.size() != n) return false;
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Fills intercept, se, half95 and r2 of a line whose slope is known; scale
// is the factor that turns the residual variance into the slope's.
SlopeFit Finish(const std::vector<double>& xs, const std::vector<double>& ys, double slope,
                double scale) {
  const size_t n = xs.size();
  SlopeFit f;
  f.n = static_cast<int>(n);
  f.slope = slope;
  const double mx = Mean(xs), my = Mean(ys);
  f.intercept = my - slope * mx;
  double sse = 0, syy = 0;
  for (size_t i = 0; i < n; i++) {
    const double r = ys[i] - f.intercept - slope * xs[i];
    sse += r * r;
    syy += (ys[i] - my) * (ys[i] - my);
  }
  f.se = std::sqrt(sse / static_cast<double>(n - 2) * scale);
  f.half95 = T95(f.n - 2) * f.se;
  f.r2 = syy > 0 ? 1.0 - sse / syy : 1.0;
  return f;
}

}  // namespace

double T95(int dof) {
  if (dof < 1) return std::numeric_limits<double>::quiet_NaN();
  if (dof <= 30) return kT95[dof - 1];
  return dof <= 40 ? 2.021 : dof <= 60 ? 2.000 : dof <= 120 ? 1.980 : 1.960;
}

std::optional<SlopeFit> FitLine(const std::vector<double>& xs, const std::vector<double>& ys) {
  const size_t n = xs.size();
  if (n < 3 || !Usable(xs, n) || !Usable(ys, n)) return std::nullopt;
  const double mx = Mean(xs), my = Mean(ys);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; i++) {
    sxx += (xs[i] - mx) * (xs[i] - mx);
    sxy += (xs[i] - mx) * (ys[i] - my);
  }
  if (sxx == 0) return std::nullopt;
  return Finish(xs, ys, sxy / sxx, 1.0 / sxx);
}

std::optional<SlopeFit> FitInstrumented(const std::vector<double>& xs,
                                        const std::vector<double>& ys,
                                        const std::vector<double>& zs) {
  const size_t n = xs.size();
  if (n < 3 || !Usable(xs, n) || !Usable(ys, n) || !Usable(zs, n)) return std::nullopt;
  const double mx = Mean(xs), my = Mean(ys), mz = Mean(zs);
  double szx = 0, szz = 0, szy = 0;
  for (size_t i = 0; i < n; i++) {
    szx += (zs[i] - mz) * (xs[i] - mx);
    szz += (zs[i] - mz) * (zs[i] - mz);
    szy += (zs[i] - mz) * (ys[i] - my);
  }
  if (szx == 0 || szz == 0) return std::nullopt;
  return Finish(xs, ys, szy / szx, szz / (szx * szx));
}

}  // namespace lcpi
