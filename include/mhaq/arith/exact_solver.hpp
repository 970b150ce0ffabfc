// The exact linear solvers over Q(tau) (qtau_solve.hpp describes each). Every
// method returns the same exact result; the choice changes only the time
// taken. A Field<QTau> carries its choice, so runs with different solvers can
// share a process.
#pragma once
#include <string>

namespace mhaq {

enum class ExactSolver { fflu, modular, sparse };

const char* exact_solver_name(ExactSolver s);
ExactSolver parse_exact_solver(const std::string& s);  // throws Error(usage) on unknown names

}  // namespace mhaq
