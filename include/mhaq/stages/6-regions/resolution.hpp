// Stage 6 (transformer): the angular resolution of a single-crossing test
// (proofs/22).
//
// A crossing of the path is accepted as one neuron's hyperplane only when
// test pairs (y_i^-, y_i^+) placed on both sides of the predicted hyperplane
// P = {n^T x = 0}, close to it in angle and spread over P, all show the
// crossing's jump. Every neuron that contributes to the jump then separates
// every pair, which confines its hyperplane to a narrow wedge around P:
// with c_i, h_i the pair's midpoint and half-difference, a unit normal v at
// angle phi to n that separates pair i has
//
//     sin(phi) |m^T c_i| <= |h_i| + |nhat^T c_i|    (m: v's component in P, unit),
//
// and over all pairs sin(phi) <= sqrt(k / lambda_min(G)), G = sum_i a_i a_i^T
// restricted to P, a_i = c_i^P / (|h_i| + |nhat^T c_i|), k pairs. Two neurons
// merged into one accepted jump are then within 2 phi of each other.
#pragma once
#include <utility>
#include <vector>

#include "mhaq/arith/rational.hpp"

namespace mhaq {

// The half-angle phi (radians) bounding every hyperplane that separates all
// the pairs, around the hyperplane with normal n; pi/2 when the pairs do not
// confine it (they do not span P). Computed in long double with a relative
// safety margin of 1e-9 on sin(phi): a stated figure, never a decision.
double separating_half_angle(const std::vector<std::pair<QVec, QVec>>& pairs, const std::vector<long double>& n);

// 2 phi in degrees: the smallest angle between two neuron hyperplanes that a
// crossing certified by these pairs can no longer hide in one jump.
double resolution_degrees(double half_angle);

}  // namespace mhaq
