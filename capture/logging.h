// Named debug streams of capture/ (the TORCH_LOGS role): one line per event.
//
//   COIL_LOGS=graph_breaks,recompiles ./my_binary        # to stderr
//   COIL_LOGS=all COIL_LOGS_FILE=/tmp/coil.log ./my_binary
//
// The environment is read once, on the first use of any stream; nothing else in capture/ reads
// it. Streams: graph_breaks (each break: reason, op, location), recompiles (each guard miss that
// recompiles, and the one warning when the recompile limit is reached), guards (each guard
// recorded while tracing), dynamic (symbols created, automatic dynamic decisions), output_code
// (the text IR of every graph handed to the backend), aot_graphs (the joint, forward and
// backward graphs of every training compile, with the saved values). "all" enables every
// stream.
//
//   if (LogEnabled(LogStream::kRecompiles)) LogLine(LogStream::kRecompiles, "...");
#ifndef COIL_CAPTURE_LOGGING_H_
#define COIL_CAPTURE_LOGGING_H_

#include <string>

#include "absl/strings/string_view.h"

namespace coil {

enum class LogStream { kGraphBreaks = 0, kRecompiles, kGuards, kDynamic, kOutputCode, kAotGraphs };
inline constexpr int kNumLogStreams = 6;

// "graph_breaks", "recompiles", ...
absl::string_view LogStreamName(LogStream stream);

// Whether `stream` is on (cheap: one load after the first call).
bool LogEnabled(LogStream stream);

// Writes "[coil:<stream>] <text>\n" to the log file or stderr when the stream is on.
void LogLine(LogStream stream, absl::string_view text);

// Replaces the configuration read from the environment (tests, tools): `spec` is a COIL_LOGS
// value, `file` a path ("" for stderr). Unknown stream names are ignored.
void ConfigureLogs(absl::string_view spec, const std::string& file = "");

}  // namespace coil

#endif  // COIL_CAPTURE_LOGGING_H_
