// Matrix-vector and small-batch products: Y[c][r] = Σ_i W[r][i] · X[c][i]
// for weight rows r < rows and activation columns c < cols (1–16 for decode
// and batched decode), dequantizing GGML blocks in registers.
//
// Launch: block (FC_WARP_SIZE, MM_WARPS), one warp per weight row; grid
// (ceil(rows / MM_WARPS), ceil(cols / MM_MAX_COLS)). X is cols rows of n
// float32, Y cols rows of `rows` float32. Each lane keeps one accumulator
// per column; the lanes' accumulators are then summed by fc_warp_sum.
// Weight rows are read once per launch whatever cols is.
//
// Which lane takes what:
//   - F16, Q8_0 and Q4_0 (the chunked kernels, the common decode types): a
//     row is chunks of 8 elements, and lane l takes chunks l, l + W, … So
//     a warp reads W consecutive chunks at once: 16·W bytes of F16, or 8
//     whole Q8_0/Q4_0 blocks at W = 32 (four lanes a block), and X in
//     aligned float4s. Measured on an H200 (2026-11-26), the first kernels,
//     a lane a block, read 145 GB/s of Q4_0: each lane's loads of X were
//     32 floats 128 bytes apart from its neighbours', 32 cache lines per
//     load instruction.
//   - F32, BF16: lane l takes the elements l, l + W, ….
//   - the unit kernels: below.
//
// Products are explicit fmaf and the sources are compiled with --fmad=false,
// so twin.go (mmTwin) reproduces every result bit for bit.
//
// The unit kernels (Q4_1, Q5_0, Q5_1, IQ4_NL and the K-quants) share one
// loop, mm_units: a row is n/32 units of 32 elements (a 32-element block,
// or an eighth of a 256-element K-quant super-block, with its own scales),
// lane l takes units l, l + W, …; each unit is dequantized to 32 floats
// exactly as engine/ggml's DequantizeRow (same float32 products and
// differences, no fusion), then Σ w_j·x_j by fmaf in j order is added to
// the column's accumulator. twin_quant.go has each unit's twin.
#include "fc_port.h"
#include "mm_blocks.h"

#define MM_WARPS 4
#define MM_MAX_COLS 8

#define MM_PROLOGUE                                                   \
	const int lane = threadIdx.x;                                     \
	const int row = blockIdx.x * MM_WARPS + threadIdx.y;              \
	const int c0 = blockIdx.y * MM_MAX_COLS;                          \
	const int nc = min(cols - c0, MM_MAX_COLS);                       \
	if (row >= rows) return;                                          \
	const float* x0 = X + (fc_size)c0 * n;                            \
	float acc[MM_MAX_COLS];                                           \
	_Pragma("unroll") for (int c = 0; c < MM_MAX_COLS; c++) acc[c] = 0.0f;

#define MM_EPILOGUE                                                   \
	_Pragma("unroll") for (int c = 0; c < MM_MAX_COLS; c++) {         \
		if (c < nc) {                                                 \
			float s = fc_warp_sum(acc[c]);                            \
			if (lane == 0) Y[(fc_size)(c0 + c) * rows + row] = s;     \
		}                                                             \
	}

// F32 weights: row r at W + r·n.
FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_f32(const float* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_PROLOGUE
	const float* w = W + (fc_size)row * n;
	for (int i = lane; i < n; i += FC_WARP_SIZE) {
		float wi = w[i];
#pragma unroll
		for (int c = 0; c < MM_MAX_COLS; c++)
			if (c < nc) acc[c] = fmaf(wi, x0[(fc_size)c * n + i], acc[c]);
	}
	MM_EPILOGUE
}

// BF16 weights: row r at W + r·n bfloat16 values.
FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_bf16(const fc_u16* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_PROLOGUE
	const fc_u16* w = W + (fc_size)row * n;
	for (int i = lane; i < n; i += FC_WARP_SIZE) {
		float wi = fc_bf16_to_float(w[i]);
#pragma unroll
		for (int c = 0; c < MM_MAX_COLS; c++)
			if (c < nc) acc[c] = fmaf(wi, x0[(fc_size)c * n + i], acc[c]);
	}
	MM_EPILOGUE
}

// The chunked kernels take R rows a warp (R = 1, 2, 4: mm_<type>,
// mm_<type>_r2, mm_<type>_r4; grid ceil(rows / (MM_WARPS·R))), so that the
// X a lane loads serves R rows. Each row's arithmetic is the same whatever
// R is: a lane's chunks in order into the row's accumulator, then the warp
// sum. (X is 4 bytes an element against Q4_0's 0.5625: at one row a warp,
// the H200's first profile read 7 bytes of X per weight byte.)
#define MM_ROWS_PROLOGUE                                              \
	const int lane = threadIdx.x;                                     \
	const int row0 = (blockIdx.x * MM_WARPS + threadIdx.y) * R;       \
	const int c0 = blockIdx.y * MM_MAX_COLS;                          \
	const int nc = min(cols - c0, MM_MAX_COLS);                       \
	if (row0 >= rows) return;                                         \
	const int nr = min(rows - row0, R);                               \
	const float* x0 = X + (fc_size)c0 * n;                            \
	float acc[R][MM_MAX_COLS];                                        \
	_Pragma("unroll") for (int r = 0; r < R; r++)                     \
	_Pragma("unroll") for (int c = 0; c < MM_MAX_COLS; c++) acc[r][c] = 0.0f;

#define MM_ROWS_EPILOGUE                                              \
	_Pragma("unroll") for (int r = 0; r < R; r++) {                   \
		_Pragma("unroll") for (int c = 0; c < MM_MAX_COLS; c++) {     \
			if (r < nr && c < nc) {                                   \
				float s = fc_warp_sum(acc[r][c]);                     \
				if (lane == 0) Y[(fc_size)(c0 + c) * rows + row0 + r] = s; \
			}                                                         \
		}                                                             \
	}

// fc_nibble_float is (float)(q − 8) for a nibble q, exactly, by an add
// instead of an integer conversion (a slower instruction): 2^23 + q is a
// float whose low mantissa bits are q.
FC_DEVICE float fc_nibble_float(fc_u32 q) { return __uint_as_float(0x4b000000u | q) - 8388616.0f; }

// MM_UNROLL is how many of its chunks a lane loads before it computes on
// any of them: the loads of a batch are all in flight at once, so a warp
// waits for memory once a batch, not once a chunk. The arithmetic, and so
// every bit of the result, is the same whatever MM_UNROLL is: each row and
// column's accumulator still takes the lane's chunks in order. (The first
// kernels' `#pragma unroll 2` loop had two chunks in flight; a decode
// matrix of 2048–4096 columns is 8–16 chunks a lane, and the compiler
// kept the second chunk's loads behind the first one's arithmetic.)
// FLOWCHAT_MM_UNROLL sets it at compile time (ops.go), for measuring.
// Measured on an H200 (2026-11-26, tg128, docs/PERFORMANCE.md): Llama-3-8B
// Q4_0 at 2, 4, 8: 135, 130, 97 t/s; TinyLlama Q4_0 at 2 and 4: 373–382
// and 357–367, Q8_0 and F16 the same within noise; the old loop gave 112
// and 338. More chunks in flight cost registers and so resident warps.
#ifndef MM_UNROLL
#define MM_UNROLL 2
#endif

// F16 weights: row r at W + r·n halves. Chunk k is elements 8k … 8k+7
// (fewer at the end of a row whose n is not a multiple of 8), added to the
// column's accumulator by fmaf in order. With n a multiple of 8 every row
// and chunk is 16-byte aligned and a chunk is one load; else element by
// element, the same arithmetic.
template <int R>
FC_DEVICE void mm_f16_rows(const fc_u16* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_ROWS_PROLOGUE
	const fc_u16* w = W + (fc_size)row0 * n;
	const int nch = (n + 7) / 8;
	if ((n & 7) == 0) {
		for (int k0 = lane; k0 < nch; k0 += FC_WARP_SIZE * MM_UNROLL) {
			fc_u16 h[MM_UNROLL][R][8];
#pragma unroll
			for (int u = 0; u < MM_UNROLL; u++) {
				const int k = k0 + u * FC_WARP_SIZE;
#pragma unroll
				for (int r = 0; r < R; r++) {
					if (k < nch && r < nr) fc_load_u16x8(w + (fc_size)r * n + (fc_size)k * 8, h[u][r]);
					else for (int j = 0; j < 8; j++) h[u][r][j] = 0;
				}
			}
#pragma unroll
			for (int c = 0; c < MM_MAX_COLS; c++) {
				if (c < nc) {
					float xv[MM_UNROLL][8];
#pragma unroll
					for (int u = 0; u < MM_UNROLL; u++) {
						const int k = k0 + u * FC_WARP_SIZE;
						if (k < nch) {
							const float* x = x0 + (fc_size)c * n + k * 8;
							fc_load_f32x4(x, xv[u]);
							fc_load_f32x4(x + 4, xv[u] + 4);
						}
					}
#pragma unroll
					for (int u = 0; u < MM_UNROLL; u++) {
						if (k0 + u * FC_WARP_SIZE < nch) {
#pragma unroll
							for (int r = 0; r < R; r++)
#pragma unroll
								for (int j = 0; j < 8; j++) acc[r][c] = fmaf(fc_half_to_float(h[u][r][j]), xv[u][j], acc[r][c]);
						}
					}
				}
			}
		}
	} else {
		for (int k = lane; k < nch; k += FC_WARP_SIZE) {
			const int e = min(8, n - k * 8);
			for (int j = 0; j < e; j++) {
				const int i = k * 8 + j;
#pragma unroll
				for (int r = 0; r < R; r++) {
					if (r < nr) {
						const float wi = fc_half_to_float(w[(fc_size)r * n + i]);
#pragma unroll
						for (int c = 0; c < MM_MAX_COLS; c++)
							if (c < nc) acc[r][c] = fmaf(wi, x0[(fc_size)c * n + i], acc[r][c]);
					}
				}
			}
		}
	}
	MM_ROWS_EPILOGUE
}

// Q8_0 (block_q8_0: fp16 d, 32 int8 q; 34 bytes): w_i = d·q_i. Chunk k is
// quarter k%4 of block k/4, its elements 8p … 8p+7 (p = k%4): their
// Σ q_i·x_i by fmaf in order, then scaled by d once into the accumulator.
// Blocks are 2-byte aligned, so the 8 bytes come as four 16-bit loads.
template <int R>
FC_DEVICE void mm_q8_0_rows(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_ROWS_PROLOGUE
	const int nch = n / 8;
	const fc_size rb = (fc_size)(n / 32) * 34;
	const fc_u8* w = W + (fc_size)row0 * rb;
	for (int k0 = lane; k0 < nch; k0 += FC_WARP_SIZE * MM_UNROLL) {
		fc_u16 dh[MM_UNROLL][R], qv[MM_UNROLL][R][4];
#pragma unroll
		for (int u = 0; u < MM_UNROLL; u++) {
			const int k = k0 + u * FC_WARP_SIZE;
			const int b = k >> 2, p = k & 3;
#pragma unroll
			for (int r = 0; r < R; r++) {
				dh[u][r] = 0;
#pragma unroll
				for (int j = 0; j < 4; j++) qv[u][r][j] = 0;
				if (k < nch && r < nr) {
					const fc_u8* blk = w + (fc_size)r * rb + (fc_size)b * 34;
					dh[u][r] = fc_load_u16(blk);
#pragma unroll
					for (int j = 0; j < 4; j++) qv[u][r][j] = fc_load_u16(blk + 2 + p * 8 + 2 * j);
				}
			}
		}
#pragma unroll
		for (int c = 0; c < MM_MAX_COLS; c++) {
			if (c < nc) {
				float xv[MM_UNROLL][8];
#pragma unroll
				for (int u = 0; u < MM_UNROLL; u++) {
					const int k = k0 + u * FC_WARP_SIZE;
					if (k < nch) {
						const float* x = x0 + (fc_size)c * n + (k >> 2) * 32 + (k & 3) * 8;
						fc_load_f32x4(x, xv[u]);
						fc_load_f32x4(x + 4, xv[u] + 4);
					}
				}
#pragma unroll
				for (int u = 0; u < MM_UNROLL; u++) {
					if (k0 + u * FC_WARP_SIZE < nch) {
#pragma unroll
						for (int r = 0; r < R; r++) {
							float s = 0.0f;
#pragma unroll
							for (int j = 0; j < 4; j++) {
								s = fmaf((float)(fc_i8)(qv[u][r][j] & 0xff), xv[u][2 * j], s);
								s = fmaf((float)(fc_i8)(qv[u][r][j] >> 8), xv[u][2 * j + 1], s);
							}
							acc[r][c] = fmaf(fc_half_to_float(dh[u][r]), s, acc[r][c]);
						}
					}
				}
			}
		}
	}
	MM_ROWS_EPILOGUE
}

// Q4_0 (block_q4_0: fp16 d, 16 bytes of nibbles; 18 bytes): element j is
// the low nibble of byte j, element j+16 its high nibble, w = d·(q − 8).
// Chunk k is bytes 4p … 4p+3 of block k/4 (p = k%4): elements 4p+j and
// 16+4p+j for j = 0…3, taken low then high for each j by fmaf, then scaled
// by d once into the accumulator.
template <int R>
FC_DEVICE void mm_q4_0_rows(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_ROWS_PROLOGUE
	const int nch = n / 8;
	const fc_size rb = (fc_size)(n / 32) * 18;
	const fc_u8* w = W + (fc_size)row0 * rb;
	for (int k0 = lane; k0 < nch; k0 += FC_WARP_SIZE * MM_UNROLL) {
		fc_u16 dh[MM_UNROLL][R];
		fc_u32 qs[MM_UNROLL][R];
#pragma unroll
		for (int u = 0; u < MM_UNROLL; u++) {
			const int k = k0 + u * FC_WARP_SIZE;
			const int b = k >> 2, p = k & 3;
#pragma unroll
			for (int r = 0; r < R; r++) {
				dh[u][r] = 0;
				qs[u][r] = 0x88888888u;
				if (k < nch && r < nr) {
					const fc_u8* blk = w + (fc_size)r * rb + (fc_size)b * 18;
					dh[u][r] = fc_load_u16(blk);
					qs[u][r] = fc_load_u32(blk + 2 + p * 4);
				}
			}
		}
#pragma unroll
		for (int c = 0; c < MM_MAX_COLS; c++) {
			if (c < nc) {
				float xl[MM_UNROLL][4], xh[MM_UNROLL][4];
#pragma unroll
				for (int u = 0; u < MM_UNROLL; u++) {
					const int k = k0 + u * FC_WARP_SIZE;
					if (k < nch) {
						const float* x = x0 + (fc_size)c * n + (k >> 2) * 32 + (k & 3) * 4;
						fc_load_f32x4(x, xl[u]);
						fc_load_f32x4(x + 16, xh[u]);
					}
				}
#pragma unroll
				for (int u = 0; u < MM_UNROLL; u++) {
					if (k0 + u * FC_WARP_SIZE < nch) {
#pragma unroll
						for (int r = 0; r < R; r++) {
							const fc_u32 q = qs[u][r];
							float s = 0.0f;
#pragma unroll
							for (int j = 0; j < 4; j++) {
								s = fmaf(fc_nibble_float((q >> (8 * j)) & 0xf), xl[u][j], s);
								s = fmaf(fc_nibble_float((q >> (8 * j + 4)) & 0xf), xh[u][j], s);
							}
							acc[r][c] = fmaf(fc_half_to_float(dh[u][r]), s, acc[r][c]);
						}
					}
				}
			}
		}
	}
	MM_ROWS_EPILOGUE
}

// The kernels, one per type and R (KernelNames reads them off these lines).
FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_f16(const fc_u16* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_f16_rows<1>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_f16_r2(const fc_u16* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_f16_rows<2>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_f16_r4(const fc_u16* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_f16_rows<4>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q8_0(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_q8_0_rows<1>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q8_0_r2(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_q8_0_rows<2>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q8_0_r4(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_q8_0_rows<4>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q4_0(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_q4_0_rows<1>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q4_0_r2(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_q4_0_rows<2>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q4_0_r4(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_q4_0_rows<4>(W, X, Y, n, rows, cols);
}


// MM_UNITS_UNROLL unrolls the unit kernels' loop, so that the compiler
// may issue a later unit's loads before an earlier unit's arithmetic; like
// MM_UNROLL it changes no result. FLOWCHAT_MM_UNITS_UNROLL sets it.
#ifndef MM_UNITS_UNROLL
#define MM_UNITS_UNROLL 1
#endif

// mm_units is the unit kernels' loop over a row of T's blocks: T::bytes per
// block of T::per units, T::unit(block, j, w) writes unit j's 32 weights.
template <typename T>
FC_DEVICE void mm_units(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_PROLOGUE
	const int nu = n / 32;
	const fc_u8* w = W + (fc_size)row * (nu / T::per) * T::bytes;
#pragma unroll MM_UNITS_UNROLL
	for (int u = lane; u < nu; u += FC_WARP_SIZE) {
		float wq[32];
		T::unit(w + (fc_size)(u / T::per) * T::bytes, u % T::per, wq);
#pragma unroll
		for (int c = 0; c < MM_MAX_COLS; c++) {
			if (c < nc) {
				const float* x = x0 + (fc_size)c * n + u * 32;
				float xv[32]; // a unit's X in eight 16-byte loads (X rows are whole units, 128-byte aligned)
#pragma unroll
				for (int q = 0; q < 8; q++) fc_load_f32x4(x + 4 * q, xv + 4 * q);
				float s = 0.0f;
#pragma unroll
				for (int j = 0; j < 32; j++) s = fmaf(wq[j], xv[j], s);
				acc[c] += s;
			}
		}
	}
	MM_EPILOGUE
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q4_1(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_q4_1_t>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q5_0(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_q5_0_t>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q5_1(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_q5_1_t>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_iq4_nl(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_iq4_nl_t>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q2_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_q2_k_t>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q3_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_q3_k_t>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q4_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_q4_k_t>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q5_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_q5_k_t>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q6_k(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_q6_k_t>(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_if_q8_b32(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_if_t<32, 36, 8, 0, 0, false> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_if_q8_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_if_t<64, 68, 8, 0, 0, false> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_if_q6_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_if_t<64, 52, 4, 2, 0, false> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_if_q5_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_if_t<64, 44, 4, 1, 0, false> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_if_q4_b32(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_if_t<32, 20, 4, 0, 0, false> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_if_q4_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_if_t<64, 36, 4, 0, 0, false> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_if_q3h_b64(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_if_t<64, 32, 4, 2, 1, true> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_if_q3_b32(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_if_t<32, 16, 2, 1, 0, false> >(W, X, Y, n, rows, cols);
}

FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_if_q2_b32(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	mm_units<mm_if_t<32, 12, 2, 0, 0, false> >(W, X, Y, n, rows, cols);
}
