#include "mhaq/evidence/golden_kernel.hpp"

#include <algorithm>
#include <climits>

#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/model/certified_eval.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/run/certificate.hpp"
#include "mhaq/run/json_out.hpp"

#include "golden_internal.hpp"

namespace mhaq {

namespace {
using json = nlohmann::json;

const char* kEntryFormat =
    "each entry is [decimal, mid, rad]: decimal in scientific form [-]d.ddd...e[+-]XX with exactly `digits` significant digits, the value "
    "correctly rounded to nearest (ties to even, possible only for rational values); mid and rad exact rationals \"p/q\" (q a power of two "
    "unless rad is 0) with the value in [mid - rad, mid + rad], every point of which rounds to the decimal and to one IEEE double; rad 0: "
    "the value is rational and equals mid; a row with no key to attend is null";

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string qvec_text(const QVec& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + quoted(v[i].str());
  return o + "]";
}

ojson matrix_json(const QMat& a) {
  ojson m = ojson::array();
  for (int r = 0; r < a.rows(); ++r) m.push_back(qvec_json(a.row(r)));
  return m;
}

ojson bias_json(const QVec& b) { return b.empty() ? ojson(nullptr) : qvec_json(b); }

ojson layer_json(const KernelLayer& L) {
  ojson rope = nullptr;
  if (L.rope) rope = ojson{{"theta", L.rope_theta.str()}, {"pairing", L.rope_interleaved ? "interleaved" : "half"}};
  return ojson{{"d", L.d},
               {"heads", L.heads},
               {"kv_heads", L.kv_heads},
               {"d_k", L.d_k},
               {"d_v", L.d_v},
               {"d_out", L.d_out},
               {"scale", ojson{{"text", L.scale_text}, {"q", L.scale.q.str()}, {"sqrt", std::to_string(L.scale.m)}}},
               {"rope", rope},
               {"weights_dtype", L.weights_dtype},
               {"q", matrix_json(L.Wq)},
               {"k", matrix_json(L.Wk)},
               {"v", matrix_json(L.Wv)},
               {"out", matrix_json(L.Wo)},
               {"q_bias", bias_json(L.bq)},
               {"k_bias", bias_json(L.bk)},
               {"v_bias", bias_json(L.bv)},
               {"out_bias", bias_json(L.bo)}};
}

std::string entry_text(const KernelEntry& e) { return "[" + quoted(e.decimal) + ", " + quoted(e.mid) + ", " + quoted(e.rad) + "]"; }

// entries [first, first + count) as one array
std::string entries_text(const std::vector<KernelEntry>& v, size_t first, size_t count) {
  std::string o = "[";
  for (size_t k = 0; k < count; ++k) o += (k ? ", " : "") + entry_text(v[first + k]);
  return o + "]";
}

// One member "name": [row, ...] of a sequence: each row on its own line, null
// for a row without keys, per-head blocks of `width` entries when heads > 0.
std::string rows_member(const char* name, const KernelSequenceResult& r, const std::vector<KernelEntry> KernelRow::*field, int heads, size_t width) {
  std::string o = ",\n   " + quoted(name) + ": [";
  for (size_t k = 0; k < r.rows.size(); ++k) {
    const KernelRow& row = r.rows[k];
    o += k ? ",\n    " : "\n    ";
    if (!row.defined) {
      o += "null";
      continue;
    }
    const std::vector<KernelEntry>& v = row.*field;
    if (heads == 0) {
      o += entries_text(v, 0, v.size());
      continue;
    }
    o += "[";
    for (int h = 0; h < heads; ++h) o += (h ? ", " : "") + entries_text(v, static_cast<size_t>(h) * width, width);
    o += "]";
  }
  return o + "]";
}

std::string sequence_text(size_t index, const KernelSequence& s, const std::vector<long>& rows, const KernelSequenceResult& r, const KernelGoldenInputs& in) {
  std::string o = "  {\"index\": " + std::to_string(index) + ", \"length\": " + std::to_string(s.tokens.size()) + ",\n   \"tokens\": [";
  for (size_t t = 0; t < s.tokens.size(); ++t) o += (t ? ",\n     " : "") + qvec_text(s.tokens[t]);
  o += "]";
  if (!s.key_padding.empty()) {
    o += ",\n   \"key_padding_mask\": [";
    for (size_t i = 0; i < s.key_padding.size(); ++i) o += std::string(i ? ", " : "") + (s.key_padding[i] ? "true" : "false");
    o += "]";
  }
  if (!s.mask.empty()) {
    o += ",\n   \"attn_mask\": [";
    for (size_t n = 0; n < s.mask.size(); ++n) {
      o += n ? ",\n     [" : "[";
      for (size_t i = 0; i < s.mask[n].size(); ++i) o += (i ? ", " : "") + quoted(s.mask[n][i].neg_inf ? "-inf" : s.mask[n][i].value.str());
      o += "]";
    }
    o += "]";
  }
  if (!s.position_ids.empty()) {
    o += ",\n   \"position_ids\": [";
    for (size_t i = 0; i < s.position_ids.size(); ++i) o += (i ? ", " : "") + std::to_string(s.position_ids[i]);
    o += "]";
  }
  o += ",\n   \"query_positions\": [";
  for (size_t k = 0; k < rows.size(); ++k) o += (k ? ", " : "") + std::to_string(rows[k]);
  o += "],\n   \"bits\": " + std::to_string(r.bits);
  o += rows_member("output", r, &KernelRow::out, 0, 0);
  if (in.eval.head_outputs) o += rows_member("head_outputs", r, &KernelRow::heads, in.layer.heads, static_cast<size_t>(in.layer.d_v));
  if (in.eval.attention_weights) o += rows_member("attention_weights", r, &KernelRow::weights, in.layer.heads, s.tokens.size());
  return o + "}";
}

// Work of one sequence: projections, scores, weighted sums, output projection.
long sequence_work(const KernelLayer& L, long n, long rows) {
  const long proj = n * (static_cast<long>(L.heads + 2 * L.kv_heads) * L.d_k + static_cast<long>(L.kv_heads) * L.d_v) * L.d;
  return proj + rows * L.heads * n * (L.d_k + L.d_v) + rows * static_cast<long>(L.d_out) * L.heads * L.d_v;
}

long row_entries(const KernelGoldenInputs& in, long n) {
  const KernelLayer& L = in.layer;
  return L.d_out + (in.eval.head_outputs ? static_cast<long>(L.heads) * L.d_v : 0) + (in.eval.attention_weights ? static_cast<long>(L.heads) * n : 0);
}

MaskEntry mask_entry(const json& e, const std::string& where) {
  if (e == "-inf") return MaskEntry{true, Rational(0)};
  return MaskEntry{false, rational_from_json(e, where)};
}

KernelSequence read_sequence(const json& j, const std::string& p, int d) {
  KernelSequence s;
  const json* tokens = &j;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "tokens" && it.key() != "key_padding_mask" && it.key() != "attn_mask" && it.key() != "position_ids")
        throw_input(json_key_path(p, clean_text(it.key())) + ": unknown field (a sequence has tokens, key_padding_mask, attn_mask, position_ids)");
    tokens = &json_member(j, p, "tokens");
  }
  const std::string tp = j.is_object() ? json_key_path(p, "tokens") : p;
  if (!tokens->is_array() || tokens->empty() || static_cast<long>(tokens->size()) > check::limits::max_runs)
    throw_input(tp + ": expected a sequence of 1 to " + std::to_string(check::limits::max_runs) + " tokens, or an object with \"tokens\"");
  const size_t N = tokens->size();
  for (size_t t = 0; t < N; ++t) {
    const std::string ep = json_index_path(tp, t);
    const json& tok = (*tokens)[t];
    if (!tok.is_array() || static_cast<long>(tok.size()) != d) throw_input(ep + ": expected a token of d = " + std::to_string(d) + " exact entries");
    QVec x;
    for (size_t k = 0; k < tok.size(); ++k) x.push_back(rational_from_json(tok[k], json_index_path(ep, k)));
    s.tokens.push_back(std::move(x));
  }
  if (!j.is_object()) return s;
  if (const json* found = json_find(j, "key_padding_mask")) {
    const json& m = *found;
    const std::string mp = json_key_path(p, "key_padding_mask");
    if (!m.is_array() || m.size() != N) throw_input(mp + ": expected " + std::to_string(N) + " booleans (true: the key is padding)");
    for (size_t i = 0; i < N; ++i) {
      if (!m[i].is_boolean()) throw_input(json_index_path(mp, i) + ": expected true or false, got " + json_shown(m[i]));
      s.key_padding.push_back(m[i].get<bool>());
    }
  }
  if (const json* found = json_find(j, "attn_mask")) {
    const json& m = *found;
    const std::string mp = json_key_path(p, "attn_mask");
    if (static_cast<long>(N * N) > limits::max_kernel_sequence_entries)
      throw_input(mp + ": an " + std::to_string(N) + " x " + std::to_string(N) + " mask, more than the limit of " + std::to_string(limits::max_kernel_sequence_entries) +
                  " entries (max_kernel_sequence_entries)");
    if (!m.is_array() || m.size() != N) throw_input(mp + ": expected " + std::to_string(N) + " rows of " + std::to_string(N) + " entries (exact, or \"-inf\")");
    for (size_t n = 0; n < N; ++n) {
      const std::string rp = json_index_path(mp, n);
      if (!m[n].is_array() || m[n].size() != N) throw_input(rp + ": expected " + std::to_string(N) + " entries (exact, or \"-inf\")");
      std::vector<MaskEntry> row;
      for (size_t i = 0; i < N; ++i) row.push_back(mask_entry(m[n][i], json_index_path(rp, i)));
      s.mask.push_back(std::move(row));
    }
  }
  if (const json* found = json_find(j, "position_ids")) {
    const json& m = *found;
    const std::string mp = json_key_path(p, "position_ids");
    if (!m.is_array() || m.size() != N) throw_input(mp + ": expected " + std::to_string(N) + " integer positions");
    for (size_t i = 0; i < N; ++i) s.position_ids.push_back(json_long(m[i], 0, limits::max_kernel_position, json_index_path(mp, i)));
  }
  return s;
}
}  // namespace

std::string QueryPositions::text() const {
  if (kind == Kind::all) return "all";
  if (kind == Kind::last) return "last";
  std::string o;
  for (size_t i = 0; i < list.size(); ++i) o += (i ? "," : "") + std::to_string(list[i]);
  return o;
}

std::vector<long> QueryPositions::rows(long n, const std::string& where) const {
  std::vector<long> out;
  if (kind == Kind::all)
    for (long i = 0; i < n; ++i) out.push_back(i);
  if (kind == Kind::last) out.push_back(n - 1);
  for (long k : list) {
    if (k < -n || k >= n)
      throw_input(where + ": --query-positions " + std::to_string(k) + " is outside a sequence of " + std::to_string(n) + " tokens (give indices in [" +
                  std::to_string(-n) + ", " + std::to_string(n - 1) + "])");
    const long r = k < 0 ? n + k : k;
    if (std::find(out.begin(), out.end(), r) != out.end()) throw_input(where + ": --query-positions asks row " + std::to_string(r) + " twice");
    out.push_back(r);
  }
  return out;
}

QueryPositions parse_query_positions(const std::string& text) {
  QueryPositions q;
  if (text == "all") return q;
  if (text == "last") {
    q.kind = QueryPositions::Kind::last;
    return q;
  }
  q.kind = QueryPositions::Kind::list;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t digits = item.find_first_not_of('-') == 1 ? 1 : 0;
    if (item.empty() || item.size() > 7 || item.find_first_not_of("0123456789", digits) != std::string::npos || item.size() == digits ||
        (item[digits] == '0' && item.size() > digits + 1))
      throw Error(ErrorKind::usage, "--query-positions: expected all, last, or a comma list of row indices such as 0,5,-1; got " + quote_text(text));
    q.list.push_back(std::stol(item));
    at = comma + 1;
  }
  if (static_cast<long>(q.list.size()) > check::limits::max_runs)
    throw Error(ErrorKind::usage, "--query-positions: more than " + std::to_string(check::limits::max_runs) + " rows");
  return q;
}

std::vector<KernelSequence> read_kernel_inputs_text(const std::string& text, int d) {
  const json j = parse_json_text(text);
  const json& s = golden_internal::inputs_sequences(j, "", limits::max_inner_dim, d, "layer");
  std::vector<KernelSequence> out;
  for (size_t i = 0; i < s.size(); ++i) out.push_back(read_sequence(s[i], json_index_path("sequences", i), d));
  return out;
}

long round_tokens(std::vector<KernelSequence>& sequences, StDtype t) {
  long changed = 0;
  for (size_t i = 0; i < sequences.size(); ++i)
    for (size_t k = 0; k < sequences[i].tokens.size(); ++k)
      for (size_t e = 0; e < sequences[i].tokens[k].size(); ++e) {
        Rational& x = sequences[i].tokens[k][e];
        bool ok = true;
        Rational r = round_to_dtype(x, t, ok);
        if (!ok)
          throw_input(json_index_path(json_index_path(json_index_path("sequences", i), k), e) + ": " + x.str().substr(0, 80) + " is beyond the largest " +
                      dtype_name(t) + " value");
        if (!(r == x)) {
          ++changed;
          x = std::move(r);
        }
      }
  return changed;
}

void check_kernel_golden_limits(const KernelGoldenInputs& in) {
  long work = 0, entries = 0;
  for (size_t i = 0; i < in.sequences.size(); ++i) {
    const std::string where = json_index_path("sequences", i);
    const long n = static_cast<long>(in.sequences[i].tokens.size());
    const long rows = static_cast<long>(in.positions.rows(n, where).size());
    const long e = rows * row_entries(in, n);
    if (e > limits::max_kernel_sequence_entries)
      throw_input(where + ": " + std::to_string(rows) + " rows of " + std::to_string(row_entries(in, n)) + " entries, more than the limit of " +
                  std::to_string(limits::max_kernel_sequence_entries) + " entries of one sequence (max_kernel_sequence_entries); ask fewer "
                  "--query-positions, or leave out --attention-weights");
    entries += e;
    work += sequence_work(in.layer, n, rows);
    if (work > limits::max_golden_eval_work)
      throw_input(where + ": the sequences up to this one take more than the limit of " + std::to_string(limits::max_golden_eval_work) +
                  " steps of evaluation (max_golden_eval_work); split the inputs into several files");
  }
  // every entry takes at least its decimal and three quotes and separators
  const long least = entries * (in.eval.digits + 16);
  if (least > limits::max_file_bytes)
    throw_input(std::to_string(entries) + " entries of " + std::to_string(in.eval.digits) + " digits take at least " + std::to_string(least) +
                " bytes, more than the file limit of " + std::to_string(limits::max_file_bytes) + "; ask fewer --digits, fewer positions, or split the inputs");
}

KernelGoldenSummary golden_kernel_export(const KernelGoldenInputs& in, const std::function<void(const std::string&)>& sink) {
  check_kernel_golden_limits(in);
  check_digits_within_bits(in.eval.digits, in.eval.max_bits);
  ojson head{{"format", kernel_golden_format},
             {"version", 1},
             {"mhaq_version", mhaq_version_string},
             {"digits", in.eval.digits},
             {"max_bits", in.eval.max_bits},
             {"entry_format", kEntryFormat},
             {"layer", layer_json(in.layer)},
             {"options", ojson{{"causal", in.eval.causal},
                               {"query_positions", in.positions.text()},
                               {"head_outputs", in.eval.head_outputs},
                               {"attention_weights", in.eval.attention_weights},
                               {"tokens_rounded_to", in.tokens_rounded_to.empty() ? ojson(nullptr) : ojson(in.tokens_rounded_to)},
                               {"tokens_changed", in.tokens_changed}}}};
  std::string text = dump_layout(head);
  text.resize(text.size() - 3);  // "\n}\n"
  sink(text + ",\n \"sequences\": [\n");
  KernelGoldenSummary sum;
  const size_t S = in.sequences.size();
  const size_t batch = static_cast<size_t>(std::max(1, in.threads)) * 4;
  for (size_t first = 0; first < S; first += batch) {
    const size_t last = std::min(S, first + batch);
    std::vector<std::vector<long>> rows(last - first);
    std::vector<KernelSequenceResult> res(last - first);
    parallel_for(first, last, in.threads, [&](size_t i) {
      rows[i - first] = in.positions.rows(static_cast<long>(in.sequences[i].tokens.size()), json_index_path("sequences", i));
      try {
        res[i - first] = certify_kernel_sequence(in.layer, in.sequences[i], rows[i - first], in.eval);
      } catch (const Error& e) {
        throw Error(e.kind(), "sequence " + std::to_string(i) + ": " + e.what());
      }
    });
    std::string chunk;
    for (size_t i = first; i < last; ++i) {
      const KernelSequenceResult& r = res[i - first];
      chunk += sequence_text(i, in.sequences[i], rows[i - first], r, in) + (i + 1 < S ? ",\n" : "\n");
      ++sum.sequences;
      sum.max_bits = std::max(sum.max_bits, r.bits);
      for (const auto& row : r.rows) {
        ++sum.rows;
        if (!row.defined) ++sum.undefined_rows;
        sum.entries += static_cast<long>(row.out.size() + row.heads.size() + row.weights.size());
        for (const auto* v : {&row.out, &row.heads, &row.weights})
          for (const auto& e : *v) sum.rational_entries += e.rad == "0";
      }
    }
    sink(chunk);
  }
  const ojson s{{"sequences", sum.sequences}, {"rows", sum.rows},   {"undefined_rows", sum.undefined_rows}, {"entries", sum.entries},
                {"rational_entries", sum.rational_entries}, {"max_bits", sum.max_bits}};
  sink(" ],\n \"summary\": " + s.dump() + "\n}\n");
  return sum;
}

}  // namespace mhaq
