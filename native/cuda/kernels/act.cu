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

// argmax_f32: Y[r] = the index of the largest of the n floats of row r of
// X, the lowest index on ties: engine/sample's Greedy on rows without NaN.
// Thread k scans elements k, k + ACT_THREADS, … keeping the first largest;
// then a tree over shared memory (strides 128, 64, …, 1) keeps, of each
// pair, the larger value, or the lower index when they are equal. An
// empty row gives −1. Launch: grid (rows), block (ACT_THREADS).
FC_KERNEL void __launch_bounds__(ACT_THREADS)
argmax_f32(const float* __restrict__ X, int* __restrict__ Y, int n) {
	__shared__ float sv[ACT_THREADS];
	__shared__ int si[ACT_THREADS];
	const float* x = X + (fc_size)blockIdx.x * n;
	float bv = -__int_as_float(0x7f800000);
	int bi = -1;
	for (int i = threadIdx.x; i < n; i += ACT_THREADS)
		if (bi < 0 || x[i] > bv) bv = x[i], bi = i;
	sv[threadIdx.x] = bv, si[threadIdx.x] = bi;
	for (unsigned s = ACT_THREADS / 2; s > 0; s >>= 1) {
		__syncthreads();
		if (threadIdx.x < s) {
			const float ov = sv[threadIdx.x + s];
			const int oi = si[threadIdx.x + s];
			if (oi >= 0 && (bi < 0 || ov > bv || (ov == bv && oi < bi))) bv = ov, bi = oi;
			sv[threadIdx.x] = bv, si[threadIdx.x] = bi;
		}
	}
	if (threadIdx.x == 0) Y[blockIdx.x] = bi;
}
