// Decode attention over a float32 or F16 KV cache, one query token: for
// query head h (KV head h / (n_head / n_kv_head), grouped-query attention),
//   s_j = scale · q·k_j, p_j = exp(s_j − max s) / Σ exp, out = Σ p_j v_j
// over the n_kv cached positions. This is the classic (unsplit) softmax;
// the split FlashDecoding++ form is future work.
//
// Launch: one block of ATTN_THREADS per query head; grid (n_head). Q is
// n_head·head_dim floats, K and V hold n_kv rows of kv_stride elements
// (float32, or binary16 for the _f16 kernel, widened exactly as read; KV
// head g at g·head_dim), S is scratch of n_head·n_kv floats, O
// n_head·head_dim. Warp w scores keys w, w + nw, …, its lanes splitting
// the dimensions; then thread k owns output dimensions k, k +
// ATTN_THREADS, ….
#include "fc_port.h"

#define ATTN_THREADS 128

FC_DEVICE float attn_load(const float* p) { return *p; }
FC_DEVICE float attn_load(const fc_u16* p) { return fc_half_to_float(*p); }

template <typename T>
FC_DEVICE void attn_decode(const float* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
	float* __restrict__ S, float* __restrict__ O, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	__shared__ float sh[FC_WARP_SIZE];
	const int h = blockIdx.x;
	const int g = h / (n_head / n_kv_head);
	const int lane = threadIdx.x % FC_WARP_SIZE, w = threadIdx.x / FC_WARP_SIZE;
	const int nw = ATTN_THREADS / FC_WARP_SIZE;
	const float* q = Q + (fc_size)h * head_dim;
	const T* k = K + (fc_size)g * head_dim;
	const T* v = V + (fc_size)g * head_dim;
	float* s = S + (fc_size)h * n_kv;

	for (int j = w; j < n_kv; j += nw) {
		const T* kj = k + (fc_size)j * kv_stride;
		float d = 0.0f;
		for (int i = lane; i < head_dim; i += FC_WARP_SIZE) d = fmaf(q[i], attn_load(kj + i), d);
		d = fc_warp_sum(d);
		if (lane == 0) s[j] = d * scale;
	}
	__syncthreads();
	float m = -__int_as_float(0x7f800000);
	for (int j = threadIdx.x; j < n_kv; j += ATTN_THREADS) m = fmaxf(m, s[j]);
	m = fc_block_max(m, sh);
	float sum = 0.0f;
	for (int j = threadIdx.x; j < n_kv; j += ATTN_THREADS) {
		const float e = fc_expf_ggml(s[j] - m);
		s[j] = e;
		sum += e;
	}
	const float inv = 1.0f / fc_block_sum(sum, sh); // its barriers publish s
	for (int i = threadIdx.x; i < head_dim; i += ATTN_THREADS) {
		float acc = 0.0f;
		for (int j = 0; j < n_kv; j++) acc = fmaf(s[j], attn_load(v + (fc_size)j * kv_stride + i), acc);
		O[(fc_size)h * head_dim + i] = acc * inv;
	}
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_decode_f32(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
	float* __restrict__ S, float* __restrict__ O, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	attn_decode<float>(Q, K, V, S, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_decode_f16(const float* __restrict__ Q, const fc_u16* __restrict__ K, const fc_u16* __restrict__ V,
	float* __restrict__ S, float* __restrict__ O, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	attn_decode<fc_u16>(Q, K, V, S, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

// kv_store_f16: Y[i] = X[i] rounded to binary16 (to nearest even), the
// F16 cache's row store: ggml's FP32ToFP16 bit for bit on every non-NaN.
// Launch: block (ATTN_THREADS), any grid; a grid-stride loop covers n.
FC_KERNEL void __launch_bounds__(ATTN_THREADS)
kv_store_f16(const float* __restrict__ X, fc_u16* __restrict__ Y, int n) {
	for (int i = blockIdx.x * ATTN_THREADS + threadIdx.x; i < n; i += gridDim.x * ATTN_THREADS) Y[i] = fc_float_to_half(X[i]);
}
