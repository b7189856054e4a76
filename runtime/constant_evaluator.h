// ReferenceConstantEvaluator: the reference interpreter as an ir/constant_evaluator.h
// ConstantEvaluator, for compile-time constant folding (the driver hands it to inductor).
//
//   inductor::ScheduleOptions options;
//   options.constant_evaluator = ReferenceConstantEvaluator(model_dir);
#ifndef COIL_RUNTIME_CONSTANT_EVALUATOR_H_
#define COIL_RUNTIME_CONSTANT_EVALUATOR_H_

#include <string>

#include "ir/constant_evaluator.h"

namespace coil {

// Evaluates in each value's own dtype (not the float64 oracle mode: folded constants must be
// what the kernels would have computed). External constant paths are relative to
// `external_data_dir`. Errors: the interpreter's (a kernel error, an unreadable external file),
// or an output whose computed type differs from the graph's (InternalError naming it).
ConstantEvaluator ReferenceConstantEvaluator(std::string external_data_dir = "");

}  // namespace coil

#endif  // COIL_RUNTIME_CONSTANT_EVALUATOR_H_
