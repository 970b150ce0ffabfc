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

// Where the parser is: one frame per open array or object.
struct Frame {
  bool object = false;
  std::size_t elements = 0;  // arrays: elements begun so far
  std::string key;           // objects: the latest key
  std::set<std::string> keys;
};

std::string frames_path(const std::vector<Frame>& st, bool inside_top) {
  std::string p;
  for (std::size_t k = 0; k < st.size(); ++k) {
    const bool top = k + 1 == st.size();
    if (st[k].object) {
      if (!top || inside_top) p = json_key_path(p, clean_text(st[k].key.size() > quote_chars ? st[k].key.substr(0, quote_chars) + "..." : st[k].key));
    } else {
      // an element of the top array that has not begun yet is the next one
      const std::size_t i = top ? st[k].elements : st[k].elements - 1;
      if (!top || inside_top) p = json_index_path(p, i);
    }
  }
  return p.empty() ? "top level" : p;
}

struct Stop {
  std::string message;
};

// nlohmann's messages echo the token read so far, which can be huge or hold
// invalid UTF-8: keep its first line, cleaned and cut.
std::string cut_message(const std::string& what) {
  std::string m = what;
  const auto close = m.find("] ");
  if (m.rfind("[json.exception.", 0) == 0 && close != std::string::npos) m = m.substr(close + 2);
  m = clean_text(m);
  if (m.size() > 2 * quote_chars) m = m.substr(0, 2 * quote_chars) + "...";
  return m;
}

}  // namespace

json parse_json_text(const std::string& text) {
  if (text.size() > static_cast<std::size_t>(limits::max_file_bytes))
    throw_input("the file has " + std::to_string(text.size()) + " bytes, more than the limit of " + std::to_string(limits::max_file_bytes));
  std::vector<Frame> st;
  auto begin_element = [&] {
    if (!st.empty() && !st.back().object) ++st.back().elements;
  };
  json::parser_callback_t cb = [&](int /*depth*/, json::parse_event_t ev, json& parsed) -> bool {
    switch (ev) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        begin_element();
        st.push_back(Frame{ev == json::parse_event_t::object_start, 0, {}, {}});
        if (static_cast<int>(st.size()) > max_json_depth)
          throw Stop{frames_path(st, false) + ": nested deeper than " + std::to_string(max_json_depth) + " levels"};
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        st.pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& f = st.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) throw Stop{frames_path(st, true) + ": duplicate key " + quote_text(f.key)};
        break;
      }
      case json::parse_event_t::value:
        begin_element();
        break;
    }
    return true;
  };
  try {
    return json::parse(text, cb);
  } catch (const Stop& s) {
    throw_input(s.message);
  } catch (const json::parse_error& e) {
    const std::string where = st.empty() ? std::string() : frames_path(st, true) + ": ";
    throw_input(where + "not valid JSON: " + cut_message(e.what()));
  } catch (const json::out_of_range& e) {
    throw_input(frames_path(st, true) + ": number out of range (beyond a double): " + cut_message(e.what()));
  } catch (const json::exception& e) {
    throw_input(frames_path(st, true) + ": " + cut_message(e.what()));
  }
}

const json& json_member(const json& j, const std::string& key, const std::string& path) {
  if (!j.is_object()) throw_input((path.empty() ? std::string("top level") : path) + ": expected an object, got " + json_shown(j));
  auto it = j.find(key);
  if (it == j.end()) throw_input(json_key_path(path, key) + ": missing");
  return *it;
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
