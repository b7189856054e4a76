// `coil compile`: the whole compiler on the command line, one progress line per stage.
//
//   coil compile model.onnx --dump out/            # import, prims, inductor, codegen_cpu, load
//   coil compile mlp.txt --mode max-autotune       # time schedule variants x thread counts
//   coil compile model.onnx --aot pkg/ --name net  # also write an AOT object + header
//
// --dump DIR writes DIR/report.pb (a coil.proto.CompileReport with the options, every stage's
// artifact, timings and logs; written even when a stage fails, holding the stages that
// finished) and one file per stage: 01_import.{pb,txt}, 02_prims.{pb,txt},
// 03_inductor.schedule.pb + 03_inductor.txt, 04_codegen_cpu.module.pb + .kernels.ll + .o.
// With --mode max-autotune the report's "autotune" timing covers every candidate (their
// inductor, code generation, loading and timed runs); the inductor, codegen_cpu and load
// timings after it are the chosen candidate's share of that time, and the logs hold every
// candidate's median ("autotune" channel).
// With --train (compile_train.h) the report holds import, autograd (02_autograd.autograd.pb
// and .joint.txt, .forward.txt, .backward.txt), the forward's capture, prims, inductor and
// codegen stages, then the backward's as backward.<stage> (their files likewise named).
// Returns the process exit code (0 ok, 1 a failed stage or bad flag value, 2 usage) and
// prints errors to stderr.
#ifndef COIL_TOOLS_COIL_COMPILE_COMMANDS_H_
#define COIL_TOOLS_COIL_COMPILE_COMMANDS_H_

#include <string>
#include <vector>

namespace coil::cli {

int CompileCommand(const std::vector<std::string>& argv);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_COMPILE_COMMANDS_H_
