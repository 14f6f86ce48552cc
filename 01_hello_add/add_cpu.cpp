// add_cpu.cpp: the loop that chapter 01 moves to the GPU, on the CPU first.
//
// Two arrays of 2^20 floats, x = 1 and y = 2; add() computes y = x + y one element
// after another. Every element must then be 3, exactly: 1 + 2 is exact in float.
//   g++ -std=c++17 -O2 -o add_cpu add_cpu.cpp && ./add_cpu
#include <cmath>
#include <cstdio>
#include <vector>

// [excerpt:add]
void add(int n, const float* x, float* y) {
  for (int i = 0; i < n; ++i) y[i] = x[i] + y[i];
}
// [/excerpt:add]

int main(int argc, char** argv) {
  if (argc > 1) {  // like add.cu: nothing to set, so an argument is a mistake, not ignored
    std::fprintf(stderr, "%s takes no arguments (to change the size, edit n in add_cpu.cpp)\n", argv[0]);
    return 2;
  }
  const int n = 1 << 20;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);

  add(n, x.data(), y.data());

  // The largest difference from 3. Written out rather than with fmax, which returns the
  // other argument when one is NaN: a NaN must not read "Max error: 0".
  float max_error = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float error = std::fabs(y[i] - 3.0f);
    if (std::isnan(error) || error > max_error) max_error = error;
  }
  std::printf("Max error: %g  (y = x + y on the CPU, every element 3)\n", max_error);
  return max_error == 0.0f ? 0 : 1;
}
