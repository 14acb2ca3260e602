// Element-wise activations and the row softmax.
#include "fc_port.h"

#define ACT_THREADS 256

// silu_mul_f32: H[i] = silu(G[i]) · U[i], silu(x) = x / (1 + e^−x), with
// e^−x evaluated in double and rounded once: engine/ggml's SiLUMul (a
// correctly rounded expf) bit for bit. H may alias G or U.
// Launch: block (ACT_THREADS), any grid; a grid-stride loop covers n.
FC_KERNEL void __launch_bounds__(ACT_THREADS)
silu_mul_f32(float* H, const float* G, const float* U, int n) {
	for (int i = blockIdx.x * ACT_THREADS + threadIdx.x; i < n; i += gridDim.x * ACT_THREADS) {
		const float x = G[i];
		const float e = (float)exp(-(double)x);
		H[i] = x / (1.0f + e) * U[i];
	}
}

// add_f32: Y[i] += X[i] (the residual connection). Launch: block
// (ACT_THREADS), any grid; a grid-stride loop covers n.
FC_KERNEL void __launch_bounds__(ACT_THREADS)
add_f32(float* Y, const float* X, int n) {
	for (int i = blockIdx.x * ACT_THREADS + threadIdx.x; i < n; i += gridDim.x * ACT_THREADS) Y[i] = Y[i] + X[i];
}

// softmax_f32 normalizes each row of n floats in place: m = max, e_i =
// fc_expf_ggml(x_i − m) (the CPU's exponential), x_i = e_i · (1/Σe) with Σe
// a float32 block sum. Launch: one block of ACT_THREADS per row; grid (rows).
FC_KERNEL void __launch_bounds__(ACT_THREADS)
softmax_f32(float* X, int n) {
	__shared__ float sh[FC_WARP_SIZE];
	float* x = X + (fc_size)blockIdx.x * n;
	float m = -__int_as_float(0x7f800000);
	for (int i = threadIdx.x; i < n; i += ACT_THREADS) m = fmaxf(m, x[i]);
	m = fc_block_max(m, sh);
	float sum = 0.0f;
	for (int i = threadIdx.x; i < n; i += ACT_THREADS) {
		const float e = fc_expf_ggml(x[i] - m);
		x[i] = e;
		sum += e;
	}
	const float inv = 1.0f / fc_block_sum(sum, sh);
	for (int i = threadIdx.x; i < n; i += ACT_THREADS) x[i] *= inv;
}
