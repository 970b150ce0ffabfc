#include "mhaq/stages/2-schedule/schedule.hpp"

#include <algorithm>

#include "mhaq/base/error.hpp"

namespace mhaq {

const char* schedule_name(Schedule s) {
  switch (s) {
    case Schedule::paper: return "paper";
    case Schedule::lean: return "lean";
    case Schedule::compact: return "compact";
    case Schedule::rank: return "rank";
  }
  return "?";
}
Schedule parse_schedule(const std::string& s) {
  if (s == "paper") return Schedule::paper;
  if (s == "lean") return Schedule::lean;
  if (s == "compact") return Schedule::compact;
  if (s == "rank") return Schedule::rank;
  throw Error(ErrorKind::usage, "unknown schedule \"" + s + "\" (expected paper, lean, compact or rank)");
}

const char* pair_kind_name(PairKind k) { return k == PairKind::base ? "base" : k == PairKind::within ? "within-link" : "across-link"; }
std::string pair_name(const PairSpec& p) {
  return std::string(pair_kind_name(p.kind)) + " pair (i=" + std::to_string(p.i + 1) + ", j=" + std::to_string(p.j + 1) + ")";
}

long paper_query_bound(long d, long H) { return 4 * H * d * d - 2 * H + 1; }
long lean_query_count(long d, long H) { return 1 + 2 * H * (d * d + d - 1); }
int compact_samples(int H) { return H == 1 ? 1 : H == 2 ? 3 : 2 * H - 2; }
long compact_query_count(long d, long H) {
  return 1 + 2 * H * d + (H >= 2 ? d - 1 : 0) + static_cast<long>(compact_samples(static_cast<int>(H))) * d * (d - 1);
}
long rank_pair_count(long d, long R) { return 2 * d * R - R * R + 2 * d - R - 1; }
long rank_query_count(long d, long H, long R) { return 1 + 2 * H * rank_pair_count(d, R); }
long rank_parameter_floor(long d, long H, long R) { return H * (2 * d * R - R * R + d); }
long schedule_query_count(Schedule s, long d, long H, long rank, bool bias) {
  if (bias) {  // one more final token: its d base pairs, within links and across link
    switch (s) {
      case Schedule::paper: return 4 * H * d * d + 4 * H * d - 2 * H + 1;
      case Schedule::lean: return 1 + 2 * H * (d * d + 2 * d - 1);
      case Schedule::compact: return compact_query_count(d, H) + static_cast<long>(compact_samples(static_cast<int>(H))) * d;
      case Schedule::rank: throw Error(ErrorKind::usage, "the rank schedule takes no biases");
    }
  }
  switch (s) {
    case Schedule::paper: return paper_query_bound(d, H);
    case Schedule::lean: return lean_query_count(d, H);
    case Schedule::compact: return compact_query_count(d, H);
    case Schedule::rank: return rank_query_count(d, H, rank);
  }
  return 0;
}

QVec Plan::across_token(int j) const {
  return bias ? B.col(0) + B.col(0) - B.col(j) : B.col(0) + B.col(j);
}

namespace {
void index_queries(Plan& p) {
  p.start.clear();
  long next = 1;  // queries()[0] is [b_1]
  for (const PairSpec& s : p.pairs) {
    p.start.push_back(next);
    next += s.samples - 1;
  }
}

// Compact (proofs/18, 19): the pairs (i, 1) in full, one predicted within link
// per offset i >= 2 at b_1, and every (i, j >= 2) with its residues known.
Plan compact_plan(Plan p) {
  const int d = p.d, H = p.H;
  if (H > compact_max_heads)
    throw Error(ErrorKind::usage, "the compact schedule takes H (or H0) <= " + std::to_string(compact_max_heads) +
                                      ": its links try all H! assignments of heads");
  const int s = compact_samples(H) + 1;
  for (int j = 0; j < p.finals(); ++j)
    for (int i = 0; i < d; ++i) p.pairs.push_back({PairKind::base, i, j, p.Delta.col(i), p.B.col(j), j == 0 ? p.samples : s});
  if (H >= 2)
    for (int i = 1; i < d; ++i) {
      p.labelling.push_back({p.base_index(i, 0), p.root(), static_cast<int>(p.pairs.size()), Relation::predicted, std::nullopt});
      p.pairs.push_back({PairKind::within, i, 0, p.Delta.col(0) + p.Delta.col(i), p.B.col(0), 2});
    }
  else
    for (int i = 1; i < d; ++i) p.labelling.push_back({p.base_index(i, 0), p.root(), -1, Relation::predicted, std::nullopt});
  for (int j = 1; j < p.finals(); ++j)
    for (int i = 0; i < d; ++i)
      p.labelling.push_back({p.base_index(i, j), p.base_index(i, 0), -1, Relation::poles,
                             PairSpec{PairKind::across, i, j, p.Delta.col(i), p.across_token(j), 2}});
  index_queries(p);
  return p;
}

// Rank (docs/math/low-rank.md, proofs/41): the rows i < R and the columns
// j <= R of the log-pole matrix (the columns j < R and the rows i < R are a
// skeleton of every head of rank at most R, column R checks the bound), the
// within links at b_1, and lean's residue labelling with its fallback links.
Plan rank_plan(Plan p) {
  const int d = p.d, R = p.rank;
  if (R < 1 || R > d) throw Error(ErrorKind::usage, "the rank bound must be between 1 and d = " + std::to_string(d));
  p.base_at.assign(static_cast<size_t>(d) * d, -1);
  for (int j = 0; j < d; ++j)
    for (int i = 0; i < d; ++i)
      if (i < R || j <= R) {
        p.base_at[static_cast<size_t>(j) * d + i] = static_cast<int>(p.pairs.size());
        p.pairs.push_back({PairKind::base, i, j, p.Delta.col(i), p.B.col(j), p.samples});
      }
  p.base_pairs = static_cast<int>(p.pairs.size());
  for (int i = 1; i < d; ++i) {
    p.labelling.push_back({p.base_index(i, 0), p.root(), static_cast<int>(p.pairs.size()), Relation::within, std::nullopt});
    p.pairs.push_back({PairKind::within, i, 0, p.Delta.col(0) + p.Delta.col(i), p.B.col(0), p.samples});
  }
  for (int j = 1; j < d; ++j)
    for (int i = 0; i < d; ++i)
      if (p.asked(i, j))
        p.labelling.push_back({p.base_index(i, j), p.base_index(i, 0), -1, Relation::residue,
                               PairSpec{PairKind::across, i, j, p.Delta.col(i), p.B.col(0) + p.B.col(j), p.samples}});
  index_queries(p);
  return p;
}
}  // namespace

Plan make_plan(Schedule s, const QMat& B, const QMat& Delta, int H, int samples, int rank) {
  if (samples != 0 && samples < 2 * H + 1)
    throw Error(ErrorKind::usage, "samples per pair must be at least 2H+1 = " + std::to_string(2 * H + 1));
  Plan p;
  p.schedule = s;
  p.d = B.rows();
  p.H = H;
  p.samples = samples == 0 ? 2 * H + 1 : samples;
  p.B = B;
  p.Delta = Delta;
  p.bias = B.cols() == B.rows() + 1;
  const int d = p.d, finals = p.finals();
  p.first = {Run{B.col(0), 1}};
  if (s == Schedule::compact) {
    if (samples != 0) throw Error(ErrorKind::usage, "the compact schedule does not oversample (--samples-per-pair)");
    return compact_plan(std::move(p));
  }
  if (s == Schedule::rank) {
    if (p.bias) throw Error(ErrorKind::usage, "the rank schedule takes no biases (learn a model with biases with --schedule paper, lean or compact)");
    p.rank = rank;
    return rank_plan(std::move(p));
  }
  if (rank != 0) throw Error(ErrorKind::usage, "a rank bound needs the rank schedule");
  for (int j = 0; j < finals; ++j)
    for (int i = 0; i < d; ++i) p.pairs.push_back({PairKind::base, i, j, Delta.col(i), B.col(j), p.samples});
  const int within_tokens = s == Schedule::paper ? finals : 1;
  std::vector<std::vector<int>> within(finals, std::vector<int>(d, -1));  // [j][i]
  for (int j = 0; j < within_tokens; ++j)
    for (int i = 1; i < d; ++i) {
      within[j][i] = static_cast<int>(p.pairs.size());
      p.pairs.push_back({PairKind::within, i, j, Delta.col(0) + Delta.col(i), B.col(j), p.samples});
    }
  if (s == Schedule::paper) {
    // across links first: (1, j) from (1, 1); then within links at every b_j
    for (int j = 1; j < finals; ++j) {
      p.labelling.push_back({p.base_index(0, j), p.root(), static_cast<int>(p.pairs.size()), p.across(), std::nullopt});
      p.pairs.push_back({PairKind::across, 0, j, Delta.col(0), p.across_token(j), p.samples});
    }
    for (int j = 0; j < finals; ++j)
      for (int i = 1; i < d; ++i) p.labelling.push_back({p.base_index(i, j), p.base_index(0, j), within[j][i], Relation::within, std::nullopt});
  } else {
    for (int i = 1; i < d; ++i) p.labelling.push_back({p.base_index(i, 0), p.root(), within[0][i], Relation::within, std::nullopt});
    for (int j = 1; j < finals; ++j)
      for (int i = 0; i < d; ++i)
        p.labelling.push_back({p.base_index(i, j), p.base_index(i, 0), -1, Relation::residue,
                               PairSpec{PairKind::across, i, j, Delta.col(i), p.across_token(j), p.samples}});
  }
  index_queries(p);
  return p;
}

std::vector<Query> Plan::pair_queries(const PairSpec& pr) const {
  std::vector<Query> out;
  const QVec a = pr.final_token + pr.offset;
  out.reserve(static_cast<size_t>(std::max(0L, static_cast<long>(pr.samples) - pr.first_k)));
  for (long k = pr.first_k; k < pr.samples; ++k) {
    // built in place: a braced list would copy both tokens once more
    Query& q = out.emplace_back();
    q.reserve(2);
    q.push_back(Run{a, k});
    q.push_back(Run{pr.final_token, 1});
  }
  return out;
}

std::vector<Query> Plan::queries() const {
  std::vector<Query> out;
  out.reserve(static_cast<size_t>(query_count()));
  out.push_back(first);
  for (const auto& pr : pairs)
    for (auto& q : pair_queries(pr)) out.push_back(std::move(q));
  return out;
}

QMat with_affine_final(Rng& rng, const QMat& B, const TokenSpec& spec) {
  const int d = B.rows();
  QMat out(d, d + 1), A(d + 1, d + 1);
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c) A(r, c) = out(r, c) = B(r, c);
  for (int c = 0; c <= d; ++c) A(d, c) = Rational(1);
  for (int attempt = 0;; ++attempt) {
    if (attempt == 64) throw_degenerate("64 consecutive draws of the final token b_" + std::to_string(d + 1) + " affinely dependent on B; token range too small");
    for (int r = 0; r < d; ++r) A(r, d) = out(r, d) = Rational(rng.uniform_int(-spec.range, spec.range), static_cast<unsigned long>(spec.den));
    // decided exactly in Q, as the draws of B and Delta
    if (!det(A).is_zero()) return out;
  }
}

Draws draw_tokens(Rng& rng, int d, const TokenSpec& spec) {
  if (spec.range < 1 || spec.den < 1) throw Error(ErrorKind::usage, "token range and denominator must be positive");
  Draws out;
  auto draw = [&] {
    QMat M(d, d);
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c) M(r, c) = Rational(rng.uniform_int(-spec.range, spec.range), static_cast<unsigned long>(spec.den));
    return M;
  };
  for (int attempt = 0;; ++attempt) {
    if (attempt == 64) throw_degenerate("64 consecutive singular draws of B/Delta; token range too small");
    out.B = draw();
    out.Delta = draw();
    // Decided exactly in Q in every arithmetic: these are the learner's own choices.
    if (!det(out.B).is_zero() && !det(out.Delta).is_zero()) break;
    ++out.redraws;
  }
  return out;
}

}  // namespace mhaq
