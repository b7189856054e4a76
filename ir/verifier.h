// Verify: checks that a Graph is well formed and that every node agrees with its op's schema.
//
// Checks: values defined once and used after definition (SSA, topological order, so no
// cycles); use lists consistent; every op registered; attributes exactly the schema's (no
// unknown ones, right kinds, defaults present); every output type equal to what the meta
// function infers; constants static, external data paths inside the graph's folder
// (ir/io/data_path.h); graph outputs defined; every symbol in input and output types
// (constants are static), sym/syms attributes and guards declared in Graph::symbols() (code generation binds
// only those). The first problem found is returned as InvalidArgument naming the node (and
// the symbol).
//
//   absl::Status s = Verify(graph);
#ifndef COIL_IR_VERIFIER_H_
#define COIL_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "ir/graph.h"
#include "ir/op_registry.h"

namespace coil {

absl::Status Verify(const Graph& graph, const OpRegistry& registry = OpRegistry::Global());

}  // namespace coil

#endif  // COIL_IR_VERIFIER_H_
