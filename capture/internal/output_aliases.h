// Outputs of a compiled function that alias its inputs or each other (AOTAutograd's other
// job). Eager view ops share storage (a transpose or slice of x writes through to x), but a
// compiled graph returns fresh buffers. As torch.compile does, coil::compile regenerates such
// outputs after the run: an output whose value is a chain of view ops (OpSchema::is_view, and
// in-place ops, which return their input) from a graph input is replayed eagerly on the
// caller's tensor, and one that is a view chain from another output (or the same value twice)
// is replayed on that output, so writing through the result updates the input or the other
// output, as in eager.
//
//   std::vector<OutputAlias> aliases = FindOutputAliases(graph, num_results);
//   RestoreOutputAliases(aliases, graph_input_tensors, results);  // after running the graph
//
// Results that view one intermediate value which is neither an input nor a result (`z = x + 1;
// return z.t(), z[0]`: a write into one must reach the other) need that value: the trace adds
// it as an extra graph output (SharedViewBases), as AOTAutograd does, and such results are
// replayed on it.
//
// A view whose attributes name symbols (a reshape to [s0, 4]) is replayed with the symbols'
// values in this call, bound from the inputs' sizes. A chain whose replay copies (a reshape
// of a layout it cannot view) is no alias: the graph's result stays.
#ifndef COIL_CAPTURE_INTERNAL_OUTPUT_ALIASES_H_
#define COIL_CAPTURE_INTERNAL_OUTPUT_ALIASES_H_

#include <vector>

#include "capture/tensor.h"
#include "ir/graph.h"

namespace coil::capture_internal {

struct OutputAlias {
  int result = 0;                  // the aliasing result
  int base_input = -1;             // the graph input it views, or -1
  int base_result = -1;            // else the graph output it views: a result (restored before
                                   // this one) or a shared view base after the results
  std::vector<const Node*> chain;  // the view ops from the base to the result, in order
};

// The values that two or more of the results (the first `num_results` of `outputs`, whose
// producers are in `graph`) are chains of views of, and that are neither graph inputs nor
// results: the trace makes them graph outputs too, after the results.
std::vector<Value*> SharedViewBases(const std::vector<Value*>& outputs, int num_results);

// The results (the graph's first `num_results` outputs) that alias an input, another result or
// a shared view base, bases before the results that view them. `graph` must outlive the
// returned nodes' use.
std::vector<OutputAlias> FindOutputAliases(const Graph& graph, int num_results);

// Replaces each aliasing result by its chain replayed (eagerly, on the autograd tape when the
// base requires grad) on `inputs[base_input]` (the caller's tensors, in `graph`'s input order,
// which the graph has just run on) or on the graph output it views. `outputs` are the graph's
// outputs of this run (results first; the rest may be left undefined except shared view
// bases).
void RestoreOutputAliases(const std::vector<OutputAlias>& aliases, const Graph& graph,
                          const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_INTERNAL_OUTPUT_ALIASES_H_
