// The placed design's last columns refined by earlier rounds' pairs
// (docs/math/designs.md#placed, "Combined columns"): the earlier pairs of a
// final token that fit, labelled by the last round's heads, join its d
// pairs in a weighted least-squares solve of W_h b_j.
#include "placed_internal.hpp"

namespace mhaq {

using namespace placed_detail;

bool placed_column_lsq(const std::vector<PlacedColumnRow>& rows, int d, std::vector<Mpfr>& x, std::vector<double>& ex) {
  if (static_cast<int>(rows.size()) < d) return false;
  for (const PlacedColumnRow& r : rows)
    if (static_cast<int>(r.delta.size()) != d || !(r.err > 0) || !std::isfinite(r.err)) return false;
  const Field<Mpfr> F;
  Mat<Mpfr> N(d, d), rhs(d, 1), y;
  DMat Nd(d, std::vector<double>(d, 0.0));
  std::vector<std::vector<double>> dd;
  std::vector<double> ws;
  for (const PlacedColumnRow& row : rows) {
    const double w = 1 / (row.typ > 0 && std::isfinite(row.typ) ? row.typ : row.err);
    if (!(w > 0) || !std::isfinite(w * w)) return false;
    ws.push_back(w);
    const Mpfr w2 = md(w * w);
    std::vector<double> dv = to_doubles(row.delta);
    for (int a = 0; a < d; ++a) {
      const Mpfr wa = w2 * F.from(row.delta[a]);
      rhs(a, 0) += wa * row.l;
      for (int b = 0; b < d; ++b) {
        N(a, b) += wa * F.from(row.delta[b]);
        Nd[a][b] += w * w * dv[a] * dv[b];
      }
    }
    dd.push_back(std::move(dv));
  }
  if (F.solve(y, N, rhs) != Truth::yes) return false;
  const DMat Ninv = dinverse(Nd);
  if (Ninv.empty()) return false;
  x.assign(d, Mpfr(0L));
  ex.assign(d, 0.0);
  for (int a = 0; a < d; ++a) x[a] = y(a, 0);
  // x = N^{-1} A^T S l: row k's weight in x_a is (N^{-1} delta_k)_a w_k^2,
  // so an error err_k moves x_a by at most |(N^{-1} delta_k)_a| w_k^2 err_k
  for (size_t k = 0; k < rows.size(); ++k)
    for (int a = 0; a < d; ++a) {
      double g = 0;
      for (int b = 0; b < d; ++b) g += Ninv[a][b] * dd[k][b];
      ex[a] += std::fabs(g) * ws[k] * ws[k] * rows[k].err;
    }
  return true;
}

std::vector<int> placed_match_pair(const std::vector<double>& delta, const std::vector<double>& l, const std::vector<double>& el, const std::vector<double>& c,
                                   const std::vector<double>& ec, double resid, const std::vector<std::vector<double>>& col,
                                   const std::vector<std::vector<double>>& ecol, const std::vector<std::vector<double>>& v,
                                   const std::vector<std::vector<double>>& ev) {
  const int H = static_cast<int>(col.size()), d = static_cast<int>(delta.size());
  if (!(resid <= kResidualLimit) || static_cast<int>(l.size()) != H || static_cast<int>(c.size()) != H) return {};
  for (int q = 0; q < H; ++q)
    if (!std::isfinite(l[q]) || !std::isfinite(c[q]) || !std::isfinite(el[q]) || !std::isfinite(ec[q])) return {};
  std::vector<int> pick(H, -1);
  std::vector<char> taken(H, 0);
  for (int h = 0; h < H; ++h) {
    double pl = 0, epl = 0, pc = 0, epc = 0;  // the predicted log r and residue, with their first-order errors
    for (int r = 0; r < d; ++r) {
      pl += delta[r] * col[h][r];
      epl += std::fabs(delta[r]) * ecol[h][r];
      pc -= delta[r] * v[h][r];
      epc += std::fabs(delta[r]) * ev[h][r];
    }
    for (int q = 0; q < H; ++q) {
      const bool near = std::fabs(l[q] - pl) <= kResidualLimit * (el[q] + epl) && std::fabs(c[q] - pc) <= kResidualLimit * (ec[q] + epc);
      if (!near) continue;
      if (pick[h] >= 0 || taken[q]) return {};  // two poles for one head, or one pole for two heads
      pick[h] = q;
      taken[q] = 1;
    }
    if (pick[h] < 0) return {};
  }
  return pick;
}

}  // namespace mhaq

namespace mhaq::placed_detail {

double head_from_columns(const Mat<Mpfr>& Wb, const DMat& eWb, const Mat<Mpfr>& Binv, Mat<Mpfr>& W, std::vector<Mpfr>& c_out) {
  const int d = Wb.rows(), n = Wb.cols();
  double norm2 = 0, err2 = 0;  // [W_h c_h] measured as W_h (max_rel_error's metric)
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < n; ++c) {
      Mpfr s(0L);
      double e = 0;
      for (int t = 0; t < n; ++t) {
        s += Wb(r, t) * Binv(t, c);
        e += eWb[r][t] * std::fabs(Binv(t, c).to_double());
      }
      norm2 += s.to_double() * s.to_double();
      err2 += e * e;
      if (c < d) W(r, c) = std::move(s);
      else c_out[r] = std::move(s);
    }
  return std::sqrt(err2 / std::max(norm2, 1e-300));
}

int combine_columns(const Mat<Mpfr>& Binv, const std::vector<std::vector<std::vector<PlacedColumnRow>>>& last, const std::vector<KeptPair>& kept,
                    const std::vector<HeadParts>& parts, PlacedResult& out) {
  const int H = static_cast<int>(parts.size());
  if (kept.empty() || H == 0 || static_cast<int>(out.heads.size()) != H) return 0;
  const int d = parts[0].Wb.rows(), n = parts[0].Wb.cols();
  std::vector<std::vector<std::vector<PlacedColumnRow>>> rows = last;
  std::vector<char> gained(n, 0);
  int combined = 0;
  std::vector<std::vector<double>> v(H), ev(H);
  for (int h = 0; h < H; ++h) {
    for (int r = 0; r < d; ++r) v[h].push_back(out.heads[h].v[r].to_double());
    ev[h] = parts[h].ev;
  }
  for (const KeptPair& kp : kept) {
    std::vector<std::vector<double>> col(H, std::vector<double>(d)), ecol(H, std::vector<double>(d));
    for (int h = 0; h < H; ++h)
      for (int r = 0; r < d; ++r) {
        col[h][r] = parts[h].Wb(r, kp.j).to_double();
        ecol[h][r] = parts[h].eWb[r][kp.j];
      }
    const PairObs o = observe(to_doubles(kp.delta), kp.j, kp.fit);
    const std::vector<int> q = placed_match_pair(o.delta, o.l, o.el, o.c, o.ec, o.resid, col, ecol, v, ev);
    if (q.empty()) continue;
    for (int h = 0; h < H; ++h) rows[h][kp.j].push_back(PlacedColumnRow{kp.delta, kp.fit.l[q[h]], kp.fit.err_l[q[h]], typical_l(kp.fit, q[h])});
    gained[kp.j] = 1;
    ++combined;
  }
  if (combined == 0) return 0;
  double est = 0;
  for (int h = 0; h < H; ++h) {
    Mat<Mpfr> Wb = parts[h].Wb;
    DMat eWb = parts[h].eWb;
    for (int j = 0; j < n; ++j) {
      std::vector<Mpfr> x;
      std::vector<double> ex;
      if (!gained[j] || !placed_column_lsq(rows[h][j], d, x, ex)) continue;
      for (int r = 0; r < d; ++r) {
        Wb(r, j) = x[r];
        eWb[r][j] = ex[r];
      }
    }
    // [W_h (c_h)] = [W_h b_j (+ c_h)]_j B^{-1} (A^{-1} with biases), as the last round's solve
    LearnedHead<Mpfr>& hd = out.heads[h];
    const double rel = head_from_columns(Wb, eWb, Binv, hd.W, hd.c) + parts[h].v_rel;
    est = std::isnan(rel) || std::isnan(est) ? std::nan("") : std::max(est, rel);
  }
  out.estimate_log2 = est > 0 && std::isfinite(est) ? std::log2(est) : std::nan("");
  return combined;
}

}  // namespace mhaq::placed_detail
