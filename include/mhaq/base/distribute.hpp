// Deterministic sharded map over processes and threads, so that a study's
// output bytes do not depend on how many ranks or threads ran it (docs/mpi.md).
//
// A job is n independent items and a pure function item -> serialized result.
// Item i runs on rank i % size (MPI world rank and size; one rank without
// MPI), on any of that rank's threads; rank 0 receives every result and
// returns them in index order. Nothing in the results depends on the rank
// count, the thread count or the order in which items finish, so output built
// from them is byte-identical for every N and every --threads.
//
// The library is MPI-free except this file's implementation, which uses MPI
// only when compiled with MHAQ_HAVE_MPI *and* the program started an
// MpiSession under an MPI launcher. Every other process is one rank of one.
// Only the calling thread of each rank talks to MPI (MPI_THREAD_FUNNELED),
// and every wait polls with short sleeps: OpenMPI's blocking calls spin, and
// a spinning rank would steal a core from the computing threads.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace mhaq {

struct Shard {
  int rank = 0;
  int size = 1;
};
// This process's rank and the number of ranks ({0, 1} unless MPI is active).
Shard shard();
inline bool is_root() { return shard().rank == 0; }
// True when this build can distribute over MPI (-DMHAQ_MPI=ON).
bool mpi_built();

// Started once, first thing in the mhaq program's main. When built with MPI
// and launched by mpirun or srun (the launcher's environment variables say
// so), it initialises MPI and sends the standard output and error of every
// rank but 0 to /dev/null (MHAQ_MPI_QUIET=0 keeps their standard error).
// Otherwise it does nothing. finish(code) makes every rank agree on the exit
// code (rank 0's when it is not 0, else the largest of the others, which rank
// 0 then reports on standard error) and finalises MPI.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int finish(int code);

 private:
  bool active_ = false;
};

// Computes fn(i) for i in [0, n): rank r runs the items with i % size == r,
// on up to `threads` threads (>= 1). Rank 0 calls on_result(i, result) from
// the calling thread as each result arrives (in any order; never two at
// once), and returns all n results in index order; other ranks return an
// empty vector. If items throw, every rank rethrows the error of the lowest
// failing index (an Error keeps its kind; anything else becomes internal),
// after every item has run. If on_result throws, it is not called again, and
// its error is rethrown likewise. Each worker thread inherits the caller's
// working precision and releases FLINT caches at exit, as in parallel_for.
std::vector<std::string> distributed_map(std::size_t n, int threads, const std::function<std::string(std::size_t)>& fn,
                                         const std::function<void(std::size_t, const std::string&)>& on_result = {});

// Runs f on rank 0 only and returns its result on every rank. An exception
// thrown by f on rank 0 is rethrown on every rank (so no rank waits forever
// for a rank that failed alone, e.g. on reading a file).
std::string root_computes(const std::function<std::string()>& f);

// One run across ranks (recover under mpirun): while a RunAcrossRanks lives
// on a thread of a process with more than one rank, run_across_ranks() is
// true on that thread, and the run's heavy loops (the oracle's answers, the
// pair fits) give each rank a share and gather every result on every rank
// with map_across_ranks. Every rank runs the same run, step for step, and
// reaches every gather; all else is computed alike on every rank. The flag
// is the thread's own: a worker thread, or a command whose ranks run
// different items (sweep, verify), never gathers.
class RunAcrossRanks {
 public:
  RunAcrossRanks();
  ~RunAcrossRanks();
  RunAcrossRanks(const RunAcrossRanks&) = delete;
  RunAcrossRanks& operator=(const RunAcrossRanks&) = delete;

 private:
  bool before_;
};
bool run_across_ranks();

// distributed_map's work and errors, with all n results returned in index
// order on every rank (rank 0 broadcasts them). Called only where
// run_across_ranks() holds, by every rank alike.
std::vector<std::string> map_across_ranks(std::size_t n, int threads, const std::function<std::string(std::size_t)>& fn);

}  // namespace mhaq
