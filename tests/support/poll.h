// Waiting for something observable, with a deadline: the tests' way to meet a server or a thread
// without assuming how long it takes. A deadline only ends a test that would otherwise hang.
#pragma once

#include <functional>

namespace testing_util {

// Calls `done` every 10 ms until it holds or `deadline_ms` pass; returns what it last saw.
bool PollUntil(const std::function<bool()>& done, int deadline_ms);

// Runs `call` on a thread of its own and waits up to `deadline_ms` for it to return. If it has not
// returned by then, `unblock` ends whatever holds it (so the test ends, failing, rather than
// hangs) and the thread is joined. True if `call` returned in time.
bool ReturnsWithin(const std::function<void()>& call, int deadline_ms, const std::function<void()>& unblock);

}  // namespace testing_util
