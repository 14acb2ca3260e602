// kernels.h: every kernel of ../../kernels, for the harness and the fake
// driver's kernel table (each defines KERNEL(name) before using the list;
// TestShimKnowsEveryKernel checks that none is missing).
#pragma once

#define FC_SHIM_KERNELS                                                                                  \
	KERNEL(mm_f32), KERNEL(mm_f16), KERNEL(mm_bf16), KERNEL(mm_q8_0), KERNEL(mm_q4_0), KERNEL(mm_q4_1), \
	KERNEL(mm_f16_r2), KERNEL(mm_f16_r4), KERNEL(mm_q8_0_r2), KERNEL(mm_q8_0_r4), KERNEL(mm_q4_0_r2), KERNEL(mm_q4_0_r4), \
	KERNEL(mm_q5_0), KERNEL(mm_q5_1), KERNEL(mm_iq4_nl), KERNEL(mm_q2_k), KERNEL(mm_q3_k),              \
	KERNEL(mm_q4_k), KERNEL(mm_q5_k), KERNEL(mm_q6_k), KERNEL(mm_if_q8_b32), KERNEL(mm_if_q8_b64),      \
	KERNEL(mm_if_q6_b64), KERNEL(mm_if_q5_b64), KERNEL(mm_if_q4_b32), KERNEL(mm_if_q4_b64),             \
	KERNEL(mm_if_q3h_b64), KERNEL(mm_if_q3_b32), KERNEL(mm_if_q2_b32), KERNEL(rms_norm_f32), KERNEL(rope_f32), \
	KERNEL(silu_mul_f32), KERNEL(add_f32), KERNEL(softmax_f32), KERNEL(attn_decode_f32),     \
	KERNEL(attn_decode_f16), KERNEL(kv_store_f16), KERNEL(attn_decode_q8_0), KERNEL(kv_store_q8_0),                 \
	KERNEL(attn_split_f32), KERNEL(attn_split_f16), KERNEL(attn_split_q8_0), KERNEL(attn_combine_f32),     \
	KERNEL(attn_combine_f16), KERNEL(attn_combine_q8_0), KERNEL(attn_prefill_f32), KERNEL(attn_prefill_f16), \
	KERNEL(attn_prefill_q8_0), KERNEL(attn_prefill_g_f32), KERNEL(attn_prefill_g_f16),         \
	KERNEL(attn_prefill_g_q8_0), KERNEL(argmax_f32)

// The tiled prefill products and the F16 dequantization (matmul_tiled.cu).
#define FC_SHIM_KERNELS_TILED                                                                                 \
	KERNEL(mt_f32), KERNEL(mt_f16), KERNEL(mt_bf16), KERNEL(mt_q8_0), KERNEL(mt_q4_0), KERNEL(mt_q4_1),      \
	KERNEL(mt_q5_0), KERNEL(mt_q5_1), KERNEL(mt_iq4_nl), KERNEL(mt_q2_k), KERNEL(mt_q3_k), KERNEL(mt_q4_k), \
	KERNEL(mt_q5_k), KERNEL(mt_q6_k), KERNEL(mt_if_q8_b32), KERNEL(mt_if_q8_b64), KERNEL(mt_if_q6_b64),     \
	KERNEL(mt_if_q5_b64), KERNEL(mt_if_q4_b32), KERNEL(mt_if_q4_b64), KERNEL(mt_if_q3h_b64),                \
	KERNEL(mt_if_q3_b32), KERNEL(mt_if_q2_b32),                                                            \
	KERNEL(dq16_f32), KERNEL(dq16_bf16), KERNEL(dq16_q8_0), KERNEL(dq16_q4_0), KERNEL(dq16_q4_1),           \
	KERNEL(dq16_q5_0), KERNEL(dq16_q5_1), KERNEL(dq16_iq4_nl), KERNEL(dq16_q2_k), KERNEL(dq16_q3_k),        \
	KERNEL(dq16_q4_k), KERNEL(dq16_q5_k), KERNEL(dq16_q6_k), KERNEL(dq16_if_q8_b32), KERNEL(dq16_if_q8_b64), \
	KERNEL(dq16_if_q6_b64), KERNEL(dq16_if_q5_b64), KERNEL(dq16_if_q4_b32), KERNEL(dq16_if_q4_b64),         \
	KERNEL(dq16_if_q3h_b64), KERNEL(dq16_if_q3_b32), KERNEL(dq16_if_q2_b32)
