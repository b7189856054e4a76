// Named debug streams: configuration parsed once from COIL_LOGS / COIL_LOGS_FILE.
#include "capture/logging.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace coil {
namespace {

constexpr absl::string_view kNames[kNumLogStreams] = {"graph_breaks", "recompiles", "guards",
                                                      "dynamic", "output_code", "aot_graphs"};

struct LogConfig {
  bool enabled[kNumLogStreams] = {};
  FILE* out = stderr;
  std::mutex mu;
};

void Apply(LogConfig& config, absl::string_view spec, const std::string& file) {
  for (bool& e : config.enabled) e = false;
  for (absl::string_view item : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    for (int i = 0; i < kNumLogStreams; ++i) {
      if (item == kNames[i] || item == "all") config.enabled[i] = true;
    }
  }
  if (config.out != stderr) std::fclose(config.out);
  config.out = stderr;
  if (!file.empty()) {
    FILE* f = std::fopen(file.c_str(), "a");
    if (f != nullptr) config.out = f;
  }
}

LogConfig& Config() {
  static LogConfig* config = [] {
    auto* c = new LogConfig;
    const char* spec = std::getenv("COIL_LOGS");
    const char* file = std::getenv("COIL_LOGS_FILE");
    Apply(*c, spec != nullptr ? spec : "", file != nullptr ? file : "");
    return c;
  }();
  return *config;
}

}  // namespace

absl::string_view LogStreamName(LogStream stream) { return kNames[static_cast<int>(stream)]; }

bool LogEnabled(LogStream stream) { return Config().enabled[static_cast<int>(stream)]; }

void LogLine(LogStream stream, absl::string_view text) {
  LogConfig& config = Config();
  if (!config.enabled[static_cast<int>(stream)]) return;
  std::lock_guard<std::mutex> lock(config.mu);
  std::fprintf(config.out, "[coil:%.*s] %.*s\n", static_cast<int>(LogStreamName(stream).size()),
               LogStreamName(stream).data(), static_cast<int>(text.size()), text.data());
  std::fflush(config.out);
}

void ConfigureLogs(absl::string_view spec, const std::string& file) {
  LogConfig& config = Config();
  std::lock_guard<std::mutex> lock(config.mu);
  Apply(config, spec, file);
}

}  // namespace coil
