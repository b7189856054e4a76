// MakeTestReport: a CompileReport from coil's real pipeline for the inspector's tests (testonly).
//
// An aten graph (layer_norm, linear with an inline constant bias, gelu, reshape, softmax,
// slice, mul, sum; a symbolic batch s0 with a guard; names and source locations) parsed from
// text IR is taken through the compile driver's prims and inductor stages (tools/driver,
// stopping after inductor; no extern epilogues). The report holds, in order: "capture" (a
// CaptureResult with two segment graphs and a graph break between them),
// "import" (the aten graph), "autograd" (joint/forward/backward built from the aten graph,
// with saved values; autograd/ does not exist yet, so its shape is made up), "prims",
// "inductor" (the Schedule) and "codegen_cpu" (a KernelModule over that Schedule whose kernel
// sources are small LLVM IR functions), plus timings, logs and options.
#ifndef COIL_INSPECTOR_WEB_TESTING_TEST_REPORT_H_
#define COIL_INSPECTOR_WEB_TESTING_TEST_REPORT_H_

#include "ir/proto/report.pb.h"

namespace coil::inspector::testing {

// The text IR of the aten graph above.
extern const char kBlockGraphText[];

// CHECK-fails if a pipeline stage rejects the graph (a coil bug, not a test input problem).
proto::CompileReport MakeTestReport();

}  // namespace coil::inspector::testing

#endif  // COIL_INSPECTOR_WEB_TESTING_TEST_REPORT_H_
