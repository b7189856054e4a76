// Kernel dedupe keys and the split into NVRTC programs (see program_split.h).
#include "codegen_cuda/internal/program_split.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace coil::codegen_cuda_internal {
namespace {

bool IsIdent(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string DedupeKey(const std::string& text, const std::string& symbol) {
  std::string out;
  out.reserve(text.size());
  absl::flat_hash_map<std::string, int> renamed;
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {  // a comment, to the end of the line
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if (!IsIdent(c)) {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && IsIdent(text[j])) ++j;
    const std::string token = text.substr(i, j - i);
    i = j;
    if (token == symbol) {
      out += "@kernel";
    } else if (token.size() > 1 && token[0] == 'b' &&
               std::all_of(token.begin() + 1, token.end(), IsDigit)) {
      auto [it, fresh] = renamed.try_emplace(token, static_cast<int>(renamed.size()));
      absl::StrAppend(&out, "@b", it->second);
    } else {
      out += token;
    }
  }
  return out;
}

std::vector<int> RepresentativeOf(const std::vector<std::string>& keys) {
  absl::flat_hash_map<std::string, int> first;
  std::vector<int> rep(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    rep[i] = first.try_emplace(keys[i], static_cast<int>(i)).first->second;
  }
  return rep;
}

std::vector<std::vector<int>> SplitPrograms(const std::vector<size_t>& sizes, int max_programs) {
  const int programs =
      std::max(1, std::min(max_programs, static_cast<int>(sizes.size())));
  std::vector<std::vector<int>> out(programs);
  std::vector<size_t> load(programs, 0);
  std::vector<int> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return sizes[a] > sizes[b]; });
  for (int item : order) {
    const int p = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    out[p].push_back(item);
    load[p] += sizes[item];
  }
  for (std::vector<int>& p : out) std::sort(p.begin(), p.end());
  return out;
}

}  // namespace coil::codegen_cuda_internal
