// CPU time taken by others during coil's timed runs (cpu_bench_cpu_share.h).
#include "tools/bench/cpu_bench_cpu_share.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace coil::bench {
namespace {

std::string ReadAll(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

CpuTimes ParseProcStat(const std::string& proc_stat) {
  CpuTimes t;
  for (absl::string_view line : absl::StrSplit(proc_stat, '\n')) {
    if (!absl::StartsWith(line, "cpu ")) continue;
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    // cpu user nice system idle iowait irq softirq steal ...
    if (f.size() < 9) return t;
    int64_t v[8];
    for (int i = 0; i < 8; ++i) {
      if (!absl::SimpleAtoi(f[i + 1], &v[i])) return t;
    }
    t.busy = v[0] + v[1] + v[2] + v[5] + v[6];
    t.steal = v[7];
    t.total = t.busy + t.steal + v[3] + v[4];
    t.valid = true;
    return t;
  }
  return t;
}

int64_t ParseSelfTicks(const std::string& self_stat) {
  // pid (comm) state ppid ... : the comm may hold spaces, so fields count from the last ')'.
  const size_t close = self_stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::string_view(self_stat).substr(close + 1), ' ', absl::SkipEmpty());
  // f[0] is the state (field 3); utime and stime are fields 14 and 15.
  int64_t utime = 0, stime = 0;
  if (f.size() < 13 || !absl::SimpleAtoi(f[11], &utime) || !absl::SimpleAtoi(f[12], &stime)) {
    return -1;
  }
  return utime + stime;
}

CpuTimes ReadCpuTimes() {
  CpuTimes t = ParseProcStat(ReadAll("/proc/stat"));
  const int64_t self = ParseSelfTicks(ReadAll("/proc/self/stat"));
  if (self < 0) t.valid = false;
  t.self = self;
  return t;
}

CpuShares SharesBetween(const CpuTimes& before, const CpuTimes& after) {
  CpuShares s;
  const int64_t total = after.total - before.total;
  if (!before.valid || !after.valid || total <= 0) return s;
  const int64_t other = (after.busy - before.busy) - (after.self - before.self);
  s.other = std::clamp(static_cast<double>(other) / total, 0.0, 1.0);
  s.steal = std::clamp(static_cast<double>(after.steal - before.steal) / total, 0.0, 1.0);
  s.valid = true;
  return s;
}

}  // namespace coil::bench
