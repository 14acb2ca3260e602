//go:build amd64 && !noasm

package ggml

//go:noescape
func dotsF32AVX(q, k *float32, stride, n, m int, out *float32)

//go:noescape
func accRows32AVX(out, w, v *float32, stride, m int)

//go:noescape
func accRows8AVX(out, w, v *float32, stride, m int)

//go:noescape
func scaleAVX(x *float32, n int, s float32)

//go:noescape
func expGroupsAVX(x *float32, n int, maxv float32) float64

func init() {
	if hasAVX2 {
		dotsF32, accumulateRows, scale, expGroups = dotsF32Asm, accumulateRowsAsm, scaleAsm, expGroupsAsm
	}
}

func dotsF32Asm(q, k []float32, stride int, out []float32) {
	if len(q) == 0 {
		clear(out)
		return
	}
	dotsF32AVX(&q[0], &k[0], 4*stride, len(q), len(out), &out[0])
}

// accumulateRowsAsm runs 32 and then 8 elements of every row at a time
// (each element's chain is independent, so the split keeps its order).
func accumulateRowsAsm(out, w, v []float32, stride int) {
	i := 0
	for ; i+32 <= len(out); i += 32 {
		accRows32AVX(&out[i], &w[0], &v[i], 4*stride, len(w))
	}
	for ; i+8 <= len(out); i += 8 {
		accRows8AVX(&out[i], &w[0], &v[i], 4*stride, len(w))
	}
	if i < len(out) {
		tail := out[i:]
		for j, a := range w {
			row := v[j*stride+i : j*stride+len(out)]
			for e := range tail {
				tail[e] += float32(a * row[e])
			}
		}
	}
}

func scaleAsm(x []float32, s float32) {
	n := len(x) &^ 7
	if n > 0 {
		scaleAVX(&x[0], n, s)
	}
	for i := n; i < len(x); i++ {
		x[i] *= s
	}
}

func expGroupsAsm(x []float32, maxv float32) float64 {
	if len(x) < 8 {
		return 0
	}
	return expGroupsAVX(&x[0], len(x)&^7, maxv)
}
