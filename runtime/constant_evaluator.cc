// The reference interpreter behind the ConstantEvaluator interface.
#include "runtime/constant_evaluator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"

namespace coil {

ConstantEvaluator ReferenceConstantEvaluator(std::string external_data_dir) {
  return [dir = std::move(external_data_dir)](
             const Graph& graph) -> absl::StatusOr<std::vector<ConstantData>> {
    InterpreterOptions options;
    options.external_data_dir = dir;
    absl::StatusOr<std::vector<HostTensor>> values = Interpret(graph, {}, options);
    if (!values.ok()) return values.status();
    std::vector<ConstantData> out;
    for (size_t i = 0; i < values->size(); ++i) {
      const HostTensor& t = (*values)[i];
      const TensorType& want = graph.outputs()[i]->type();
      std::optional<std::vector<int64_t>> shape = want.StaticShape();
      if (t.dtype() != want.dtype || !shape.has_value() || t.shape() != *shape) {
        return absl::InternalError(absl::StrCat("the reference interpreter computed ",
                                                t.TypeString(), " for output ", i, " of type ",
                                                want.ToString()));
      }
      ConstantData data;
      data.raw = t.Contiguous().Bytes();
      out.push_back(std::move(data));
    }
    return out;
  };
}

}  // namespace coil
