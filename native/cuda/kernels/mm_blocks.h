// mm_blocks.h: the per-type block decoders of the matrix kernels
// (matmul.cu's matvec, matmul_tiled.cu's tiled product and its F16
// dequantization). A decoder T has T::bytes (bytes per block), T::per
// (32-element units per block) and T::unit(block, j, w), which writes unit
// j's 32 weights exactly as engine/ggml's DequantizeRow computes them (same
// float32 products and differences, no fusion); twin_quant.go has each
// unit's twin.
#ifndef MM_BLOCKS_H
#define MM_BLOCKS_H
#include "fc_port.h"

// Q8_0 (34 bytes): fp16 d, 32 int8 q; w = q·d (exact in float32). The
// matvec scales a block's sum instead; the tiled kernels read this.
struct mm_q8_0_t {
	enum { bytes = 34, per = 1 };
	FC_DEVICE void unit(const fc_u8* b, int, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b));
		const fc_i8* q = (const fc_i8*)(b + 2);
#pragma unroll
		for (int j = 0; j < 32; j++) w[j] = (float)q[j] * d;
	}
};

// Q4_0 (18 bytes): fp16 d, 16 bytes of nibbles; element j is the low
// nibble of byte j, element j+16 its high nibble; w = (q − 8)·d (exact).
struct mm_q4_0_t {
	enum { bytes = 18, per = 1 };
	FC_DEVICE void unit(const fc_u8* b, int, float* w) {
		const float d = fc_half_to_float(fc_load_u16(b));
		const fc_u8* qs = b + 2;
#pragma unroll
		for (int j = 0; j < 16; j++) {
			w[j] = (float)((int)(qs[j] & 0xf) - 8) * d;
			w[j + 16] = (float)((int)(qs[j] >> 4) - 8) * d;
		}
	}
};

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

#endif // MM_BLOCKS_H
