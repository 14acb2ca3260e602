// Tiled matrix products for prefill: Y[c][r] = Σ_i W[r][i] · X[c][i] for
// weight rows r < rows and activation columns c < cols, when cols is large
// (a prompt's tokens; launches.go's MatMulTiled has the rule). matmul.cu's
// matvec reads every weight once per MM_MAX_COLS columns; here a block
// dequantizes a tile of MT_ROWS weight rows × MT_K elements once into
// shared memory (as float32) and uses it for MT_COLS columns, whose
// activations are staged in shared memory beside it.
//
// Launch: block (MT_THREADS), grid (ceil(rows / MT_ROWS), ceil(cols /
// MT_COLS)); W, X, Y as matmul.cu's. Thread t of a block computes the
// MT_SUB × MT_SUB outputs of rows r0 + t%16 + 16i and columns
// c0 + t/16 + 16j (i, j < MT_SUB), strided so that a warp's shared-memory
// reads fall in distinct banks or broadcast.
//
// Accumulation order: every output is one fmaf chain over i = 0, 1, …,
// n−1 in order, from 0.0f: acc = fmaf(w_i, x_i, acc), w_i the dequantized
// weight (mm_blocks.h's decoders, so engine/ggml's DequantizeRow values).
// The tiles change which thread holds an accumulator, never the order, so
// the result does not depend on the warp size; twin_tiled.go's mtTwin is
// this chain. Compiled with --fmad=false like every source here.
//
// Shared memory: 2 · 64 · 33 · 4 = 16.5 KiB, static (well under 48 KiB on
// every architecture); rows padded to 33 floats against bank conflicts.
#include "fc_port.h"
#include "mm_blocks.h"

#define MT_ROWS 64
#define MT_COLS 64
#define MT_K 32
#define MT_SUB 4
#define MT_THREADS 256

typedef float mt_tile[MT_K + 1];

// mt_unit_t fills a weight tile from a unit decoder T (mm_blocks.h):
// threads t < MT_ROWS each decode the unit k0/32 of row r0 + t; rows past
// the matrix are zeros.
template <typename T>
struct mt_unit_t {
	FC_DEVICE void fill(const fc_u8* W, int n, int rows, int r0, int k0, int, mt_tile* ws) {
		const int t = threadIdx.x;
		if (t >= MT_ROWS) return;
		if (r0 + t >= rows) {
#pragma unroll
			for (int j = 0; j < MT_K; j++) ws[t][j] = 0.0f;
			return;
		}
		const int u = k0 / 32;
		const fc_u8* row = W + (fc_size)(r0 + t) * (n / 32 / T::per) * T::bytes;
		T::unit(row + (fc_size)(u / T::per) * T::bytes, u % T::per, ws[t]);
	}
};

// Float weights: element e of the tile (row e / MT_K, column e % MT_K) by
// thread e mod MT_THREADS, so a warp reads consecutive elements of a row.
// E::at(W, i) is element i of the matrix widened exactly to float32.
template <typename E>
struct mt_float_t {
	FC_DEVICE void fill(const fc_u8* W, int n, int rows, int r0, int k0, int kn, mt_tile* ws) {
		for (int e = threadIdx.x; e < MT_ROWS * MT_K; e += MT_THREADS) {
			const int r = e / MT_K, k = e % MT_K;
			ws[r][k] = (r0 + r < rows && k < kn) ? E::at(W, (fc_size)(r0 + r) * n + k0 + k) : 0.0f;
		}
	}
};

struct mt_f32_e {
	FC_DEVICE float at(const fc_u8* W, fc_size i) { return ((const float*)W)[i]; }
};
struct mt_f16_e {
	FC_DEVICE float at(const fc_u8* W, fc_size i) { return fc_half_to_float(((const fc_u16*)W)[i]); }
};
struct mt_bf16_e {
	FC_DEVICE float at(const fc_u8* W, fc_size i) { return fc_bf16_to_float(((const fc_u16*)W)[i]); }
};

// mt_tiled is the tiled product with weight tiles filled by L. n is whole
// blocks of the weight type (float types: any n; the last k step is short).
template <typename L>
FC_DEVICE void mt_tiled(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	__shared__ mt_tile ws[MT_ROWS], xs[MT_COLS];
	const int t = threadIdx.x, tr = t % 16, tc = t / 16;
	const int r0 = blockIdx.x * MT_ROWS, c0 = blockIdx.y * MT_COLS;
	float acc[MT_SUB][MT_SUB];
#pragma unroll
	for (int i = 0; i < MT_SUB; i++)
#pragma unroll
		for (int j = 0; j < MT_SUB; j++) acc[i][j] = 0.0f;
	for (int k0 = 0; k0 < n; k0 += MT_K) {
		const int kn = min(MT_K, n - k0);
		L::fill(W, n, rows, r0, k0, kn, ws);
		for (int e = t; e < MT_COLS * MT_K; e += MT_THREADS) {
			const int c = e / MT_K, k = e % MT_K;
			xs[c][k] = (c0 + c < cols && k < kn) ? X[(fc_size)(c0 + c) * n + k0 + k] : 0.0f;
		}
		__syncthreads();
		for (int k = 0; k < kn; k++) {
			float a[MT_SUB], b[MT_SUB];
#pragma unroll
			for (int i = 0; i < MT_SUB; i++) a[i] = ws[tr + 16 * i][k];
#pragma unroll
			for (int j = 0; j < MT_SUB; j++) b[j] = xs[tc + 16 * j][k];
#pragma unroll
			for (int i = 0; i < MT_SUB; i++)
#pragma unroll
				for (int j = 0; j < MT_SUB; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
		}
		__syncthreads();
	}
#pragma unroll
	for (int j = 0; j < MT_SUB; j++) {
		const int c = c0 + tc + 16 * j;
#pragma unroll
		for (int i = 0; i < MT_SUB; i++) {
			const int r = r0 + tr + 16 * i;
			if (r < rows && c < cols) Y[(fc_size)c * rows + r] = acc[i][j];
		}
	}
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_f32(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_float_t<mt_f32_e> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_f16(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_float_t<mt_f16_e> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_bf16(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_float_t<mt_bf16_e> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q8_0(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q8_0_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q4_0(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q4_0_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q4_1(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q4_1_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q5_0(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q5_0_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q5_1(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q5_1_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_iq4_nl(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_iq4_nl_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q2_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q2_k_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q3_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q3_k_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q4_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q4_k_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q5_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q5_k_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_q6_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_q6_k_t> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_if_q8_b32(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_if_t<32, 36, 8, 0, 0, false> > >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_if_q8_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_if_t<64, 68, 8, 0, 0, false> > >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_if_q6_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_if_t<64, 52, 4, 2, 0, false> > >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_if_q5_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_if_t<64, 44, 4, 1, 0, false> > >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_if_q4_b32(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_if_t<32, 20, 4, 0, 0, false> > >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_if_q4_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_if_t<64, 36, 4, 0, 0, false> > >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_if_q3h_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_if_t<64, 32, 4, 2, 1, true> > >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_if_q3_b32(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_if_t<32, 16, 2, 1, 0, false> > >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(MT_THREADS)
mt_if_q2_b32(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mt_tiled<mt_unit_t<mm_if_t<32, 12, 2, 0, 0, false> > >(W, X, Y, n, rows, cols);
}

// Dequantization to F16 for the cuBLAS prefill path (cublas.go): H gets
// the rows × n weights of W as IEEE binary16, each the decoder's float32
// value (as the tiled kernels read it) rounded to nearest even by
// fc_float_to_half (beyond ±65504: ±Inf, as ggml's own F16 path).
//
// Launch: block (DQ_THREADS), grid (min(ceil(units / DQ_THREADS), 65535)),
// a grid-stride loop over units: 32-element units of quantized rows (a
// thread decodes one into registers and writes its 32 halves), single
// elements of float rows. twin_tiled.go's dq16Twin is this.
#define DQ_THREADS 256

template <typename T>
FC_DEVICE void dq16_units(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	const int per_row = n / 32;
	const fc_size nu = (fc_size)rows * per_row;
	for (fc_size u = (fc_size)blockIdx.x * blockDim.x + threadIdx.x; u < nu; u += (fc_size)gridDim.x * blockDim.x) {
		const fc_size r = u / per_row;
		const int j = (int)(u % per_row);
		float w[32];
		T::unit(W + r * (per_row / T::per) * T::bytes + (fc_size)(j / T::per) * T::bytes, j % T::per, w);
		// 16-byte stores (H is 256-byte aligned, a unit 64 bytes): the
		// halves one at a time were 2-byte stores 64 bytes apart across a
		// warp, and the H200 profile had this kernel at ~200 GB/s.
#pragma unroll
		for (int q = 0; q < 4; q++) {
			fc_u16 h[8];
#pragma unroll
			for (int l = 0; l < 8; l++) h[l] = fc_float_to_half(w[q * 8 + l]);
			fc_store_u16x8(H + u * 32 + q * 8, h);
		}
	}
}

template <typename E>
FC_DEVICE void dq16_floats(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	const fc_size ne = (fc_size)rows * n;
	for (fc_size i = (fc_size)blockIdx.x * blockDim.x + threadIdx.x; i < ne; i += (fc_size)gridDim.x * blockDim.x)
		H[i] = fc_float_to_half(E::at(W, i));
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_f32(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_floats<mt_f32_e>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_bf16(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_floats<mt_bf16_e>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q8_0(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q8_0_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q4_0(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q4_0_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q4_1(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q4_1_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q5_0(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q5_0_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q5_1(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q5_1_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_iq4_nl(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_iq4_nl_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q2_k(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q2_k_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q3_k(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q3_k_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q4_k(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q4_k_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q5_k(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q5_k_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_q6_k(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_q6_k_t>(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_if_q8_b32(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_if_t<32, 36, 8, 0, 0, false> >(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_if_q8_b64(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_if_t<64, 68, 8, 0, 0, false> >(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_if_q6_b64(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_if_t<64, 52, 4, 2, 0, false> >(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_if_q5_b64(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_if_t<64, 44, 4, 1, 0, false> >(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_if_q4_b32(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_if_t<32, 20, 4, 0, 0, false> >(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_if_q4_b64(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_if_t<64, 36, 4, 0, 0, false> >(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_if_q3h_b64(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_if_t<64, 32, 4, 2, 1, true> >(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_if_q3_b32(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_if_t<32, 16, 2, 1, 0, false> >(W, H, n, rows);
}

FC_KERNEL void __launch_bounds__(DQ_THREADS)
dq16_if_q2_b32(const fc_u8* __restrict__ W, fc_u16* __restrict__ H, int n, int rows) {
	dq16_units<mm_if_t<32, 12, 2, 0, 0, false> >(W, H, n, rows);
}
