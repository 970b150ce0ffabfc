// recover --design placed --arith ball: the design runs on the answers'
// midpoints (run/recover_placed.cpp), then its last round is certified from
// the answers as balls (analysis/placed_certify.hpp, proofs/37). The status
// comes from the certification alone; the truth, when known (`canon`), is
// compared afterwards.
#include <cstdio>

#include "mhaq/analysis/placed_certify.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/recover.hpp"

namespace mhaq {

void placed_heads(const Field<Ball>& F, const PlacedResult& res, int H, const Model* canon, RecoverResult& r, RunFacts& facts) {
  const PlacedCertified cert = certify_placed(res, H);
  r.evidence.heads_recovered = r.evidence.heads_found = static_cast<int>(cert.heads.size());
  facts.self_check = Truth::yes;  // every step of certify_placed was decided on the balls
  facts.heads_recovered = static_cast<int>(cert.heads.size());
  r.evidence.self_check = self_check_of(Truth::yes);
  char note[220];
  std::snprintf(note, sizeof note,
                "every pair certified by Krawczyk's test on 2H+1 of its samples (widest pole or residue 2^%.1f relative); "
                "labels certified by the residues' linear relation",
                cert.worst_pair_log2_rel);
  r.evidence.self_check_note = note;
  r.design.max_rel_radius_log2 = cert.max_rel_radius_log2;
  r.evidence.heads = head_records(F, cert.heads);
  if (cert.beta) r.evidence.beta = F.str(*cert.beta);
  if (canon) ArithPolicy<Ball>::compare(r, facts, *canon, cert.heads, cert.beta ? &*cert.beta : nullptr);
}

}  // namespace mhaq
