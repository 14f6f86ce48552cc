/// \file buffer.cuh
/// \brief RAII ownership of device memory.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "check.cuh"

namespace tutorial {

/// An array of \p T in device memory (cudaMalloc), freed when it goes out of scope.
/// Move-only: copying would mean two owners of one allocation.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates \p count elements (uninitialised, like cudaMalloc).
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count_ > 0) CUDA_CHECK(cudaMalloc(&data_, bytes()));
  }
  ~DeviceBuffer() { cudaFree(data_); }  // no check: a destructor must not exit

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }

  T* data() const { return data_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  /// Copies \p host (which must hold size() elements) to the device.
  void upload(const std::vector<T>& host) {
    CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  /// Copies the buffer back into a new host vector.
  std::vector<T> download() const {
    std::vector<T> host(count_);
    CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  /// Fills every byte with 0xFF. For float that is a NaN, so an element the kernel
  /// forgot to write cannot pass a check by accident.
  void poison() { CUDA_CHECK(cudaMemset(data_, 0xFF, bytes())); }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace tutorial
