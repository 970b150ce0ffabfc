// The checker's streaming JSON reader (mhaq/check/json_stream.hpp).
#include "mhaq/check/json_stream.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "strict_read.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

namespace {
using json = nlohmann::json;

// Builds every value below the top level; the top level's members and the
// elements of its streamed arrays go to the callbacks instead.
class StreamReader : public nlohmann::json_sax<json> {
 public:
  explicit StreamReader(const JsonStream& s) : s_(s) {}
  std::string error;

  bool null() override { return done(json(nullptr)); }
  bool boolean(bool v) override { return done(json(v)); }
  bool number_integer(number_integer_t v) override { return done(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return done(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return done(json(v)); }
  bool string(string_t& v) override { return done(json(std::move(v))); }
  bool binary(binary_t&) override { return fail("binary values are not JSON text"); }
  bool start_object(std::size_t) override { return open(json::object(), false); }
  bool start_array(std::size_t) override {
    const bool streamed = stack_.size() == 1 && std::find(s_.streamed.begin(), s_.streamed.end(), stack_[0].key) != s_.streamed.end();
    return open(json::array(), streamed);
  }
  bool key(string_t& k) override {
    Open& o = stack_.back();
    if (stack_.size() == 1 ? !top_keys_.insert(k).second : o.value.contains(k)) return fail("duplicate key " + quote_str(k));
    o.key = std::move(k);
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override {
    if (stack_.back().streamed) {
      stack_.pop_back();
      if (s_.array_end) s_.array_end(stack_[0].key);
      return true;
    }
    return close();
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    return fail("not valid JSON near byte " + std::to_string(position) + ": " + clean(ex.what(), 200));
  }

 private:
  struct Open {
    json value;
    std::string key;
    bool streamed = false;
  };
  const JsonStream& s_;
  std::vector<Open> stack_;
  std::set<std::string> top_keys_;

  bool fail(const std::string& what) {
    if (error.empty()) error = what;
    return false;
  }
  bool open(json v, bool streamed) {
    if (stack_.empty() && !v.is_object()) return fail("the top level must be an object");
    if (stack_.size() >= 64) return fail("nesting deeper than 64");
    stack_.push_back(Open{std::move(v), std::string(), streamed});
    return true;
  }
  bool close() {
    json v = std::move(stack_.back().value);
    stack_.pop_back();
    if (stack_.empty()) return true;  // the top level itself: its members went out already
    return done(std::move(v));
  }
  bool done(json v) {
    if (stack_.empty()) return fail("the top level must be an object");
    Open& parent = stack_.back();
    if (stack_.size() == 1) s_.member(parent.key, std::move(v));
    else if (parent.streamed) s_.element(stack_[0].key, std::move(v));
    else if (parent.value.is_object()) parent.value[parent.key] = std::move(v);
    else parent.value.push_back(std::move(v));
    return true;
  }
};

}  // namespace

void stream_json(std::istream& in, const JsonStream& s) {
  StreamReader reader(s);
  const bool parsed = json::sax_parse(in, &reader, nlohmann::json::input_format_t::json, true);
  if (!parsed || !reader.error.empty()) bad("", reader.error.empty() ? std::string("not valid JSON") : reader.error);
}

std::ifstream open_json_file(const std::string& path) {
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) bad("", "cannot read the file " + quote_str(path));
  if (sb.st_size > limits::max_file_bytes)
    bad("", std::to_string(sb.st_size) + " bytes, more than the limit of " + std::to_string(limits::max_file_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) bad("", "cannot open " + quote_str(path));
  return in;
}

bool starts_with_format(const std::string& head, const std::string& format) {
  size_t i = 0;
  auto lit = [&](const std::string& t) {
    while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
    if (head.compare(i, t.size(), t) != 0) return false;
    i += t.size();
    return true;
  };
  return lit("{") && lit("\"format\"") && lit(":") && lit("\"" + format + "\"");
}

}  // namespace mhaq::check
