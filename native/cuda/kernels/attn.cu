// Decode attention over a float32, F16 or Q8_0 KV cache, one query token: for
// query head h (KV head h / (n_head / n_kv_head), grouped-query attention),
//   s_j = scale · q·k_j, p_j = exp(s_j − max s) / Σ exp, out = Σ p_j v_j
// over the n_kv cached positions. This is the classic (unsplit) softmax;
// the split FlashDecoding++ form is future work.
//
// Launch: one block of ATTN_THREADS per query head; grid (n_head). Q is
// n_head·head_dim floats, K and V hold n_kv rows of kv_stride elements
// (float32, binary16 for the _f16 kernel, Q8_0 blocks for _q8_0: whole
// blocks, head_dim a multiple of 32; widened exactly as read; KV head g
// at g·head_dim), S is scratch of n_head·n_kv floats, O
// n_head·head_dim. Warp w scores keys w, w + nw, …, its lanes splitting
// the dimensions; then thread k owns output dimensions k, k +
// ATTN_THREADS, ….
#include "fc_port.h"

#define ATTN_THREADS 128

// A Q8_0 cache row is kv_stride/32 blocks of fp16 d and 32 int8 q (34
// bytes); element i of the cache is d·q of block i/32.
struct attn_q8_0 {
	fc_u8 b[34];
};

// attn_load is element i of a cache, widened exactly as it is read (for
// Q8_0 as ggml's DequantizeRow: (float)q · d).
FC_DEVICE float attn_load(const float* p, fc_size i) { return p[i]; }
FC_DEVICE float attn_load(const fc_u16* p, fc_size i) { return fc_half_to_float(p[i]); }
FC_DEVICE float attn_load(const attn_q8_0* p, fc_size i) {
	const fc_u8* blk = p[i / 32].b;
	return (float)(fc_i8)blk[2 + i % 32] * fc_half_to_float(fc_load_u16(blk));
}

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
	const fc_size kv0 = (fc_size)g * head_dim; // KV head g's first element in a row
	float* s = S + (fc_size)h * n_kv;

	for (int j = w; j < n_kv; j += nw) {
		const fc_size kj = (fc_size)j * kv_stride + kv0;
		float d = 0.0f;
		for (int i = lane; i < head_dim; i += FC_WARP_SIZE) d = fmaf(q[i], attn_load(K, kj + i), d);
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
		for (int j = 0; j < n_kv; j++) acc = fmaf(s[j], attn_load(V, (fc_size)j * kv_stride + kv0 + i), acc);
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

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_decode_q8_0(const float* __restrict__ Q, const attn_q8_0* __restrict__ K, const attn_q8_0* __restrict__ V,
	float* __restrict__ S, float* __restrict__ O, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	attn_decode<attn_q8_0>(Q, K, V, S, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

// kv_store_f16: Y[i] = X[i] rounded to binary16 (to nearest even), the
// F16 cache's row store: ggml's FP32ToFP16 bit for bit on every non-NaN.
// Launch: block (ATTN_THREADS), any grid; a grid-stride loop covers n.
FC_KERNEL void __launch_bounds__(ATTN_THREADS)
kv_store_f16(const float* __restrict__ X, fc_u16* __restrict__ Y, int n) {
	for (int i = blockIdx.x * ATTN_THREADS + threadIdx.x; i < n; i += gridDim.x * ATTN_THREADS) Y[i] = fc_float_to_half(X[i]);
}

// kv_store_q8_0: the n floats of X (n a multiple of 32) as Q8_0 blocks at
// Y, as the CPU's Q8_0 cache stores them (ggml's quantize_row_q8_0,
// engine/ggml's QuantizeActivation): amax = max |x|, d = amax/127 stored
// as fp16, q = x·(127/amax) rounded to nearest even (0 where amax is 0).
// Launch: block (ATTN_THREADS), any grid; thread t of the grid-stride
// loop quantizes block t.
FC_KERNEL void __launch_bounds__(ATTN_THREADS)
kv_store_q8_0(const float* __restrict__ X, fc_u8* __restrict__ Y, int n) {
	for (int b = blockIdx.x * ATTN_THREADS + threadIdx.x; b < n / 32; b += gridDim.x * ATTN_THREADS) {
		const float* x = X + (fc_size)b * 32;
		fc_u8* y = Y + (fc_size)b * 34;
		float amax = 0.0f;
		for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
		const float d = amax / 127.0f, id = amax != 0.0f ? 127.0f / amax : 0.0f;
		const fc_u16 dh = fc_float_to_half(d);
		y[0] = (fc_u8)dh, y[1] = (fc_u8)(dh >> 8);
		for (int j = 0; j < 32; j++) y[2 + j] = (fc_u8)(fc_i8)(int)rintf(x[j] * id);
	}
}
