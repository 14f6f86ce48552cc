// The race against cuBLAS, made fair: every row is timed in rounds, each of its batches right
// after a batch of cuBLAS BF16, with the same warm-up, in a shuffled order per round, so that
// neither the GPU's temperature nor its power cap favours either side. While a batch runs, a host
// thread reads the SM clock, the power and the clock-event reasons through NVML every 2 ms; only
// readings made entirely inside a row's own batch count for it (power_window.hpp): a reader sees
// whether the software power cap held the clock down during that row, and which kernel spends more
// energy per FLOP than cuBLAS (mean power x time / FLOPs). Not NVML's energy counter: read over a
// 100-ms batch on an H100 it gave means above the 700 W limit (it advances in coarse steps).
//
// NVML is loaded at run time (dlopen of the driver's libnvidia-ml.so.1), not linked: a program
// linked to it would not even start where the driver is absent (a build machine running the
// usage tests). Without it every NVML column says "n/a".
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <tutorial/check.cuh>
#include <tutorial/timer.cuh>
#include <vector>

#include "power_window.hpp"

namespace tc {

/// The few NVML calls the race needs, looked up by name (their C signatures, from nvml.h).
class Nvml {
 public:
  Nvml() {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!library_) return;
    const auto find = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library_, name));
    };
    int (*init)() = nullptr;
    int (*by_bus_id)(const char*, Device*) = nullptr;
    find(init, "nvmlInit_v2");
    find(by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    find(shutdown_, "nvmlShutdown");
    find(clock_, "nvmlDeviceGetClockInfo");
    find(power_, "nvmlDeviceGetPowerUsage");
    find(fields_, "nvmlDeviceGetFieldValues");
    find(reasons_, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!init || !by_bus_id || !shutdown_ || init() != 0) return;
    initialized_ = true;
    // NVML numbers GPUs its own way (CUDA_VISIBLE_DEVICES does not renumber them): find CUDA's
    // current device by its PCI bus id.
    char bus_id[32] = {};
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    if (by_bus_id(bus_id, &device_) != 0) device_ = nullptr;
    instant_ = std::isfinite(instant_watts());
  }
  ~Nvml() {
    if (initialized_) shutdown_();
    if (library_) dlclose(library_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool usable() const { return device_ != nullptr; }
  /// Where the power comes from: nvmlDeviceGetPowerUsage averages over a second on recent GPUs,
  /// too slow for 100-ms batches; the instantaneous field (newer drivers) is what the race wants.
  const char* power_source() const {
    return !usable() ? "n/a" : instant_ ? "instantaneous (NVML_FI_DEV_POWER_INSTANT)" : "nvmlDeviceGetPowerUsage";
  }
  /// SM clock in MHz, power in W: NaN if NVML cannot say.
  double sm_mhz() const {
    unsigned mhz = 0;
    return usable() && clock_ && clock_(device_, kClockSm, &mhz) == 0 ? mhz : NAN;
  }
  double watts() const {
    if (instant_) return instant_watts();
    unsigned milliwatts = 0;
    return usable() && power_ && power_(device_, &milliwatts) == 0 ? milliwatts / 1e3 : NAN;
  }
  /// The clock-event reasons now (power_window.hpp says which bits count); false if NVML cannot say.
  bool clock_event_reasons(unsigned long long& reasons) const {
    return usable() && reasons_ && reasons_(device_, &reasons) == 0;
  }

 private:
  using Device = void*;  // nvmlDevice_t
  static constexpr int kClockSm = 1;                       // NVML_CLOCK_SM
  static constexpr unsigned kPowerInstant = 186;          // NVML_FI_DEV_POWER_INSTANT, in mW
  struct FieldValue {                                     // nvmlFieldValue_t
    unsigned field_id, scope_id;
    long long timestamp, latency_us;
    int value_type, result;
    union {
      double d;
      unsigned u;
      unsigned long ul;
      unsigned long long ull;
      long long sll;
      int si;
      unsigned short us;
    } value;
  };
  double instant_watts() const {
    FieldValue field{};
    field.field_id = kPowerInstant;
    if (!usable() || !fields_ || fields_(device_, 1, &field) != 0 || field.result != 0) return NAN;
    switch (field.value_type) {  // nvmlValueType_t
      case 0: return field.value.d / 1e3;
      case 1: return field.value.u / 1e3;
      case 2: return double(field.value.ul) / 1e3;
      case 3: return double(field.value.ull) / 1e3;
      case 4: return double(field.value.sll) / 1e3;
      case 5: return field.value.si / 1e3;
      default: return NAN;
    }
  }
  void* library_ = nullptr;
  bool initialized_ = false;
  Device device_ = nullptr;
  bool instant_ = false;
  int (*shutdown_)() = nullptr;
  int (*clock_)(Device, int, unsigned*) = nullptr;
  int (*power_)(Device, unsigned*) = nullptr;
  int (*fields_)(Device, int, FieldValue*) = nullptr;
  int (*reasons_)(Device, unsigned long long*) = nullptr;
};

/// A host thread that reads the clock, power and clock-event reasons every kSampleMs while a
/// batch runs, each reading stamped with when it began and ended; window() (power_window.hpp)
/// keeps only the readings made entirely inside the batch.
class Sampler {
 public:
  explicit Sampler(const Nvml& nvml) : nvml_(nvml) {
    if (nvml_.usable()) thread_ = std::thread([this] { loop(); });
  }
  ~Sampler() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  /// Starts a window (the GPU is idle and the batch is about to be enqueued).
  void begin() {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_.clear();
    begin_s_ = now();
    open_ = true;
  }
  /// Ends the window (the batch has finished) and returns what was seen inside it.
  Drawn end() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = false;
    return window(samples_, begin_s_, now());
  }
  /// What NVML reads with nothing running for \p ms: a control for the batches' readings.
  Drawn idle(int ms) {
    CUDA_CHECK(cudaDeviceSynchronize());
    begin();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return end();
  }

 private:
  static constexpr int kSampleMs = 2;
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void loop() {
    while (!stop_) {
      NvmlSample s;
      s.start_s = now();
      s.mhz = nvml_.sm_mhz();
      s.watts = nvml_.watts();
      s.reasons_known = nvml_.clock_event_reasons(s.reasons);
      s.end_s = now();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (open_) samples_.push_back(s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kSampleMs));
    }
  }
  const Nvml& nvml_;
  std::mutex mutex_;
  std::vector<NvmlSample> samples_;
  double begin_s_ = 0;
  bool open_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// One batch: tutorial::time_gpu's runs (\p warmup untimed, \p runs timed back to back between
/// events), NVML counting from the first timed run to the last. Appends each run's milliseconds
/// to \p samples.
template <typename Launch>
Drawn time_batch(Launch&& launch, int warmup, int runs, Sampler& sampler, std::vector<double>& samples) {
  Drawn drawn;
  const std::vector<double> batch = tutorial::time_gpu_runs(
      launch, tutorial::TimingPlan{warmup, runs}, nullptr, [&] { sampler.begin(); },
      [&] { drawn = sampler.end(); });
  samples.insert(samples.end(), batch.begin(), batch.end());
  return drawn;
}

}  // namespace tc
