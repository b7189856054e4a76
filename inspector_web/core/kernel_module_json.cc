// WriteKernelModuleJson (kernel_module_json.h).
#include "inspector_web/core/kernel_module_json.h"

#include <string>
#include <unordered_map>

#include "inspector_web/core/source_tokens.h"

namespace coil::inspector {
namespace {

void WriteSource(const std::string& source, SourceLanguage language, JsonWriter& w) {
  w.Field("source", source);
  w.Key("tokens");
  w.BeginArray();
  for (const Token& t : TokenizeSource(source, language)) {
    w.Int(t.start);
    w.Int(t.length);
    w.Int(static_cast<int>(t.kind));
  }
  w.EndArray();
}

// "grid (4, 1) block (256) shared 0 B"; a grid the backend left empty depends on symbolic
// sizes and is computed at launch: "grid (at launch)"; registers when ptxas reported them.
std::string LaunchText(const proto::LaunchConfig& l) {
  if (l.grid_size() == 0 && l.block_size() == 0 && l.shared_bytes() == 0) return "";
  auto dims = [](const google::protobuf::RepeatedField<int64_t>& d) {
    std::string s = "(";
    for (int i = 0; i < d.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(d.Get(i));
    return s + ")";
  };
  std::string text = "grid " + (l.grid_size() == 0 ? std::string("(at launch)") : dims(l.grid())) +
                     " block " + dims(l.block()) + " shared " + std::to_string(l.shared_bytes()) +
                     " B";
  if (l.registers() > 0) text += " " + std::to_string(l.registers()) + " registers";
  return text;
}

}  // namespace

void WriteKernelModuleJson(const proto::KernelModule& module, JsonWriter& w) {
  // CPU modules carry LLVM IR; other backends (CUDA) C++-like source.
  SourceLanguage language =
      module.backend() == "cpu" ? SourceLanguage::kLlvmIr : SourceLanguage::kC;
  std::unordered_map<int32_t, int> kernel_index;
  for (int k = 0; k < module.schedule().kernels_size(); ++k) {
    kernel_index[module.schedule().kernels(k).id()] = k;
  }
  w.BeginObject();
  w.Field("backend", module.backend());
  w.Field("target_triple", module.target_triple());
  w.Field("cpu", module.cpu());
  w.Field("cpu_features", module.cpu_features());
  w.Field("compiler_version", module.compiler_version());
  w.Field("options", module.options());
  w.Field("object_bytes", static_cast<int64_t>(module.object_code().size()));
  w.Field("language", language == SourceLanguage::kLlvmIr ? "llvm" : "c");
  w.Key("kernels");
  w.BeginArray();
  for (const proto::CompiledKernel& k : module.kernels()) {
    w.BeginObject();
    w.Field("kernel_id", k.kernel_id());
    auto it = kernel_index.find(k.kernel_id());
    w.Field("kernel_index", it == kernel_index.end() ? -1 : it->second);
    w.Field("name", k.name());
    w.Field("symbol", k.symbol());
    w.Field("binary_bytes", static_cast<int64_t>(k.binary().size()));
    w.Field("launch", LaunchText(k.launch()));
    WriteSource(k.source(), language, w);
    w.EndObject();
  }
  w.EndArray();
  w.Key("wrapper");
  w.BeginObject();
  w.Field("symbol", module.wrapper_symbol());
  WriteSource(module.wrapper_source(), language, w);
  w.EndObject();
  w.EndObject();
}

}  // namespace coil::inspector
