// A small JSON value for the run context: typed fields, written by every run and read back when
// tools/run merges the result files of several jobs (parse).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xfer::json {

class Value {
 public:
  Value() = default;  // null
  Value(std::nullptr_t) {}
  Value(bool b) : kind_(Kind::Bool), bool_(b) {}
  Value(int i) : kind_(Kind::Int), int_(i) {}
  Value(long i) : kind_(Kind::Int), int_(i) {}
  Value(long long i) : kind_(Kind::Int), int_(i) {}
  Value(unsigned i) : kind_(Kind::Int), int_(static_cast<long long>(i)) {}
  Value(unsigned long i) : kind_(Kind::Int), int_(static_cast<long long>(i)) {}
  Value(unsigned long long i) : kind_(Kind::Int), int_(static_cast<long long>(i)) {}
  Value(double d) : kind_(Kind::Double), double_(d) {}
  Value(const char* s) : kind_(Kind::String), text_(s) {}
  Value(std::string s) : kind_(Kind::String), text_(std::move(s)) {}

  static Value object() { return Value(Kind::Object); }
  static Value array() { return Value(Kind::Array); }
  // Text that is already JSON (e.g. gathered from another rank), inserted verbatim.
  static Value raw(std::string json);

  // Objects keep insertion order; setting an existing key replaces its value.
  Value& set(const std::string& key, Value value);
  Value* find(const std::string& key);
  const Value* find(const std::string& key) const;
  // The text of a string value, "" for anything else.
  const std::string& text() const { return kind_ == Kind::String ? text_ : empty_text(); }
  Value& push(Value value);
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_object() const { return kind_ == Kind::Object; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Double; }
  bool is_true() const { return kind_ == Kind::Bool && bool_; }
  // The number's value (0 for anything else).
  double number() const;
  // An array's items or an object's values, in order; an object's keys.
  const std::vector<Value>& items() const { return items_; }
  const std::vector<std::string>& keys() const { return keys_; }

  std::string dump(int indent = 2) const;

 private:
  enum class Kind { Null, Bool, Int, Double, String, Raw, Array, Object };
  explicit Value(Kind k) : kind_(k) {}
  void write(std::string& out, int indent, int depth) const;
  static const std::string& empty_text();

  Kind kind_ = Kind::Null;
  bool bool_ = false;
  long long int_ = 0;
  double double_ = 0;
  std::string text_;
  std::vector<Value> items_;
  std::vector<std::string> keys_;
};

std::string quote(const std::string& text);

// Parses a JSON document (NaN, Infinity and -Infinity are read as numbers, as Python writes
// them). Throws std::runtime_error naming the offset of what is wrong; nesting deeper than 100
// is refused.
Value parse(const std::string& text);

// Lookups on a value of any kind, for documents read from files: the member `key` of an
// object, or a null value where `object` is not an object or has no such member; its text ("" for
// anything but a string); its number (`otherwise` for anything but a number).
const Value& member(const Value& object, const std::string& key);
std::string text_of(const Value& object, const std::string& key);
double number_of(const Value& object, const std::string& key, double otherwise = 0);

}  // namespace xfer::json
