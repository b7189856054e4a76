// coil.h: the umbrella header of //:coil — the eager Tensor API, nn building blocks,
// coil::compile, and the backends that compile captured graphs.
//
//   #include "coil.h"
//   auto f = coil::compile(model_fn);  // the compiled CPU backend (CpuBackend()) by default
//
// Each stage is also usable alone through its own target (//capture, //prims:decompose,
// //inductor, ...); this header only wires them together.
#ifndef COIL_COIL_H_
#define COIL_COIL_H_

#include <memory>

#include "capture/autograd.h"
#include "capture/compile.h"
#include "capture/random.h"
#include "capture/tensor.h"

namespace coil {

// A backend that functionalizes and decomposes the captured graph into prims
// (prims/decompose.h), schedules it with inductor (fusion + memory plan, inductor/schedule.h)
// and runs the Schedule with the Schedule interpreter (runtime/schedule_interpreter.h). It is
// the path the compiled CPU backend will take, minus code generation.
std::shared_ptr<Backend> InductorBackend();

// The compiled CPU backend: prims + inductor (with the CPU backend's capabilities) + LLVM code
// generation (codegen_cpu/) + the runtime/cpu executable (thread pool, oneDNN externs), through
// the on-disk compile cache. coil::compile's default backend in programs that link //:coil.
std::shared_ptr<Backend> CpuBackend();

}  // namespace coil

#endif  // COIL_COIL_H_
