// Progress (progress.h): a one-line stderr status on terminals.
#include "tools/coil/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"

namespace coil::cli {
namespace {

bool ProgressWanted() {
  const char* env = std::getenv("COIL_PROGRESS");
  if (env != nullptr && std::strcmp(env, "always") == 0) return true;
  if (env != nullptr && std::strcmp(env, "never") == 0) return false;
  return ::isatty(STDERR_FILENO) == 1;
}

}  // namespace

Progress::Progress(std::string what, int total)
    : what_(std::move(what)),
      total_(total),
      enabled_(ProgressWanted()),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { Clear(); }

void Progress::Clear() {
  if (!enabled_ || last_width_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(last_width_), "");
  std::fflush(stderr);
  last_width_ = 0;
}

void Progress::Start(const std::string& item) {
  ++done_;
  if (!enabled_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = absl::StrFormat("  %s %d/%d  %.1f s  %s", what_, done_, total_, elapsed, item);
  if (line.size() > 100) line.resize(100);  // one terminal line
  const size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
  last_width_ = width;
}

}  // namespace coil::cli
