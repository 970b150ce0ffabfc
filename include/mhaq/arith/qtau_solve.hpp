// Exact linear solves over Q(tau) (the pair systems of exact mode).
#pragma once
#include <string>

#include "mhaq/arith/field.hpp"

namespace mhaq {

enum class ExactSolver { fflu };
const char* exact_solver_name(ExactSolver s);
ExactSolver parse_exact_solver(const std::string& s);  // throws Error(usage)
void set_exact_solver(ExactSolver s);
ExactSolver current_exact_solver();

// Exact solution of A X = B over Q(tau); false iff A is singular (decided exactly).
bool qtau_solve(ExactSolver s, Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B);

}  // namespace mhaq
