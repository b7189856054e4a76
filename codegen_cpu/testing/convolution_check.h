// Test helper for convolution epilogue tests (f32 and bf16 post-ops): compiles a graph through
// the real CPU pipeline (parse, decompose, inductor with the CPU capabilities, codegen,
// CpuProgram), runs it on 1 and 3 threads at the given batch sizes against the float64
// reference interpreter, and returns the convolution kernel's profile kind ("extern
// aten.convolution" or "... + post-ops"; or that of the last kernel of extern `op`, or of its
// `nth` one, counted from 0, when `nth` >= 0), so a test can assert which path ran.
//
//   std::string kind = CheckConvolutionGraph(text, {.abs = 2e-5, .rel = 2e-5}, {1, 3});
#ifndef COIL_CODEGEN_CPU_TESTING_CONVOLUTION_CHECK_H_
#define COIL_CODEGEN_CPU_TESTING_CONVOLUTION_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/testing/test_kit.h"

namespace coil {

// Outputs are compared as f32 (a bf16 output widened) against the oracle's f32 rounding; the
// graph's batch symbol is named `batch`. Failures are gtest failures; "" when nothing ran.
std::string CheckConvolutionGraph(const std::string& text, test_kit::Tolerance tolerance,
                                  const std::vector<int64_t>& batches,
                                  const std::string& op = "aten.convolution", int nth = -1);

}  // namespace coil

#endif  // COIL_CODEGEN_CPU_TESTING_CONVOLUTION_CHECK_H_
