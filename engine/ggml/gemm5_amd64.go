//go:build amd64 && !noasm

package ggml

import (
	"encoding/binary"
	"sync"
)

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

// repackMinCols is the fewest columns rewritten for the tiles. The
// rewrite of a row costs what 3–6 per-row products of it cost
// (BenchmarkRepack: a 4096-element Q5_0 row 1.15 ns an element, IQ4_NL
// 1.6), so smaller batches (decode, the batching engine's few-column
// steps) run the per-row kernel column by column, as before.
var repackMinCols = 16

// repackGemm is the gemmFunc of t (Q5_0 or IQ4_NL) over the Q8_0 tiles k.
func repackGemm(t Type, k *tileSet) gemmFunc { return repackRun(t, k.run) }

// repackRun is the gemmFunc of t (Q5_0 or IQ4_NL) over run, a Q8_0 one.
func repackRun(t Type, run gemmFunc) gemmFunc {
	return func(n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
		rs, rs8 := t.RowSize(n), Q8_0.RowSize(n)
		if a.cols < repackMinCols {
			for c := range a.cols {
				MatVec(t, n, w[:rs*rows], a.Column(c), dst[c*ldd:c*ldd+rows])
			}
			return
		}
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
			run(n, buf[:nr*rs8], nr, a, dst[r0:], ldd)
		}
		repackPool.Put(bp)
	}
}

// toQ8_0 rewrites nb blocks of t (Q5_0 or IQ4_NL) at src as Q8_0 blocks
// at dst, eight elements at a time (toQ8_0Ref is the plain form).
func toQ8_0(t Type, nb int, src, dst []byte) {
	const m4, b4 = 0x0f0f0f0f0f0f0f0f, 0x1010101010101010
	le := binary.LittleEndian
	for b := range nb {
		o := dst[34*b : 34*b+34]
		if t == Q5_0 {
			s := src[22*b : 22*b+22]
			o[0], o[1] = s[0], s[1]
			qh := le.Uint32(s[2:])
			for half := range 2 {
				x := le.Uint64(s[6+8*half:])
				h := uint(8 * half)
				// v = nibble | (bit << 4) in 0…31; v − 16 as int8 is v ^ 0x10
				// with 0xe0 set where v < 16.
				lo := x&m4 | bitBytes[qh>>h&0xff]
				hi := x>>4&m4 | bitBytes[qh>>(16+h)&0xff]
				le.PutUint64(o[2+8*half:], lo^b4|(^lo&b4)*14)
				le.PutUint64(o[18+8*half:], hi^b4|(^hi&b4)*14)
			}
			continue
		}
		s := src[18*b : 18*b+18]
		o[0], o[1] = s[0], s[1]
		for j, q := range s[2:18] {
			o[2+j] = iq4Lo[q]
			o[18+j] = iq4Hi[q]
		}
	}
}

// toQ8_0Ref is toQ8_0 element by element (its twin in tests).
func toQ8_0Ref(t Type, nb int, src, dst []byte) {
	for b := range nb {
		o := dst[34*b : 34*b+34]
		if t == Q5_0 {
			s := src[22*b : 22*b+22]
			o[0], o[1] = s[0], s[1]
			qh := binary.LittleEndian.Uint32(s[2:])
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

// bitBytes[m] has 0x10 in byte i where bit i of m is set; iq4Lo and iq4Hi
// are the IQ4_NL codebook entries of a byte's low and high nibble.
var bitBytes [256]uint64
var iq4Lo, iq4Hi [256]byte

func init() {
	for m := range 256 {
		for i := range 8 {
			if m>>i&1 != 0 {
				bitBytes[m] |= 0x10 << (8 * i)
			}
		}
		iq4Lo[m], iq4Hi[m] = byte(kvaluesIQ4NL[m&15]), byte(kvaluesIQ4NL[m>>4])
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
