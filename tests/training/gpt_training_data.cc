// LoadNamed (gpt_training_data.h).
#include "tests/training/gpt_training_data.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace coil::training_data {

absl::StatusOr<std::map<std::string, Named>> LoadNamed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::map<std::string, Named> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::istringstream s(line);
    std::string name, tok;
    s >> name;
    Named n;
    int64_t count = 1;
    while (s >> tok && tok != ":") {
      int64_t d = 0;
      if (!absl::SimpleAtoi(tok, &d) || d < 0) {
        return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": '", name,
                                                       "' has a bad dimension '", tok, "'"));
      }
      n.shape.push_back(d);
      count *= d;
    }
    double v;
    while (s >> v) n.values.push_back(v);
    if (static_cast<int64_t>(n.values.size()) != count) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": '", name, "' has ",
                                                     n.values.size(), " values for ", count,
                                                     " elements"));
    }
    out[name] = std::move(n);
  }
  return out;
}

}  // namespace coil::training_data
