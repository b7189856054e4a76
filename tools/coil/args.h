// A small command-line parser for `coil` subcommands: positional arguments plus
// `--name value`, `--name=value` and boolean `--name` flags, each declared by the command.
#ifndef COIL_TOOLS_COIL_ARGS_H_
#define COIL_TOOLS_COIL_ARGS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace coil::cli {

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;  // flags with a value
  std::set<std::string> switches;             // boolean flags present

  bool Has(const std::string& name) const { return switches.count(name) > 0; }
  std::string Get(const std::string& name, const std::string& fallback = "") const {
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  }
};

// `value_flags` take a value; `bool_flags` do not. Unknown flags are an error naming them.
// Every command accepts --help and -h (as the switch "help"): see Usage().
absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv,
                               const std::set<std::string>& value_flags,
                               const std::set<std::string>& bool_flags);

// A command's usage text: asked for (--help) it goes to stdout and the exit status is 0; after a
// usage error it goes to stderr and the status is 2. Returns the status.
int Usage(const char* usage, bool asked_for_help);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_ARGS_H_
