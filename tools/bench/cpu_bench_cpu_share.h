// Whether coil's timed runs had the machine to themselves: the CPU time that other processes
// and the hypervisor (steal) took while they ran, as shares of all CPUs, from /proc/stat and
// /proc/self/stat (Linux; elsewhere nothing is measured). `coil bench cpu --peers` runs the
// peers' Python first and coil's rows after it in one process; a row whose coil time was far
// above the same binary's standalone `coil run` (docs/benchmarks.md, issue 18) is then either
// explained by these shares or not.
//
//   CpuTimes before = ReadCpuTimes();
//   ... timed runs ...
//   CpuShares s = SharesBetween(before, ReadCpuTimes());   // s.other, s.steal in [0, 1]
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_CPU_SHARE_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_CPU_SHARE_H_

#include <cstdint>
#include <string>

namespace coil::bench {

// Clock ticks (USER_HZ) since boot, summed over the machine's CPUs, and this process's.
struct CpuTimes {
  bool valid = false;
  int64_t busy = 0;   // user + nice + system + irq + softirq (every process, this one included)
  int64_t steal = 0;  // taken by the hypervisor
  int64_t total = 0;  // busy + steal + idle + iowait
  int64_t self = 0;   // this process's user + system time, all its threads
};

// The aggregate "cpu " line of /proc/stat's text into busy / steal / total (valid false when
// the line is missing or short).
CpuTimes ParseProcStat(const std::string& proc_stat);
// utime + stime of /proc/self/stat's text (-1 when malformed).
int64_t ParseSelfTicks(const std::string& self_stat);

// Both files now.
CpuTimes ReadCpuTimes();

struct CpuShares {
  bool valid = false;
  double other = 0;  // other processes' busy time / all CPUs' time
  double steal = 0;  // steal / all CPUs' time
};
CpuShares SharesBetween(const CpuTimes& before, const CpuTimes& after);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_CPU_SHARE_H_
