#include "mhaq/model/kernel_layer.hpp"

#include <algorithm>

#include "mhaq/base/error.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"

namespace mhaq {

namespace {
std::string dims_text(const std::vector<long>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

// The mapped tensor `name` in the role `role`, of rank `rank`, with weights mhaq reads.
const SafetensorsTensor& mapped(const SafetensorsFile& f, const SafetensorsMap& m, const std::string& name, const std::string& role, size_t rank) {
  const SafetensorsTensor& t = f.get(name, m.source + ": " + role);
  const std::string tw = f.name() + ": tensor " + quote_text(name) + " (" + role + ", named in " + m.source + ")";
  if (!t.readable) throw_input(tw + " has dtype " + quote_text(t.dtype_text) + "; weights must be F64, F32, F16 or BF16");
  if (t.shape.size() != rank)
    throw_input(tw + ": expected " + (rank == 2 ? "a matrix (rank 2)" : "a vector (rank 1)") + ", got shape " + dims_text(t.shape));
  for (long s : t.shape)
    if (s == 0) throw_input(tw + ": empty shape " + dims_text(t.shape));
  return t;
}

// A projection as out x in, whatever the layout.
struct Proj {
  const SafetensorsTensor* t = nullptr;
  long out = 0, in = 0;
};
Proj projection(const SafetensorsFile& f, const SafetensorsMap& m, const std::string& name, const std::string& role) {
  const SafetensorsTensor& t = mapped(f, m, name, role, 2);
  return m.out_in ? Proj{&t, t.shape[0], t.shape[1]} : Proj{&t, t.shape[1], t.shape[0]};
}

// Rows [first, first + count) of the projection as a count x in matrix.
QMat rows_of(const std::vector<Rational>& v, const Proj& p, bool out_in, long first, long count) {
  QMat a(static_cast<int>(count), static_cast<int>(p.in));
  for (long r = 0; r < count; ++r)
    for (long c = 0; c < p.in; ++c)
      a(static_cast<int>(r), static_cast<int>(c)) = out_in ? v[static_cast<size_t>((first + r) * p.in + c)] : v[static_cast<size_t>(c * p.out + first + r)];
  return a;
}

void check_dim(const std::string& fn, const std::string& what, long n) {
  if (n > limits::max_inner_dim)
    throw_input(fn + ": " + what + " = " + std::to_string(n) + ", more than the limit max_inner_dim = " + std::to_string(limits::max_inner_dim));
}
}  // namespace

long KernelLayer::weight_entries() const {
  auto n = [](const QMat& a) { return static_cast<long>(a.rows()) * a.cols(); };
  return n(Wq) + n(Wk) + n(Wv) + n(Wo) + static_cast<long>(bq.size() + bk.size() + bv.size() + bo.size());
}

KernelLayer safetensors_to_kernel(const SafetensorsFile& f, const SafetensorsMap& m) {
  const std::string fn = f.name();
  const long H = m.heads, G = m.kv_heads > 0 ? m.kv_heads : m.heads;
  // Shapes first, from the header alone.
  Proj pin, pq, pk, pv;
  long d = 0, d_k = 0, d_v = 0;
  if (!m.in_proj.empty()) {
    pin = projection(f, m, m.in_proj, "in_proj");
    if (pin.out % (3 * H) != 0)
      throw_input(fn + ": tensor " + quote_text(m.in_proj) + " (in_proj): " + std::to_string(pin.out) + " outputs are not three equal blocks q, k, v of " +
                  std::to_string(H) + " heads (" + m.source + ")");
    d = pin.in;
    d_k = d_v = pin.out / (3 * H);
  } else {
    pq = projection(f, m, m.q, "q");
    pk = projection(f, m, m.k, "k");
    pv = projection(f, m, m.v, "v");
    d = pq.in;
    for (const auto& [p, role] : {std::pair{pk, "k"}, std::pair{pv, "v"}})
      if (p.in != d)
        throw_input(fn + ": tensor " + quote_text(role == std::string("k") ? m.k : m.v) + " (" + role + ") has in dimension " + std::to_string(p.in) +
                    ", q has " + std::to_string(d) + " (" + m.source + ", layout " + (m.out_in ? "out_in" : "in_out") + ")");
    if (pq.out % H != 0 || pk.out % G != 0 || pv.out % G != 0)
      throw_input(fn + ": q has " + std::to_string(pq.out) + " outputs for " + std::to_string(H) + " heads, k " + std::to_string(pk.out) + " and v " +
                  std::to_string(pv.out) + " for " + std::to_string(G) + " key-value heads: the heads must divide them (" + m.source + ")");
    d_k = pq.out / H;
    d_v = pv.out / G;
    if (pk.out / G != d_k)
      throw_input(fn + ": q gives d_k = " + std::to_string(d_k) + " per head, k gives " + std::to_string(pk.out / G) + " per key-value head (" + m.source + ")");
  }
  check_dim(fn, "the token dimension d", d);
  check_dim(fn, "H d_k", H * d_k);
  check_dim(fn, "H d_v", H * d_v);
  const Proj po = projection(f, m, m.out, "out");
  if (po.in != H * d_v)
    throw_input(fn + ": tensor " + quote_text(m.out) + " (out) has in dimension " + std::to_string(po.in) + "; it must be H d_v = " + std::to_string(H * d_v) +
                " (" + m.source + ", layout " + (m.out_in ? "out_in" : "in_out") + ")");
  check_dim(fn, "d_out", po.out);
  if (m.rope && d_k % 2 != 0) throw_input(m.source + ": rope rotates pairs of entries, and d_k = " + std::to_string(d_k) + " is odd");
  struct Bias {
    const std::string* name;
    const char* role;
    long length;
  };
  const std::vector<Bias> biases{{&m.q_bias, "q_bias", H * d_k}, {&m.k_bias, "k_bias", G * d_k},    {&m.v_bias, "v_bias", G * d_v},
                                 {&m.in_proj_bias, "in_proj_bias", 3 * H * d_k}, {&m.out_bias, "out_bias", po.out}};
  long entries = po.out * po.in + (pin.t ? pin.out * pin.in : (pq.out + pk.out + pv.out) * d);
  for (const auto& b : biases) {
    if (b.name->empty()) continue;
    const SafetensorsTensor& t = mapped(f, m, *b.name, b.role, 1);
    if (t.shape[0] != b.length)
      throw_input(fn + ": tensor " + quote_text(*b.name) + " (" + b.role + ") has " + std::to_string(t.shape[0]) + " entries; expected " + std::to_string(b.length) +
                  " (" + m.source + ")");
    entries += b.length;
  }
  if (entries > limits::max_file_entries)
    throw_input(fn + ": the mapped layer has " + std::to_string(entries) + " weights, more than the limit of " + std::to_string(limits::max_file_entries) +
                " (max_file_entries)");
  (void)unnamed_biases(f, m);  // a nonzero bias the map leaves out is refused

  KernelLayer L;
  L.d = static_cast<int>(d);
  L.heads = static_cast<int>(H);
  L.kv_heads = static_cast<int>(G);
  L.d_k = static_cast<int>(d_k);
  L.d_v = static_cast<int>(d_v);
  L.d_out = static_cast<int>(po.out);
  L.scale = map_scale(m.scale_text, d_k, m.source);
  L.scale_text = m.scale_text;
  L.rope = m.rope;
  L.rope_theta = m.rope_theta;
  L.rope_interleaved = m.rope_interleaved;
  std::vector<std::string> dtypes;
  auto note = [&](const SafetensorsTensor& t) {
    if (std::find(dtypes.begin(), dtypes.end(), t.dtype_text) == dtypes.end()) dtypes.push_back(t.dtype_text);
  };
  if (pin.t) {
    const std::vector<Rational> all = f.values(*pin.t);
    note(*pin.t);
    for (size_t b = 0; b < 3; ++b) {
      QMat block = rows_of(all, pin, m.out_in, static_cast<long>(b) * H * d_k, H * d_k);
      (m.split[b] == 'q' ? L.Wq : m.split[b] == 'k' ? L.Wk : L.Wv) = std::move(block);
    }
  } else {
    for (auto [p, W] : {std::pair{&pq, &L.Wq}, std::pair{&pk, &L.Wk}, std::pair{&pv, &L.Wv}}) {
      *W = rows_of(f.values(*p->t), *p, m.out_in, 0, p->out);
      note(*p->t);
    }
  }
  L.Wo = rows_of(f.values(*po.t), po, m.out_in, 0, po.out);
  note(*po.t);
  for (const auto& b : biases) {
    if (b.name->empty()) continue;
    const SafetensorsTensor& t = *f.find(*b.name);
    note(t);
    std::vector<Rational> v = f.values(t);
    if (std::string(b.role) == "in_proj_bias") {
      for (size_t blk = 0; blk < 3; ++blk) {
        QVec part(v.begin() + static_cast<long>(blk) * H * d_k, v.begin() + static_cast<long>(blk + 1) * H * d_k);
        (m.split[blk] == 'q' ? L.bq : m.split[blk] == 'k' ? L.bk : L.bv) = std::move(part);
      }
    } else {
      QVec& dst = std::string(b.role) == "q_bias" ? L.bq : std::string(b.role) == "k_bias" ? L.bk : std::string(b.role) == "v_bias" ? L.bv : L.bo;
      dst.assign(v.begin(), v.end());
    }
  }
  L.weights_dtype = dtypes.size() == 1 ? dtypes[0] : "mixed";
  return L;
}

Rational round_to_dtype(const Rational& x, StDtype t, bool& ok) {
  ok = true;
  if (x.is_zero()) return x;
  long p = 0, emin = 0, emax = 0;  // significand bits, exponent range of normal numbers
  switch (t) {
    case StDtype::f64: p = 53, emin = -1022, emax = 1023; break;
    case StDtype::f32: p = 24, emin = -126, emax = 127; break;
    case StDtype::f16: p = 11, emin = -14, emax = 15; break;
    case StDtype::bf16: p = 8, emin = -126, emax = 127; break;
  }
  Rational a = x.sign() < 0 ? -x : x;
  // e = floor(log2 a)
  long e = static_cast<long>(fmpz_bits(fmpq_numref(a.raw()))) - static_cast<long>(fmpz_bits(fmpq_denref(a.raw())));
  auto pow2 = [](long k) {
    Rational r(1);
    if (k >= 0) fmpz_mul_2exp(fmpq_numref(r.raw()), fmpq_numref(r.raw()), static_cast<ulong>(k));
    else fmpz_mul_2exp(fmpq_denref(r.raw()), fmpq_denref(r.raw()), static_cast<ulong>(-k));
    return r;
  };
  while (a < pow2(e)) --e;
  while (!(a < pow2(e + 1))) ++e;
  const long k = p - 1 - std::max(e, emin);  // a 2^k, rounded to an integer, counts quanta
  const Rational y = a * pow2(k);
  fmpz_t n, r2;
  fmpz_init(n);
  fmpz_init(r2);
  fmpz_fdiv_qr(n, r2, fmpq_numref(y.raw()), fmpq_denref(y.raw()));
  fmpz_mul_2exp(r2, r2, 1);
  const int c = fmpz_cmp(r2, fmpq_denref(y.raw()));
  if (c > 0 || (c == 0 && fmpz_is_odd(n))) fmpz_add_ui(n, n, 1);
  Rational out;
  fmpz_set(fmpq_numref(out.raw()), n);
  fmpz_clear(n);
  fmpz_clear(r2);
  out *= pow2(-k);
  if (!(out < pow2(emax + 1))) ok = false;
  return x.sign() < 0 ? -out : out;
}

bool kernel_key_allowed(const KernelSequence& s, bool causal, size_t n, size_t i) {
  if (causal && i > n) return false;
  if (!s.key_padding.empty() && s.key_padding[i]) return false;
  if (!s.mask.empty() && s.mask[n][i].neg_inf) return false;
  return true;
}

}  // namespace mhaq
