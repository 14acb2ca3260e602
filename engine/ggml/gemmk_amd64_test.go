//go:build amd64 && !noasm

package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestKKernelsMatchLanes: the K-quant single-row kernels, 4-row strips and
// 1×8 tiles equal the lane twins bit for bit, over odd row counts, column
// counts around the tile width, poisoned bytes after the operands and
// guard cells between output columns.
func TestKKernelsMatchLanes(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(33, 34))
	for tp, twin := range kLanesTwin {
		// Single rows (Q5_K too: it has no strips yet, but the same chain).
		for _, n := range kernelSizes(tp) {
			w, x := withGuard(randomRow(r, tp, n)), withGuard(randomActivation(r, Q8_K, n))
			if got, want := VecDot(tp, n, w, x), twin(n, w, x); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%v n=%d: single-row kernel %v, twin %v", tp, n, got, want)
			}
		}
		if gemmImpl[tp] == nil {
			continue
		}
		for _, shape := range kGemmShapes {
			n, rows, cols := shape[0], shape[1], shape[2]
			g := newGemmCase(r, tp, n, rows, cols)
			var a Act
			a.Prepare(tp, n, g.x, cols)
			ldd := rows + 2
			got := nanSlice(cols * ldd)
			MatMulAct(tp, n, g.w, rows, &a, got, ldd)
			name := fmt.Sprintf("%v n=%d %dx%d", tp, n, rows, cols)
			checkGemm(t, name, got, g.want(tp, twin, ldd), rows, ldd)
			// The strips alone (decode), with guard cells after dst,
			// every variant this CPU runs.
			for _, v := range kStripVariants(tp) {
				restore := useStrip(tp, v.f)
				dst := nanSlice(rows + 3)
				MatVec(tp, n, g.w, a.Column(0), dst[:rows])
				restore()
				checkGemm(t, name+" strips "+v.name, dst, g.want(tp, twin, rows+3)[:rows+3], rows, rows+3)
			}
		}
	}
}

// BenchmarkKDecode measures the K-quant decode kernels on a 256x2048
// matrix in cache, one column: the 4-row strips (MatVec as installed)
// against the single-row kernel applied row by row (the previous path).
// GMAC/s counts multiply-adds per second of the thread's CPU time.
func BenchmarkKDecode(b *testing.B) {
	for _, tp := range []Type{Q4_K, Q6_K} {
		for _, path := range []string{"strips", "rows"} {
			b.Run(fmt.Sprintf("%v/%s", tp, path), func(b *testing.B) {
				ws, x := benchWeights(tp, 256, 2048)
				w, dst := ws[0], make([]float32, 256)
				mv := matVecImpl[tp]
				if path == "rows" {
					mv = rowsMatVec(tp, dotImpl[tp])
				}
				ns := cpuTimed(b, func() { mv(2048, w, x, dst) })
				b.ReportMetric(256*2048/ns, "GMAC/s")
			})
		}
	}
}

type stripVariant struct {
	name string
	f    stripFunc
}

// kStripVariants are the decode strips of tp this CPU can run.
func kStripVariants(tp Type) []stripVariant {
	var vs []stripVariant
	switch tp {
	case Q4_K:
		vs = append(vs, stripVariant{"avx2", q4kx4})
		if hasKVNNI {
			vs = append(vs, stripVariant{"vnni", q4kx4V})
		}
	case Q6_K:
		vs = append(vs, stripVariant{"avx2", q6kx4})
		if hasKVNNI {
			vs = append(vs, stripVariant{"vnni", q6kx4V})
		}
	}
	return vs
}

// useStrip installs f as tp's strip and returns the function restoring the
// previous one.
func useStrip(tp Type, f stripFunc) func() {
	p := &q4kStrip
	if tp == Q6_K {
		p = &q6kStrip
	}
	old := *p
	*p = f
	return func() { *p = old }
}
