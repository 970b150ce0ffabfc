#include "mhaq/oracle/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

#include "mhaq/base/text.hpp"
#include "mhaq/oracle/protocol.hpp"

extern char** environ;

namespace mhaq {

using oracle_protocol::Fault;
using oracle_protocol::OracleFailure;

namespace {
using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

Clock::time_point after_seconds(double s) { return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

// Writes data to the non-blocking fd by the deadline: 0 when all of it is
// written, else the errno that stopped it (ETIMEDOUT at the deadline).
int write_by(int fd, const std::string& data, Clock::time_point deadline) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return errno;
    pollfd p{fd, POLLOUT, 0};
    const int ms = remaining_ms(deadline);
    if (ms == 0 || ::poll(&p, 1, ms) == 0) return ETIMEDOUT;
  }
  return 0;
}

std::string seconds_text(double s) {
  char b[64];
  std::snprintf(b, sizeof b, "%g s", s);
  return b;
}

// ---- the groups of the children running, for the signal handler. Each slot
// holds a group id or 0; the handler only reads them (lock-free atomics are
// async-signal-safe).
constexpr int kSlots = 64;
std::atomic<pid_t> running_groups[kSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free);
constexpr int kEndSignals[] = {SIGTERM, SIGINT, SIGHUP};

void remember_group(pid_t g) {
  for (auto& s : running_groups) {
    pid_t zero = 0;
    if (s.compare_exchange_strong(zero, g)) return;
  }
  // more children at once than slots: this one is ended at every end but a signal's
}

void forget_group(pid_t g) {
  for (auto& s : running_groups) {
    pid_t mine = g;
    if (s.compare_exchange_strong(mine, 0)) return;
  }
}

extern "C" void end_groups_and_reraise(int sig) {
  for (auto& s : running_groups) {
    const pid_t g = s.load();
    if (g > 0) ::kill(-g, SIGKILL);
  }
  ::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
}

// Once per process: a handler for each ending signal whose action is the
// default. An ignored signal stays ignored (a job started in the background
// by a shell ignores SIGINT), and a host's own handler is left alone.
void install_end_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kEndSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = end_groups_and_reraise;
      sigfillset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// ---- which commands run as `exec CMD`
bool shell_word(const std::string& w) {
  static const char* const kShellOwn[] = {
      // reserved words and builtins that exec cannot run as a program
      "!", "{", "}", "[[", "case", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "select", "then", "time", "until",
      "while", ".", ":", "alias", "bg", "break", "builtin", "cd", "command", "continue", "eval", "exec", "exit", "export", "fc", "fg", "getopts",
      "hash", "jobs", "local", "read", "readonly", "return", "set", "shift", "source", "times", "trap", "type", "ulimit", "umask", "unalias",
      "unset", "wait"};
  for (const char* s : kShellOwn)
    if (w == s) return true;
  return false;
}
}  // namespace

std::string shell_command_line(const std::string& cmd) {
  // the first word: a program's name or path, nothing the shell expands or assigns
  const size_t b = cmd.find_first_not_of(" \t");
  if (b == std::string::npos) return cmd;
  const size_t e = std::min(cmd.find_first_of(" \t", b), cmd.size());
  const std::string first = cmd.substr(b, e - b);
  if (first.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-,:@%~") != std::string::npos || shell_word(first))
    return cmd;
  // the rest: no unquoted control operator, subshell or substitution
  char quote = 0;
  for (size_t k = 0; k < cmd.size(); ++k) {
    const char c = cmd[k];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      continue;
    }
    if (c == '\\') {
      ++k;
      continue;
    }
    if (c == '`' || (c == '$' && k + 1 < cmd.size() && cmd[k + 1] == '(')) return cmd;
    if (quote == '"') {
      if (c == '"') quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      continue;
    }
    if (c == '#' && (cmd[k - 1] == ' ' || cmd[k - 1] == '\t')) break;  // a comment (k > b: not the first word's)
    if (c == '\n' || c == '\r' || c == ';' || c == '(' || c == ')') return cmd;
    if ((c == '&' || c == '|') && !(cmd[k - 1] == '>' || cmd[k - 1] == '<')) return cmd;  // >&, <&, >| are redirections
  }
  return quote == 0 ? "exec " + cmd : cmd;
}

namespace {
// The oracle's environment: this process's, without the variables by which
// an MPI launcher (mpirun, srun, mpiexec) tells a process that it is a rank
// of the job. The oracle is no rank: with them, an MPI program behind
// --oracle (the mhaq oracle of an MPI build among them) would take itself
// for one, fail in MPI_Init and leave the job unable to end.
std::vector<char*> oracle_environment() {
  static const char* const kLauncher[] = {"OMPI_", "OPAL_", "ORTE_", "PMIX_", "PMI_", "HYDRA_", "MPI_LOCALNRANKS=", "MPI_LOCALRANKID="};
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) {
    bool launcher = false;
    for (const char* p : kLauncher) launcher = launcher || std::strncmp(*e, p, std::strlen(p)) == 0;
    if (!launcher) env.push_back(*e);
  }
  env.push_back(nullptr);
  return env;
}
}  // namespace

ChildProcess::ChildProcess(const std::string& cmd, double timeout_seconds, long max_line_bytes) : timeout_(timeout_seconds), max_line_(max_line_bytes) {
  // A write to a child that has exited must be an error, not a signal that
  // ends mhaq; the child gets the default disposition back (below).
  ::signal(SIGPIPE, SIG_IGN);
  install_end_handlers();
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw OracleFailure(Fault::spawn, std::string("cannot create a pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw OracleFailure(Fault::spawn, std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  // the ending signals wait until the child's group is remembered; the child
  // starts with this thread's mask as it was
  sigset_t ending, mask;
  sigemptyset(&ending);
  for (int sig : kEndSignals) sigaddset(&ending, sig);
  ::pthread_sigmask(SIG_BLOCK, &ending, &mask);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&at, &def);
  posix_spawnattr_setsigmask(&at, &mask);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  std::string sh = "/bin/sh", dashc = "-c", c = shell_command_line(cmd);
  char* argv[] = {sh.data(), dashc.data(), c.data(), nullptr};
  std::vector<char*> env = oracle_environment();
  const int rc = ::posix_spawn(&pid_, "/bin/sh", &fa, &at, argv, env.data());
  if (rc == 0) remember_group(pid_);
  ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    pid_ = -1;
    throw OracleFailure(Fault::spawn, "cannot start /bin/sh -c " + quote_text(cmd) + ": " + std::strerror(rc));
  }
  to_child_ = in[1];
  from_child_ = out[0];
  ::fcntl(to_child_, F_SETFL, ::fcntl(to_child_, F_GETFL) | O_NONBLOCK);
  ::fcntl(from_child_, F_SETFL, ::fcntl(from_child_, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() { end("", false); }

bool ChildProcess::leader_exited() {
  if (reaped_ || pid_ <= 0) return true;
  siginfo_t si;
  std::memset(&si, 0, sizeof si);
  while (::waitid(P_PID, static_cast<id_t>(pid_), &si, WEXITED | WNOHANG | WNOWAIT) != 0)
    if (errno != EINTR) return true;  // ECHILD: reaped elsewhere (SIGCHLD ignored)
  return si.si_pid == pid_;
}

void ChildProcess::end_group() {
  if (pid_ <= 0 || reaped_) return;
  // the child, exited or not, is still unreaped: its group id cannot have
  // been reused, and the group holds whatever the child left running
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);  // a child that left its group
  forget_group(pid_);
  for (;;) {
    if (::waitpid(pid_, &status_, 0) == pid_) {
      status_known_ = true;
      break;
    }
    if (errno != EINTR) break;
  }
  reaped_ = true;
}

std::string ChildProcess::status_note() const {
  if (!status_known_) return "it ended";
  if (WIFSIGNALED(status_)) return "it was killed by signal " + std::to_string(WTERMSIG(status_));
  const int s = WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  std::string note = "it exited with status " + std::to_string(s);
  if (s == 127) note += " (the shell found no such command)";
  if (s == 126) note += " (the shell could not execute the command)";
  return note;
}

std::string ChildProcess::exit_note() {
  // the child closed its output: give it a moment to exit and say how it did
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  while (!leader_exited() && Clock::now() < deadline) ::usleep(5000);
  if (!leader_exited()) return "it is still running";
  end_group();
  return status_note();
}

void ChildProcess::queue(const std::string& line, const std::string& context) {
  if (input_closed_) return;
  if (pending_off_ == pending_.size()) {
    pending_.clear();
    pending_off_ = 0;
  }
  pending_ += line;
  pending_ += '\n';
  pump(context);
}

void ChildProcess::pump(const std::string& context) {
  while (pending_off_ < pending_.size() && !input_closed_) {
    const ssize_t n = ::write(to_child_, pending_.data() + pending_off_, pending_.size() - pending_off_);
    if (n > 0) {
      pending_off_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0 && errno == EPIPE) {
      // the child closed its input: what it said before that is still to be
      // read, and its end of output names how it ended
      input_closed_ = true;
      break;
    }
    throw OracleFailure(Fault::exited, std::string("cannot write to the oracle: ") + std::strerror(errno) + context);
  }
  if (pending_off_ >= pending_.size() || input_closed_) {
    pending_.clear();
    pending_off_ = 0;
  }
}

void ChildProcess::send(const std::string& line, const std::string& context) {
  // queued input first: the child reads its lines in order
  const std::string data = pending_.substr(pending_off_) + line + "\n";
  pending_.clear();
  pending_off_ = 0;
  const int e = write_by(to_child_, data, after_seconds(timeout_));
  if (e == EPIPE) throw OracleFailure(Fault::exited, "the oracle stopped reading its input: " + exit_note() + context);
  if (e == ETIMEDOUT) throw OracleFailure(Fault::timeout, "the oracle did not read its input within " + seconds_text(timeout_) + context);
  if (e != 0) throw OracleFailure(Fault::exited, std::string("cannot write to the oracle: ") + std::strerror(e) + context);
}

std::string ChildProcess::receive(const std::string& context) {
  const auto deadline = after_seconds(timeout_);
  for (;;) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      if (static_cast<long>(nl) + 1 > max_line_)
        throw OracleFailure(Fault::line_too_long, "a line of " + std::to_string(nl + 1) + " bytes, over the limit of " + std::to_string(max_line_) + " bytes" + context);
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (static_cast<long>(buffer_.size()) >= max_line_)
      throw OracleFailure(Fault::line_too_long, "no newline in the first " + std::to_string(max_line_) + " bytes: a line over the limit of " + std::to_string(max_line_) + " bytes" + context);
    const bool writing = pending_off_ < pending_.size();
    pollfd p[2] = {{from_child_, POLLIN, 0}, {to_child_, POLLOUT, 0}};
    // in slices: a child that exited while a process it started holds its
    // output open gives no end of output
    const int ms = std::min(remaining_ms(deadline), 100);
    const int pr = ms == 0 ? 0 : ::poll(p, writing ? 2 : 1, ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0 && remaining_ms(deadline) > 0) {
      if (!leader_exited()) continue;
      pollfd last{from_child_, POLLIN, 0};
      if (::poll(&last, 1, 0) == 0) {
        end_group();
        throw OracleFailure(Fault::exited, "the oracle exited without closing its output (a process it started held it; its process group was ended): " +
                                               status_note() + context);
      }
      continue;
    }
    if (pr == 0) throw OracleFailure(Fault::timeout, "no complete reply within " + seconds_text(timeout_) + context);
    if (writing && (p[1].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) pump(context);
    if ((p[0].revents & (POLLIN | POLLERR | POLLHUP)) == 0) continue;
    char buf[1 << 16];
    const ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n > 0) {
      buffer_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == 0) {
      const std::string partial = buffer_.empty() ? std::string() : " (after " + std::to_string(buffer_.size()) + " bytes of an unfinished line)";
      throw OracleFailure(Fault::exited, "the oracle closed its output" + partial + ": " + exit_note() + context);
    }
    throw OracleFailure(Fault::exited, std::string("cannot read from the oracle: ") + std::strerror(errno) + context);
  }
}

std::string ChildProcess::end(const std::string& last_line, bool wait) {
  if (ended_ || pid_ <= 0) return {};
  ended_ = true;
  const auto deadline = after_seconds(wait ? timeout_ : 0);
  if (to_child_ >= 0) {
    if (!input_closed_ && !reaped_ && !last_line.empty()) {
      // after any queued input, so that the child reads whole lines
      (void)write_by(to_child_, pending_.substr(pending_off_) + last_line + "\n", deadline);
    }
    pending_.clear();
    pending_off_ = 0;
    ::close(to_child_);
    to_child_ = -1;
  }
  // wait for the child, reading and dropping what it still writes, so that
  // it never blocks on a full pipe
  bool exited = leader_exited();
  while (!exited && remaining_ms(deadline) > 0) {
    pollfd p{from_child_, POLLIN, 0};
    const int ms = std::min(remaining_ms(deadline), 20);
    if (from_child_ >= 0 && ::poll(&p, 1, ms) > 0) {
      char buf[1 << 14];
      const ssize_t n = ::read(from_child_, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        ::close(from_child_);
        from_child_ = -1;
      }
    } else if (from_child_ < 0) {
      ::poll(nullptr, 0, std::min(ms, 2));  // its output closed: its exit is near
    }
    exited = leader_exited();
  }
  end_group();
  if (from_child_ >= 0) {
    ::close(from_child_);
    from_child_ = -1;
  }
  if (!exited) return wait ? "the oracle did not exit within " + seconds_text(timeout_) + " of the end: killed" : "the oracle was killed";
  if (status_known_ && WIFEXITED(status_) && WEXITSTATUS(status_) == 0) return {};
  return "the oracle ended: " + status_note();
}

}  // namespace mhaq
