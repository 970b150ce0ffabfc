// A child process that speaks in lines: started with /bin/sh -c CMD in its
// own process group, its standard input and output on pipes, its standard
// error left as mhaq's (it passes through). Every wait is bounded by a
// timeout; every fault is an OracleFailure (protocol.hpp). The destructor
// kills the process group if the child is still running.
#pragma once
#include <sys/types.h>

#include <string>

namespace mhaq {

class ChildProcess {
 public:
  // Starts CMD; OracleFailure(spawn) when it cannot be started.
  ChildProcess(const std::string& cmd, double timeout_seconds, long max_line_bytes);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Writes line + '\n' within the timeout; OracleFailure(exited | timeout).
  void send(const std::string& line, const std::string& context);
  // Queues line + '\n' for the child without waiting: what the pipe takes
  // now is written at once, the rest while receive() waits for a reply (so
  // a child busy writing its answers never blocks on mhaq's writing). A
  // child that stops reading its input shows as its end of output or as a
  // timeout in receive(). OracleFailure(exited) on any other write error.
  void queue(const std::string& line, const std::string& context);
  // The next line without its '\n', within the timeout: OracleFailure
  // exited (end of output; the exit status is named when known), timeout,
  // line_too_long. Writes queued input while it waits.
  std::string receive(const std::string& context);
  // Closes the child's input and waits up to the timeout for it to exit, then
  // kills its process group. Returns a note when it had to kill it, or the
  // exit status when not 0; empty on a clean exit.
  std::string finish();
  // Kills the process group at once (faults).
  void kill_now();

 private:
  std::string exit_note();
  // Writes what the pipe takes of the queued input without waiting; drops
  // it once the child's input is closed (its end is then seen on its output).
  void pump(const std::string& context);
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  double timeout_;
  long max_line_;
  std::string buffer_;
  std::string pending_;  // queued input not yet written
  size_t pending_off_ = 0;
  bool input_closed_ = false;  // the child stopped reading: queued input dropped
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace mhaq
