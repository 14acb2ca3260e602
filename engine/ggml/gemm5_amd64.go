package ggml

import "sync"

// Prompt batches of Q5_0 and IQ4_NL weights run on the Q8_0 tiles: each
// worker's rows are rewritten, a strip of rows at a time, as Q8_0 blocks
// (the same fp16 scale d and, per element, the int8 value the block
// encodes: q − 16 for Q5_0, the codebook entry for IQ4_NL), which is
// exact, and the Q8_0 tile kernels multiply them. Neither type has tiles
// of its own; their per-row kernels ran prompts at 0.76–0.90× llama.cpp
// (stories15M's Q4_K_M file is mostly Q5_0: 288-wide rows cannot hold
// K-quant super-blocks). The integer dot products are the same and the
// Q8_0 kernels scale and sum them as the per-row Q5_0 and IQ4_NL kernels
// do, so MatMulAct stays bit-identical to MatVec (TestRepackQ8Gemm, on
// both tiers). Decode (one column) keeps the per-row kernels, which read
// the smaller blocks.

// repackRows is the rows rewritten per strip: 16 rows of 4096 elements
// are 70 KB of Q8_0 blocks, within L2 beside the activations.
const repackRows = 16

var repackPool = sync.Pool{New: func() any { return new([]byte) }}

// repackGemm is the gemmFunc of t (Q5_0 or IQ4_NL) over the Q8_0 tiles k.
func repackGemm(t Type, k *tileSet) gemmFunc {
	return func(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
		rs, rs8 := t.RowSize(n), Q8_0.RowSize(n)
		bp := repackPool.Get().(*[]byte)
		if cap(*bp) < repackRows*rs8 {
			*bp = make([]byte, repackRows*rs8)
		}
		buf := (*bp)[:repackRows*rs8]
		for r0 := 0; r0 < rows; r0 += repackRows {
			nr := min(repackRows, rows-r0)
			for r := range nr {
				toQ8_0(t, n/32, w[(r0+r)*rs:], buf[r*rs8:])
			}
			k.run(n, buf[:nr*rs8], nr, a, dst[r0:], ldd)
		}
		repackPool.Put(bp)
	}
}

// toQ8_0 rewrites nb blocks of t (Q5_0 or IQ4_NL) at src as Q8_0 blocks
// at dst.
func toQ8_0(t Type, nb int, src, dst []byte) {
	for b := range nb {
		o := dst[34*b : 34*b+34]
		if t == Q5_0 {
			s := src[22*b : 22*b+22]
			o[0], o[1] = s[0], s[1]
			qh := uint32(s[2]) | uint32(s[3])<<8 | uint32(s[4])<<16 | uint32(s[5])<<24
			for j := range 16 {
				o[2+j] = byte(int8(s[6+j]&15|byte(qh>>j&1)<<4) - 16)
				o[18+j] = byte(int8(s[6+j]>>4|byte(qh>>(j+16)&1)<<4) - 16)
			}
			continue
		}
		s := src[18*b : 18*b+18]
		o[0], o[1] = s[0], s[1]
		for j := range 16 {
			o[2+j] = byte(kvaluesIQ4NL[s[2+j]&15])
			o[18+j] = byte(kvaluesIQ4NL[s[2+j]>>4])
		}
	}
}

// installRepack runs Q5_0 and IQ4_NL prompt batches on k, the Q8_0 tiles:
// their activations are prepared as Q8_0's (the same Q8_0 columns).
func installRepack(k *tileSet) {
	for _, t := range []Type{Q5_0, IQ4_NL} {
		gemmImpl[t] = repackGemm(t, k)
		prepKinds[t], prepOffsets[t], prepGroups[t] = prepKindQ8, k.off, prepGroups[Q8_0]
	}
}
