// AOT packages as written (codegen_cpu/aot.h): the object's symbol table (one exported
// descriptor, kernels local), the header, embedded external constants, name and option errors,
// file writing; and the runtime's LLVM-free CPU feature detection (runtime/cpu/
// aot_cpu_features.h) against LLVM's host detection, feature by feature. Running linked
// packages is tests/aot's job.
#include "codegen_cpu/aot.h"

#include <optional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/cpu_program.h"
#include "codegen_cpu/testing/cpu_schedule.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/MemoryBuffer.h"
#include "prims/decompose.h"
#include "runtime/cpu/aot_cpu_features.h"
#include "runtime/cpu/aot_package.h"

namespace coil {
namespace {

namespace fs = std::filesystem;

constexpr char kMlp[] = R"(
graph @mlp(%0 "x": f32[batch, 6], %1 "w": f32[4, 6]) {
  symbol batch min 2 max 64 hint 4
  %2 "b": f32[4] = constant dense "0000803f0000004000004040000000bf"
  %3: f32[batch, 4] = aten.linear(%0, %1, %2)
  %4: f32[batch, 4] = aten.tanh(%3)
  return %4, %3
}
)";

proto::Schedule Lower(const std::string& text) {
  return CpuScheduleOf(text).value_or(proto::Schedule());
}

std::string TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/aot_test/", name);
  fs::remove_all(dir);
  return dir;
}

struct Symbols {
  std::set<std::string> defined_global, defined_local, undefined;
};

Symbols ReadSymbols(const std::string& object) {
  Symbols out;
  auto obj = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), "aot.o"));
  EXPECT_TRUE(static_cast<bool>(obj)) << llvm::toString(obj.takeError());
  if (!obj) return out;
  EXPECT_TRUE((*obj)->isELF() && (*obj)->isRelocatableObject());
  // Nothing may run at load time, before the CPU check.
  for (const llvm::object::SectionRef& section : (*obj)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      ADD_FAILURE() << llvm::toString(name.takeError());
      continue;
    }
    for (const char* forbidden : {".init_array", ".ctors", ".preinit_array", ".fini_array"}) {
      EXPECT_FALSE(name->startswith(forbidden)) << "the object has a " << name->str() << " section";
    }
  }
  for (const llvm::object::SymbolRef& sym : (*obj)->symbols()) {
    llvm::Expected<llvm::StringRef> name = sym.getName();
    llvm::Expected<uint32_t> flags = sym.getFlags();
    if (!name || !flags) {
      ADD_FAILURE() << "unreadable symbol";
      llvm::consumeError(name.takeError());
      llvm::consumeError(flags.takeError());
      continue;
    }
    if (name->empty() || (*flags & llvm::object::SymbolRef::SF_FormatSpecific)) continue;
    if (*flags & llvm::object::SymbolRef::SF_Undefined) {
      out.undefined.insert(name->str());
    } else if (*flags & llvm::object::SymbolRef::SF_Global) {
      out.defined_global.insert(name->str());
    } else {
      out.defined_local.insert(name->str());
    }
  }
  return out;
}

TEST(AotTest, ObjectExportsOnlyItsDescriptor) {
  const proto::Schedule s = Lower(kMlp);
  absl::StatusOr<AotPackage> p = GenerateAotPackage(s, {.name = "mlp", .cpu = "x86-64-v3"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->module.cpu(), "x86-64-v3");
  EXPECT_TRUE(absl::StrContains(p->module.cpu_features(), "+avx2")) << p->module.cpu_features();
  EXPECT_TRUE(absl::StrContains(p->module.options(), "aot=mlp"));
  ASSERT_GT(p->module.kernels_size(), 0);
  const Symbols syms = ReadSymbols(p->module.object_code());
  EXPECT_EQ(syms.defined_global, (std::set<std::string>{"coil_aot_mlp_package"}));
  for (const proto::CompiledKernel& k : p->module.kernels()) {
    EXPECT_TRUE(syms.defined_local.count(k.symbol())) << k.symbol() << " is not a local symbol";
  }
  for (const std::string& u : syms.undefined) {
    EXPECT_FALSE(absl::StartsWith(u, "coil_")) << u << " is left undefined";
  }

  // Another name: another exported symbol, so the two link into one program.
  absl::StatusOr<AotPackage> q = GenerateAotPackage(s, {.name = "mlp2", .cpu = "x86-64-v3"});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(ReadSymbols(q->module.object_code()).defined_global,
            (std::set<std::string>{"coil_aot_mlp2_package"}));

  // Reproducible: the same inputs give the same bytes.
  absl::StatusOr<AotPackage> again = GenerateAotPackage(s, {.name = "mlp", .cpu = "x86-64-v3"});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->module.object_code(), p->module.object_code());
  EXPECT_EQ(again->header, p->header);
}

TEST(AotTest, HeaderDescribesTheModel) {
  absl::StatusOr<AotPackage> p =
      GenerateAotPackage(Lower(kMlp), {.name = "tiny_mlp", .cpu = "x86-64-v2"});
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string& h = p->header;
  for (const std::string& part : {
           std::string("#ifndef COIL_AOT_tiny_mlp_H_"),
           std::string("namespace coil_aot::tiny_mlp {"),
           std::string("extern \"C\" const CoilAotPackage coil_aot_tiny_mlp_package;"),
           absl::StrCat("static_assert(coil::cpu::kAotAbiVersion == ", cpu::kAotAbiVersion, ","),
           std::string("#include \"runtime/cpu/aot_loader.h\""),
           std::string("inline constexpr char kCpu[] = \"x86-64-v2\";"),
           absl::StrCat("inline constexpr char kCpuFeatures[] = \"", p->module.cpu_features(),
                        "\";"),
           std::string("inline constexpr int kNumInputs = 2;"),
           std::string("inline constexpr int kNumOutputs = 2;"),
           std::string("kInputNames = {\"x\", \"w\"};"),
           std::string("//   0  x  f32[batch, 6]"),
           std::string("//   1  w  f32[4, 6]"),
           std::string("//   batch  2 <= batch <= 64  (hint 4)"),
           std::string("1 constant (16 bytes)"),
           std::string("Create(\n    const coil::cpu::CpuExecutableOptions& options = {})"),
           std::string("-lmvec -lm"),
       }) {
    EXPECT_TRUE(absl::StrContains(h, part)) << "missing: " << part << "\n" << h;
  }
}

TEST(AotTest, ExternalConstantsAreEmbedded) {
  const std::string dir = TempDir("external");
  fs::create_directories(dir);
  {
    std::ofstream f(dir + "/b.bin", std::ios::binary);
    f << "junk" << std::string("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x00\xbf", 16);
  }
  proto::Schedule s = Lower(kMlp);
  ASSERT_EQ(s.graph().constants_size(), 1);
  proto::Constant* c = s.mutable_graph()->mutable_constants(0);
  const std::string raw = c->raw();
  c->mutable_external()->set_path("b.bin");
  c->mutable_external()->set_offset(4);
  c->mutable_external()->set_length(16);

  AotOptions options{.name = "ext", .cpu = "x86-64-v2"};
  options.external_data_dir = dir;
  absl::StatusOr<AotPackage> p = GenerateAotPackage(s, options);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->module.schedule().graph().constants(0).data_case(), proto::Constant::kRaw);
  EXPECT_EQ(p->module.schedule().graph().constants(0).raw(), raw);

  options.external_data_dir = dir + "/nowhere";
  absl::StatusOr<AotPackage> missing = GenerateAotPackage(s, options);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "nowhere/b.bin")) << missing.status();

  options.external_data_dir = dir;
  c->mutable_external()->set_offset(8);  // 8 + 16 > 20 bytes
  absl::StatusOr<AotPackage> short_file = GenerateAotPackage(s, options);
  EXPECT_EQ(short_file.status().code(), absl::StatusCode::kDataLoss) << short_file.status();
}

// Expected errors: an external path that leaves the folder is refused where it is read.
TEST(AotTest, ExternalConstantOutsideTheFolder) {
  proto::Schedule s = Lower(kMlp);
  proto::Constant* c = s.mutable_graph()->mutable_constants(0);
  c->mutable_external()->set_path("/etc/passwd");
  c->mutable_external()->set_length(32);
  AotOptions options{.name = "ext", .cpu = "x86-64-v2"};
  absl::StatusOr<AotPackage> p = GenerateAotPackage(s, options);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
  EXPECT_TRUE(absl::StrContains(p.status().message(),
                                "'): external data path '/etc/passwd' must be relative to the "
                                "model's folder"))
      << p.status();
  c->mutable_external()->set_path("../../etc/passwd");
  p = GenerateAotPackage(s, options);
  EXPECT_TRUE(absl::StrContains(p.status().message(), "must not contain '..'")) << p.status();
}

TEST(AotTest, BadNamesAndOptions) {
  const proto::Schedule s = Lower(kMlp);
  for (const char* bad : {"", "9lives", "my-model", "has space", "namespace", "int", "__x",
                          "_Upper", "_private", "_", "a__b", "trailing_", "linux",
                          "caf\xc3\xa9"}) {
    absl::StatusOr<AotPackage> p = GenerateAotPackage(s, {.name = bad});
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << "'" << bad << "'";
    EXPECT_TRUE(absl::StrContains(p.status().message(), "AOT package name")) << p.status();
  }
  for (const char* good : {"resnet18", "Model_2", "x", "a_b_c"}) {
    EXPECT_TRUE(ValidateAotName(good).ok()) << good << ": " << ValidateAotName(good);
  }
  absl::StatusOr<AotPackage> cpu = GenerateAotPackage(s, {.name = "m", .cpu = "pentium9000"});
  EXPECT_EQ(cpu.status().code(), absl::StatusCode::kInvalidArgument) << cpu.status();
  EXPECT_TRUE(absl::StrContains(cpu.status().message(), "pentium9000")) << cpu.status();
  absl::StatusOr<AotPackage> level = GenerateAotPackage(s, {.name = "m", .opt_level = 7});
  EXPECT_EQ(level.status().code(), absl::StatusCode::kInvalidArgument) << level.status();
}

TEST(AotTest, WritesBothFiles) {
  const std::string dir = TempDir("write") + "/nested/out";
  const proto::Schedule s = Lower(kMlp);
  ASSERT_TRUE(WriteAotPackage(s, {.name = "mlp", .cpu = "x86-64-v2"}, dir).ok());
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"mlp.h", "mlp.o"}));
  std::ifstream o(dir + "/mlp.o", std::ios::binary);
  std::stringstream bytes;
  bytes << o.rdbuf();
  EXPECT_EQ(ReadSymbols(bytes.str()).defined_global,
            (std::set<std::string>{"coil_aot_mlp_package"}));

  // A folder that cannot be created: the error names it.
  const std::string file = TempDir("write_file");
  fs::create_directories(fs::path(file).parent_path());
  std::ofstream(file) << "not a folder";
  absl::Status s2 = WriteAotPackage(s, {.name = "mlp", .cpu = "x86-64-v2"}, file + "/sub");
  EXPECT_FALSE(s2.ok());
  EXPECT_TRUE(absl::StrContains(s2.message(), file)) << s2;
}

// Expected error: a symbolic link where the object goes is refused, and its target is left as
// it was (the writer used to write through FILE.tmp.<pid>, following a link planted there).
TEST(AotTest, RefusesASymbolicLinkTarget) {
  const std::string dir = TempDir("symlink");
  fs::create_directories(dir);
  std::ofstream(dir + "/victim") << "precious";
  fs::create_symlink(dir + "/victim", dir + "/mlp.o");
  absl::Status s = WriteAotPackage(Lower(kMlp), {.name = "mlp", .cpu = "x86-64-v2"}, dir);
  EXPECT_EQ(s.message(), absl::StrCat("cannot write '", dir,
                                      "/mlp.o': it is a symbolic link (name its target instead)"));
  std::ifstream victim(dir + "/victim");
  std::stringstream bytes;
  bytes << victim.rdbuf();
  EXPECT_EQ(bytes.str(), "precious");
}

// The runtime decides "can this CPU run it" without LLVM; it must agree with LLVM's own host
// detection (which decided what the code may use) on every feature LLVM knows.
TEST(AotTest, RuntimeCpuFeaturesAgreeWithLlvm) {
  llvm::StringMap<bool> llvm_features;
  if (!llvm::sys::getHostCPUFeatures(llvm_features)) GTEST_SKIP() << "LLVM cannot tell";
  std::map<std::string, bool> want;
  for (const auto& f : llvm_features) want[f.first().str()] = f.second;
  EXPECT_EQ(cpu::HostCpuFeatures(), want);
}

}  // namespace
}  // namespace coil
