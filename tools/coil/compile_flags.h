// The flags of `coil compile` (compile_commands.h): the usage text, and the command line
// checked into CompileFlags (each bad combination an error naming the flag).
//
//   absl::StatusOr<CompileFlags> f = ParseCompileFlags(args);  // args: ParseArgs's result
#ifndef COIL_TOOLS_COIL_COMPILE_FLAGS_H_
#define COIL_TOOLS_COIL_COMPILE_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "prims/autocast.h"
#include "tools/coil/args.h"

namespace coil::cli {

// `coil compile --help`.
extern const char kCompileUsage[];

struct CompileFlags {
  std::string model;
  std::string backend = "cpu";  // "cpu" or "schedule"
  std::string mode = "default";  // "default" or "max-autotune"
  std::string dump_dir;
  std::string aot_dir;
  std::string name;  // the AOT package's identifier
  std::string cpu;   // "" = the host
  std::string dims;
  uint64_t seed = 0;
  int runs = 5;
  bool check = false;
  bool train = false;  // a training step: forward + backward through autograd
  prims::Precision precision = prims::Precision::kF32;  // --precision
};

// An AOT package name from a file stem: "resnet-18.v2" -> "resnet_18_v2"; a name that would
// still be refused (starts with a digit, a C++ keyword, reserved) gets an "m_" prefix.
std::string AotNameFromStem(const std::string& stem);

// `args` (one positional MODEL) as CompileFlags. Errors (InvalidArgument naming the flag): an
// unknown backend or mode, flags that need another (--runs without max-autotune, --name
// without --aot, --dim/--seed without --check or max-autotune, ...), bad values.
absl::StatusOr<CompileFlags> ParseCompileFlags(const Args& args);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_COMPILE_FLAGS_H_
