#include "collector/supervisor.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

using namespace torchgauge::collector;

namespace {
// A waitpid status for a child ended by `sig` (the Linux encoding WIFSIGNALED reads).
int KilledBy(int sig) { return sig & 0x7f; }
int Exited(int code) { return (code & 0xff) << 8; }
}  // namespace

TEST_CASE("the kernel's OOM-kill count is readable on Linux") {
  const auto n = KernelOomKills();
  REQUIRE(n.has_value());  // /proc/vmstat has oom_kill since Linux 4.13
  CHECK(*n >= 0);
}

TEST_CASE("a worker is OOM-killed only when SIGKILL came while the kernel's count rose") {
  ChildOutcome c;
  c.status = KilledBy(SIGKILL);
  REQUIRE(WIFSIGNALED(c.status));
  REQUIRE(WTERMSIG(c.status) == SIGKILL);
  c.oom_kills = 1;
  CHECK(KilledByOomKiller(c));
  c.oom_kills = 0;  // SIGKILL from itself or a person: crashed
  CHECK_FALSE(KilledByOomKiller(c));
  c.oom_kills.reset();  // no /proc/vmstat: crashed, never guessed
  CHECK_FALSE(KilledByOomKiller(c));
  c.oom_kills = 2;
  c.timed_out = true;  // our own SIGKILL at the timeout
  CHECK_FALSE(KilledByOomKiller(c));
  c.timed_out = false;
  c.status = KilledBy(SIGSEGV);  // another signal while something else was OOM-killed
  CHECK_FALSE(KilledByOomKiller(c));
  c.status = Exited(1);
  CHECK_FALSE(KilledByOomKiller(c));
}

TEST_CASE("RunChild counts the OOM kills while its child runs") {
  // A child that kills itself with SIGKILL: no OOM kill happens, so the
  // count is 0 and the outcome is a crash, not oom.
  const auto out = RunChild({"/bin/sh", "-c", "kill -9 $$"}, "/dev/null", 30);
  REQUIRE(WIFSIGNALED(out.status));
  CHECK(WTERMSIG(out.status) == SIGKILL);
  REQUIRE(out.oom_kills.has_value());
  CHECK(*out.oom_kills == 0);
  CHECK_FALSE(KilledByOomKiller(out));
}
