// Sharded map over MPI ranks and threads: see distribute.hpp.
#include "mhaq/base/distribute.hpp"

#include <fcntl.h>
#include <flint/flint.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "mhaq/base/precision.hpp"
#include "mhaq/base/error.hpp"

#ifdef MHAQ_HAVE_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only: no deprecated C++ bindings to link
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace mhaq {

namespace {

Shard g_shard;          // {0, 1} until an MpiSession under a launcher says otherwise
bool g_traffic = false;  // MPI active with more than one rank
thread_local bool t_one_run = false;  // a RunAcrossRanks lives on this thread
#ifdef MHAQ_HAVE_MPI
MPI_Comm g_comm = MPI_COMM_NULL;  // a duplicate of MPI_COMM_WORLD, private to mhaq
constexpr int kResultTag = 17;
#endif

using namespace std::chrono_literals;

// One finished item: status 0 = ok (payload = result), else an ErrorKind
// value (payload = message).
struct Item {
  std::size_t index = 0;
  int status = 0;
  std::string payload;
};

Item run_item(const std::function<std::string(std::size_t)>& fn, std::size_t i) {
  try {
    return {i, 0, fn(i)};
  } catch (const Error& e) {
    return {i, static_cast<int>(e.kind()), e.what()};
  } catch (const std::exception& e) {
    return {i, static_cast<int>(ErrorKind::internal), e.what()};
  } catch (...) {
    return {i, static_cast<int>(ErrorKind::internal), "unknown exception"};
  }
}

ErrorKind kind_of(int status) {
  switch (status) {
    case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 9: case 10: case 11: case 12: return static_cast<ErrorKind>(status);
    default: return ErrorKind::internal;
  }
}

// Status and payload as one string: "<status> <payload>".
std::string encode(int status, const std::string& payload) { return std::to_string(status) + " " + payload; }
std::pair<int, std::string> decode(const std::string& s) {
  const auto sp = s.find(' ');
  if (sp == std::string::npos) throw_internal("distribute: malformed status record");
  return {std::atoi(s.substr(0, sp).c_str()), s.substr(sp + 1)};
}

#ifdef MHAQ_HAVE_MPI
// Polls instead of blocking: OpenMPI's blocking waits spin at 100% CPU.
void wait_quietly(MPI_Request* r) {
  for (int flag = 0;;) {
    MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    if (flag) return;
    std::this_thread::sleep_for(200us);
  }
}

// Rank 0's string on every rank.
std::string broadcast(std::string s) {
  std::uint64_t len = s.size();
  MPI_Request r;
  MPI_Ibcast(&len, 1, MPI_UINT64_T, 0, g_comm, &r);
  wait_quietly(&r);
  s.resize(len);
  constexpr std::uint64_t kPiece = 1u << 30;  // MPI counts are ints: at most 1 GiB a message
  for (std::uint64_t at = 0; at < len; at += kPiece) {
    MPI_Ibcast(s.data() + at, static_cast<int>(std::min(kPiece, len - at)), MPI_BYTE, 0, g_comm, &r);
    wait_quietly(&r);
  }
  return s;
}

std::string pack(const Item& it) {
  std::string b(12, '\0');
  const std::uint64_t i = it.index;
  const std::int32_t st = it.status;
  std::memcpy(b.data(), &i, 8);
  std::memcpy(b.data() + 8, &st, 4);
  return b + it.payload;
}
Item unpack(const std::string& b) {
  if (b.size() < 12) throw_internal("distribute: short message");
  Item it;
  std::uint64_t i;
  std::int32_t st;
  std::memcpy(&i, b.data(), 8);
  std::memcpy(&st, b.data() + 8, 4);
  it.index = i;
  it.status = st;
  it.payload = b.substr(12);
  return it;
}

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}
#endif

}  // namespace

Shard shard() { return g_shard; }

bool mpi_built() {
#ifdef MHAQ_HAVE_MPI
  return true;
#else
  return false;
#endif
}

MpiSession::MpiSession(int* argc, char*** argv) {
#ifdef MHAQ_HAVE_MPI
  if (!launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
  MPI_Comm_rank(g_comm, &g_shard.rank);
  MPI_Comm_size(g_comm, &g_shard.size);
  g_traffic = g_shard.size > 1;
  active_ = true;
  if (g_shard.rank != 0) {
    const int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
      std::fflush(stdout);
      dup2(fd, 1);
      const char* q = std::getenv("MHAQ_MPI_QUIET");
      if (!q || std::string(q) != "0") dup2(fd, 2);
      close(fd);
    }
  }
#else
  (void)argc;
  (void)argv;
#endif
}

MpiSession::~MpiSession() {
#ifdef MHAQ_HAVE_MPI
  if (active_) {
    MPI_Comm_free(&g_comm);
    MPI_Finalize();
  }
#endif
}

int MpiSession::finish(int code) {
#ifdef MHAQ_HAVE_MPI
  if (!active_) return code;
  std::vector<int> codes(static_cast<size_t>(g_shard.size));
  MPI_Request r;
  MPI_Iallgather(&code, 1, MPI_INT, codes.data(), 1, MPI_INT, g_comm, &r);
  wait_quietly(&r);
  int agreed = codes[0];
  for (int k = 1; k < g_shard.size; ++k) {
    if (codes[k] == 0) continue;
    if (g_shard.rank == 0 && codes[0] == 0) std::fprintf(stderr, "mhaq: MPI rank %d exited with code %d\n", k, codes[k]);
    if (codes[0] == 0) agreed = std::max(agreed, codes[k]);
  }
  std::fflush(stdout);
  MPI_Comm_free(&g_comm);
  MPI_Finalize();
  active_ = false;
  g_traffic = false;
  g_shard = Shard{};
  return agreed;
#else
  return code;
#endif
}

std::string root_computes(const std::function<std::string()>& f) {
  int status = 0;
  std::string payload;
  if (g_shard.rank == 0) {
    Item it = run_item([&](std::size_t) { return f(); }, 0);
    status = it.status;
    payload = std::move(it.payload);
  }
#ifdef MHAQ_HAVE_MPI
  if (g_traffic) std::tie(status, payload) = decode(broadcast(g_shard.rank == 0 ? encode(status, payload) : std::string()));
#endif
  if (status != 0) throw Error(kind_of(status), payload);
  return payload;
}

std::vector<std::string> distributed_map(std::size_t n, int threads, const std::function<std::string(std::size_t)>& fn,
                                         const std::function<void(std::size_t, const std::string&)>& on_result) {
  const Shard s = g_shard;
  const bool root = s.rank == 0;
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(s.rank); i < n; i += static_cast<std::size_t>(s.size)) mine.push_back(i);

  // Worker threads compute this rank's items and queue them; the calling
  // thread delivers them (rank 0) or sends them to rank 0 (other ranks).
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> ready;
  std::atomic<std::size_t> next{0};
  const long prec = working_precision();
  auto worker = [&] {
    {
      PrecisionScope scope(prec);
      for (std::size_t k; (k = next.fetch_add(1)) < mine.size();) {
        Item it = run_item(fn, mine[k]);
        {
          std::lock_guard<std::mutex> lock(mu);
          ready.push_back(std::move(it));
        }
        cv.notify_one();
      }
    }
    flint_cleanup();
  };
  const std::size_t nthreads = std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), mine.size());
  std::vector<std::thread> pool;
  for (std::size_t k = 0; k < nthreads; ++k) pool.emplace_back(worker);

  std::vector<std::string> out(root ? n : 0);
  std::map<std::size_t, std::pair<int, std::string>> failed;  // by index: the lowest comes first
  bool callback_ok = true;
  auto deliver = [&](Item&& it) {
    if (it.status != 0) {
      failed.emplace(it.index, std::make_pair(it.status, std::move(it.payload)));
      return;
    }
    if (on_result && callback_ok) {
      Item cb = run_item([&](std::size_t) { on_result(it.index, it.payload); return std::string(); }, it.index);
      if (cb.status != 0) {
        callback_ok = false;
        failed.emplace(it.index, std::make_pair(cb.status, std::move(cb.payload)));
      }
    }
    out[it.index] = std::move(it.payload);
  };
#ifdef MHAQ_HAVE_MPI
  std::deque<std::pair<MPI_Request, std::string>> pending;  // each buffer lives until its send completes
#endif

  std::size_t local_left = mine.size();
  std::size_t remote_left = root ? n - mine.size() : 0;
  while (local_left > 0 || remote_left > 0) {
    std::deque<Item> got;
    {
      std::unique_lock<std::mutex> lock(mu);
      if (ready.empty()) {
        if (g_traffic) cv.wait_for(lock, 2ms);  // then look for messages: latency does not matter, a busy core does
        else cv.wait(lock, [&] { return !ready.empty(); });
      }
      got.swap(ready);
    }
    for (auto& it : got) {
      --local_left;
      if (root) {
        deliver(std::move(it));
        continue;
      }
#ifdef MHAQ_HAVE_MPI
      pending.emplace_back(MPI_REQUEST_NULL, pack(it));
      auto& p = pending.back();
      MPI_Isend(p.second.data(), static_cast<int>(p.second.size()), MPI_BYTE, 0, kResultTag, g_comm, &p.first);
#endif
    }
#ifdef MHAQ_HAVE_MPI
    if (g_traffic && root) {
      for (int flag = 1; flag && remote_left > 0;) {
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, kResultTag, g_comm, &flag, &st);
        if (!flag) break;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        std::string buf(static_cast<size_t>(count), '\0');
        MPI_Recv(buf.data(), count, MPI_BYTE, st.MPI_SOURCE, kResultTag, g_comm, MPI_STATUS_IGNORE);
        --remote_left;
        deliver(unpack(buf));
      }
    }
    while (!pending.empty()) {  // release completed sends, oldest first
      int flag = 0;
      MPI_Test(&pending.front().first, &flag, MPI_STATUS_IGNORE);
      if (!flag) break;
      pending.pop_front();
    }
#endif
  }
  for (auto& t : pool) t.join();
#ifdef MHAQ_HAVE_MPI
  for (auto& p : pending) wait_quietly(&p.first);
#endif

  // Every rank learns the lowest failing index's error from rank 0.
  std::string err = root && !failed.empty() ? encode(failed.begin()->second.first, failed.begin()->second.second) : std::string();
#ifdef MHAQ_HAVE_MPI
  if (g_traffic) err = broadcast(err);
#endif
  if (!err.empty()) {
    const auto [status, message] = decode(err);
    throw Error(kind_of(status), message);
  }
  return out;
}

RunAcrossRanks::RunAcrossRanks() : before_(t_one_run) { t_one_run = true; }
RunAcrossRanks::~RunAcrossRanks() { t_one_run = before_; }
bool run_across_ranks() { return t_one_run && g_traffic; }

std::vector<std::string> map_across_ranks(std::size_t n, int threads, const std::function<std::string(std::size_t)>& fn) {
  std::vector<std::string> out = distributed_map(n, threads, fn);
#ifdef MHAQ_HAVE_MPI
  if (!g_traffic) return out;
  // rank 0's results as one message: each a length, then its bytes
  std::string all;
  if (g_shard.rank == 0) {
    std::size_t bytes = 0;
    for (const auto& r : out) bytes += 8 + r.size();
    all.reserve(bytes);
    for (const auto& r : out) {
      const std::uint64_t len = r.size();
      all.append(reinterpret_cast<const char*>(&len), 8);
      all += r;
    }
  }
  all = broadcast(std::move(all));
  if (g_shard.rank == 0) return out;
  out.assign(n, std::string());
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t len = 0;
    if (all.size() - at < 8) throw_internal("distribute: short gathered results");
    std::memcpy(&len, all.data() + at, 8);
    at += 8;
    if (all.size() - at < len) throw_internal("distribute: short gathered results");
    out[i] = all.substr(at, len);
    at += len;
  }
#endif
  return out;
}

}  // namespace mhaq
