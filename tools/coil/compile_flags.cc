// ParseCompileFlags and the usage text of `coil compile` (compile_flags.h).
#include "tools/coil/compile_flags.h"

#include <cctype>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/aot.h"

namespace coil::cli {

const char kCompileUsage[] =
    "usage: coil compile MODEL [--backend cpu|cuda|schedule] [--mode default|max-autotune]\n"
    "                    [--dump DIR] [--aot DIR [--name ID]] [--cpu NAME]\n"
    "                    [--check] [--dim s=N,...] [--seed N] [--runs N] [--train]\n"
    "                    [--precision f32|bf16]\n"
    "  Compiles MODEL (.onnx, text IR or a binary coil.proto.Graph) stage by stage, printing\n"
    "  each stage's wall time and size as it finishes: import, prims (functionalize +\n"
    "  decompose), inductor (fusion + memory plan), codegen_cpu (LLVM O3, through the compile\n"
    "  cache unless COIL_CACHE=off), load (JIT + CPU executable).\n"
    "  --backend cpu        native code for this CPU (default)\n"
    "            cuda       CUDA C++ compiled by NVRTC (sm_90 CUBINs), loaded when this\n"
    "                       machine has a CUDA driver and GPU\n"
    "            schedule   stop after inductor; nothing is compiled or run\n"
    "  --mode max-autotune  compile every inductor variant (epilogue fusion, memory reuse) for\n"
    "                       1, half and all threads, time each on seeded random inputs (median\n"
    "                       of --runs runs after 2 warm-ups, default 5; one run when over 3x\n"
    "                       the best so far) and keep the fastest\n"
    "  --dump DIR           write DIR/report.pb (a CompileReport: options, every stage's\n"
    "                       artifact, timings, logs) and one file per stage\n"
    "  --aot DIR            also write the AOT package DIR/ID.o + DIR/ID.h (links without LLVM;\n"
    "                       --backend cuda: DIR/ID.coilcuda, loaded without NVRTC or LLVM)\n"
    "  --name ID            the AOT package's C identifier (default: MODEL's file stem)\n"
    "  --cpu NAME           LLVM CPU to generate code for (default: this host), e.g. x86-64-v3;\n"
    "                       code for a CPU this host cannot run is generated but not loaded\n"
    "  --check              run once on random inputs against the Schedule interpreter\n"
    "                       (--backend schedule: the Schedule interpreter against the graph\n"
    "                       interpreter); exit 1 above 1e-4 max relative error\n"
    "  --dim s=N,...        symbol sizes of the random inputs (default: the symbols' hints)\n"
    "  --seed N             seed of the random inputs (default 0)\n"
    "  --train              compile a training step: the model's weights (floating constants\n"
    "                       of 64 bytes or more) become inputs, every floating input requires\n"
    "                       its gradient, autograd builds the joint graph and partitions it\n"
    "                       (min-cut), and the forward and backward graphs are compiled;\n"
    "                       --dump records the joint/forward/backward graphs with the saved\n"
    "                       values and the backward's stages as backward.<stage>\n"
    "  --precision bf16     torch.autocast's bf16 policy as the prims stage's autocast pass:\n"
    "                       matrix products and convolutions in bf16, norms, softmax and sums\n"
    "                       in f32, weights cast once here, inputs and outputs in the model's\n"
    "                       types (not with --train or --check; coil run --check allows it)\n";

std::string AotNameFromStem(const std::string& stem) {
  std::string out;
  for (char c : stem) {
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  }
  if (out.empty()) return "model";
  if (!ValidateAotName(out).ok()) out = "m_" + out;
  return ValidateAotName(out).ok() ? out : "model";
}

absl::StatusOr<CompileFlags> ParseCompileFlags(const Args& args) {
  CompileFlags f;
  f.model = args.positional[0];
  f.backend = args.Get("backend", "cpu");
  if (f.backend != "cpu" && f.backend != "cuda" && f.backend != "schedule") {
    return absl::InvalidArgumentError(
        absl::StrCat("--backend must be cpu, cuda or schedule; got '", f.backend,
                     "' (cpu compiles to native code; schedule stops after inductor)"));
  }
  f.mode = args.Get("mode", "default");
  if (f.mode != "default" && f.mode != "max-autotune") {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode must be default or max-autotune; got '", f.mode, "'"));
  }
  if (f.mode == "max-autotune" && f.backend != "cpu") {
    return absl::InvalidArgumentError(
        "--mode max-autotune times compiled code: it needs --backend cpu");
  }
  if (f.backend == "cuda" && (args.Has("check") || args.values.count("cpu"))) {
    return absl::InvalidArgumentError(
        "--backend cuda takes neither --check nor --cpu (coil run --backend cuda --check runs "
        "a model on the GPU against the float64 reference)");
  }
  f.dump_dir = args.Get("dump");
  f.aot_dir = args.Get("aot");
  f.cpu = args.Get("cpu");
  if (f.cpu == "native") f.cpu.clear();
  if (args.values.count("cpu") && f.backend != "cpu" && f.aot_dir.empty()) {
    return absl::InvalidArgumentError(
        "--cpu selects the CPU to generate code for: it needs --backend cpu or --aot DIR");
  }
  if (args.values.count("name")) {
    if (f.aot_dir.empty()) {
      return absl::InvalidArgumentError("--name names the AOT package: it needs --aot DIR");
    }
    f.name = args.Get("name");
    if (absl::Status s = ValidateAotName(f.name); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--name: ", s.message()));
    }
  } else {
    f.name = AotNameFromStem(std::filesystem::path(f.model).stem().string());
  }
  if (args.values.count("aot") && f.aot_dir.empty()) {
    return absl::InvalidArgumentError("--aot needs a directory");
  }
  if (args.values.count("dump") && f.dump_dir.empty()) {
    return absl::InvalidArgumentError("--dump needs a directory");
  }
  f.dims = args.Get("dim");
  if (args.values.count("seed") && !absl::SimpleAtoi(args.Get("seed"), &f.seed)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--seed expects a non-negative integer; got '", args.Get("seed"), "'"));
  }
  if (args.values.count("runs")) {
    if (f.mode != "max-autotune") {
      return absl::InvalidArgumentError("--runs only applies to --mode max-autotune");
    }
    if (!absl::SimpleAtoi(args.Get("runs"), &f.runs) || f.runs < 1 || f.runs > 1000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--runs expects an integer in [1, 1000]; got '", args.Get("runs"), "'"));
    }
  }
  f.check = args.Has("check");
  f.train = args.Has("train");
  if (f.train && (f.check || f.mode != "default" || !f.aot_dir.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--train compiles a forward and a backward graph: it takes no ",
        f.check ? "--check" : f.mode != "default" ? "--mode max-autotune" : "--aot",
        " (those run or package one graph)"));
  }
  if (args.values.count("precision")) {
    absl::StatusOr<prims::Precision> p = prims::ParsePrecision(args.Get("precision"));
    if (!p.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--precision: ", p.status().message()));
    }
    f.precision = *p;
    if (f.precision != prims::Precision::kF32 && (f.train || f.check)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--precision bf16 compiles inference graphs checked by coil run --check; it takes no ",
          f.train ? "--train" : "--check"));
    }
  }
  for (const char* flag : {"dim", "seed"}) {
    if (args.values.count(flag) && !f.check && f.mode != "max-autotune") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " sets the random inputs of --check and --mode max-autotune; neither is on"));
    }
  }
  return f;
}

}  // namespace coil::cli
