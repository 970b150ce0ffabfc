// The kernel golden checker's reader of the layer and its check of one
// sequence (golden_kernel_internal.hpp): its own evaluator of the layer in
// Arb, its own exact rules for rational entries. Nothing here comes from
// mhaq_lib (tests/check_separation.sh).
#include <algorithm>
#include <cctype>
#include <deque>
#include <optional>

#include "golden_kernel_internal.hpp"
#include "strict_read.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check::kernel {

using json = nlohmann::json;

namespace {

const size_t kEntry = static_cast<size_t>(limits::max_entry_chars);
const size_t kNumber = static_cast<size_t>(limits::max_number_chars);

std::vector<Qn> read_matrix(const json& j, const std::string& path, long rows, long cols) {
  if (!j.is_array() || static_cast<long>(j.size()) != rows) bad(path, "expected " + std::to_string(rows) + " rows of " + std::to_string(cols) + " exact entries");
  std::vector<Qn> out;
  out.reserve(static_cast<size_t>(rows * cols));
  for (size_t r = 0; r < j.size(); ++r)
    for (auto& x : golden_io::read_qvec(j[r], at(path, r), static_cast<int>(cols), kEntry)) out.push_back(std::move(x));
  return out;
}

std::vector<Qn> read_bias(const json& layer, const std::string& key, long n) {
  const json& b = need(layer, "layer", key);
  if (b.is_null()) return {};
  return golden_io::read_qvec(b, at("layer", key), static_cast<int>(n), kEntry);
}

bool is_square(const Qn& x, Qn& root) {
  if (fmpq_sgn(x.v) < 0 || !fmpz_is_square(fmpq_numref(x.v)) || !fmpz_is_square(fmpq_denref(x.v))) return false;
  fmpz_sqrt(fmpq_numref(root.v), fmpq_numref(x.v));
  fmpz_sqrt(fmpq_denref(root.v), fmpq_denref(x.v));
  return true;
}

// r = M x + b for rows [first, first + count) of the row-major M (cols = x.size()).
std::vector<Qn> affine(const std::vector<Qn>& M, const std::vector<Qn>& b, long first, long count, const std::vector<Qn>& x) {
  std::vector<Qn> r(static_cast<size_t>(count));
  const size_t cols = x.size();
  for (long i = 0; i < count; ++i) {
    Qn& y = r[static_cast<size_t>(i)];
    for (size_t c = 0; c < cols; ++c) fmpq_addmul(y.v, M[static_cast<size_t>(first + i) * cols + c].v, x[c].v);
    if (!b.empty()) fmpq_add(y.v, y.v, b[static_cast<size_t>(first + i)].v);
  }
  return r;
}

struct Seq {
  std::vector<std::vector<Qn>> x;
  std::vector<char> pad;
  std::vector<std::vector<char>> hidden;  // additive mask -inf
  std::vector<std::vector<Qn>> mask;
  std::vector<long> pos;
  bool visible(bool causal, size_t n, size_t i) const {
    return !(causal && i > n) && (pad.empty() || !pad[i]) && (hidden.empty() || !hidden[n][i]);
  }
};

// The rows a positions text gives for n tokens; empty with `why` set when one is out of range.
std::vector<long> resolve_rows(const std::string& spec, long n, std::string& why) {
  std::vector<long> rows;
  if (spec == "all") {
    for (long i = 0; i < n; ++i) rows.push_back(i);
    return rows;
  }
  if (spec == "last") return {n - 1};
  size_t p = 0;
  while (p <= spec.size()) {
    size_t e = spec.find(',', p);
    if (e == std::string::npos) e = spec.size();
    const long k = std::stol(spec.substr(p, e - p));
    if (k < -n || k >= n) {
      why = "position " + std::to_string(k) + " outside a sequence of " + std::to_string(n) + " tokens";
      return {};
    }
    rows.push_back(k < 0 ? k + n : k);
    p = e + 1;
  }
  return rows;
}

// ---- the checker's evaluator: every asked row, at `prec` bits
struct Values {
  std::vector<char> defined;
  std::vector<std::vector<Ab>> out, head, weight;  // per row
};

static_assert(sizeof(Ab) == sizeof(arb_struct), "a vector of Ab is an Arb vector");

void dot(Ab& res, const std::vector<Ab>& a, size_t ai, const std::vector<Ab>& b, size_t bi, size_t len, slong prec) {
  arb_dot(res.v, nullptr, 0, a[ai].v, 1, b[bi].v, 1, static_cast<slong>(len), prec);
}

std::vector<Ab> balls(const std::vector<Qn>& v, slong prec) {
  std::vector<Ab> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) arb_set_fmpq(out[i].v, v[i].v, prec);
  return out;
}

// Y[t][r] = M_r . x_t + b_r for rows r < rows, every token t.
std::vector<std::vector<Ab>> apply(const std::vector<Ab>& M, const std::vector<Ab>& b, size_t rows, const std::vector<std::vector<Ab>>& X, slong prec) {
  std::vector<std::vector<Ab>> Y(X.size(), std::vector<Ab>(rows));
  for (size_t t = 0; t < X.size(); ++t)
    for (size_t r = 0; r < rows; ++r) {
      dot(Y[t][r], M, r * X[t].size(), X[t], 0, X[t].size(), prec);
      if (!b.empty()) arb_add(Y[t][r].v, Y[t][r].v, b[r].v, prec);
    }
  return Y;
}

void rotary(const Layer& L, const Seq& s, std::vector<std::vector<Ab>>& Y, size_t blocks, slong prec) {
  const long half = L.d_k / 2;
  Ab base, expo, freq, angle, sn, cs, a, b;
  arb_set_fmpq(base.v, L.theta.v, prec);
  for (long j = 0; j < half; ++j) {
    arb_set_si(expo.v, -2 * j);
    arb_div_si(expo.v, expo.v, L.d_k, prec);
    arb_pow(freq.v, base.v, expo.v, prec);  // theta^(-2j/d_k)
    for (size_t t = 0; t < Y.size(); ++t) {
      arb_mul_si(angle.v, freq.v, s.pos.empty() ? static_cast<slong>(t) : s.pos[t], prec);
      arb_sin_cos(sn.v, cs.v, angle.v, prec);
      for (size_t blk = 0; blk < blocks; ++blk) {
        const size_t o = blk * static_cast<size_t>(L.d_k);
        const size_t ia = o + static_cast<size_t>(L.interleaved ? 2 * j : j), ib = o + static_cast<size_t>(L.interleaved ? 2 * j + 1 : j + half);
        arb_mul(a.v, Y[t][ia].v, cs.v, prec);
        arb_submul(a.v, Y[t][ib].v, sn.v, prec);
        arb_mul(b.v, Y[t][ib].v, cs.v, prec);
        arb_addmul(b.v, Y[t][ia].v, sn.v, prec);
        arb_swap(Y[t][ia].v, a.v);
        arb_swap(Y[t][ib].v, b.v);
      }
    }
  }
}

Values evaluate(const Layer& L, const Seq& s, const std::vector<long>& rows, bool causal, slong prec) {
  const size_t N = s.x.size(), H = static_cast<size_t>(L.heads), G = static_cast<size_t>(L.kv_heads), dk = static_cast<size_t>(L.d_k),
               dv = static_cast<size_t>(L.d_v);
  std::vector<std::vector<Ab>> X(N);
  for (size_t t = 0; t < N; ++t) X[t] = balls(s.x[t], prec);
  auto Q = apply(balls(L.q, prec), balls(L.bq, prec), H * dk, X, prec);
  auto K = apply(balls(L.k, prec), balls(L.bk, prec), G * dk, X, prec);
  auto V = apply(balls(L.v, prec), balls(L.bv, prec), G * dv, X, prec);
  if (L.rope) {
    rotary(L, s, Q, H, prec);
    rotary(L, s, K, G, prec);
  }
  Ab scale, t1;
  arb_set_fmpq(t1.v, L.scale_m.v, prec);
  arb_sqrt(t1.v, t1.v, prec);
  arb_set_fmpq(scale.v, L.scale_q.v, prec);
  arb_mul(scale.v, scale.v, t1.v, prec);
  const std::vector<Ab> Wo = balls(L.out, prec), bo = balls(L.bo, prec);
  Values val;
  val.defined.assign(rows.size(), 0);
  val.out.resize(rows.size());
  val.head.resize(rows.size());
  val.weight.resize(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    const size_t n = static_cast<size_t>(rows[r]);
    std::vector<size_t> keys;
    for (size_t i = 0; i < N; ++i)
      if (s.visible(causal, n, i)) keys.push_back(i);
    if (keys.empty()) continue;
    val.defined[r] = 1;
    std::vector<Ab> y(H * dv), alpha(H * N), column(N);
    for (size_t h = 0; h < H; ++h) {
      const size_t g = h / static_cast<size_t>(L.group());
      std::vector<Ab> sc(keys.size());
      size_t top = 0;
      for (size_t a = 0; a < keys.size(); ++a) {
        dot(sc[a], Q[n], h * dk, K[keys[a]], g * dk, dk, prec);
        arb_mul(sc[a].v, sc[a].v, scale.v, prec);
        if (!s.mask.empty()) {
          arb_set_fmpq(t1.v, s.mask[n][keys[a]].v, prec);
          arb_add(sc[a].v, sc[a].v, t1.v, prec);
        }
        if (arf_cmp(arb_midref(sc[a].v), arb_midref(sc[top].v)) > 0) top = a;
      }
      Ab total, shift;
      arb_set(shift.v, sc[top].v);
      for (auto& x : sc) {
        arb_sub(x.v, x.v, shift.v, prec);
        arb_exp(x.v, x.v, prec);
        arb_add(total.v, total.v, x.v, prec);
      }
      for (size_t a = 0; a < keys.size(); ++a) arb_div(alpha[h * N + keys[a]].v, sc[a].v, total.v, prec);
      for (size_t c = 0; c < dv; ++c) {  // y_c = alpha . (column c of V), hidden keys weighing 0
        for (size_t i = 0; i < N; ++i) arb_set(column[i].v, V[i][g * dv + c].v);
        dot(y[h * dv + c], alpha, h * N, column, 0, N, prec);
      }
    }
    val.out[r].resize(static_cast<size_t>(L.d_out));
    for (size_t j = 0; j < val.out[r].size(); ++j) {
      dot(val.out[r][j], Wo, j * H * dv, y, 0, H * dv, prec);
      if (!bo.empty()) arb_add(val.out[r][j].v, val.out[r][j].v, bo[j].v, prec);
    }
    val.head[r] = std::move(y);
    val.weight[r] = std::move(alpha);
  }
  return val;
}

// ---- the checker's exact rules for rational entries of one row
struct Exact {
  std::vector<size_t> keys;
  std::vector<char> equal_weights;          // per head
  std::vector<std::vector<std::vector<Qn>>> v;  // per kv head, per key: V x + b
};

Exact exact_row(const Layer& L, const Seq& s, bool causal, size_t n) {
  Exact e;
  for (size_t i = 0; i < s.x.size(); ++i)
    if (s.visible(causal, n, i)) e.keys.push_back(i);
  e.equal_weights.assign(static_cast<size_t>(L.heads), e.keys.size() == 1);
  Qn root;
  const bool rational_scale = is_square(L.scale_m, root);
  for (int h = 0; h < L.heads && !L.rope && e.keys.size() > 1; ++h) {
    const int g = h / L.group();
    const auto q = affine(L.q, L.bq, static_cast<long>(h) * L.d_k, L.d_k, s.x[n]);
    std::vector<std::pair<Qn, Qn>> key;  // (q . k_i, mask) or (score, 0)
    for (size_t i : e.keys) {
      const auto k = affine(L.k, L.bk, static_cast<long>(g) * L.d_k, L.d_k, s.x[i]);
      Qn qk, m;
      for (int c = 0; c < L.d_k; ++c) fmpq_addmul(qk.v, q[static_cast<size_t>(c)].v, k[static_cast<size_t>(c)].v);
      if (!s.mask.empty()) fmpq_set(m.v, s.mask[n][i].v);
      if (fmpq_is_zero(L.scale_q.v)) fmpq_zero(qk.v);
      if (rational_scale) {  // one rational score
        fmpq_mul(qk.v, qk.v, L.scale_q.v);
        fmpq_mul(qk.v, qk.v, root.v);
        fmpq_add(qk.v, qk.v, m.v);
        fmpq_zero(m.v);
      }
      key.emplace_back(std::move(qk), std::move(m));
    }
    bool same = true;
    for (const auto& x : key) same = same && x.first == key[0].first && x.second == key[0].second;
    e.equal_weights[static_cast<size_t>(h)] = same;
  }
  e.v.resize(static_cast<size_t>(L.kv_heads));
  for (int g = 0; g < L.kv_heads; ++g)
    for (size_t i : e.keys) e.v[static_cast<size_t>(g)].push_back(affine(L.v, L.bv, static_cast<long>(g) * L.d_v, L.d_v, s.x[i]));
  return e;
}

void divide(Qn& x, slong n) {
  fmpz_t z;
  fmpz_init_set_si(z, n);
  fmpq_div_fmpz(x.v, x.v, z);
  fmpz_clear(z);
}

// sum_a alpha_a c_a when rational: all c_a equal, or equal weights.
std::optional<Qn> mix(bool equal_weights, const std::vector<Qn>& c) {
  Qn sum;
  bool same = true;
  for (const auto& x : c) {
    same = same && x == c[0];
    fmpq_add(sum.v, sum.v, x.v);
  }
  if (same) return c[0];
  if (!equal_weights) return std::nullopt;
  divide(sum, static_cast<slong>(c.size()));
  return sum;
}

// kind 0: output j; 1: head output (h, c) at k = h d_v + c; 2: weight (h, i) at k = h N + i.
std::optional<Qn> exact_entry(const Layer& L, const Exact& e, size_t N, int kind, size_t k) {
  if (kind == 2) {
    const size_t h = k / N, i = k % N;
    if (std::find(e.keys.begin(), e.keys.end(), i) == e.keys.end()) return Qn(0);
    if (!e.equal_weights[h]) return std::nullopt;
    Qn w(1);
    divide(w, static_cast<slong>(e.keys.size()));
    return w;
  }
  if (kind == 1) {
    const size_t h = k / static_cast<size_t>(L.d_v), c = k % static_cast<size_t>(L.d_v);
    std::vector<Qn> vals;
    for (const auto& v : e.v[h / static_cast<size_t>(L.group())]) vals.push_back(v[c]);
    return mix(e.equal_weights[h], vals);
  }
  Qn total;
  if (!L.bo.empty()) fmpq_set(total.v, L.bo[k].v);
  const size_t width = static_cast<size_t>(L.heads * L.d_v);
  for (size_t h = 0; h < static_cast<size_t>(L.heads); ++h) {
    std::vector<Qn> c;
    for (const auto& v : e.v[h / static_cast<size_t>(L.group())]) {
      Qn x;
      for (size_t t = 0; t < static_cast<size_t>(L.d_v); ++t) fmpq_addmul(x.v, L.out[k * width + h * static_cast<size_t>(L.d_v) + t].v, v[t].v);
      c.push_back(std::move(x));
    }
    const auto part = mix(e.equal_weights[h], c);
    if (!part) return std::nullopt;
    fmpq_add(total.v, total.v, part->v);
  }
  return total;
}

// ---- one recorded entry [decimal, mid, rad]
struct Entry {
  std::string path, decimal;
  Qn mid, rad, lo, hi;
  arf_t alo, ahi;  // lo and hi as binary floats (dyadic entries with rad > 0)
  bool done = false;
  Entry() {
    arf_init(alo);
    arf_init(ahi);
  }
  ~Entry() {
    arf_clear(alo);
    arf_clear(ahi);
  }
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;
};

bool dyadic(const Qn& x) { return fmpz_is_one(fmpq_denref(x.v)) || static_cast<slong>(fmpz_val2(fmpq_denref(x.v))) + 1 == static_cast<slong>(fmpz_bits(fmpq_denref(x.v))); }

void set_arf(arf_t out, const Qn& x) {  // x dyadic: exact
  const slong k = fmpz_val2(fmpq_denref(x.v));
  fmpz_t e;
  fmpz_init_set_si(e, -k);
  arf_set_fmpz_2exp(out, fmpq_numref(x.v), e);
  fmpz_clear(e);
}

// Reads the entry and checks what the file alone must satisfy: a dyadic ball
// whose every point rounds to the decimal and to one double.
void read_entry(const json& j, const std::string& path, long digits, Entry& e, Tally& t) {
  e.path = path;
  if (!j.is_array() || j.size() != 3 || !j[0].is_string()) bad(path, "expected [decimal, mid, rad]");
  e.decimal = j[0].get<std::string>();
  if (static_cast<long>(e.decimal.size()) > digits + 16) bad(at(path, 0), "a decimal longer than `digits` allows");
  e.mid = golden_io::read_rational(j[1], at(path, 1), kNumber);
  e.rad = golden_io::read_rational(j[2], at(path, 2), kNumber);
  if (fmpq_sgn(e.rad.v) < 0) bad(at(path, 2), "negative radius");
  ++t.entries;
  if (fmpq_is_zero(e.rad.v)) {
    if (decimal_exact(e.mid.v, digits) != e.decimal) t.fail(path, "decimal " + quote_str(e.decimal) + " is not the exact value " + clean(e.mid.str()) + " rounded");
    return;
  }
  if (!dyadic(e.mid) || !dyadic(e.rad)) {
    t.fail(path, "a ball's mid and rad must be dyadic rationals");
    e.done = true;
    return;
  }
  fmpq_sub(e.lo.v, e.mid.v, e.rad.v);
  fmpq_add(e.hi.v, e.mid.v, e.rad.v);
  set_arf(e.alo, e.lo);
  set_arf(e.ahi, e.hi);
  if (decimal_exact(e.lo.v, digits) != e.decimal || decimal_exact(e.hi.v, digits) != e.decimal)
    t.fail(path, "the ball [mid - rad, mid + rad] does not round to " + quote_str(e.decimal) + " at every point");
  else if (arf_get_d(e.alo, ARF_RND_NEAR) != arf_get_d(e.ahi, ARF_RND_NEAR))
    t.fail(path, "the ball [mid - rad, mid + rad] does not round to one double at every point");
  else
    t.checks += 2;
}

// The checker's ball b against the entry: true when settled (passed or failed).
bool settle(Entry& e, const arb_t b, long digits, slong prec, Tally& t) {
  if (fmpq_is_zero(e.rad.v)) return false;  // an exact claim: settled by the exact rules
  arf_t l, u;
  arf_init(l);
  arf_init(u);
  arb_get_lbound_arf(l, b, prec + 64);
  arb_get_ubound_arf(u, b, prec + 64);
  const bool inside = arf_cmp(l, e.alo) >= 0 && arf_cmp(u, e.ahi) <= 0;
  const bool apart = arf_cmp(u, e.alo) < 0 || arf_cmp(l, e.ahi) > 0;
  arf_clear(l);
  arf_clear(u);
  if (apart) {
    t.fail(e.path, "the recorded ball does not contain the value (the checker's enclosure lies outside it)");
    return true;
  }
  const std::string dec = decimal_ball(b, digits, prec);
  if (!dec.empty() && dec != e.decimal) {
    t.fail(e.path, "decimal " + quote_str(e.decimal) + ", the checker's evaluator gives " + quote_str(dec));
    return true;
  }
  if (!inside || dec.empty()) return false;
  t.checks += 2;
  return true;
}

void settle_exact(Entry& e, const Qn& v, long digits, Tally& t) {
  const std::string dec = decimal_exact(v.v, digits);
  if (dec != e.decimal) t.fail(e.path, "decimal " + quote_str(e.decimal) + ", the exact value " + clean(v.str()) + " rounds to " + quote_str(dec));
  else if (fmpq_is_zero(e.rad.v) ? !(e.mid == v) : (fmpq_cmp(v.v, e.lo.v) < 0 || fmpq_cmp(v.v, e.hi.v) > 0))
    t.fail(e.path, "the recorded ball does not contain the exact value " + clean(v.str()));
  else
    t.checks += 2;
  ++t.rational;
}

Seq read_seq(const Layer& L, const json& seq, const std::string& sp, size_t& N) {
  Seq s;
  const json& toks = need_array(seq, sp, "tokens", static_cast<size_t>(limits::max_runs));
  N = toks.size();
  if (N == 0) bad(at(sp, "tokens"), "empty");
  if (need_long(seq, sp, "length", 1, limits::max_runs) != static_cast<long>(N)) bad(at(sp, "length"), "is not the number of tokens");
  for (size_t t = 0; t < N; ++t) s.x.push_back(golden_io::read_qvec(toks[t], at(at(sp, "tokens"), t), L.d, kEntry));
  if (seq.contains("key_padding_mask")) {
    const json& m = need_array(seq, sp, "key_padding_mask", N);
    if (m.size() != N) bad(at(sp, "key_padding_mask"), "expected " + std::to_string(N) + " booleans");
    for (size_t i = 0; i < N; ++i) {
      if (!m[i].is_boolean()) bad(at(at(sp, "key_padding_mask"), i), "not a boolean");
      s.pad.push_back(m[i].get<bool>() ? 1 : 0);
    }
  }
  if (seq.contains("attn_mask")) {
    if (static_cast<long>(N * N) > limits::max_kernel_sequence_entries) bad(at(sp, "attn_mask"), "more entries than the limit");
    const json& m = need_array(seq, sp, "attn_mask", N);
    if (m.size() != N) bad(at(sp, "attn_mask"), "expected " + std::to_string(N) + " rows");
    s.mask.resize(N);
    s.hidden.resize(N);
    for (size_t n = 0; n < N; ++n) {
      const std::string rp = at(at(sp, "attn_mask"), n);
      if (!m[n].is_array() || m[n].size() != N) bad(rp, "expected " + std::to_string(N) + " entries");
      for (size_t i = 0; i < N; ++i) {
        const bool inf = m[n][i] == "-inf";
        s.hidden[n].push_back(inf ? 1 : 0);
        s.mask[n].push_back(inf ? Qn() : golden_io::read_rational(m[n][i], at(rp, i), kEntry));
      }
    }
  }
  if (seq.contains("position_ids")) {
    const json& m = need_array(seq, sp, "position_ids", N);
    if (m.size() != N) bad(at(sp, "position_ids"), "expected " + std::to_string(N) + " positions");
    for (size_t i = 0; i < N; ++i) {
      if (!m[i].is_number_integer() || m[i].get<long>() < 0 || m[i].get<long>() > limits::max_kernel_position)
        bad(at(at(sp, "position_ids"), i), "not a position in [0, " + std::to_string(limits::max_kernel_position) + "]");
      s.pos.push_back(m[i].get<long>());
    }
  }
  return s;
}
}  // namespace

void Tally::fail(const std::string& path, const std::string& what) {
  ++failures_total;
  if (failures.size() < 100) failures.push_back(path + ": " + what);
}

Layer read_layer(const json& j) {
  const std::string p = "layer";
  if (!j.is_object()) bad(p, "not an object");
  Layer L;
  const long dim = limits::max_inner_dim;
  L.d = static_cast<int>(need_long(j, p, "d", 1, dim));
  L.heads = static_cast<int>(need_long(j, p, "heads", 1, dim));
  L.kv_heads = static_cast<int>(need_long(j, p, "kv_heads", 1, L.heads));
  if (L.heads % L.kv_heads != 0) bad(at(p, "kv_heads"), "does not divide heads");
  L.d_k = static_cast<int>(need_long(j, p, "d_k", 1, dim / L.heads));
  L.d_v = static_cast<int>(need_long(j, p, "d_v", 1, dim / L.heads));
  L.d_out = static_cast<int>(need_long(j, p, "d_out", 1, dim));
  const long weights = static_cast<long>(L.heads + L.kv_heads) * L.d_k * L.d + static_cast<long>(L.kv_heads) * L.d_v * L.d +
                       static_cast<long>(L.d_out) * L.heads * L.d_v;
  if (weights > limits::max_file_entries) bad(p, std::to_string(weights) + " weights, more than the limit of " + std::to_string(limits::max_file_entries));
  const json& sc = need(j, p, "scale");
  L.scale_q = golden_io::read_rational(need(sc, at(p, "scale"), "q"), at(at(p, "scale"), "q"), kEntry);
  L.scale_m = golden_io::read_rational(need(sc, at(p, "scale"), "sqrt"), at(at(p, "scale"), "sqrt"), kEntry);
  if (fmpq_sgn(L.scale_m.v) <= 0) bad(at(at(p, "scale"), "sqrt"), "must be positive");
  const json& rope = need(j, p, "rope");
  if (!rope.is_null()) {
    L.rope = true;
    L.theta = golden_io::read_rational(need(rope, at(p, "rope"), "theta"), at(at(p, "rope"), "theta"), kEntry);
    if (fmpq_cmp_si(L.theta.v, 1) <= 0) bad(at(at(p, "rope"), "theta"), "must be more than 1");
    const std::string pairing = need_str(rope, at(p, "rope"), "pairing");
    if (pairing != "half" && pairing != "interleaved") bad(at(at(p, "rope"), "pairing"), "must be \"half\" or \"interleaved\"");
    L.interleaved = pairing == "interleaved";
    if (L.d_k % 2 != 0) bad(at(p, "d_k"), "odd with rope");
  }
  L.q = read_matrix(need(j, p, "q"), at(p, "q"), static_cast<long>(L.heads) * L.d_k, L.d);
  L.k = read_matrix(need(j, p, "k"), at(p, "k"), static_cast<long>(L.kv_heads) * L.d_k, L.d);
  L.v = read_matrix(need(j, p, "v"), at(p, "v"), static_cast<long>(L.kv_heads) * L.d_v, L.d);
  L.out = read_matrix(need(j, p, "out"), at(p, "out"), L.d_out, static_cast<long>(L.heads) * L.d_v);
  L.bq = read_bias(j, "q_bias", static_cast<long>(L.heads) * L.d_k);
  L.bk = read_bias(j, "k_bias", static_cast<long>(L.kv_heads) * L.d_k);
  L.bv = read_bias(j, "v_bias", static_cast<long>(L.kv_heads) * L.d_v);
  L.bo = read_bias(j, "out_bias", L.d_out);
  return L;
}

Options read_options(const json& top, const json& o) {
  Options out;
  out.digits = need_long(top, "", "digits", 1, limits::max_digits);
  out.max_bits = need_long(top, "", "max_bits", limits::min_bits, limits::max_bits);
  auto flag = [&](const char* k) {
    const json& b = need(o, "options", k);
    if (!b.is_boolean()) bad(at("options", k), "not a boolean");
    return b.get<bool>();
  };
  out.causal = flag("causal");
  out.head_outputs = flag("head_outputs");
  out.attention_weights = flag("attention_weights");
  out.positions = need_str(o, "options", "query_positions");
  bool list = !out.positions.empty();
  for (char c : out.positions) list = list && (std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '-');
  if (out.positions != "all" && out.positions != "last" && (!list || out.positions.size() > 40000))
    bad(at("options", "query_positions"), "must be all, last or a comma list of indices");
  for (size_t p = 0; list && out.positions != "all" && p <= out.positions.size();) {  // each item an integer of at most 7 characters
    size_t e = out.positions.find(',', p);
    if (e == std::string::npos) e = out.positions.size();
    const std::string item = out.positions.substr(p, e - p);
    if (item.empty() || item.size() > 7 || item.find('-', 1) != std::string::npos || item == "-") bad(at("options", "query_positions"), "a malformed index");
    p = e + 1;
  }
  return out;
}

namespace {
// The recorded entries of one kind (0 output, 1 head outputs, 2 weights) of a sequence, row by row.
struct Kind {
  int kind;
  const char* key;
  size_t blocks, width;  // an entry row is `blocks` arrays of `width` (blocks 0: one flat array)
  std::deque<Entry> entries;  // row-major: row r's entries at r * size()
  size_t size() const { return (blocks ? blocks : 1) * width; }
};

// The rows of one kind: `usable` rows hold entries (read here), the others must be null.
void read_rows(Kind& k, const json& a, const std::string& path, const std::vector<char>& usable, long digits, Tally& t) {
  for (size_t r = 0; r < a.size(); ++r) {
    if (!usable[r]) continue;
    const std::string rp = at(path, r);
    if (k.blocks && (!a[r].is_array() || a[r].size() != k.blocks)) bad(rp, "expected " + std::to_string(k.blocks) + " heads");
    for (size_t b = 0; b < (k.blocks ? k.blocks : 1); ++b) {
      const json& block = k.blocks ? a[r][b] : a[r];
      const std::string bp = k.blocks ? at(rp, b) : rp;
      if (!block.is_array() || block.size() != k.width) bad(bp, "expected " + std::to_string(k.width) + " entries");
      for (size_t c = 0; c < k.width; ++c) read_entry(block[c], at(bp, c), digits, k.entries.emplace_back(), t);
    }
  }
}
}  // namespace

void check_sequence(const Layer& L, const Options& o, const json& seq, size_t index, Tally& t) {
  const std::string sp = at("sequences", index);
  if (!seq.is_object()) bad(sp, "not an object");
  static const char* known[] = {"index", "length", "tokens", "key_padding_mask", "attn_mask", "position_ids", "query_positions", "bits", "output", "head_outputs", "attention_weights"};
  for (auto it = seq.begin(); it != seq.end(); ++it)
    if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }) == std::end(known))
      bad(at(sp, clean(it.key())), "not a field of a kernel golden sequence");
  if (need_long(seq, sp, "index", 0, limits::max_golden_queries) != static_cast<long>(index)) bad(at(sp, "index"), "sequences must be numbered 0, 1, 2, ... in order");
  size_t N = 0;
  const Seq s = read_seq(L, seq, sp, N);
  std::string why;
  const std::vector<long> rows = resolve_rows(o.positions, static_cast<long>(N), why);
  if (rows.empty()) bad(at(sp, "query_positions"), why);
  const json& qp = need_array(seq, sp, "query_positions", rows.size());
  bool same = qp.size() == rows.size();
  for (size_t r = 0; same && r < rows.size(); ++r) same = qp[r].is_number_integer() && qp[r].get<long>() == rows[r];
  if (!same) bad(at(sp, "query_positions"), "are not the rows options.query_positions gives for " + std::to_string(N) + " tokens");
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t q = 0; q < r; ++q)
      if (rows[q] == rows[r]) bad(at(sp, "query_positions"), "a row asked twice");
  t.max_bits = std::max(t.max_bits, need_long(seq, sp, "bits", 0, o.max_bits));
  std::deque<Kind> kinds;
  kinds.push_back(Kind{0, "output", 0, static_cast<size_t>(L.d_out), {}});
  if (o.head_outputs) kinds.push_back(Kind{1, "head_outputs", static_cast<size_t>(L.heads), static_cast<size_t>(L.d_v), {}});
  if (o.attention_weights) kinds.push_back(Kind{2, "attention_weights", static_cast<size_t>(L.heads), N, {}});
  if (seq.contains("head_outputs") != o.head_outputs || seq.contains("attention_weights") != o.attention_weights)
    bad(sp, "head_outputs and attention_weights are present exactly when the options ask them");
  size_t per_row = 0;
  for (const auto& k : kinds) per_row += k.size();
  if (static_cast<long>(rows.size() * per_row) > limits::max_kernel_sequence_entries)
    bad(sp, std::to_string(rows.size() * per_row) + " entries, more than the limit of " + std::to_string(limits::max_kernel_sequence_entries));
  // A row is null exactly when no key may be attended there; a row that
  // breaks this is a failure and its entries are not read.
  std::vector<char> defined(rows.size(), 0);
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t i = 0; i < N && !defined[r]; ++i) defined[r] = s.visible(o.causal, static_cast<size_t>(rows[r]), i) ? 1 : 0;
  std::vector<const json*> arrays;
  for (const auto& k : kinds) {
    arrays.push_back(&need_array(seq, sp, k.key, rows.size()));
    if (arrays.back()->size() != rows.size()) bad(at(sp, k.key), "expected " + std::to_string(rows.size()) + " rows, one per query position");
  }
  std::vector<char> usable = defined;
  for (size_t r = 0; r < rows.size(); ++r) {
    ++t.rows;
    if (!defined[r]) ++t.undefined_rows;
    for (size_t k = 0; k < kinds.size(); ++k)
      if ((*arrays[k])[r].is_null() == static_cast<bool>(defined[r])) {
        t.fail(at(at(sp, kinds[k].key), r), defined[r] ? "null, but the row has keys to attend" : "has entries, but no key may be attended at this row");
        usable[r] = 0;
      }
  }
  for (size_t k = 0; k < kinds.size(); ++k) read_rows(kinds[k], *arrays[k], at(sp, kinds[k].key), usable, o.digits, t);
  // Re-derive: the checker's balls at rising precision, its exact rules for what they cannot settle.
  std::vector<size_t> slot(rows.size(), 0);  // a defined row's index among the defined rows
  for (size_t r = 0, next = 0; r < rows.size(); ++r)
    if (usable[r]) slot[r] = next++;
  const slong cap = std::min<slong>(2 * o.max_bits, 1L << 17);
  std::vector<char> exact_tried(rows.size(), 0);
  for (slong prec = static_cast<slong>(3.33 * static_cast<double>(o.digits)) + 64;; prec = std::min<slong>(2 * prec, cap)) {
    std::vector<long> ask;
    std::vector<size_t> ask_row;
    for (size_t r = 0; r < rows.size(); ++r) {
      bool open = false;
      for (auto& k : kinds)
        for (size_t c = 0; usable[r] && c < k.size(); ++c) open = open || !k.entries[slot[r] * k.size() + c].done;
      if (open) {
        ask.push_back(rows[r]);
        ask_row.push_back(r);
      }
    }
    if (ask.empty()) break;
    const Values val = evaluate(L, s, ask, o.causal, static_cast<slong>(prec));
    for (size_t a = 0; a < ask.size(); ++a) {
      const size_t r = ask_row[a];
      bool open = false;
      for (auto& k : kinds) {
        const std::vector<Ab>& b = k.kind == 0 ? val.out[a] : k.kind == 1 ? val.head[a] : val.weight[a];
        for (size_t c = 0; c < k.size(); ++c) {
          Entry& e = k.entries[slot[r] * k.size() + c];
          if (!e.done) e.done = settle(e, b[c].v, o.digits, static_cast<slong>(prec), t);
          open = open || !e.done;
        }
      }
      if (!open || exact_tried[r]) continue;
      exact_tried[r] = 1;
      const Exact ex = exact_row(L, s, o.causal, static_cast<size_t>(rows[r]));
      for (auto& k : kinds)
        for (size_t c = 0; c < k.size(); ++c) {
          Entry& e = k.entries[slot[r] * k.size() + c];
          if (e.done) continue;
          const auto v = exact_entry(L, ex, N, k.kind, c);
          if (v) {
            settle_exact(e, *v, o.digits, t);
            e.done = true;
          } else if (fmpq_is_zero(e.rad.v)) {
            t.fail(e.path, "rad 0 claims an exact value, and the checker's rules do not show this entry rational");
            e.done = true;
          }
        }
    }
    if (prec >= cap) {
      for (auto& k : kinds)
        for (auto& e : k.entries)
          if (!e.done) t.fail(e.path, "not decided by the checker's evaluator within " + std::to_string(cap) + " bits");
      break;
    }
  }
}

}  // namespace mhaq::check::kernel
