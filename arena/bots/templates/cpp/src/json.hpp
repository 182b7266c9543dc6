// A small JSON value for the stdio protocol: parse a line, read fields, build and write a
// reply. Enough for Moon's messages (objects, arrays, strings, numbers, true/false/null,
// every escape); swap in a full library (nlohmann/json, RapidJSON) if you prefer.
//
// Reading is forgiving, as the proto3 JSON mapping needs: a missing field reads as null,
// and as_int() / as_string() / as_bool() of null give the default (0, "", false), which is
// what the referee means by leaving a field out.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace moon {

class Json {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;  // in the order written

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : type_(Type::Bool), bool_(b) {}
  Json(int n) : type_(Type::Number), number_(n) {}
  Json(long long n) : type_(Type::Number), number_(static_cast<double>(n)) {}
  Json(double n) : type_(Type::Number), number_(n) {}
  Json(const char* s) : type_(Type::String), string_(s) {}
  Json(std::string s) : type_(Type::String), string_(std::move(s)) {}
  Json(Array a) : type_(Type::Array), array_(std::move(a)) {}
  Json(Object o) : type_(Type::Object), object_(std::move(o)) {}

  /** Parses one JSON value (a whole line); throws std::runtime_error saying where. */
  static Json parse(const std::string& text) {
    Parser p{text, 0};
    Json value = p.value(0);
    p.space();
    if (p.at != text.size()) p.fail("unexpected text after the value");
    return value;
  }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_object() const { return type_ == Type::Object; }
  bool is_array() const { return type_ == Type::Array; }

  /** The field `key` of an object; null if there is none (or this is no object). */
  const Json& operator[](const std::string& key) const {
    for (const auto& kv : object_) {
      if (kv.first == key) return kv.second;
    }
    return null_value();
  }
  /** Element `i` of an array; null past the end. */
  const Json& operator[](std::size_t i) const {
    return i < array_.size() ? array_[i] : null_value();
  }
  bool has(const std::string& key) const {
    for (const auto& kv : object_) {
      if (kv.first == key) return true;
    }
    return false;
  }
  /** Elements of an array, fields of an object (0 otherwise). */
  std::size_t size() const { return type_ == Type::Array ? array_.size() : object_.size(); }
  const Array& items() const { return array_; }
  const Object& fields() const { return object_; }

  long long as_int(long long otherwise = 0) const {
    if (type_ == Type::Number) return static_cast<long long>(number_);
    if (type_ == Type::String) return std::strtoll(string_.c_str(), nullptr, 10);  // uint64 as text
    return otherwise;
  }
  double as_double(double otherwise = 0) const {
    return type_ == Type::Number ? number_ : otherwise;
  }
  bool as_bool(bool otherwise = false) const { return type_ == Type::Bool ? bool_ : otherwise; }
  std::string as_string(const std::string& otherwise = "") const {
    return type_ == Type::String ? string_ : otherwise;
  }

  /** Compact JSON: one line, no line breaks. */
  std::string dump() const {
    std::string out;
    write(out);
    return out;
  }

 private:
  Type type_ = Type::Null;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  Array array_;
  Object object_;

  static const Json& null_value() {
    static const Json null;
    return null;
  }

  void write(std::string& out) const {
    switch (type_) {
      case Type::Null: out += "null"; break;
      case Type::Bool: out += bool_ ? "true" : "false"; break;
      case Type::Number: {
        char buf[32];
        if (std::fabs(number_) < 9007199254740992.0 && number_ == std::floor(number_)) {
          std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(number_));
        } else {
          std::snprintf(buf, sizeof buf, "%.17g", number_);
        }
        out += buf;
        break;
      }
      case Type::String: quote(string_, out); break;
      case Type::Array:
        out += '[';
        for (std::size_t i = 0; i < array_.size(); ++i) {
          if (i) out += ", ";
          array_[i].write(out);
        }
        out += ']';
        break;
      case Type::Object:
        out += '{';
        for (std::size_t i = 0; i < object_.size(); ++i) {
          if (i) out += ", ";
          quote(object_[i].first, out);
          out += ": ";
          object_[i].second.write(out);
        }
        out += '}';
        break;
    }
  }

  static void quote(const std::string& s, std::string& out) {
    out += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
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
    out += '"';
  }

  struct Parser {
    const std::string& s;
    std::size_t at;

    [[noreturn]] void fail(const std::string& what) const {
      throw std::runtime_error("JSON: " + what + " at character " + std::to_string(at + 1));
    }
    void space() {
      while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\n' || s[at] == '\r'))
        ++at;
    }
    bool take(const char* word) {
      std::size_t n = std::char_traits<char>::length(word);
      if (s.compare(at, n, word) != 0) return false;
      at += n;
      return true;
    }
    Json value(int depth) {
      if (depth > 200) fail("nested too deeply");
      space();
      if (at >= s.size()) fail("unexpected end");
      char c = s[at];
      if (c == '{') return object(depth);
      if (c == '[') return array(depth);
      if (c == '"') return Json(string());
      if (take("true")) return Json(true);
      if (take("false")) return Json(false);
      if (take("null")) return Json();
      if (c == '-' || (c >= '0' && c <= '9')) return number();
      fail(std::string("unexpected '") + c + "'");
    }
    Json object(int depth) {
      Object fields;
      ++at;  // {
      space();
      if (at < s.size() && s[at] == '}') {
        ++at;
        return Json(std::move(fields));
      }
      while (true) {
        space();
        if (at >= s.size() || s[at] != '"') fail("expected a field name");
        std::string key = string();
        space();
        if (at >= s.size() || s[at] != ':') fail("expected ':'");
        ++at;
        fields.emplace_back(std::move(key), value(depth + 1));
        space();
        if (at < s.size() && s[at] == ',') {
          ++at;
          continue;
        }
        if (at < s.size() && s[at] == '}') {
          ++at;
          return Json(std::move(fields));
        }
        fail("expected ',' or '}'");
      }
    }
    Json array(int depth) {
      Array items;
      ++at;  // [
      space();
      if (at < s.size() && s[at] == ']') {
        ++at;
        return Json(std::move(items));
      }
      while (true) {
        items.push_back(value(depth + 1));
        space();
        if (at < s.size() && s[at] == ',') {
          ++at;
          continue;
        }
        if (at < s.size() && s[at] == ']') {
          ++at;
          return Json(std::move(items));
        }
        fail("expected ',' or ']'");
      }
    }
    Json number() {
      const char* start = s.c_str() + at;
      char* end = nullptr;
      double n = std::strtod(start, &end);
      if (end == start) fail("bad number");
      at += static_cast<std::size_t>(end - start);
      return Json(n);
    }
    unsigned hex4() {
      if (at + 4 > s.size()) fail("short \\u escape");
      unsigned v = 0;
      for (int i = 0; i < 4; ++i) {
        char c = s[at++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
        else fail("bad \\u escape");
      }
      return v;
    }
    static void utf8(unsigned cp, std::string& out) {
      if (cp < 0x80) {
        out += static_cast<char>(cp);
      } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      }
    }
    std::string string() {
      std::string out;
      ++at;  // "
      while (true) {
        if (at >= s.size()) fail("unterminated string");
        char c = s[at++];
        if (c == '"') return out;
        if (c != '\\') {
          out += c;
          continue;
        }
        if (at >= s.size()) fail("unterminated escape");
        char e = s[at++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            unsigned cp = hex4();
            if (cp >= 0xD800 && cp < 0xDC00 && take("\\u")) {  // a surrogate pair
              unsigned low = hex4();
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            utf8(cp, out);
            break;
          }
          default: fail("bad escape");
        }
      }
    }
  };
};

}  // namespace moon
