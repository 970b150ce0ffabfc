// The placed design's links at the first final token (docs/math/designs.md#placed,
// proofs/37 (4)): pairs whose offset u delta_1 + w delta_i lies exactly in the
// span of two of b_1's offsets, so that ball mode's labelling search can test
// them as soon as pick_1 and pick_i are known.
#include "placed_internal.hpp"

namespace mhaq::placed_detail {

namespace {

// The weights (u, w) a link may use: u in {1, 2, 3} / 4, w in {+-1, +-2,
// +-3} / 4, so that the link's offset is exactly u delta_1 + w delta_i (b_1's
// offsets are on the grid 4/den, the link on the tokens' grid 1/den) and its
// lambda exactly u e_1 + w e_i.
const std::vector<std::pair<Rational, Rational>>& link_weights() {
  static const std::vector<std::pair<Rational, Rational>> ws = [] {
    std::vector<std::pair<Rational, Rational>> out;
    for (long a = 1; a <= 3; ++a)
      for (long b : {1L, -1L, 2L, -2L, 3L, -3L}) out.emplace_back(Rational(a, 4UL), Rational(b, 4UL));
    return out;
  }();
  return ws;
}

// How well the predicted poles l (log r) and residues c of a link suit a fit:
// the least gap between two poles, less 100 when a pole leaves [-window,
// window] and 50 when a residue is below 1/20 of their mean size (a residue
// near zero hides its head).
double link_score(const std::vector<double>& l, const std::vector<double>& c, double window) {
  std::vector<double> s = l;
  std::sort(s.begin(), s.end());
  double gap = s.size() > 1 ? INFINITY : 0, mean = 0, least = INFINITY;
  for (size_t h = 1; h < s.size(); ++h) gap = std::min(gap, s[h] - s[h - 1]);
  if (s.front() < -window || s.back() > window) gap -= 100;
  for (double x : c) {
    mean += std::fabs(x) / static_cast<double>(c.size());
    least = std::min(least, std::fabs(x));
  }
  if (!(least >= mean / 20)) gap -= 50;
  return gap;
}

}  // namespace

template <class T>
std::vector<PlacedPair> ask_links(Asker<T>& answer, const Field<Mpfr>& F, const QVec& b1, const std::vector<QVec>& D1, const std::vector<std::vector<double>>& l1,
                                  const std::vector<std::vector<double>>& c1, const std::vector<Counts>& grid, const Ball& f0b, const PlacedOptions& opt, double window) {
  const int d = static_cast<int>(D1.size()), H = opt.H;
  const std::vector<Mpfr> K = ratios(grid);
  const Mpfr f0 = Asker<T>::midpoint(f0b);
  std::vector<PlacedPair> out;
  for (int i = 1; i < d; ++i) {
    // the weights whose predicted poles (linear in the offset) are best
    // separated, of those whose token lies within the oracle's max_entry
    size_t best = 0;
    double bs = -INFINITY;
    std::vector<double> bl;
    bool any = false;
    for (size_t k = 0; k < link_weights().size(); ++k) {
      if (opt.max_entry) {
        QVec dk(d);
        for (int r = 0; r < d; ++r) dk[r] = link_weights()[k].first * D1[0][r] + link_weights()[k].second * D1[i][r];
        if (!within_entry(b1, dk, opt.max_entry)) continue;
      }
      any = true;
      const double u = link_weights()[k].first.approx_double(), w = link_weights()[k].second.approx_double();
      std::vector<double> l(H), c(H);
      for (int h = 0; h < H; ++h) {
        l[h] = u * l1[h][0] + w * l1[h][i];
        c[h] = u * c1[h][0] + w * c1[h][i];
      }
      const double s = link_score(l, c, window);
      if (s > bs || (opt.max_entry && bl.empty())) bs = s, best = k, bl = l;  // with a limit, a fitting one even if every score is NaN
    }
    if (!any) throw_unable("placed design: no link at b_1 with offsets 1 and " + std::to_string(i + 1) + " lies within the oracle's max_entry " + opt.max_entry->str());
    const auto& [u, w] = link_weights()[best];
    QVec delta(d), a(d);
    for (int r = 0; r < d; ++r) {
      delta[r] = u * D1[0][r] + w * D1[i][r];
      a[r] = b1[r] + delta[r];
    }
    std::vector<Ball> balls{f0b};
    const std::vector<Mpfr> f = answer.pair(a, b1, grid, f0, &balls);
    GridFit g = fit_on_grid(F, K, f, bl, opt.answer_bits, opt.answer_abs);
    if (g.max_resid > kResidualLimit) {  // the predicted start led astray: free starts
      GridFit g2 = fit_free(F, K, f, H, opt.answer_bits, opt.answer_abs);
      if (g2.cost < g.cost) g = std::move(g2);
    }
    out.push_back(PlacedPair{i, 0, delta, std::move(balls), g.P, g.c, g.l});
  }
  return out;
}

template std::vector<PlacedPair> ask_links<Ball>(Asker<Ball>&, const Field<Mpfr>&, const QVec&, const std::vector<QVec>&, const std::vector<std::vector<double>>&,
                                                 const std::vector<std::vector<double>>&, const std::vector<Counts>&, const Ball&, const PlacedOptions&, double);
template std::vector<PlacedPair> ask_links<Mpfr>(Asker<Mpfr>&, const Field<Mpfr>&, const QVec&, const std::vector<QVec>&, const std::vector<std::vector<double>>&,
                                                 const std::vector<std::vector<double>>&, const std::vector<Counts>&, const Ball&, const PlacedOptions&, double);
template std::vector<PlacedPair> ask_links<double>(Asker<double>&, const Field<Mpfr>&, const QVec&, const std::vector<QVec>&, const std::vector<std::vector<double>>&,
                                                   const std::vector<std::vector<double>>&, const std::vector<Counts>&, const Ball&, const PlacedOptions&, double);

}  // namespace mhaq::placed_detail
