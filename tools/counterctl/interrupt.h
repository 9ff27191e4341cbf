// Stopping a long command cleanly: SIGINT (Ctrl-C) and SIGTERM set a flag
// the command checks between units of work (apply: before each batch), so
// it can finish what it started, report where it stopped and exit with
// 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell
// reports a command a signal ended. A second signal of the same kind ends
// the process at once (its default action).
//
// The signals are taken by one thread of their own (sigwait), with both
// blocked in every other thread: so a stop is seen whatever the other
// threads are blocked in, and no blocking call is interrupted (EINTR) by
// one; a wait that must end on a stop polls StopRequested().
//
// Thread safety: the flag may be read from any thread.

#ifndef TALLY_TOOLS_COUNTERCTL_INTERRUPT_H_
#define TALLY_TOOLS_COUNTERCTL_INTERRUPT_H_

#include <atomic>

namespace counterctl {

// Starts the signal thread (once per process; later calls do nothing).
// Precondition: no other thread has started yet (call it before opening the
// database), since threads started earlier would still take the signals
// with their default action.
void InstallStopHandlers();

// Set once a stop was asked for; never cleared.
const std::atomic<bool>& StopRequested();

// The signal that asked (SIGINT or SIGTERM), 0 before one arrived.
int StopSignal();

// "SIGINT", "SIGTERM" or "signal N".
const char* StopSignalName();

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_INTERRUPT_H_
