#include "mhaq/base/json_in.hpp"

#include <set>
#include <vector>

#include "mhaq/base/error.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"

namespace mhaq {

using nlohmann::json;

std::string json_key_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string json_index_path(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::string json_shown(const json& e) {
  // Containers are shown by kind and size: dumping them could be large (and deep).
  if (e.is_object()) return "an object with " + std::to_string(e.size()) + (e.size() == 1 ? " member" : " members");
  if (e.is_array()) return "an array of " + std::to_string(e.size()) + (e.size() == 1 ? " entry" : " entries");
  if (e.is_string()) return quote_text(e.get_ref<const std::string&>());
  const std::string s = e.dump();
  return s.size() > quote_chars ? s.substr(0, quote_chars) + "..." : s;
}

namespace {

// nlohmann's parser callback rescans the parent container at the end of every
// object (quadratic for a file of many heads), so the document is built by a
// SAX handler of our own: it tracks where it is, refuses duplicate keys and
// deep nesting, and turns every parse error into Error(input) with the path.
class StrictBuilder final : public json::json_sax_t {
 public:
  json root;

  bool null() override { return put(nullptr); }
  bool boolean(bool b) override { return put(b); }
  bool number_integer(json::number_integer_t v) override { return put(v); }
  bool number_unsigned(json::number_unsigned_t v) override { return put(v); }
  bool number_float(json::number_float_t v, const json::string_t&) override { return put(v); }
  bool string(json::string_t& v) override { return put(std::move(v)); }
  bool binary(json::binary_t& v) override { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(json::value_t::object, true); }
  bool start_array(std::size_t) override { return open(json::value_t::array, false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(json::string_t& k) override {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second) throw_input(path(true) + ": duplicate key " + quote_text(k));
    slot_ = &(*stack_.back())[k];
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    if (ex.id == 406) throw_input(path(true) + ": number out of range (beyond a double): " + cut_message(ex.what()));
    throw_input((frames_.empty() ? std::string() : path(true) + ": ") + "not valid JSON: " + cut_message(ex.what()));
  }

 private:
  struct Frame {
    bool object = false;
    std::size_t elements = 0;  // arrays: elements begun so far
    std::string key;           // objects: the latest key
    std::set<std::string> keys;
  };
  std::vector<Frame> frames_;
  std::vector<json*> stack_;
  json* slot_ = nullptr;  // the member the next value of an object goes to

  json* place(json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json* top = stack_.back();
    if (top->is_array()) {
      ++frames_.back().elements;
      top->get_ref<json::array_t&>().push_back(std::move(v));
      return &top->get_ref<json::array_t&>().back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  template <class V>
  bool put(V&& v) {
    place(json(std::forward<V>(v)));
    return true;
  }
  bool open(json::value_t t, bool object) {
    json* p = place(json(t));
    stack_.push_back(p);
    frames_.push_back(Frame{object, 0, {}, {}});
    if (static_cast<int>(frames_.size()) > max_json_depth) throw_input(path(false) + ": nested deeper than " + std::to_string(max_json_depth) + " levels");
    return true;
  }
  bool close() {
    stack_.pop_back();
    frames_.pop_back();
    return true;
  }
  // The JSON path of the value being read (inside_top) or of the innermost container.
  std::string path(bool inside_top) const {
    std::string p;
    for (std::size_t k = 0; k < frames_.size(); ++k) {
      const bool top = k + 1 == frames_.size();
      if (top && !inside_top) break;
      const Frame& f = frames_[k];
      if (f.object) p = json_key_path(p, f.key.size() > quote_chars ? clean_text(f.key.substr(0, quote_chars)) + "..." : clean_text(f.key));
      else p = json_index_path(p, top ? f.elements : f.elements - 1);  // the top array's next element has not begun
    }
    return p.empty() ? "top level" : p;
  }
  // nlohmann's messages echo the token read so far, which can be huge or hold
  // invalid UTF-8: cleaned and cut.
  static std::string cut_message(const std::string& what) {
    std::string m = what;
    const auto close = m.find("] ");
    if (m.rfind("[json.exception.", 0) == 0 && close != std::string::npos) m = m.substr(close + 2);
    return m.size() > 2 * quote_chars ? clean_text(m.substr(0, 2 * quote_chars)) + "..." : clean_text(m);
  }
};

}  // namespace

json parse_json_text(const std::string& text) {
  if (text.size() > static_cast<std::size_t>(limits::max_file_bytes))
    throw_input("the file has " + std::to_string(text.size()) + " bytes, more than the limit of " + std::to_string(limits::max_file_bytes));
  StrictBuilder b;
  json::sax_parse(text, &b);
  return std::move(b.root);
}

const json& json_member(const json& j, const std::string& path, const std::string& key) {
  if (!j.is_object()) throw_input((path.empty() ? std::string("top level") : path) + ": expected an object, got " + json_shown(j));
  auto it = j.find(key);
  if (it == j.end()) throw_input(json_key_path(path, key) + ": missing");
  return *it;
}

const json* json_find(const json& j, const std::string& key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

const json& need(const json& j, const std::string& path, const std::string& key) { return json_member(j, path, key); }
const json& need_array(const json& j, const std::string& path, const std::string& key, size_t max) {
  const json& a = need(j, path, key);
  if (!a.is_array()) throw_input(json_key_path(path, key) + ": expected an array, got " + json_shown(a));
  if (a.size() > max) throw_input(json_key_path(path, key) + ": " + std::to_string(a.size()) + " entries, more than the limit of " + std::to_string(max));
  return a;
}
long need_int(const json& j, const std::string& path, const std::string& key, long lo, long hi) {
  return json_long(need(j, path, key), lo, hi, json_key_path(path, key));
}
std::uint64_t need_u64(const json& j, const std::string& path, const std::string& key) { return json_u64(need(j, path, key), json_key_path(path, key)); }
std::string need_str(const json& j, const std::string& path, const std::string& key) {
  const json& a = need(j, path, key);
  if (!a.is_string()) throw_input(json_key_path(path, key) + ": expected a string, got " + json_shown(a));
  return a.get<std::string>();
}
bool need_bool(const json& j, const std::string& path, const std::string& key) {
  const json& a = need(j, path, key);
  if (!a.is_boolean()) throw_input(json_key_path(path, key) + ": expected true or false, got " + json_shown(a));
  return a.get<bool>();
}

long json_long(const json& e, long lo, long hi, const std::string& path) {
  const std::string range = std::string("[") + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (e.is_number_float())
    throw_input(path + ": expected an integer in " + range + ", got the floating-point number " + json_shown(e) + " (write integers without a point or exponent)");
  if (!e.is_number_integer()) throw_input(path + ": expected an integer in " + range + ", got " + json_shown(e));
  if (e.is_number_unsigned()) {
    const std::uint64_t u = e.get<std::uint64_t>();
    if (hi < 0 || u > static_cast<std::uint64_t>(hi) || (lo > 0 && u < static_cast<std::uint64_t>(lo)))
      throw_input(path + ": must be in " + range + ", got " + std::to_string(u));
    return static_cast<long>(u);
  }
  const long v = e.get<long>();
  if (v < lo || v > hi) throw_input(path + ": must be in " + range + ", got " + std::to_string(v));
  return v;
}

std::uint64_t json_u64(const json& e, const std::string& path) {
  if (e.is_number_unsigned()) return e.get<std::uint64_t>();
  if (e.is_number_integer() && e.get<long>() >= 0) return static_cast<std::uint64_t>(e.get<long>());
  throw_input(path + ": expected an integer in [0, 2^64-1], got " + json_shown(e));
}

}  // namespace mhaq
