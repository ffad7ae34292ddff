#include "base/json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

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

double Value::number() const {
  if (kind_ == Kind::Int) return static_cast<double>(int_);
  return kind_ == Kind::Double ? double_ : 0.0;
}

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Value document() {
    Value v = value(0);
    skip_space();
    if (at_ != s_.size()) fail("text after the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("not JSON at offset " + std::to_string(at_) + ": " + what);
  }
  void skip_space() {
    while (at_ < s_.size() &&
           (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\t' || s_[at_] == '\r'))
      ++at_;
  }
  bool take(const char* word) {
    const std::size_t n = std::char_traits<char>::length(word);
    if (s_.compare(at_, n, word) != 0) return false;
    at_ += n;
    return true;
  }
  void expect(char c) {
    skip_space();
    if (at_ >= s_.size() || s_[at_] != c) fail(std::string("expected '") + c + "'");
    ++at_;
  }

  Value value(int depth) {
    if (depth > 100) fail("nested more than 100 deep");
    skip_space();
    if (at_ >= s_.size()) fail("unexpected end");
    const char c = s_[at_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Value(string());
    if (take("true")) return Value(true);
    if (take("false")) return Value(false);
    if (take("null")) return Value();
    if (take("NaN")) return Value(std::numeric_limits<double>::quiet_NaN());
    if (take("Infinity")) return Value(std::numeric_limits<double>::infinity());
    if (take("-Infinity")) return Value(-std::numeric_limits<double>::infinity());
    return number();
  }

  Value object(int depth) {
    ++at_;
    Value out = Value::object();
    skip_space();
    if (at_ < s_.size() && s_[at_] == '}') {
      ++at_;
      return out;
    }
    while (true) {
      skip_space();
      if (at_ >= s_.size() || s_[at_] != '"') fail("expected a key");
      const std::string key = string();
      expect(':');
      out.set(key, value(depth + 1));
      skip_space();
      if (at_ < s_.size() && s_[at_] == ',') {
        ++at_;
        continue;
      }
      expect('}');
      return out;
    }
  }

  Value array(int depth) {
    ++at_;
    Value out = Value::array();
    skip_space();
    if (at_ < s_.size() && s_[at_] == ']') {
      ++at_;
      return out;
    }
    while (true) {
      out.push(value(depth + 1));
      skip_space();
      if (at_ < s_.size() && s_[at_] == ',') {
        ++at_;
        continue;
      }
      expect(']');
      return out;
    }
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  unsigned hex4() {
    if (at_ + 4 > s_.size()) fail("short \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[at_++];
      code <<= 4;
      if (h >= '0' && h <= '9')
        code |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f')
        code |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        code |= static_cast<unsigned>(h - 'A' + 10);
      else
        fail("bad \\u escape");
    }
    return code;
  }

  std::string string() {
    ++at_;  // the opening quote
    std::string out;
    while (true) {
      if (at_ >= s_.size()) fail("unterminated string");
      const char c = s_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= s_.size()) fail("unterminated string");
      const char e = s_[at_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned code = hex4();
          if (code >= 0xD800 && code < 0xDC00 && s_.compare(at_, 2, "\\u") == 0) {
            at_ += 2;
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("bad surrogate pair");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, code);
          break;
        }
        default:
          fail("bad escape");
      }
    }
  }

  Value number() {
    const char* begin = s_.c_str() + at_;
    if (*begin != '-' && (*begin < '0' || *begin > '9')) fail("unexpected character");
    char* end = nullptr;
    const double d = std::strtod(begin, &end);
    const std::string token(begin, static_cast<std::size_t>(end - begin));
    if (token.find_first_of("xXnNiIpP") != std::string::npos) fail("not a JSON number");
    at_ += token.size();
    const bool integral = token.find_first_of(".eE") == std::string::npos;
    if (integral && std::fabs(d) < 9e18) return Value(std::strtoll(token.c_str(), nullptr, 10));
    return Value(d);
  }

  const std::string& s_;
  std::size_t at_ = 0;
};

}  // namespace

Value parse(const std::string& text) { return Parser(text).document(); }

const Value& member(const Value& object, const std::string& key) {
  static const Value none;
  const Value* v = object.is_object() ? object.find(key) : nullptr;
  return v ? *v : none;
}

std::string text_of(const Value& object, const std::string& key) {
  return member(object, key).text();
}

double number_of(const Value& object, const std::string& key, double otherwise) {
  const Value& v = member(object, key);
  return v.is_number() ? v.number() : otherwise;
}

}  // namespace xfer::json
