// fc_port.h: the portability layer of flowchat's GPU kernels. The same .cu
// sources compile with NVRTC (CUDA 11.2 to 13) and, for the ROCm backend,
// with hipRTC. Neither compiler is given any system header: NVRTC 11.x has
// no CUDA headers built in (cuda_fp16.h included), so everything a kernel
// needs beyond the language and the built-in math functions is here.
//
// A kernel's arithmetic has a plain-Go twin in native/cuda (twin.go) that
// follows the same order of operations; change both together.
#ifndef FC_PORT_H
#define FC_PORT_H

#if defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#define FC_HIP 1
#endif

// FC_WARP_SIZE is a compile-time constant: 32 on NVIDIA, the wavefront size
// (64 on CDNA/GCN, 32 or 64 on RDNA) on AMD. -DFC_WARP_SIZE=n overrides.
#ifndef FC_WARP_SIZE
#if defined(FC_HIP) && defined(__AMDGCN_WAVEFRONT_SIZE)
#define FC_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#elif defined(FC_HIP)
#define FC_WARP_SIZE 64
#else
#define FC_WARP_SIZE 32
#endif
#endif

#define FC_KERNEL extern "C" __global__
#define FC_DEVICE static __device__ __forceinline__

typedef unsigned char fc_u8;
typedef signed char fc_i8;
typedef unsigned short fc_u16;
typedef unsigned int fc_u32;
typedef unsigned long long fc_size; // size_t is not predefined in NVRTC 11

// fc_shfl_xor returns v from lane (lane ^ mask) of the warp.
#ifdef FC_HIP
FC_DEVICE float fc_shfl_xor(float v, int mask) { return __shfl_xor(v, mask, FC_WARP_SIZE); }
FC_DEVICE double fc_shfl_xor_d(double v, int mask) { return __shfl_xor(v, mask, FC_WARP_SIZE); }
#else
FC_DEVICE float fc_shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask, FC_WARP_SIZE); }
FC_DEVICE double fc_shfl_xor_d(double v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask, FC_WARP_SIZE); }
#endif

// fc_half_to_float widens an IEEE binary16 value exactly. CUDA: inline PTX,
// since cuda_fp16.h is not available to NVRTC 11.x; HIP: clang's _Float16;
// the CPU test shim (testdata/cpushim) brings its own.
#if defined(FC_CPU_SHIM)
FC_DEVICE float fc_half_to_float(fc_u16 h) { return fc_shim_half_to_float(h); }
#elif defined(FC_HIP)
FC_DEVICE float fc_half_to_float(fc_u16 h) {
	union { fc_u16 u; _Float16 f; } c;
	c.u = h;
	return (float)c.f;
}
#else
FC_DEVICE float fc_half_to_float(fc_u16 h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}
#endif

// fc_float_to_half rounds a float to IEEE binary16, to nearest even
// (overflow to ±Inf; any NaN becomes 0x7fff, PTX's canonical NaN). CUDA:
// inline PTX; HIP: clang's _Float16 conversion (also to nearest even);
// the CPU shim brings its own.
#if defined(FC_CPU_SHIM)
FC_DEVICE fc_u16 fc_float_to_half(float f) { return fc_shim_float_to_half(f); }
#elif defined(FC_HIP)
FC_DEVICE fc_u16 fc_float_to_half(float f) {
	if (f != f) return 0x7fff;
	union { _Float16 f; fc_u16 u; } c;
	c.f = (_Float16)f;
	return c.u;
}
#else
FC_DEVICE fc_u16 fc_float_to_half(float f) {
	fc_u16 h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}
#endif

// fc_load_u16 reads a little-endian 16-bit value at a 2-byte aligned
// address (GGML block scales are 2-byte aligned, never 4).
FC_DEVICE fc_u16 fc_load_u16(const fc_u8* p) { return *(const fc_u16*)p; }

// fc_load_u32 reads a little-endian 32-bit value at a 2-byte aligned
// address (the high bits of Q5_0/Q5_1 follow a 2-byte scale).
FC_DEVICE fc_u32 fc_load_u32(const fc_u8* p) { return fc_load_u16(p) | (fc_u32)fc_load_u16(p + 2) << 16; }

// Vector loads for the chunked decode kernels (matmul.cu), and a store for
// the F16 dequantization: 4 floats or 8 halves at a 16-byte aligned
// address in one instruction on the GPU
// (an aligned struct copy); element by element in the CPU shim, whose
// buffers are not 16-byte aligned. Only the loads differ: the values and
// the order they are used in are the same.
struct alignas(16) fc_f32x4 { float v[4]; };
struct alignas(16) fc_u16x8 { fc_u16 v[8]; };
#if defined(FC_CPU_SHIM)
FC_DEVICE void fc_load_f32x4(const float* p, float* o) {
	for (int i = 0; i < 4; i++) o[i] = p[i];
}
FC_DEVICE void fc_load_u16x8(const fc_u16* p, fc_u16* o) {
	for (int i = 0; i < 8; i++) o[i] = p[i];
}
FC_DEVICE void fc_store_u16x8(fc_u16* p, const fc_u16* v) {
	for (int i = 0; i < 8; i++) p[i] = v[i];
}
#else
FC_DEVICE void fc_load_f32x4(const float* p, float* o) {
	const fc_f32x4 t = *(const fc_f32x4*)p;
#pragma unroll
	for (int i = 0; i < 4; i++) o[i] = t.v[i];
}
FC_DEVICE void fc_load_u16x8(const fc_u16* p, fc_u16* o) {
	const fc_u16x8 t = *(const fc_u16x8*)p;
#pragma unroll
	for (int i = 0; i < 8; i++) o[i] = t.v[i];
}
FC_DEVICE void fc_store_u16x8(fc_u16* p, const fc_u16* v) {
	fc_u16x8 t;
#pragma unroll
	for (int i = 0; i < 8; i++) t.v[i] = v[i];
	*(fc_u16x8*)p = t;
}
#endif

// fc_bf16_to_float widens a bfloat16 value (a float32's high half) exactly.
FC_DEVICE float fc_bf16_to_float(fc_u16 h) { return __uint_as_float((fc_u32)h << 16); }

// Butterfly reductions: after the loop every lane holds the same value
// (a + b == b + a exactly), summed in the order v[l] + v[l ^ m] for
// m = W/2, W/4, …, 1. twin.go's warpSum is this loop.
FC_DEVICE float fc_warp_sum(float v) {
#pragma unroll
	for (int m = FC_WARP_SIZE / 2; m > 0; m >>= 1) v += fc_shfl_xor(v, m);
	return v;
}

FC_DEVICE double fc_warp_sum_d(double v) {
#pragma unroll
	for (int m = FC_WARP_SIZE / 2; m > 0; m >>= 1) v += fc_shfl_xor_d(v, m);
	return v;
}

FC_DEVICE float fc_warp_max(float v) {
#pragma unroll
	for (int m = FC_WARP_SIZE / 2; m > 0; m >>= 1) v = fmaxf(v, fc_shfl_xor(v, m));
	return v;
}

// Block reductions over blockDim.x threads (a multiple of FC_WARP_SIZE, at
// most FC_WARP_SIZE warps): each warp reduces, lane 0 of warp w stores
// sh[w], then every warp reduces sh[0..nw) padded with the identity, so
// every thread gets the result without another barrier. sh must hold
// FC_WARP_SIZE values and may be reused by the next call.
FC_DEVICE float fc_block_sum(float v, float* sh) {
	int lane = threadIdx.x % FC_WARP_SIZE, w = threadIdx.x / FC_WARP_SIZE, nw = blockDim.x / FC_WARP_SIZE;
	v = fc_warp_sum(v);
	__syncthreads();
	if (lane == 0) sh[w] = v;
	__syncthreads();
	return fc_warp_sum(lane < nw ? sh[lane] : 0.0f);
}

FC_DEVICE double fc_block_sum_d(double v, double* sh) {
	int lane = threadIdx.x % FC_WARP_SIZE, w = threadIdx.x / FC_WARP_SIZE, nw = blockDim.x / FC_WARP_SIZE;
	v = fc_warp_sum_d(v);
	__syncthreads();
	if (lane == 0) sh[w] = v;
	__syncthreads();
	return fc_warp_sum_d(lane < nw ? sh[lane] : 0.0);
}

FC_DEVICE float fc_block_max(float v, float* sh) {
	int lane = threadIdx.x % FC_WARP_SIZE, w = threadIdx.x / FC_WARP_SIZE, nw = blockDim.x / FC_WARP_SIZE;
	v = fc_warp_max(v);
	__syncthreads();
	if (lane == 0) sh[w] = v;
	__syncthreads();
	return fc_warp_max(lane < nw ? sh[lane] : -__int_as_float(0x7f800000));
}

// fc_expf_ggml is ggml's vectorized expf (ggml_v_expf, ARM optimized
// routines; max error 1.45 ulp + 0.5) lane by lane, as engine/ggml's
// ExpGGML: built from fused multiply-adds and bit operations only, so the
// GPU gives the CPU engine's exponentials bit for bit.
FC_DEVICE float fc_expf_ggml(float x) {
	const float r = 0x1.8p23f;
	float z = fmaf(x, 0x1.715476p+0f, r);
	float n = z - r;
	float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
	fc_u32 e = __float_as_uint(z) << 23;
	float k = __uint_as_float(e + __float_as_uint(1.0f));
	float u = b * b;
	float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
		0x1.ffffecp-1f * b);
	float an = fabsf(n);
	if (!(an > 126.0f)) return fmaf(j, k, k);
	fc_u32 g = n <= 0.0f ? 0x82000000u : 0u;
	float s1 = __uint_as_float(g + 0x7f000000u);
	float s2 = __uint_as_float(e - g);
	if (an > 192.0f) return s1 * s1;
	return fmaf(s2, j, s2) * s1;
}

#endif // FC_PORT_H
