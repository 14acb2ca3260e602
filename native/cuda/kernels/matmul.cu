// Matrix-vector and small-batch products: Y[c][r] = Σ_i W[r][i] · X[c][i]
// for weight rows r < rows and activation columns c < cols (1–16 for decode
// and batched decode), dequantizing GGML blocks in registers.
//
// Launch: block (FC_WARP_SIZE, MM_WARPS), one warp per weight row; grid
// (ceil(rows / MM_WARPS), ceil(cols / MM_MAX_COLS)). X is cols rows of n
// float32, Y cols rows of `rows` float32. Lane l takes the blocks (or, for
// float weights, the elements) l, l + W, l + 2W, … of its row and keeps one
// accumulator per column; the lanes' accumulators are then summed by
// fc_warp_sum. Weight rows are read once per launch whatever cols is.
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

// F16 weights: row r at W + r·n halves.
FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_f16(const fc_u16* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_PROLOGUE
	const fc_u16* w = W + (fc_size)row * n;
	for (int i = lane; i < n; i += FC_WARP_SIZE) {
		float wi = fc_half_to_float(w[i]);
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

// Q8_0 (block_q8_0: fp16 d, 32 int8 q; 34 bytes): w_i = d·q_i. The block's
// Σ q_i·x_i is accumulated first, then scaled by d once.
FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q8_0(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_PROLOGUE
	const int nb = n / 32;
	const fc_u8* w = W + (fc_size)row * nb * 34;
	for (int b = lane; b < nb; b += FC_WARP_SIZE) {
		const fc_u8* blk = w + (fc_size)b * 34;
		const float d = fc_half_to_float(fc_load_u16(blk));
		const fc_i8* q = (const fc_i8*)(blk + 2);
#pragma unroll
		for (int c = 0; c < MM_MAX_COLS; c++) {
			if (c < nc) {
				const float* x = x0 + (fc_size)c * n + b * 32;
				float s = 0.0f;
#pragma unroll
				for (int j = 0; j < 32; j++) s = fmaf((float)q[j], x[j], s);
				acc[c] = fmaf(d, s, acc[c]);
			}
		}
	}
	MM_EPILOGUE
}

// Q4_0 (block_q4_0: fp16 d, 16 bytes of nibbles; 18 bytes): element j is
// the low nibble of byte j, element j+16 its high nibble, w = d·(q − 8).
FC_KERNEL void __launch_bounds__(FC_WARP_SIZE * MM_WARPS)
mm_q4_0(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_PROLOGUE
	const int nb = n / 32;
	const fc_u8* w = W + (fc_size)row * nb * 18;
	for (int b = lane; b < nb; b += FC_WARP_SIZE) {
		const fc_u8* blk = w + (fc_size)b * 18;
		const float d = fc_half_to_float(fc_load_u16(blk));
		const fc_u8* qs = blk + 2;
#pragma unroll
		for (int c = 0; c < MM_MAX_COLS; c++) {
			if (c < nc) {
				const float* x = x0 + (fc_size)c * n + b * 32;
				float s = 0.0f;
#pragma unroll
				for (int j = 0; j < 16; j++) {
					s = fmaf((float)((int)(qs[j] & 0xf) - 8), x[j], s);
					s = fmaf((float)((int)(qs[j] >> 4) - 8), x[j + 16], s);
				}
				acc[c] = fmaf(d, s, acc[c]);
			}
		}
	}
	MM_EPILOGUE
}

// mm_units is the unit kernels' loop over a row of T's blocks: T::bytes per
// block of T::per units, T::unit(block, j, w) writes unit j's 32 weights.
template <typename T>
FC_DEVICE void mm_units(const fc_u8* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y, int n, int rows, int cols) {
	MM_PROLOGUE
	const int nu = n / 32;
	const fc_u8* w = W + (fc_size)row * (nu / T::per) * T::bytes;
	for (int u = lane; u < nu; u += FC_WARP_SIZE) {
		float wq[32];
		T::unit(w + (fc_size)(u / T::per) * T::bytes, u % T::per, wq);
#pragma unroll
		for (int c = 0; c < MM_MAX_COLS; c++) {
			if (c < nc) {
				const float* x = x0 + (fc_size)c * n + u * 32;
				float s = 0.0f;
#pragma unroll
				for (int j = 0; j < 32; j++) s = fmaf(wq[j], x[j], s);
				acc[c] += s;
			}
		}
	}
	MM_EPILOGUE
}

// Q4_1 (20 bytes): fp16 d, m, 16 bytes of nibbles as Q4_0; w = q·d + m.
struct mm_q4_1_t {
	enum { bytes = 20, per = 1 };
	FC_DEVICE void unit(const fc_u8* b, int, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b)), m = fc_half_to_float(fc_load_u16(b + 2));
		const fc_u8* qs = b + 4;
#pragma unroll
		for (int j = 0; j < 16; j++) {
			w[j] = (float)(qs[j] & 0xf) * d + m;
			w[j + 16] = (float)(qs[j] >> 4) * d + m;
		}
	}
};

// Q5_0 (22 bytes): fp16 d, 32 high bits, nibbles; w = d·(q − 16), the
// fifth bit of element j (j+16) being bit j (j+16) of the high bits.
struct mm_q5_0_t {
	enum { bytes = 22, per = 1 };
	FC_DEVICE void unit(const fc_u8* b, int, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b));
		const fc_u32 qh = fc_load_u32(b + 2);
		const fc_u8* qs = b + 6;
#pragma unroll
		for (int j = 0; j < 16; j++) {
			const int h0 = (qh >> j << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
			w[j] = (float)((int)((qs[j] & 0xf) | h0) - 16) * d;
			w[j + 16] = (float)((int)((qs[j] >> 4) | h1) - 16) * d;
		}
	}
};

// Q5_1 (24 bytes): fp16 d, m, 32 high bits, nibbles; w = q·d + m.
struct mm_q5_1_t {
	enum { bytes = 24, per = 1 };
	FC_DEVICE void unit(const fc_u8* b, int, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b)), m = fc_half_to_float(fc_load_u16(b + 2));
		const fc_u32 qh = fc_load_u32(b + 4);
		const fc_u8* qs = b + 8;
#pragma unroll
		for (int j = 0; j < 16; j++) {
			const int h0 = (qh >> j << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
			w[j] = (float)((qs[j] & 0xf) | h0) * d + m;
			w[j + 16] = (float)((qs[j] >> 4) | h1) * d + m;
		}
	}
};

// IQ4_NL (18 bytes): fp16 d, nibbles indexing a non-linear codebook
// (kvalues_iq4nl); w = d·value.
__constant__ fc_i8 mm_iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

struct mm_iq4_nl_t {
	enum { bytes = 18, per = 1 };
	FC_DEVICE void unit(const fc_u8* b, int, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b));
		const fc_u8* qs = b + 2;
#pragma unroll
		for (int j = 0; j < 16; j++) {
			w[j] = d * (float)mm_iq4nl_values[qs[j] & 0xf];
			w[j + 16] = d * (float)mm_iq4nl_values[qs[j] >> 4];
		}
	}
};

// Q2_K (84 bytes): scales[16] | qs[64] | fp16 d | dmin. Unit u: 128-element
// half u/4, 2-bit plane u%4, 16-element groups with scale bytes 2u, 2u+1
// (low nibble × d is the scale, high nibble × dmin the min).
struct mm_q2_k_t {
	enum { bytes = 84, per = 8 };
	FC_DEVICE void unit(const fc_u8* b, int u, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b + 80)), dmin = fc_half_to_float(fc_load_u16(b + 82));
		const fc_u8* q = b + 16 + 32 * (u / 4);
		const int shift = 2 * (u % 4);
#pragma unroll
		for (int g = 0; g < 2; g++) {
			const fc_u8 s = b[2 * u + g];
			const float dl = d * (float)(s & 0xf), ml = dmin * (float)(s >> 4);
#pragma unroll
			for (int l = 0; l < 16; l++) w[16 * g + l] = dl * (float)((q[16 * g + l] >> shift) & 3) - ml;
		}
	}
};

// mm_q3_scale is the i-th 6-bit Q3_K scale (offset by 32) of the 12 packed
// bytes p: low nibble from byte i (i < 8) or the high nibble of byte i−8,
// high two bits from byte 8 + i%4 at bit 2·(i/4).
FC_DEVICE int mm_q3_scale(const fc_u8* p, int i) {
	return ((p[i % 8] >> (4 * (i / 8))) & 0xf) | ((p[8 + i % 4] >> (2 * (i / 4))) & 3) << 4;
}

// Q3_K (110 bytes): hmask[32] | qs[64] | scales[12] | fp16 d. Unit u:
// 128-element half u/4, 2-bit plane u%4, high bit u of hmask (clear: −4),
// scales 2u and 2u+1.
struct mm_q3_k_t {
	enum { bytes = 110, per = 8 };
	FC_DEVICE void unit(const fc_u8* b, int u, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b + 108));
		const fc_u8* q = b + 32 + 32 * (u / 4);
		const int shift = 2 * (u % 4), m = 1 << u;
#pragma unroll
		for (int g = 0; g < 2; g++) {
			const float dl = d * (float)(mm_q3_scale(b + 96, 2 * u + g) - 32);
#pragma unroll
			for (int l = 16 * g; l < 16 * g + 16; l++) {
				int v = (q[l] >> shift) & 3;
				if (!(b[l] & m)) v -= 4;
				w[l] = dl * (float)v;
			}
		}
	}
};

// mm_scale_min_k4 is get_scale_min_k4: the j-th 6-bit scale and min of
// Q4_K and Q5_K from their 12 packed bytes q.
FC_DEVICE void mm_scale_min_k4(int j, const fc_u8* q, int* sc, int* m) {
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

// Q4_K (144 bytes): fp16 d | dmin | scales[12] | qs[128]. Unit u: the low
// (u even) or high nibbles of qs[32·(u/2) …], scale and min u;
// w = (d·scale)·q − dmin·min.
struct mm_q4_k_t {
	enum { bytes = 144, per = 8 };
	FC_DEVICE void unit(const fc_u8* b, int u, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b)), dmin = fc_half_to_float(fc_load_u16(b + 2));
		int sc, mn;
		mm_scale_min_k4(u, b + 4, &sc, &mn);
		const float dl = d * (float)sc, ml = dmin * (float)mn;
		const fc_u8* q = b + 16 + 32 * (u / 2);
		const int shift = 4 * (u % 2);
#pragma unroll
		for (int l = 0; l < 32; l++) w[l] = dl * (float)((q[l] >> shift) & 0xf) - ml;
	}
};

// Q5_K (176 bytes): fp16 d | dmin | scales[12] | qh[32] | qs[128]. As
// Q4_K, plus 16 where bit u of qh[l] is set.
struct mm_q5_k_t {
	enum { bytes = 176, per = 8 };
	FC_DEVICE void unit(const fc_u8* b, int u, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b)), dmin = fc_half_to_float(fc_load_u16(b + 2));
		int sc, mn;
		mm_scale_min_k4(u, b + 4, &sc, &mn);
		const float dl = d * (float)sc, ml = dmin * (float)mn;
		const fc_u8* qh = b + 16;
		const fc_u8* q = b + 48 + 32 * (u / 2);
		const int shift = 4 * (u % 2);
#pragma unroll
		for (int l = 0; l < 32; l++) {
			const int v = ((q[l] >> shift) & 0xf) | ((qh[l] >> u) & 1) << 4;
			w[l] = dl * (float)v - ml;
		}
	}
};

// Q6_K (210 bytes): ql[128] | qh[64] | scales[16] (int8) | fp16 d. Unit u:
// half h = u/4, quarter k = u%4; low 4 bits from the low (k < 2) or high
// nibbles of ql[64h + 32·(k%2) + l], high 2 bits of qh[32h + l] at bit 2k,
// scale 8h + l/16 + 2k; w = (d·scale)·(q − 32).
struct mm_q6_k_t {
	enum { bytes = 210, per = 8 };
	FC_DEVICE void unit(const fc_u8* b, int u, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b + 208));
		const int h = u / 4, k = u % 4;
		const fc_u8* ql = b + 64 * h + 32 * (k % 2);
		const fc_u8* qh = b + 128 + 32 * h;
		const fc_i8* sc = (const fc_i8*)(b + 192 + 8 * h);
#pragma unroll
		for (int l = 0; l < 32; l++) {
			const int q = (((ql[l] >> (4 * (k / 2))) & 0xf) | ((qh[l] >> (2 * k)) & 3) << 4) - 32;
			w[l] = d * (float)sc[l / 16 + 2 * k] * (float)q;
		}
	}
};

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

// Inferflow's min–max block formats (engine/quant): fp16 lo, fp16 d, then
// the codes in up to three bit planes of widths W0, W1, W2 (0: none) at
// shifts 0, W0, W0+W1. A plane of width b over c codes is c·b/8 bytes;
// its byte j holds codes j, j+n, j+2n, … at bit offsets 0, b, 2b, ….
// w = q·d + lo. PAIRS (Q3H): each code is q₂ᵢ·11 + q₂ᵢ₊₁, two weights.
template <int BLOCK, int BYTES, int W0, int W1, int W2, bool PAIRS>
struct mm_if_t {
	enum { bytes = BYTES, per = BLOCK / 32, codes = PAIRS ? BLOCK / 2 : BLOCK };
	FC_DEVICE int field(const fc_u8* p, int i, int b) {
		const int n = codes * b / 8;
		return (p[i % n] >> ((i / n) * b)) & ((1 << b) - 1);
	}
	FC_DEVICE int code(const fc_u8* p, int i) {
		int c = field(p, i, W0);
		if constexpr (W1 > 0) c |= field(p + codes * W0 / 8, i, W1) << W0;
		if constexpr (W2 > 0) c |= field(p + codes * (W0 + W1) / 8, i, W2) << (W0 + W1);
		return c;
	}
	FC_DEVICE void unit(const fc_u8* b, int u, float* w) {
		const float lo = fc_half_to_float(fc_load_u16(b)), d = fc_half_to_float(fc_load_u16(b + 2));
		if constexpr (!PAIRS) {
#pragma unroll
			for (int l = 0; l < 32; l++) w[l] = (float)code(b + 4, 32 * u + l) * d + lo;
		} else {
#pragma unroll
			for (int l = 0; l < 16; l++) {
				const int c = code(b + 4, 16 * u + l);
				w[2 * l] = (float)(c / 11) * d + lo;
				w[2 * l + 1] = (float)(c % 11) * d + lo;
			}
		}
	}
};

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
