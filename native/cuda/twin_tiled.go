package cuda

import "fmt"

// Launch constants of matmul_tiled.cu (#define values there;
// TestTiledConstants checks they agree).
const (
	mtRows    = 64  // MT_ROWS: weight rows per block
	mtCols    = 64  // MT_COLS: activation columns per block
	mtThreads = 256 // MT_THREADS
)

// TiledKernel is the name of the tiled prefill kernel for t in
// matmul_tiled.cu: mm_<type>'s with the prefix mt_.
func (t WeightType) TiledKernel() string { return "mt" + t.Kernel()[2:] }

// tiledUnits are the unit decoders (mm_blocks.h) of the types whose
// matvec kernel has none of its own (it scales a block's sum instead).
var tiledUnits = map[WeightType]unitFunc{WeightQ8_0: unitQ8_0, WeightQ4_0: unitQ4_0}

// dequantRowTwin writes the n weights of row as the tiled kernels read
// them: float types widened exactly, quantized types unit by unit through
// mm_blocks.h's decoders (engine/ggml's DequantizeRow values).
func dequantRowTwin(t WeightType, row []byte, out []float32) {
	wt := weightTypes[t]
	unit := wt.unit
	if u, ok := tiledUnits[t]; ok {
		unit = u
	}
	if unit == nil {
		for i := range out {
			out[i] = floatWeight(t, row, i)
		}
		return
	}
	per := wt.block / 32
	var w [32]float32
	for u := range len(out) / 32 {
		unit(row[u/per*wt.size:], u%per, &w)
		copy(out[u*32:], w[:])
	}
}

// mtTwin is mt_<t>: y[c·rows + r] = Σ_i w[r][i]·x[c·n + i], each output
// one fmaf chain over i = 0 … n−1 in order from 0 (matmul_tiled.cu's
// accumulation order; no warp size enters it).
func mtTwin(t WeightType, w []byte, x, y []float32, n, rows, cols int) {
	rb := t.RowBytes(n)
	if n%t.BlockSize() != 0 || len(w) < rows*rb || len(x) < cols*n || len(y) < cols*rows {
		panic(fmt.Sprintf("cuda: mtTwin %v n=%d rows=%d cols=%d: bad operand sizes", t, n, rows, cols))
	}
	wr := make([]float32, n)
	for r := range rows {
		dequantRowTwin(t, w[r*rb:(r+1)*rb], wr)
		for c := range cols {
			xc := x[c*n : (c+1)*n]
			var acc float32
			for i, wi := range wr {
				acc = fmaf(wi, xc[i], acc)
			}
			y[c*rows+r] = acc
		}
	}
}

// unitQ8_0 is mm_q8_0_t: w = q·d.
func unitQ8_0(b []byte, _ int, w *[32]float32) {
	d := f16At(b)
	for j := range 32 {
		w[j] = float32(int8(b[2+j])) * d
	}
}

// unitQ4_0 is mm_q4_0_t: w = (q − 8)·d, low nibbles first.
func unitQ4_0(b []byte, _ int, w *[32]float32) {
	d := f16At(b)
	for j := range 16 {
		q := b[2+j]
		w[j] = float32(int(q&0xf)-8) * d
		w[j+16] = float32(int(q>>4)-8) * d
	}
}

// dqThreads is DQ_THREADS (matmul_tiled.cu).
const dqThreads = 256

// DequantF16Kernel is the kernel that widens rows of t to F16 for the
// cuBLAS path (dq16_<type>); ok is false for F16, which needs none.
func (t WeightType) DequantF16Kernel() (name string, ok bool) {
	if t == WeightF16 {
		return "", false
	}
	return "dq16" + t.Kernel()[2:], true
}

// DequantF16Launch is dq16_<t>'s launch: rows × n weights at w into n·rows
// halves at h.
func DequantF16Launch(t WeightType, w, h uint64, n, rows int) (Launch, error) {
	name, ok := t.DequantF16Kernel()
	switch {
	case !ok:
		return Launch{}, fmt.Errorf("no F16 dequantization kernel for %v", t)
	case n%t.BlockSize() != 0:
		return Launch{}, fmt.Errorf("%v row of %d elements is not whole blocks", t, n)
	}
	items := rows * n
	if t.BlockSize() > 1 {
		items /= 32
	}
	l := Launch{Kernel: name, Grid: gridFor(items, dqThreads), Block: Dim3{X: dqThreads}}
	l.ptrs(w, h).ints(n, rows)
	return l, nil
}

// dq16Twin is dq16_<t>: the rows × n weights the tiled kernels read,
// rounded to binary16.
func dq16Twin(t WeightType, w []byte, n, rows int) []uint16 {
	h := make([]uint16, rows*n)
	wr := make([]float32, n)
	rb := t.RowBytes(n)
	for r := range rows {
		dequantRowTwin(t, w[r*rb:(r+1)*rb], wr)
		for i, v := range wr {
			h[r*n+i] = floatToHalf(v)
		}
	}
	return h
}
