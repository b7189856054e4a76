#include "capture/onnx/internal/model_builder_testing.h"

namespace coil::onnx_testing {

using ::onnx::AttributeProto;
using ::onnx::TensorProto;

ModelBuilder::ModelBuilder(int64_t opset) {
  model_.set_ir_version(8);
  model_.set_producer_name("coil-test");
  auto* o = model_.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

void ModelBuilder::Input(const std::string& name, int32_t elem_type, const std::vector<Dim>& dims) {
  auto* in = model_.mutable_graph()->add_input();
  in->set_name(name);
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const Dim& d : dims) {
    auto* dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d)) {
      dim->set_dim_value(std::get<int64_t>(d));
    } else if (!std::get<std::string>(d).empty()) {
      dim->set_dim_param(std::get<std::string>(d));
    }
  }
}

void ModelBuilder::Output(const std::string& name, int32_t elem_type) {
  auto* out = model_.mutable_graph()->add_output();
  out->set_name(name);
  if (elem_type != 0) out->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

void ModelBuilder::InitFloat(const std::string& name, std::vector<int64_t> dims,
                             std::vector<float> values) {
  TensorProto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

void ModelBuilder::InitInt64(const std::string& name, std::vector<int64_t> dims,
                             std::vector<int64_t> values) {
  TensorProto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  // raw_data, so both encodings are exercised (floats use the typed field).
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 8));
}

::onnx::NodeProto& ModelBuilder::Node(const std::string& op, std::vector<std::string> inputs,
                                      std::vector<std::string> outputs, const std::string& name) {
  ::onnx::NodeProto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

std::string ModelBuilder::Bytes() const { return model_.SerializeAsString(); }

void SetAttr(::onnx::NodeProto& n, const std::string& name, int64_t v) {
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(v);
}

void SetAttr(::onnx::NodeProto& n, const std::string& name, float v) {
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::FLOAT);
  a->set_f(v);
}

void SetAttr(::onnx::NodeProto& n, const std::string& name, const std::string& v) {
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::STRING);
  a->set_s(v);
}

void SetAttr(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void SetTensorAttr(::onnx::NodeProto& n, const std::string& name, std::vector<int64_t> dims,
                   std::vector<int64_t> values) {
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::TENSOR);
  TensorProto* t = a->mutable_t();
  t->set_data_type(TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

}  // namespace coil::onnx_testing
