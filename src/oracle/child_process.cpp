#include "mhaq/oracle/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

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

std::string seconds_text(double s) {
  char b[64];
  std::snprintf(b, sizeof b, "%g s", s);
  return b;
}
}  // namespace

ChildProcess::ChildProcess(const std::string& cmd, double timeout_seconds, long max_line_bytes) : timeout_(timeout_seconds), max_line_(max_line_bytes) {
  // A write to a child that has exited must be an error, not a signal that
  // ends mhaq; the child gets the default disposition back (below).
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw OracleFailure(Fault::spawn, std::string("cannot create a pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw OracleFailure(Fault::spawn, std::string("cannot create a pipe: ") + std::strerror(errno));
  }
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
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::string sh = "/bin/sh", dashc = "-c", c = cmd;
  char* argv[] = {sh.data(), dashc.data(), c.data(), nullptr};
  const int rc = ::posix_spawn(&pid_, "/bin/sh", &fa, &at, argv, environ);
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

ChildProcess::~ChildProcess() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  kill_now();
}

void ChildProcess::kill_now() {
  if (pid_ > 0 && !reaped_) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
}

std::string ChildProcess::exit_note() {
  // the child closed its output: give it a moment to exit and say how it did
  if (!reaped_) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(500);
    while (Clock::now() < deadline) {
      const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        break;
      }
      ::usleep(5000);
    }
  }
  if (!reaped_) return "it closed its output but is still running";
  if (WIFEXITED(status_)) return "it exited with status " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return "it was killed by signal " + std::to_string(WTERMSIG(status_));
  return "it ended";
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
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_));
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(to_child_, data.data() + off, data.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) throw OracleFailure(Fault::exited, "the oracle stopped reading its input: " + exit_note() + context);
    if (n < 0 && errno != EAGAIN) throw OracleFailure(Fault::exited, std::string("cannot write to the oracle: ") + std::strerror(errno) + context);
    pollfd p{to_child_, POLLOUT, 0};
    const int ms = remaining_ms(deadline);
    if (ms == 0 || ::poll(&p, 1, ms) == 0)
      throw OracleFailure(Fault::timeout, "the oracle did not read its input within " + seconds_text(timeout_) + context);
  }
}

std::string ChildProcess::receive(const std::string& context) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_));
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
    const int ms = remaining_ms(deadline);
    const int pr = ms == 0 ? 0 : ::poll(p, writing ? 2 : 1, ms);
    if (pr < 0 && errno == EINTR) continue;
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

std::string ChildProcess::finish() {
  if (to_child_ >= 0) {
    ::close(to_child_);
    to_child_ = -1;
  }
  if (reaped_ || pid_ <= 0) return {};
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_));
  while (Clock::now() < deadline) {
    if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
      reaped_ = true;
      if (WIFEXITED(status_) && WEXITSTATUS(status_) == 0) return {};
      return WIFEXITED(status_) ? "the oracle exited with status " + std::to_string(WEXITSTATUS(status_)) : "the oracle was killed by a signal";
    }
    ::usleep(2000);
  }
  kill_now();
  return "the oracle did not exit within " + seconds_text(timeout_) + " of the end: killed";
}

}  // namespace mhaq
