// ThreadQueue: a small mutex-protected multi-producer queue. Work crosses threads only through
// these (muduo's rule); the volumes are tiny (joins, leaves, events), so a mutex is enough.
// Safe to call from any thread.
#pragma once

#include <atomic>
#include <utility>
#include <vector>

#include "server/core/mutex.h"
#include "server/core/thread_annotations.h"

namespace sv {

template <typename T>
class ThreadQueue {
 public:
  void Push(T item) EXCLUDES(mu_) {
    core::MutexLock lock(&mu_);
    items_.push_back(std::move(item));
    size_.store(items_.size(), std::memory_order_release);
  }
  // Appends every queued item to *out (in push order) and empties the queue.
  void DrainInto(std::vector<T>* out) EXCLUDES(mu_) {
    if (size_.load(std::memory_order_acquire) == 0) return;
    core::MutexLock lock(&mu_);
    for (T& item : items_) out->push_back(std::move(item));
    items_.clear();
    size_.store(0, std::memory_order_release);
  }
  bool Empty() const { return size_.load(std::memory_order_acquire) == 0; }

 private:
  core::Mutex mu_;
  std::vector<T> items_ GUARDED_BY(mu_);
  std::atomic<size_t> size_{0};
};

}  // namespace sv
