// A child process that speaks in lines: started with /bin/sh -c CMD in its
// own process group, its standard input and output on pipes, its standard
// error left as mhaq's (it passes through). A CMD that is one simple command
// runs as `exec CMD`, so the shell does not stay in between (the child's end
// of output is then its own). Every wait is bounded by a timeout; every fault
// is an OracleFailure (protocol.hpp).
//
// The child's whole process group is ended (SIGKILL) at every end: after the
// child exits (whatever it left running in its group), at a fault, in the
// destructor, and when this process receives SIGTERM, SIGINT or SIGHUP. For
// the signals, the first start installs a handler for each of them whose
// action is still the default: it ends the group of every child running,
// then re-raises the signal with the default action (so the process ends as
// the signal would have ended it, with the shell's status 128 + signal).
#pragma once
#include <sys/types.h>

#include <string>

namespace mhaq {

// What /bin/sh -c runs for CMD: "exec CMD" when CMD is one simple command
// naming a program (no list, pipeline, subshell, compound command, command
// substitution, leading assignment or shell builtin), else CMD unchanged.
std::string shell_command_line(const std::string& cmd);

class ChildProcess {
 public:
  // Starts CMD; OracleFailure(spawn) when it cannot be started.
  ChildProcess(const std::string& cmd, double timeout_seconds, long max_line_bytes);
  ~ChildProcess();  // end("", false)
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t group() const { return pid_; }  // the child's process group (its pid)

  // Writes line + '\n' within the timeout; OracleFailure(exited | timeout).
  void send(const std::string& line, const std::string& context);
  // Queues line + '\n' for the child without waiting: what the pipe takes
  // now is written at once, the rest while receive() waits for a reply (so
  // a child busy writing its answers never blocks on mhaq's writing). A
  // child that stops reading its input shows as its end of output or as a
  // timeout in receive(). OracleFailure(exited) on any other write error.
  void queue(const std::string& line, const std::string& context);
  // The next line without its '\n', within the timeout: OracleFailure
  // exited (end of output, or the child exited while a process it started
  // holds its output; the exit status is named when known), timeout,
  // line_too_long. Writes queued input while it waits.
  std::string receive(const std::string& context);
  // Ends the child. `last_line` (if not empty) follows any queued input, as
  // far as the pipe takes it (within the timeout when `wait`, else at once);
  // then the child's input is closed. With `wait`, waits up to the timeout
  // for the child to exit, reading and dropping whatever it still writes.
  // Then its process group is ended and the child reaped. Returns "" when
  // the child exited by itself with status 0, else a note (its status, or
  // that it had to be killed). Later calls return "".
  std::string end(const std::string& last_line, bool wait);

 private:
  bool leader_exited();  // the child has exited (not yet reaped: its group id stays taken)
  void end_group();      // SIGKILL to the group, then reap the child
  std::string status_note() const;
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
  bool ended_ = false;         // end() has run
  bool reaped_ = false;
  bool status_known_ = false;
  int status_ = 0;
};

}  // namespace mhaq
