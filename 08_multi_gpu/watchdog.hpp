/// \file watchdog.hpp
/// \brief Every wait in chapter 08 under one deadline: a watchdog thread that ends a hung job.
///
/// A collective waits for every GPU. When one never comes (its process stopped, its stream stuck
/// behind other work), whatever waits for it waits forever: cudaStreamSynchronize, a blocking
/// NCCL call, an MPI barrier. PyTorch's answer is a watchdog thread per process that aborts NCCL
/// once a collective has run too long; this is the same, with the deadline printed and the culprit
/// named. The main thread marks each wait (a Wait object: two atomic stores, no synchronization,
/// so timed batches pay nothing); the watchdog looks ten times per deadline, and when one wait has
/// lasted longer, it says which wait, asks the program who did not arrive, aborts what can hang
/// (NCCL's communicators), and ends the process with exit status 1.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace multi_gpu {

/// The default of every chapter 08 program's --deadline-ms: far longer than any of its waits takes
/// when all is well (the longest, a batch at 1 GiB, takes under a second), far shorter than a minute.
constexpr long long kDefaultDeadlineMs = 20'000;

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;

  /// Starts the watchdog thread; \p self names this process in its message ("08_allreduce", "rank 2").
  Watchdog(long long deadline_ms, std::string self) : deadline_ms_(deadline_ms), self_(std::move(self)) {
    installed() = this;
    thread_ = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    installed() = nullptr;
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Says who did not arrive; called on the watchdog's thread when a wait passed the deadline.
  void set_explain(std::function<std::string()> explain) { explain_ = std::move(explain); }
  /// Stops what would keep hanging (NCCL's kernels: ncclCommAbort); each gets 5 s, then the process ends.
  void add_abort(std::function<void()> abort) { aborts_.push_back(std::move(abort)); }
  /// Called on the watchdog's thread at every look (the MPI program posts "alive" there).
  void set_tick(std::function<void()> tick) { tick_ = std::move(tick); }
  long long deadline_ms() const { return deadline_ms_; }

  /// The watchdog of this process, if one is running.
  static Watchdog*& installed() {
    static Watchdog* watchdog = nullptr;
    return watchdog;
  }

  /// Marks the main thread as waiting for \p what (a string literal) while it lives; no-op
  /// without a watchdog. A wait inside another restarts the clock and puts the outer one back after.
  class Wait {
   public:
    explicit Wait(const char* what) : dog_(installed()) {
      if (!dog_) return;
      outer_what_ = dog_->what_.exchange(what);
      outer_since_ = dog_->since_ns_.exchange(now_ns());
    }
    ~Wait() {
      if (!dog_) return;
      dog_->since_ns_.store(outer_since_ ? now_ns() : 0);
      dog_->what_.store(outer_what_);
    }
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;

   private:
    Watchdog* dog_;
    const char* outer_what_ = nullptr;
    long long outer_since_ = 0;
  };

  static long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  }

 private:
  void watch() {
    const auto look = std::chrono::milliseconds(std::max(1LL, std::min(100LL, deadline_ms_ / 10)));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, look, [this] { return stopping_; })) {
      if (tick_) tick_();
      const long long since = since_ns_.load();
      if (since && now_ns() - since > deadline_ms_ * 1'000'000) expire(since);
    }
  }

  [[noreturn]] void expire(long long since) {
    const char* what = what_.load();
    const std::string who = explain_ ? explain_() : std::string();
    std::fprintf(stderr, "%s: %s not done after %.1f s (deadline %.1f s, --deadline-ms)%s%s. Aborting.\n",
                 self_.c_str(), what ? what : "a wait", (now_ns() - since) / 1e9, deadline_ms_ / 1e3,
                 who.empty() ? "" : ": ", who.c_str());
    std::fflush(stderr);
    std::fflush(stdout);
    // Each abort may itself hang on a broken peer: it runs on a thread of its own and gets 5 s.
    for (const auto& abort : aborts_) {
      auto done = std::make_shared<std::atomic<bool>>(false);
      std::thread([abort, done] {
        abort();
        done->store(true);
      }).detach();
      const auto give_up = Clock::now() + std::chrono::seconds(5);
      while (!done->load() && Clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (!done->load()) std::fprintf(stderr, "%s: an abort did not return within 5 s; ending anyway.\n", self_.c_str());
    }
    std::fflush(stderr);
    _exit(1);  // no destructors: they would wait for the GPUs that hang
  }

  const long long deadline_ms_;
  const std::string self_;
  std::function<std::string()> explain_;
  std::vector<std::function<void()>> aborts_;
  std::function<void()> tick_;
  std::atomic<long long> since_ns_{0};
  std::atomic<const char*> what_{nullptr};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

/// A wait the watchdog watches: `auto wait = multi_gpu::waiting("the all-reduce check");`.
inline Watchdog::Wait waiting(const char* what) { return Watchdog::Wait(what); }

}  // namespace multi_gpu
