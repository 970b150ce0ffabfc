// Stage 4, the labelling walk: every base pair's heads put in the root's
// order by walking the plan's labelling graph (proofs/03), degenerate pairs
// repaired from their links and residues (Repair, below), and the fallbacks
// that ask for more answers where residues cannot label (lean: across links;
// compact: the pair's own values and one value of its across link,
// proofs/19). Written once for every field; the learner (stages/learner.hpp)
// runs it between the fits of stage 3 and the solve of stage 5.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/1-oracle/query_log.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/stages/3-fit/pair_fit.hpp"
#include "mhaq/stages/4-match/match.hpp"

namespace mhaq {

// A repaired pair (docs/math/degeneracies.md). A pair is degenerate at this draw when its own
// type-(H,H) fit is singular (two heads' poles collide there, or a residue is
// zero; with only a bound H0: it shows fewer heads than the others), or when
// its link is ambiguous. The run is not thrown away: the pair's heads are
// derived from what the other pairs already determine, by the bilinearity of
// log r in the offset and the independence of residues from the final token
// (docs/math/schedules.md, proofs/03):
//   * a degenerate base pair (i, j): from its link, whose poles are the
//     products r_h(ref) r_h(i, j), heads matched through residues known
//     elsewhere (c_h(i) at another final token, or c_h(1) for across links);
//   * a degenerate or ambiguous link: its base pair is labelled by residues
//     against the same offset at another final token.
// Both routes cost no extra query. A repair is exact (or enclosing) like the
// step it replaces, and the learner's self-check re-verifies every answer,
// the degenerate pair's included. A repaired run then asks three fresh random
// witness queries of length 2H+1, predicted from the recovered heads first
// (proofs/21): on a draw special enough for a wrong matching to fit every
// answer they disagree, and the run ends degenerate. They are the run's
// repair_queries. Pairs that cannot be repaired this way
// (the root pair, or a base pair whose link is degenerate too) leave the run
// degenerate, as before.
// A draw that stays degenerate after these repairs (a zero residue on the
// first offset, a base pair whose link is degenerate too) gets one more
// chance: the offending offset delta_i is drawn afresh and the plan's queries
// that use it are asked (the others keep their answers); the new run is a
// plain run of the new plan (its own repairs and witnesses apply), and the
// queries asked again are repair_queries.
struct Repair {
  int pair = -1;        // index into plan.pairs of the degenerate pair
  std::string reason;   // why it was degenerate
  std::string route;    // how it was repaired
  long queries = 0;     // extra queries spent on it
};

struct LabelOptions {
  bool repair = true;         // repair degenerate pairs (paper schedule, d >= 2)
  bool lean_fallback = true;  // lean and compact: ask for more answers where residues cannot label
  int threads = 1;            // fallback fits run in parallel; results do not depend on it
};

// The learner's run as the walk sees it, by reference: what stage 3 found,
// the answers so far (a fallback appends the queries it asks and their
// answers), and the parts of the learner's result the walk fills in.
template <class T>
struct LabelRun {
  const Chaining<T>& chain;
  const std::vector<std::optional<Error>>& failed;  // compact: a pair whose fit failed, raised when labelled
  const std::vector<char>& needs_fallback;          // compact: a pair whose residues cannot label its poles
  int heads_found;
  QueryLog& queries;
  std::vector<T>& answers;
  std::vector<PairFit<T>>& fits;          // per pair, own order; a compact fallback refits its pair
  std::vector<std::string>& degenerate;   // per pair: why it is degenerate at this draw (the walk adds ambiguous links)
  std::vector<PairFit<T>>& labelled;      // per base pair, heads in the root's order
  std::vector<Repair>& repairs;
  std::vector<PairSpec>& fallback_pairs;
  std::vector<PairFit<T>>& fallback_fits;
  long& fallback_queries;
  int& failed_offset;                     // the offset of a degenerate pair that cannot be repaired
};

// Walks the labelling graph. Throws Error(degenerate) when a pair can be
// neither labelled nor repaired (failed_offset names its offset), and the
// matching's errors (unique_or_throw) otherwise.
template <class T>
void label_pairs(Oracle<T>& oracle, const Plan& plan, const LabelOptions& opt, LabelRun<T>& run);

// Every two residues of a fit certainly different (they can label poles).
template <class T>
bool residues_distinct(const Field<T>& fld, const PairFit<T>& f);

}  // namespace mhaq
