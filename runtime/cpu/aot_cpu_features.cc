// Feature detection: one table row per feature (cpuid leaf, register, bit, and the OS-saved
// register state it needs), read once.
#include "runtime/cpu/aot_cpu_features.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define COIL_AOT_X86 1
#endif

namespace coil::cpu {
namespace {

#if COIL_AOT_X86

enum Reg { EAX, EBX, ECX, EDX };

// The register state a feature's instructions need the OS to save (XCR0 bits).
enum State {
  kNone,   // no extended state
  kYmm,    // AVX: OSXSAVE, the AVX cpuid bit, XCR0 SSE|YMM
  kZmm,    // AVX-512: kYmm plus XCR0 opmask|ZMM_Hi256|Hi16_ZMM
  kTiles,  // AMX: OSXSAVE, XCR0 XTILECFG|XTILEDATA
};

// Where the cpuid bit of a feature lives. `leaf` 0x80000001 / 0x80000008 are extended leaves.
struct FeatureBit {
  const char* name;  // LLVM's feature name
  uint32_t leaf;
  uint32_t subleaf;
  Reg reg;
  int bit;
  State state;
};

// Bits per the Intel SDM (vol. 2A, CPUID) and AMD APM (vol. 3, appendix E). The state column
// follows LLVM 16's host detection (e.g. it requires YMM state for xsave/xsaveopt and for the
// AMD xop/fma4 extensions), so that a feature LLVM compiled for is present here exactly when
// LLVM would have detected it.
constexpr FeatureBit kFeatures[] = {
    // Leaf 1, EDX.
    {"cx8", 1, 0, EDX, 8, kNone},
    {"cmov", 1, 0, EDX, 15, kNone},
    {"mmx", 1, 0, EDX, 23, kNone},
    {"fxsr", 1, 0, EDX, 24, kNone},
    {"sse", 1, 0, EDX, 25, kNone},
    {"sse2", 1, 0, EDX, 26, kNone},
    // Leaf 1, ECX.
    {"sse3", 1, 0, ECX, 0, kNone},
    {"pclmul", 1, 0, ECX, 1, kNone},
    {"ssse3", 1, 0, ECX, 9, kNone},
    {"fma", 1, 0, ECX, 12, kYmm},
    {"cx16", 1, 0, ECX, 13, kNone},
    {"sse4.1", 1, 0, ECX, 19, kNone},
    {"sse4.2", 1, 0, ECX, 20, kNone},
    {"crc32", 1, 0, ECX, 20, kNone},  // the crc32 instruction came with SSE4.2
    {"movbe", 1, 0, ECX, 22, kNone},
    {"popcnt", 1, 0, ECX, 23, kNone},
    {"aes", 1, 0, ECX, 25, kNone},
    {"xsave", 1, 0, ECX, 26, kYmm},
    {"avx", 1, 0, ECX, 28, kYmm},
    {"f16c", 1, 0, ECX, 29, kYmm},
    {"rdrnd", 1, 0, ECX, 30, kNone},
    // Leaf 7 subleaf 0, EBX.
    {"fsgsbase", 7, 0, EBX, 0, kNone},
    {"sgx", 7, 0, EBX, 2, kNone},
    {"bmi", 7, 0, EBX, 3, kNone},
    {"avx2", 7, 0, EBX, 5, kYmm},
    {"bmi2", 7, 0, EBX, 8, kNone},
    {"invpcid", 7, 0, EBX, 10, kNone},
    {"rtm", 7, 0, EBX, 11, kNone},
    {"avx512f", 7, 0, EBX, 16, kZmm},
    {"avx512dq", 7, 0, EBX, 17, kZmm},
    {"rdseed", 7, 0, EBX, 18, kNone},
    {"adx", 7, 0, EBX, 19, kNone},
    {"avx512ifma", 7, 0, EBX, 21, kZmm},
    {"clflushopt", 7, 0, EBX, 23, kNone},
    {"clwb", 7, 0, EBX, 24, kNone},
    {"avx512pf", 7, 0, EBX, 26, kZmm},
    {"avx512er", 7, 0, EBX, 27, kZmm},
    {"avx512cd", 7, 0, EBX, 28, kZmm},
    {"sha", 7, 0, EBX, 29, kNone},
    {"avx512bw", 7, 0, EBX, 30, kZmm},
    {"avx512vl", 7, 0, EBX, 31, kZmm},
    // Leaf 7 subleaf 0, ECX.
    {"prefetchwt1", 7, 0, ECX, 0, kNone},
    {"avx512vbmi", 7, 0, ECX, 1, kZmm},
    {"pku", 7, 0, ECX, 4, kNone},  // OSPKE: protection keys enabled by the OS
    {"waitpkg", 7, 0, ECX, 5, kNone},
    {"avx512vbmi2", 7, 0, ECX, 6, kZmm},
    {"shstk", 7, 0, ECX, 7, kNone},
    {"gfni", 7, 0, ECX, 8, kNone},
    {"vaes", 7, 0, ECX, 9, kYmm},
    {"vpclmulqdq", 7, 0, ECX, 10, kYmm},
    {"avx512vnni", 7, 0, ECX, 11, kZmm},
    {"avx512bitalg", 7, 0, ECX, 12, kZmm},
    {"avx512vpopcntdq", 7, 0, ECX, 14, kZmm},
    {"rdpid", 7, 0, ECX, 22, kNone},
    {"kl", 7, 0, ECX, 23, kNone},
    {"cldemote", 7, 0, ECX, 25, kNone},
    {"movdiri", 7, 0, ECX, 27, kNone},
    {"movdir64b", 7, 0, ECX, 28, kNone},
    {"enqcmd", 7, 0, ECX, 29, kNone},
    // Leaf 7 subleaf 0, EDX.
    {"uintr", 7, 0, EDX, 5, kNone},
    {"avx512vp2intersect", 7, 0, EDX, 8, kZmm},
    {"serialize", 7, 0, EDX, 14, kNone},
    {"tsxldtrk", 7, 0, EDX, 16, kNone},
    {"pconfig", 7, 0, EDX, 18, kNone},
    {"amx-bf16", 7, 0, EDX, 22, kTiles},
    {"avx512fp16", 7, 0, EDX, 23, kZmm},
    {"amx-tile", 7, 0, EDX, 24, kTiles},
    {"amx-int8", 7, 0, EDX, 25, kTiles},
    // Leaf 7 subleaf 1.
    {"raoint", 7, 1, EAX, 3, kNone},
    {"avxvnni", 7, 1, EAX, 4, kYmm},
    {"avx512bf16", 7, 1, EAX, 5, kZmm},
    {"cmpccxadd", 7, 1, EAX, 7, kNone},
    {"amx-fp16", 7, 1, EAX, 21, kTiles},
    {"hreset", 7, 1, EAX, 22, kNone},
    {"avxifma", 7, 1, EAX, 23, kYmm},
    {"avxvnniint8", 7, 1, EDX, 4, kYmm},
    {"avxneconvert", 7, 1, EDX, 5, kYmm},
    {"prefetchi", 7, 1, EDX, 14, kNone},
    // Leaf 0xD subleaf 1 (XSAVE extensions).
    {"xsaveopt", 0xd, 1, EAX, 0, kYmm},
    {"xsavec", 0xd, 1, EAX, 1, kYmm},
    {"xsaves", 0xd, 1, EAX, 3, kYmm},
    // Leaf 0x14 (processor trace), leaf 0x19 (key locker).
    {"ptwrite", 0x14, 0, EBX, 4, kNone},
    {"widekl", 0x19, 0, EBX, 2, kNone},
    // Extended leaf 0x80000001.
    {"sahf", 0x80000001, 0, ECX, 0, kNone},
    {"lzcnt", 0x80000001, 0, ECX, 5, kNone},
    {"sse4a", 0x80000001, 0, ECX, 6, kNone},
    {"prfchw", 0x80000001, 0, ECX, 8, kNone},
    {"xop", 0x80000001, 0, ECX, 11, kYmm},
    {"lwp", 0x80000001, 0, ECX, 15, kNone},
    {"fma4", 0x80000001, 0, ECX, 16, kYmm},
    {"tbm", 0x80000001, 0, ECX, 21, kNone},
    {"mwaitx", 0x80000001, 0, ECX, 29, kNone},
    {"64bit", 0x80000001, 0, EDX, 29, kNone},
    // Extended leaf 0x80000008.
    {"clzero", 0x80000008, 0, EBX, 0, kNone},
    {"rdpru", 0x80000008, 0, EBX, 4, kNone},
    {"wbnoinvd", 0x80000008, 0, EBX, 9, kNone},
};

struct Regs {
  uint32_t r[4] = {0, 0, 0, 0};
};

// cpuid(leaf, subleaf), or zeros when the leaf (or subleaf of leaf 7) does not exist.
Regs Cpuid(uint32_t leaf, uint32_t subleaf) {
  Regs out;
  const uint32_t max = __get_cpuid_max(leaf & 0x80000000u, nullptr);
  if (max == 0 || leaf > max) return out;
  if (leaf == 7 && subleaf > 0) {
    Regs sub0 = Cpuid(7, 0);
    if (subleaf > sub0.r[EAX]) return out;  // EAX of subleaf 0: the highest subleaf
  }
  __cpuid_count(leaf, subleaf, out.r[EAX], out.r[EBX], out.r[ECX], out.r[EDX]);
  return out;
}

uint64_t Xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

std::map<std::string, bool> Detect() {
  const Regs leaf1 = Cpuid(1, 0);
  const bool osxsave = (leaf1.r[ECX] >> 27) & 1;
  const uint64_t xcr0 = osxsave ? Xcr0() : 0;
  const bool ymm = osxsave && ((leaf1.r[ECX] >> 28) & 1) && (xcr0 & 0x6) == 0x6;
  const bool zmm = ymm && (xcr0 & 0xe0) == 0xe0;
  const bool tiles = osxsave && (xcr0 & 0x60000) == 0x60000;
  std::map<std::string, bool> out;
  for (const FeatureBit& f : kFeatures) {
    const Regs regs = Cpuid(f.leaf, f.subleaf);
    bool on = (regs.r[f.reg] >> f.bit) & 1;
    switch (f.state) {
      case kNone: break;
      case kYmm: on = on && ymm; break;
      case kZmm: on = on && zmm; break;
      case kTiles: on = on && tiles; break;
    }
    out[f.name] = on;
  }
  return out;
}

std::string Brand() {
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000004u) return "";
  char text[49] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    Regs r = Cpuid(0x80000002u + i, 0);
    std::memcpy(text + 16 * i, r.r, 16);
  }
  return std::string(absl::StripAsciiWhitespace(text));
}

#else  // !COIL_AOT_X86

std::map<std::string, bool> Detect() { return {}; }
std::string Brand() { return ""; }

#endif  // COIL_AOT_X86

}  // namespace

const std::map<std::string, bool>& HostCpuFeatures() {
  static const auto* features = new std::map<std::string, bool>(Detect());
  return *features;
}

const std::string& HostCpuBrand() {
  static const auto* brand = [] {
    std::string b = Brand();
    return new std::string(b.empty() ? "unknown CPU" : b);
  }();
  return *brand;
}

absl::string_view HostArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__i386__)
  return "i386";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#else
  return "unknown";
#endif
}

CpuFeatureCheck CheckCpuFeatures(absl::string_view features) {
  const std::map<std::string, bool>& host = HostCpuFeatures();
  CpuFeatureCheck out;
  for (absl::string_view item : absl::StrSplit(features, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    if (absl::StartsWith(item, "-")) continue;  // "-x": not required
    absl::ConsumePrefix(&item, "+");
    if (item.empty()) continue;
    auto it = host.find(std::string(item));
    if (it == host.end()) {
      out.unknown.emplace_back(item);
    } else if (!it->second) {
      out.missing.emplace_back(item);
    }
  }
  std::sort(out.missing.begin(), out.missing.end());
  std::sort(out.unknown.begin(), out.unknown.end());
  return out;
}

}  // namespace coil::cpu
