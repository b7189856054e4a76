// Command-line parsing for coil subcommands.
#include "tools/coil/args.h"

#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace coil::cli {

absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv,
                               const std::set<std::string>& value_flags,
                               const std::set<std::string>& bool_flags) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--help" || a == "-h") {
      args.switches.insert("help");
      continue;
    }
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) {
      args.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::string value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (bool_flags.count(name)) {
      if (has_value) return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
      args.switches.insert(name);
    } else if (value_flags.count(name)) {
      if (!has_value) {
        if (i + 1 >= argv.size()) {
          return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
        }
        value = argv[++i];
      }
      args.values[name] = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
  }
  return args;
}

int Usage(const char* usage, bool asked_for_help) {
  std::fputs(usage, asked_for_help ? stdout : stderr);
  return asked_for_help ? 0 : 2;
}

}  // namespace coil::cli
