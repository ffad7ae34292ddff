#include "json.hpp"

#include <cmath>
#include <cstdio>

namespace xfer::json {

Value Value::raw(std::string json) {
  Value v(Kind::Raw);
  v.text_ = std::move(json);
  return v;
}

Value& Value::set(const std::string& key, Value value) {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return items_[i] = std::move(value);
  }
  keys_.push_back(key);
  items_.push_back(std::move(value));
  return items_.back();
}

Value* Value::find(const std::string& key) {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return &items_[i];
  }
  return nullptr;
}

const Value* Value::find(const std::string& key) const {
  return const_cast<Value*>(this)->find(key);
}

const std::string& Value::empty_text() {
  static const std::string empty;
  return empty;
}

Value& Value::push(Value value) {
  items_.push_back(std::move(value));
  return items_.back();
}

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string Value::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out;
}

void Value::write(std::string& out, int indent, int depth) const {
  const std::string pad(static_cast<std::size_t>(indent * (depth + 1)), ' ');
  const std::string close_pad(static_cast<std::size_t>(indent * depth), ' ');
  const char* newline = indent > 0 ? "\n" : "";
  switch (kind_) {
    case Kind::Null:
      out += "null";
      return;
    case Kind::Bool:
      out += bool_ ? "true" : "false";
      return;
    case Kind::Int:
      out += std::to_string(int_);
      return;
    case Kind::Double: {
      if (!std::isfinite(double_)) {
        out += "null";  // JSON has no NaN; unknown is null
        return;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", double_);
      out += buf;
      return;
    }
    case Kind::String:
      out += quote(text_);
      return;
    case Kind::Raw:
      out += text_;
      return;
    case Kind::Array:
    case Kind::Object: {
      const bool object = kind_ == Kind::Object;
      if (items_.empty()) {
        out += object ? "{}" : "[]";
        return;
      }
      out += object ? "{" : "[";
      out += newline;
      for (std::size_t i = 0; i < items_.size(); ++i) {
        out += pad;
        if (object) out += quote(keys_[i]) + (indent > 0 ? ": " : ":");
        items_[i].write(out, indent, depth + 1);
        if (i + 1 < items_.size()) out += ",";
        out += newline;
      }
      out += close_pad;
      out += object ? "}" : "]";
      return;
    }
  }
}

}  // namespace xfer::json
