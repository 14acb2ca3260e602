// A CPU execution shim for the kernels in ../../kernels: enough of CUDA's
// device-side language for g++ to compile the .cu files unchanged and run
// them on the host, one block at a time, one std::thread per CUDA thread.
// __syncthreads is a barrier over the block's threads; the warp shuffles
// exchange values through per-warp slots between two barriers over the
// warp's lanes. It is a test tool (see cpushim_test.go), never part of the
// product, which stays cgo-free.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <pthread.h>

#define FC_CPU_SHIM 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __shared__ static
#define __constant__
#define __launch_bounds__(n)

using std::min;
using std::max;

struct fc_dim3 { unsigned x = 1, y = 1, z = 1; };
extern thread_local fc_dim3 threadIdx, blockIdx;
extern fc_dim3 blockDim, gridDim;

struct fc_shim_warp {
	pthread_barrier_t bar;
	double slot[64];
};
extern thread_local fc_shim_warp* fc_shim_my_warp;
extern thread_local int fc_shim_lane;
extern pthread_barrier_t fc_shim_block_barrier;

static inline void __syncthreads() { pthread_barrier_wait(&fc_shim_block_barrier); }

template <typename T> static inline T fc_shim_shfl_xor(T v, int mask) {
	fc_shim_warp* w = fc_shim_my_warp;
	w->slot[fc_shim_lane] = (double)v; // exact for float and double
	pthread_barrier_wait(&w->bar);
	T r = (T)w->slot[fc_shim_lane ^ mask];
	pthread_barrier_wait(&w->bar);
	return r;
}
static inline float __shfl_xor_sync(unsigned, float v, int m, int) { return fc_shim_shfl_xor(v, m); }
static inline double __shfl_xor_sync(unsigned, double v, int m, int) { return fc_shim_shfl_xor(v, m); }

static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }

static inline float fc_shim_half_to_float(uint16_t h) {
	uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
	if (e == 0x1f) return __uint_as_float(sign | 0x7f800000u | m << 13);
	if (e != 0) return __uint_as_float(sign | (e + 112) << 23 | m << 13);
	float v = (float)m * (1.0f / 16777216.0f);
	return sign ? -v : v;
}

// fc_shim_float_to_half rounds to binary16, to nearest even; NaN is 0x7fff.
static inline uint16_t fc_shim_float_to_half(float f) {
	uint32_t b = __float_as_uint(f), sign = (b >> 16) & 0x8000, mant = b & 0x7fffff;
	int exp = (int)((b >> 23) & 0xff);
	if (exp == 0xff) return mant ? 0x7fff : (uint16_t)(sign | 0x7c00);
	int e = exp - 112;
	if (e > 0) {
		if (e >= 0x1f) return (uint16_t)(sign | 0x7c00);
		uint32_t h = (uint32_t)e << 10 | mant >> 13, rest = mant & 0x1fff;
		if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; // may carry into the exponent, up to Inf
		return (uint16_t)(sign | h);
	}
	unsigned s = (unsigned)(126 - exp);
	if (exp == 0 || s > 25) return (uint16_t)sign;
	uint32_t m = mant | 0x800000, q = m >> s, rest = m & ((1u << s) - 1), half = 1u << (s - 1);
	if (rest > half || (rest == half && (q & 1))) q++;
	return (uint16_t)(sign | q);
}
