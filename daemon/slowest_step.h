// slowest_step.h - which step of lcpid's loop took longest, since start.
//
// A status request waits for whatever the loop is doing when it comes
// (max_loop_gap_ms says how long at worst); this says in which step that
// time went, so a stall seen once in a test run names its cause
// (`slowest_loop_step` in status).
#ifndef LCPI_DAEMON_SLOWEST_STEP_H_
#define LCPI_DAEMON_SLOWEST_STEP_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace lcpi {

class SlowestStep {
 public:
  using Clock = std::chrono::steady_clock;

  // Times one step: the record keeps the longest, with its name. `name`
  // is a literal (it is kept as a pointer).
  class Timer {
   public:
    Timer(SlowestStep& record, const char* name)
        : record_(record), name_(name), start_(Clock::now()) {}
    ~Timer() { record_.Note(name_, Clock::now() - start_); }
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;

   private:
    SlowestStep& record_;
    const char* name_;
    Clock::time_point start_;
  };

  void Note(const char* name, Clock::duration took) {
    if (took <= longest_) return;
    longest_ = took;
    name_ = name;
  }
  // "NAME MS", or "none 0" before any step.
  std::string Text() const {
    return std::string(name_) + " " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(longest_).count());
  }

 private:
  Clock::duration longest_{};
  const char* name_ = "none";
};

}  // namespace lcpi

#endif  // LCPI_DAEMON_SLOWEST_STEP_H_
