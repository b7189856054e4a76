// Progress of a long CLI step (coil conformance's tests) on a terminal: one stderr line
// rewritten in place, "  node 123/932  41.2 s  test_relu", erased when the step ends. When
// stderr is not a terminal nothing is written (the commands' own result lines are the plain
// progress there). COIL_PROGRESS=always writes it anyway (for tests), =never never.
#ifndef COIL_TOOLS_COIL_PROGRESS_H_
#define COIL_TOOLS_COIL_PROGRESS_H_

#include <chrono>
#include <string>

namespace coil::cli {

class Progress {
 public:
  // `what` names the step ("node"); `total` is how many items it has.
  Progress(std::string what, int total);
  ~Progress();  // erases the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Item `item` starts: shows its number, the elapsed time and its name.
  void Start(const std::string& item);
  // Erases the line (before printing something else on the terminal); Start shows it again.
  void Clear();

  bool enabled() const { return enabled_; }

 private:
  std::string what_;
  int total_;
  int done_ = 0;
  bool enabled_;
  size_t last_width_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_PROGRESS_H_
