package cuda

import "math"

// The twins of the 32-element units of matmul.cu's unit kernels (mm_q4_1,
// mm_q5_0, mm_q5_1, mm_iq4_nl and the K-quants): unitWeights writes the
// 32 weights of unit j of a block (j < unitsPerBlock; 32-element blocks
// have one unit, 256-element super-blocks eight) exactly as engine/ggml's
// DequantizeRow does: the same float32 products and differences in the
// same order, no fused multiply-add. The kernel then takes the unit's
// Σ w_j·x_j by fmaf in j order and adds it to the lane's accumulator.

// f16At widens the fp16 value at b[0:2].
func f16At(b []byte) float32 { return halfToFloat(le16(b)) }

func unitQ4_1(b []byte, _ int, w *[32]float32) {
	d, m := f16At(b), f16At(b[2:])
	qs := b[4:20]
	for j := range 16 {
		w[j] = float32(float32(qs[j]&0xf)*d) + m
		w[j+16] = float32(float32(qs[j]>>4)*d) + m
	}
}

// q5High is the fifth bits of elements j and j+16 of a Q5_0/Q5_1 block,
// already at bit 4.
func q5High(qh uint32, j int) (h0, h1 byte) {
	return byte(qh>>uint(j)<<4) & 0x10, byte(qh>>uint(j+12)) & 0x10
}

func unitQ5_0(b []byte, _ int, w *[32]float32) {
	d := f16At(b)
	qh := le32(b[2:])
	qs := b[6:22]
	for j := range 16 {
		h0, h1 := q5High(qh, j)
		w[j] = float32(int(qs[j]&0xf|h0)-16) * d
		w[j+16] = float32(int(qs[j]>>4|h1)-16) * d
	}
}

func unitQ5_1(b []byte, _ int, w *[32]float32) {
	d, m := f16At(b), f16At(b[2:])
	qh := le32(b[4:])
	qs := b[8:24]
	for j := range 16 {
		h0, h1 := q5High(qh, j)
		w[j] = float32(float32(qs[j]&0xf|h0)*d) + m
		w[j+16] = float32(float32(qs[j]>>4|h1)*d) + m
	}
}

// iq4nlValues is IQ4_NL's codebook (kvalues_iq4nl).
var iq4nlValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

func unitIQ4_NL(b []byte, _ int, w *[32]float32) {
	d := f16At(b)
	qs := b[2:18]
	for j := range 16 {
		w[j] = d * float32(iq4nlValues[qs[j]&0xf])
		w[j+16] = d * float32(iq4nlValues[qs[j]>>4])
	}
}

// Q2_K (84 bytes): scales[16] | qs[64] | d | dmin. Unit u is 128-element
// half u/4, 2-bit plane u%4; its two 16-element groups have the scales
// 2u and 2u+1 (low nibble scale, high nibble min).
func unitQ2_K(b []byte, u int, w *[32]float32) {
	d, dmin := f16At(b[80:]), f16At(b[82:])
	q := b[16+32*(u/4):]
	shift := uint(2 * (u % 4))
	for g := range 2 {
		s := b[2*u+g]
		dl, ml := d*float32(s&0xf), dmin*float32(s>>4)
		for l := range 16 {
			w[16*g+l] = float32(dl*float32((q[16*g+l]>>shift)&3)) - ml
		}
	}
}

// q3Scale is the i-th 6-bit Q3_K scale (still offset by 32) of the 12
// packed bytes p: the low nibble from byte i (i < 8) or the high nibble
// of byte i−8, the two high bits from byte 8 + i%4 at bit 2·(i/4).
func q3Scale(p []byte, i int) int {
	lo := p[i%8] >> (4 * uint(i/8)) & 0xf
	hi := p[8+i%4] >> (2 * uint(i/4)) & 3
	return int(lo | hi<<4)
}

// Q3_K (110 bytes): hmask[32] | qs[64] | scales[12] | d. Unit u is
// 128-element half u/4, 2-bit plane u%4, high bit u of hmask; scales 2u
// and 2u+1.
func unitQ3_K(b []byte, u int, w *[32]float32) {
	d := f16At(b[108:])
	hm, q := b[0:32], b[32+32*(u/4):]
	shift := uint(2 * (u % 4))
	m := byte(1) << uint(u)
	for g := range 2 {
		dl := d * float32(q3Scale(b[96:108], 2*u+g)-32)
		for l := 16 * g; l < 16*g+16; l++ {
			v := int((q[l] >> shift) & 3)
			if hm[l]&m == 0 {
				v -= 4
			}
			w[l] = dl * float32(v)
		}
	}
}

// scaleMinK4 is get_scale_min_k4: the j-th 6-bit scale and min of Q4_K
// and Q5_K.
func scaleMinK4(j int, q []byte) (sc, m byte) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// Q4_K (144 bytes): d | dmin | scales[12] | qs[128]. Unit u takes the low
// (u even) or high nibbles of qs[32·(u/2) …], with scale and min u.
func unitQ4_K(b []byte, u int, w *[32]float32) {
	d, dmin := f16At(b), f16At(b[2:])
	sc, mn := scaleMinK4(u, b[4:16])
	dl, ml := d*float32(sc), dmin*float32(mn)
	q := b[16+32*(u/2):]
	shift := uint(4 * (u % 2))
	for l := range 32 {
		w[l] = float32(dl*float32(q[l]>>shift&0xf)) - ml
	}
}

// Q5_K (176 bytes): d | dmin | scales[12] | qh[32] | qs[128]. As Q4_K,
// with bit u of qh[l] as the fifth bit.
func unitQ5_K(b []byte, u int, w *[32]float32) {
	d, dmin := f16At(b), f16At(b[2:])
	sc, mn := scaleMinK4(u, b[4:16])
	dl, ml := d*float32(sc), dmin*float32(mn)
	qh, q := b[16:48], b[48+32*(u/2):]
	shift := uint(4 * (u % 2))
	for l := range 32 {
		v := q[l] >> shift & 0xf
		if qh[l]>>uint(u)&1 != 0 {
			v += 16
		}
		w[l] = float32(dl*float32(v)) - ml
	}
}

// Q6_K (210 bytes): ql[128] | qh[64] | scales[16] (int8) | d. Unit u is
// 128-element half h = u/4, quarter k = u%4: low 4 bits from the low
// (k < 2) or high nibbles of ql[64h + 32·(k%2) + l], high 2 bits from
// qh[32h + l] at bit 2k, scale 8h + l/16 + 2k.
func unitQ6_K(b []byte, u int, w *[32]float32) {
	d := f16At(b[208:])
	h, k := u/4, u%4
	ql, qh, sc := b[64*h+32*(k%2):], b[128+32*h:], b[192+8*h:]
	for l := range 32 {
		q := int(ql[l]>>(4*uint(k/2))&0xf|(qh[l]>>(2*uint(k))&3)<<4) - 32
		w[l] = float32(d*float32(int8(sc[l/16+2*k]))) * float32(q)
	}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// bf16ToFloat widens bfloat16 (the high half of a float32) exactly.
func bf16ToFloat(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// inferflow is one of Inferflow's min–max block formats (engine/quant): an
// fp16 lo and d, then the codes in bit planes of widths w[0], w[1], w[2]
// (0: none) at shifts 0, w[0], w[0]+w[1]. A plane of width b over c codes
// is n = c·b/8 bytes; byte j holds codes j, j+n, j+2n, … at bit offsets
// 0, b, 2b, …. Q3H stores pairs: code q₂ᵢ·11 + q₂ᵢ₊₁ for 64 weights.
// w_i = q_i·d + lo.
type inferflow struct {
	block int
	w     [3]int
	pairs bool
}

// code is code i of a block's planes p.
func (f inferflow) code(p []byte, codes, i int) int {
	c, shift := 0, 0
	for _, b := range f.w {
		if b == 0 {
			break
		}
		n := codes * b / 8
		c |= int(p[i%n]>>(uint(i/n)*uint(b))&(1<<b-1)) << shift
		p, shift = p[n:], shift+b
	}
	return c
}

func (f inferflow) unit(blk []byte, u int, w *[32]float32) {
	lo, d := f16At(blk), f16At(blk[2:])
	p := blk[4:]
	if !f.pairs {
		for l := range 32 {
			w[l] = float32(float32(f.code(p, f.block, 32*u+l))*d) + lo
		}
		return
	}
	for l := range 16 {
		c := f.code(p, f.block/2, 16*u+l)
		w[2*l] = float32(float32(c/11)*d) + lo
		w[2*l+1] = float32(float32(c%11)*d) + lo
	}
}
