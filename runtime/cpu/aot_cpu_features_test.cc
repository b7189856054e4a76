// Host CPU feature detection against the kernel's view (/proc/cpuinfo flags, which Linux
// derives from cpuid and clears for features whose register state it does not enable), and
// the feature-string parser. codegen_cpu:aot_test also checks every feature against LLVM.
#include "runtime/cpu/aot_cpu_features.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace coil::cpu {
namespace {

// The flags of the first processor in /proc/cpuinfo; empty when unavailable.
std::set<std::string> CpuinfoFlags() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (!absl::StartsWith(line, "flags")) continue;
    std::vector<std::string> parts = absl::StrSplit(line, ':');
    if (parts.size() != 2) return {};
    std::vector<std::string> flags = absl::StrSplit(parts[1], ' ', absl::SkipWhitespace());
    return std::set<std::string>(flags.begin(), flags.end());
  }
  return {};
}

bool Has(const std::string& feature) {
  auto it = HostCpuFeatures().find(feature);
  EXPECT_TRUE(it != HostCpuFeatures().end()) << feature << " is not a known feature";
  return it != HostCpuFeatures().end() && it->second;
}

TEST(AotCpuFeaturesTest, X86_64Baseline) {
  if (HostArch() != "x86_64") GTEST_SKIP() << "not x86-64";
  for (const char* f : {"64bit", "cmov", "cx8", "fxsr", "mmx", "sse", "sse2"}) {
    EXPECT_TRUE(Has(f)) << f;
  }
  EXPECT_GE(HostCpuFeatures().size(), 90u);
  EXPECT_FALSE(HostCpuBrand().empty());
  // Architectural implications hold on every real CPU.
  if (Has("avx512f")) {
    EXPECT_TRUE(Has("avx2"));
  }
  if (Has("avx2")) {
    EXPECT_TRUE(Has("avx"));
  }
  if (Has("avx")) {
    EXPECT_TRUE(Has("sse4.2"));
  }
  EXPECT_EQ(Has("crc32"), Has("sse4.2"));
}

TEST(AotCpuFeaturesTest, AgreesWithProcCpuinfo) {
  if (HostArch() != "x86_64") GTEST_SKIP() << "not x86-64";
  const std::set<std::string> flags = CpuinfoFlags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags";
  // LLVM name -> Linux flag. Features whose use needs register state the OS enables (AVX,
  // AVX-512): Linux clears the flag when the state is off, so both directions must agree (a
  // feature detected here that Linux hides would fault).
  const std::pair<const char*, const char*> with_state[] = {
      {"fma", "fma"},           {"avx", "avx"},           {"f16c", "f16c"},
      {"avx2", "avx2"},         {"avx512f", "avx512f"},   {"avx512dq", "avx512dq"},
      {"avx512cd", "avx512cd"}, {"avx512bw", "avx512bw"}, {"avx512vl", "avx512vl"},
  };
  for (const auto& [llvm_name, linux_flag] : with_state) {
    EXPECT_EQ(Has(llvm_name), flags.count(linux_flag) > 0)
        << llvm_name << " (Linux: " << linux_flag << ")";
  }
  // The others: what Linux shows the CPU has, cpuid has too; the reverse is not a property of
  // the CPU (a hypervisor's guest kernel may omit flags whose cpuid bits are set: an AMD EPYC
  // VM showed neither abm nor sse4a while cpuid, and LLVM, report lzcnt and sse4a).
  const std::pair<const char*, const char*> established[] = {
      {"sse3", "pni"},       {"pclmul", "pclmulqdq"}, {"ssse3", "ssse3"},
      {"cx16", "cx16"},      {"sse4.1", "sse4_1"},    {"sse4.2", "sse4_2"},
      {"movbe", "movbe"},    {"popcnt", "popcnt"},    {"aes", "aes"},
      {"bmi", "bmi1"},       {"bmi2", "bmi2"},        {"rdseed", "rdseed"},
      {"adx", "adx"},        {"sha", "sha_ni"},       {"lzcnt", "abm"},
      {"sse4a", "sse4a"},    {"clflushopt", "clflushopt"},
  };
  for (const auto& [llvm_name, linux_flag] : established) {
    if (flags.count(linux_flag) > 0) {
      EXPECT_TRUE(Has(llvm_name)) << llvm_name << " (Linux: " << linux_flag << ")";
    }
  }
  // Newer features: an older kernel may not print a flag the CPU has, so only "Linux shows
  // it -> detected" must hold.
  const std::pair<const char*, const char*> recent[] = {
      {"avx512vbmi", "avx512vbmi"},   {"avx512vbmi2", "avx512_vbmi2"},
      {"avx512vnni", "avx512_vnni"},  {"avx512bitalg", "avx512_bitalg"},
      {"avx512bf16", "avx512_bf16"},  {"avx512fp16", "avx512_fp16"},
      {"avx512vpopcntdq", "avx512_vpopcntdq"}, {"avx512ifma", "avx512ifma"},
      {"gfni", "gfni"},               {"vaes", "vaes"},
      {"vpclmulqdq", "vpclmulqdq"},   {"amx-tile", "amx_tile"},
      {"amx-int8", "amx_int8"},       {"amx-bf16", "amx_bf16"},
      {"avxvnni", "avx_vnni"},        {"xsavec", "xsavec"},
      {"rdpid", "rdpid"},             {"clzero", "clzero"},
      {"rdrnd", "rdrand"},  // Linux hides it on CPUs with a broken RDRAND
  };
  for (const auto& [llvm_name, linux_flag] : recent) {
    if (flags.count(linux_flag) > 0) {
      EXPECT_TRUE(Has(llvm_name)) << llvm_name;
    }
  }
}

TEST(AotCpuFeaturesTest, ParsesFeatureStrings) {
  if (HostArch() != "x86_64") GTEST_SKIP() << "x86 feature names";
  std::string absent;
  for (const auto& [name, on] : HostCpuFeatures()) {
    if (!on) absent = name;
  }
  if (absent.empty()) GTEST_SKIP() << "this CPU has every known feature";
  // '-' entries are not requirements; bare names are; blanks and empty items are ignored.
  CpuFeatureCheck c = CheckCpuFeatures(" +sse2,," + absent + ",-" + absent + ",+zzz,+aaa ");
  EXPECT_EQ(c.missing, (std::vector<std::string>{absent}));
  EXPECT_EQ(c.unknown, (std::vector<std::string>{"aaa", "zzz"}));
  c = CheckCpuFeatures("");
  EXPECT_TRUE(c.missing.empty() && c.unknown.empty());
  c = CheckCpuFeatures("-" + absent);
  EXPECT_TRUE(c.missing.empty() && c.unknown.empty());
}

}  // namespace
}  // namespace coil::cpu
