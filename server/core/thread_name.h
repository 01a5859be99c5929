// NameThisThread: the name `top -H`, `ps -L`, perf and gdb show for the calling thread, so an
// operator can tell the frame threads from the log, checkpoint and lobby threads.
#pragma once

#include <pthread.h>

#include <string>

namespace core {

// Linux keeps 15 bytes of a thread's name: longer names are cut there. A name the kernel
// refuses is ignored: naming is for people, nothing depends on it.
inline void NameThisThread(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace core
