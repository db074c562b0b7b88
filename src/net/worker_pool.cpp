// File: worker_pool.cpp
#include "net/worker_pool.h"

#include <algorithm>

namespace inferscope::net {

WorkerPool::WorkerPool(std::string name, unsigned threads, std::size_t max_waiting)
    : name_(std::move(name)), max_waiting_(max_waiting) {
  const unsigned n = std::max(1u, threads);
  threads_.reserve(n);
  for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::try_submit(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || waiting_.size() >= max_waiting_) return false;
    waiting_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

std::size_t WorkerPool::busy() const {
  std::lock_guard lock(mutex_);
  return running_ + waiting_.size();
}

void WorkerPool::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stopping and nothing left to run
    std::function<void()> job = std::move(waiting_.front());
    waiting_.pop_front();
    ++running_;
    lock.unlock();
    job();
    job = nullptr;  // release what the job captured before taking the lock again
    lock.lock();
    --running_;
  }
}

}  // namespace inferscope::net
