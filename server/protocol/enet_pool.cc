// The pool: a 16-byte header before each block holds its size class; per-thread free lists of
// at most kMaxFreePerClass blocks each; a thread's lists go back to malloc when it exits.
#include "server/protocol/enet_pool.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <enet/enet.h>

namespace proto {

namespace {

constexpr std::array<size_t, 6> kClassBytes = {64, 128, 256, 512, 1024, 2048};
constexpr size_t kHeader = 16;         // keeps the block 16-byte aligned, as malloc's
constexpr uint32_t kLarge = 0xFFFFFFFFu;  // header value of a block that bypassed the pool
constexpr size_t kMaxFreePerClass = 4096;

// Set once this thread's lists are destroyed: a free after that (a static destructor closing a
// host at exit) bypasses the pool.
thread_local bool t_lists_gone = false;

struct ThreadLists {
  std::array<std::vector<void*>, kClassBytes.size()> free;  // raw blocks (header included)
  PoolCounters counters;
  ~ThreadLists() {
    t_lists_gone = true;
    for (auto& list : free) {
      for (void* raw : list) std::free(raw);
    }
  }
};

ThreadLists& Lists() {
  static thread_local ThreadLists lists;
  return lists;
}

int ClassOf(size_t size) {
  for (size_t c = 0; c < kClassBytes.size(); ++c) {
    if (size <= kClassBytes[c]) return static_cast<int>(c);
  }
  return -1;
}

void NoMemory() {  // ENet's default aborts silently; say why
  std::fputs("fatal: out of memory in ENet\n", stderr);
  std::abort();
}

}  // namespace

void* PoolMalloc(size_t size) {
  const int c = t_lists_gone ? -1 : ClassOf(size);
  void* raw = nullptr;
  if (c >= 0) {
    auto& list = Lists().free[static_cast<size_t>(c)];
    if (!list.empty()) {
      raw = list.back();
      list.pop_back();
      ++Lists().counters.reused;
    } else {
      raw = std::malloc(kHeader + kClassBytes[static_cast<size_t>(c)]);
    }
  } else {
    raw = std::malloc(kHeader + size);
  }
  if (raw == nullptr) return nullptr;
  *static_cast<uint32_t*>(raw) = c >= 0 ? static_cast<uint32_t>(c) : kLarge;
  return static_cast<char*>(raw) + kHeader;
}

void PoolFree(void* block) {
  if (block == nullptr) return;
  void* raw = static_cast<char*>(block) - kHeader;
  const uint32_t c = *static_cast<uint32_t*>(raw);
  if (c != kLarge && !t_lists_gone) {
    auto& list = Lists().free[c];
    if (list.size() < kMaxFreePerClass) {
      list.push_back(raw);
      ++Lists().counters.returned;
      return;
    }
  }
  std::free(raw);
}

PoolCounters ThisThreadPoolCounters() { return Lists().counters; }

core::Status InitializeEnet() {
  static std::once_flag once;
  static int result = 0;
  std::call_once(once, [] {
    ENetCallbacks callbacks{};
    callbacks.malloc = PoolMalloc;
    callbacks.free = PoolFree;
    callbacks.no_memory = NoMemory;
    result = enet_initialize_with_callbacks(ENET_VERSION, &callbacks);
  });
  return result == 0 ? core::Status::OK() : core::Status::IoError("enet_initialize failed");
}

}  // namespace proto
