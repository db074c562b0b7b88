// File: worker_pool.h
// WorkerPool is a bounded pool of threads for blocking work (the Router's blocking routes run on
// one): `threads` workers and at most `max_waiting` jobs waiting for one; try_submit refuses a job
// instead of queueing more, so a stalled dependency costs a bounded number of threads and a
// bounded queue, never unbounded memory. Example:
//   WorkerPool pool("prometheus", 2, 16); if (!pool.try_submit([] { slow_query(); })) reject();
// Thread-safe. The destructor runs the jobs still waiting, then joins the workers.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace inferscope::net {

class WorkerPool {
 public:
  // WorkerPool starts `threads` (at least 1) workers at once.
  WorkerPool(std::string name, unsigned threads, std::size_t max_waiting);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // try_submit queues `job` for the next free worker; false (job not taken) when `max_waiting`
  // jobs already wait. Jobs must not throw.
  bool try_submit(std::function<void()> job);

  const std::string& name() const { return name_; }
  // busy returns the jobs running plus waiting (for tests and status).
  std::size_t busy() const;

 private:
  void work();

  const std::string name_;
  const std::size_t max_waiting_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> waiting_;
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace inferscope::net
