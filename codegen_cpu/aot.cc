// AOT packages: name checks, embedding external constants, code generation with the
// descriptor hook, the header, and writing the two files.
#include "codegen_cpu/aot.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/internal/aot_descriptor.h"
#include "codegen_cpu/internal/aot_header.h"
#include "codegen_cpu/internal/aot_hook.h"
#include "codegen_cpu/internal/loop_shapes.h"
#include "codegen_cpu/internal/target.h"
#include "ir/io/data_path.h"
#include "ir/io/write_file.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Target/TargetMachine.h"

namespace coil {
namespace {

using codegen_cpu_internal::AotDescriptor;
using codegen_cpu_internal::AotHeaderInfo;

bool IsCppKeyword(const std::string& s) {
  static const auto* keywords = new absl::flat_hash_set<std::string>{
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
      "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
      "protected", "public", "register", "reinterpret_cast", "requires", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
      "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t",
      "while", "xor", "xor_eq"};
  return keywords->contains(s);
}

std::string Serialized(const proto::Schedule& schedule) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);  // reproducible objects
  schedule.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

// Replaces every external constant of the schedule's graph by its bytes, read under
// ir/io/data_path.h's rules (inside `dir`, regular files only).
absl::Status EmbedConstants(proto::Schedule& schedule, const std::string& dir) {
  for (proto::Constant& c : *schedule.mutable_graph()->mutable_constants()) {
    if (c.data_case() != proto::Constant::kExternal) continue;
    const proto::ExternalData& e = c.external();
    absl::StatusOr<std::string> bytes = ReadDataFile(dir, e.path(), e.offset(), e.length());
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(),
                          absl::StrCat("constant %", c.value().id(), " ('", c.value().name(),
                                       "'): ", bytes.status().message()));
    }
    c.set_raw(*std::move(bytes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateAotName(const std::string& name) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("AOT package name '", absl::CEscape(name),
                                                   "' ", why));
  };
  if (name.empty()) return bad("is empty");
  if (name.size() > 200) return bad("is longer than 200 characters");
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool ok = letter || (i > 0 && (c == '_' || (c >= '0' && c <= '9')));
    if (!ok) {
      return bad(absl::StrCat("is not a C identifier starting with a letter (character ", i + 1,
                              "); use letters, digits and '_'"));
    }
  }
  // It is spliced into coil_aot_<name>_package: a "__" there would be a reserved identifier.
  if (absl::StrContains(name, "__") || name.back() == '_') {
    return bad("contains '__' or ends in '_' (reserved in C++ once spliced into "
               "coil_aot_<name>_package)");
  }
  if (IsCppKeyword(name)) return bad("is a C++ keyword");
  // Predefined object-like macros of GCC/Clang in GNU modes would rewrite the namespace name.
  if (name == "linux" || name == "unix" || name == "i386") {
    return bad("is a predefined macro in GNU C++ modes");
  }
  return absl::OkStatus();
}

absl::StatusOr<AotPackage> GenerateAotPackage(const proto::Schedule& schedule,
                                              const AotOptions& options) {
  if (absl::Status s = ValidateAotName(options.name); !s.ok()) return s;
  if (options.opt_level < 0 || options.opt_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("AOT opt_level ", options.opt_level, " is not in 0-3"));
  }
  proto::Schedule embedded = schedule;
  if (absl::Status s = EmbedConstants(embedded, options.external_data_dir); !s.ok()) return s;
  // The embedded schedule says how the runtime splits each kernel, as the module's does.
  codegen_cpu_internal::AssignParallelDims(embedded);

  AotDescriptor descriptor;
  descriptor.name = options.name;
  descriptor.compiler = absl::StrCat("LLVM ", LLVM_VERSION_STRING);
  descriptor.options = absl::StrCat("opt_level=", options.opt_level,
                                    " cpu=", options.cpu.empty() ? "native" : options.cpu);
  descriptor.schedule_bytes = Serialized(embedded);
  auto add_descriptor = [&](llvm::Module& module, const llvm::TargetMachine& tm,
                            const proto::KernelModule& kernels) {
    descriptor.cpu = tm.getTargetCPU().str();
    descriptor.cpu_features = codegen_cpu_internal::IsaFeatures(tm);
    return codegen_cpu_internal::AddAotDescriptor(module, kernels, descriptor);
  };
  CpuCodegenOptions codegen;
  codegen.cpu = options.cpu;
  codegen.opt_level = options.opt_level;
  absl::StatusOr<proto::KernelModule> module =
      codegen_cpu_internal::GenerateCpuWithPreEmit(embedded, codegen, add_descriptor);
  if (!module.ok()) return module.status();
  // The descriptor must promise exactly what the module records (the JIT's check uses these).
  if (module->cpu() != descriptor.cpu || module->cpu_features() != descriptor.cpu_features) {
    return absl::InternalError(absl::StrCat(
        "AOT descriptor target (", descriptor.cpu, "; ", descriptor.cpu_features,
        ") differs from the module's (", module->cpu(), "; ", module->cpu_features(), ")"));
  }
  module->set_options(absl::StrCat(module->options(), " aot=", options.name));

  AotHeaderInfo info;
  info.name = options.name;
  info.target_triple = module->target_triple();
  info.cpu = descriptor.cpu;
  info.cpu_features = descriptor.cpu_features;
  info.compiler = descriptor.compiler;
  info.options = descriptor.options;
  info.num_kernels = module->kernels_size();
  absl::StatusOr<std::string> header = codegen_cpu_internal::AotHeader(embedded, info);
  if (!header.ok()) return header.status();

  AotPackage out;
  out.name = options.name;
  out.header = *std::move(header);
  out.module = *std::move(module);
  return out;
}

absl::Status WriteAotFiles(const AotPackage& package, const std::string& dir) {
  if (absl::Status s = ValidateAotName(package.name); !s.ok()) return s;
  std::error_code error;
  if (!dir.empty()) std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::ErrnoToStatus(error.value(),
                               absl::StrCat("cannot create the AOT output folder ", dir));
  }
  const std::string base = absl::StrCat(dir, dir.empty() ? "" : "/", package.name);
  // Durable: a package is an artifact other builds link.
  const WriteFileOptions durable{.durable = true};
  if (absl::Status s = WriteFileAtomically(base + ".o", package.module.object_code(), durable);
      !s.ok()) {
    return s;
  }
  return WriteFileAtomically(base + ".h", package.header, durable);
}

absl::Status WriteAotPackage(const proto::Schedule& schedule, const AotOptions& options,
                             const std::string& dir) {
  absl::StatusOr<AotPackage> package = GenerateAotPackage(schedule, options);
  if (!package.ok()) return package.status();
  return WriteAotFiles(*package, dir);
}

}  // namespace coil
