// Graph construction, use-def maintenance, DCE, topological sort and proto conversion.
#include "ir/graph.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/dtype.h"

namespace coil {
namespace {

void RemoveOneUse(std::vector<Node*>& users, Node* user) {
  auto it = std::find(users.begin(), users.end(), user);
  COIL_CHECK(it != users.end()) << "use list out of sync";
  users.erase(it);
}

std::string ValueRef(int64_t id) { return absl::StrCat("%", id); }

}  // namespace

std::string SourceLoc::ToString() const {
  if (empty()) return "";
  std::string s = absl::StrCat(file, ":", line);
  if (column > 0) absl::StrAppend(&s, ":", column);
  return s;
}

const ConstantData& Value::constant() const {
  COIL_CHECK(kind_ == Kind::kConstant && constant_ != nullptr) << "value " << id_;
  return *constant_;
}

std::optional<std::vector<int64_t>> Value::InlineDenseShape() const {
  if (kind_ != Kind::kConstant || constant_->is_external() || !type_.strides.empty()) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> shape = type_.StaticShape();
  if (!shape.has_value()) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : *shape) n *= d;
  if (static_cast<int64_t>(constant_->raw.size()) != n * ElementSize(type_.dtype)) {
    return std::nullopt;
  }
  return shape;
}

ConstantData& Value::mutable_constant() {
  COIL_CHECK(kind_ == Kind::kConstant && constant_ != nullptr) << "value " << id_;
  return *constant_;
}

void Node::ReplaceInput(int i, Value* v) {
  COIL_CHECK(i >= 0 && i < num_inputs());
  RemoveOneUse(inputs_[i]->users_, this);
  inputs_[i] = v;
  v->users_.push_back(this);
}

std::string Node::Describe() const {
  std::string s;
  if (!outputs_.empty()) {
    absl::StrAppend(&s, absl::StrJoin(outputs_, ", ", [](std::string* o, const Value* v) {
                      o->append(ValueRef(v->id()));
                    }), " = ");
  }
  absl::StrAppend(&s, op_, "(", absl::StrJoin(inputs_, ", ", [](std::string* o, const Value* v) {
                    o->append(ValueRef(v->id()));
                  }), ")");
  if (!loc_.empty()) absl::StrAppend(&s, " at ", loc_.ToString());
  return s;
}

Value* Graph::NewValue(Value::Kind kind, TensorType type, int64_t id) {
  if (id < 0) id = next_id_;
  next_id_ = std::max(next_id_, id + 1);
  values_.push_back(std::unique_ptr<Value>(new Value(id, kind, std::move(type))));
  Value* v = values_.back().get();
  auto [it, inserted] = values_by_id_.emplace(id, v);
  COIL_CHECK(inserted) << "duplicate value id " << id;
  return v;
}

Value* Graph::AddInput(TensorType type, std::string name) {
  Value* v = NewValue(Value::Kind::kInput, std::move(type));
  v->name_ = std::move(name);
  inputs_.push_back(v);
  return v;
}

Value* Graph::AddConstant(TensorType type, ConstantData data, std::string name) {
  Value* v = NewValue(Value::Kind::kConstant, std::move(type));
  v->name_ = std::move(name);
  v->constant_ = std::make_unique<ConstantData>(std::move(data));
  constants_.push_back(v);
  return v;
}

Node* Graph::MakeNode(std::string op, std::vector<Value*> inputs, AttrMap attrs,
                      std::vector<TensorType> output_types, const std::vector<int64_t>& ids) {
  auto node = std::unique_ptr<Node>(new Node());
  node->op_ = std::move(op);
  node->inputs_ = std::move(inputs);
  node->attrs_ = std::move(attrs);
  for (Value* in : node->inputs_) {
    COIL_CHECK(in != nullptr && FindValue(in->id()) == in) << "input from another graph";
    in->users_.push_back(node.get());
  }
  for (size_t i = 0; i < output_types.size(); ++i) {
    Value* out = NewValue(Value::Kind::kNodeOutput, std::move(output_types[i]),
                          ids.empty() ? -1 : ids[i]);
    out->producer_ = node.get();
    out->output_index_ = static_cast<int>(i);
    node->outputs_.push_back(out);
  }
  Node* raw = node.get();
  nodes_.push_back(std::move(node));
  return raw;
}

Node* Graph::AddNode(std::string op, std::vector<Value*> inputs, AttrMap attrs,
                     std::vector<TensorType> output_types) {
  return MakeNode(std::move(op), std::move(inputs), std::move(attrs), std::move(output_types));
}

Node* Graph::InsertNodeBefore(Node* before, std::string op, std::vector<Value*> inputs,
                              AttrMap attrs, std::vector<TensorType> output_types) {
  auto pos = std::find_if(nodes_.begin(), nodes_.end(),
                          [&](const std::unique_ptr<Node>& n) { return n.get() == before; });
  COIL_CHECK(pos != nodes_.end()) << "InsertNodeBefore: node not in graph";
  size_t index = pos - nodes_.begin();
  Node* n = MakeNode(std::move(op), std::move(inputs), std::move(attrs), std::move(output_types));
  std::rotate(nodes_.begin() + index, nodes_.end() - 1, nodes_.end());
  return n;
}

bool Graph::IsOutput(const Value* v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

Value* Graph::FindValue(int64_t id) const {
  auto it = values_by_id_.find(id);
  return it == values_by_id_.end() ? nullptr : it->second;
}

void Graph::ReplaceAllUsesWith(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Node*> users = from->users_;
  for (Node* user : users) {
    for (int i = 0; i < user->num_inputs(); ++i) {
      if (user->inputs_[i] == from) user->ReplaceInput(i, to);
    }
  }
  for (Value*& out : outputs_) {
    if (out == from) out = to;
  }
}

void Graph::RemoveNode(Node* node) {
  for (Value* out : node->outputs_) {
    COIL_CHECK(out->users_.empty()) << "RemoveNode: output %" << out->id() << " still used";
    COIL_CHECK(std::find(outputs_.begin(), outputs_.end(), out) == outputs_.end())
        << "RemoveNode: output %" << out->id() << " is a graph output";
  }
  for (Value* in : node->inputs_) RemoveOneUse(in->users_, node);
  absl::flat_hash_set<const Value*> dead(node->outputs_.begin(), node->outputs_.end());
  for (const Value* v : dead) values_by_id_.erase(v->id());
  values_.erase(std::remove_if(values_.begin(), values_.end(),
                               [&](const std::unique_ptr<Value>& v) { return dead.contains(v.get()); }),
                values_.end());
  nodes_.erase(std::find_if(nodes_.begin(), nodes_.end(),
                            [&](const std::unique_ptr<Node>& n) { return n.get() == node; }));
}

int Graph::RemoveDeadCode(const std::function<bool(const Node&)>& keep) {
  // Mark everything the outputs (and the kept nodes) depend on, walking producers backwards.
  absl::flat_hash_set<const Node*> live;
  std::vector<const Value*> work(outputs_.begin(), outputs_.end());
  absl::flat_hash_set<const Value*> live_values(outputs_.begin(), outputs_.end());
  if (keep != nullptr) {
    for (const auto& n : nodes_) {
      if (!keep(*n) || !live.insert(n.get()).second) continue;
      for (const Value* in : n->inputs()) {
        if (live_values.insert(in).second) work.push_back(in);
      }
    }
  }
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    const Node* n = v->producer();
    if (n == nullptr || !live.insert(n).second) continue;
    for (const Value* in : n->inputs()) {
      if (live_values.insert(in).second) work.push_back(in);
    }
  }
  int removed = 0;
  // Remove in reverse order so users go before producers.
  for (int i = static_cast<int>(nodes_.size()) - 1; i >= 0; --i) {
    Node* n = nodes_[i].get();
    if (live.contains(n)) continue;
    for (Value* out : n->outputs_) {
      for (Node* u : std::vector<Node*>(out->users_)) COIL_CHECK(!live.contains(u));
    }
    for (Value* in : n->inputs_) RemoveOneUse(in->users_, n);
    for (Value* out : n->outputs_) out->users_.clear();
    ++removed;
  }
  absl::flat_hash_set<const Value*> dead_values;
  for (const auto& n : nodes_) {
    if (!live.contains(n.get())) {
      for (Value* out : n->outputs_) dead_values.insert(out);
    }
  }
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [&](const std::unique_ptr<Node>& n) { return !live.contains(n.get()); }),
               nodes_.end());
  // Unused constants go too; inputs stay (they are the graph's signature).
  for (Value* c : constants_) {
    if (c->users_.empty() && !live_values.contains(c)) dead_values.insert(c);
  }
  constants_.erase(std::remove_if(constants_.begin(), constants_.end(),
                                  [&](Value* c) { return dead_values.contains(c); }),
                   constants_.end());
  for (const Value* v : dead_values) values_by_id_.erase(v->id());
  values_.erase(std::remove_if(values_.begin(), values_.end(),
                               [&](const std::unique_ptr<Value>& v) {
                                 return dead_values.contains(v.get());
                               }),
                values_.end());
  return removed;
}

absl::Status Graph::SortTopologically() {
  // Kahn's algorithm; among ready nodes the one earliest in the current order goes first, so
  // an already-valid order is kept unchanged.
  absl::flat_hash_map<const Node*, size_t> position;
  std::vector<int> pending(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) position[nodes_[i].get()] = i;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (const Value* in : nodes_[i]->inputs()) {
      if (in->producer() != nullptr) ++pending[i];
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<size_t> order;
  order.reserve(nodes_.size());
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (const Value* out : nodes_[i]->outputs()) {
      for (const Node* u : out->users()) {
        size_t j = position.at(u);
        if (--pending[j] == 0) ready.push(j);
      }
    }
  }
  if (order.size() != nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (pending[i] > 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graph '", name_, "' has a cycle through node ", nodes_[i]->Describe()));
      }
    }
  }
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(nodes_.size());
  for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
  nodes_ = std::move(sorted);
  return absl::OkStatus();
}

SymRanges Graph::SymbolRanges() const {
  SymRanges ranges;
  for (const SymbolInfo& s : symbols_) {
    ranges[s.name] = SymRange{s.min, s.max == 0 ? INT64_MAX : s.max};
  }
  return ranges;
}

}  // namespace coil
