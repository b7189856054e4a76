// ReadNamedValues and AllClose.
#include "capture/nn/test_values.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capture/nn/named_values.pb.h"

namespace coil::nn {

absl::StatusOr<std::map<std::string, HostTensor>> ReadNamedValues(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  nn_test::NamedValues proto;
  if (!proto.ParseFromString(buffer.str())) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a NamedValues message"));
  }
  std::map<std::string, HostTensor> out;
  for (const proto::TensorValue& v : proto.values()) {
    absl::StatusOr<HostTensor> t = HostTensor::FromProto(v);
    if (!t.ok()) return t.status();
    out[v.name()] = *std::move(t);
  }
  return out;
}

absl::Status AllClose(const HostTensor& actual, const HostTensor& expected, double rtol,
                      double atol) {
  if (actual.shape() != expected.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", actual.TypeString(),
                                                   " != expected ", expected.TypeString()));
  }
  std::vector<double> a = actual.ToDoubles(), e = expected.ToDoubles();
  double worst = 0;
  int64_t first_bad = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(e[i])) {
      if (std::isnan(a[i]) != std::isnan(e[i]) && first_bad < 0) first_bad = i;
      continue;
    }
    double diff = std::abs(a[i] - e[i]);
    worst = std::max(worst, diff);
    if (diff > atol + rtol * std::abs(e[i]) && first_bad < 0) first_bad = i;
  }
  if (first_bad < 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("element ", first_bad, ": ", a[first_bad],
                                                 " vs expected ", e[first_bad],
                                                 " (max |diff| ", worst, ")"));
}

}  // namespace coil::nn
