package quant

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"flowchat/engine/ggml"
)

// Options choose how a model's weight matrices are converted, at load
// ((*model.Model).Requantize) or to a file (QuantizeFile).
type Options struct {
	Type ggml.Type // target: an Inferflow format or a GGML type with a quantizer
	// OutputType, when SetOutput is true, is the output head's target (and
	// the token embedding's when the two are tied), as llama-quantize keeps
	// the head at a higher precision.
	OutputType ggml.Type
	SetOutput  bool
	// MinElements keeps matrices with fewer elements as stored (Inferflow's
	// tensor_quant_threshold; its default is 2000·2000, which would leave
	// small models untouched, so 0 here).
	MinElements int
	Threads     int // goroutines; 0 = all cores
}

// TensorChange records what happened to one weight matrix.
type TensorChange struct {
	Name     string
	From, To ggml.Type // To == From when kept
	Elements int
	Bytes    int64  // bytes in the target type (the format's size also when simulated)
	Kept     string // why the tensor was kept as stored; "" when converted
	Note     string // why it was converted to another type than the target
}

// Report summarizes a conversion.
type Report struct {
	Tensors []TensorChange
	// Simulated is true when Inferflow weights are held dequantized as F32
	// because the tensor kernels (ggml) do not know the Inferflow types:
	// the weights' values are exactly the format's, the products run in F32.
	Simulated bool
}

// Elements and Bytes total the weight matrices.
func (r *Report) Elements() (n int64) {
	for _, t := range r.Tensors {
		n += int64(t.Elements)
	}
	return n
}

func (r *Report) Bytes() (n int64) {
	for _, t := range r.Tensors {
		n += t.Bytes
	}
	return n
}

// BitsPerWeight is the storage cost of the weight matrices per element.
func (r *Report) BitsPerWeight() float64 {
	if e := r.Elements(); e > 0 {
		return 8 * float64(r.Bytes()) / float64(e)
	}
	return 0
}

// ParseType resolves a target name: an Inferflow format ("Q3H", "Q4_B64")
// or a GGML type that has a quantizer ("Q4_0", "Q4_K", "F16").
func ParseType(name string) (ggml.Type, error) {
	if f, err := Parse(name); err == nil {
		return f.Type, nil
	}
	if t, ok := ggml.ParseType(name); ok && isWeightType(t) {
		return t, nil
	}
	return 0, fmt.Errorf("quant: unknown target type %q (Inferflow: %s; GGML: F32, F16, BF16, Q8_0, Q5_0, Q5_1, Q4_0, Q4_1, IQ4_NL, Q6_K, Q5_K, Q4_K, Q3_K, Q2_K)", name, Names())
}

// isWeightType reports whether t is a GGML type weights can be stored in
// (the activation-only Q8_1 and Q8_K are not).
func isWeightType(t ggml.Type) bool {
	return t.Known() && t != ggml.Q8_1 && t != ggml.Q8_K
}

// TypeName names t, Inferflow formats included.
func TypeName(t ggml.Type) string {
	if f := ForType(t); f != nil {
		return f.Name
	}
	return t.String()
}

// blockSize is t's block size, Inferflow formats included.
func blockSize(t ggml.Type) int {
	if f := ForType(t); f != nil {
		return f.Block
	}
	return t.BlockSize()
}

// rowSize is the bytes of n elements of t, Inferflow formats included.
func rowSize(t ggml.Type, n int) int {
	if f := ForType(t); f != nil {
		return f.RowSize(n)
	}
	return t.RowSize(n)
}

// Validate checks that opt names targets weights can be converted to.
func (opt *Options) Validate() error {
	for _, t := range []ggml.Type{opt.Type, opt.OutputType} {
		if ForType(t) == nil && !isWeightType(t) {
			return fmt.Errorf("quant: cannot quantize to %v", t)
		}
	}
	return nil
}

// Plan decides what a [rows × cols] matrix of type from becomes: target;
// F16 when its rows are not whole blocks of target and it is F32 (the
// fallback llama-quantize uses); or as stored when it already has the type,
// has fewer than minElems elements, or cannot be blocked.
func Plan(name string, from ggml.Type, cols, rows int, target ggml.Type, minElems int) TensorChange {
	n := cols * rows
	c := TensorChange{Name: name, From: from, To: target, Elements: n}
	switch {
	case from == target:
		c.Kept = "already " + TypeName(target)
	case n < minElems:
		c.Kept = fmt.Sprintf("%d elements < %d", n, minElems)
	case cols%blockSize(target) != 0 && from == ggml.F32:
		c.To = ggml.F16
		c.Note = fmt.Sprintf("F16: row length %d is not a multiple of the %s block %d", cols, TypeName(target), blockSize(target))
	case cols%blockSize(target) != 0:
		c.Kept = fmt.Sprintf("row length %d is not a multiple of the %s block %d", cols, TypeName(target), blockSize(target))
	}
	if c.Kept != "" {
		c.To = from
	}
	c.Bytes = int64(rows) * int64(rowSize(c.To, cols))
	return c
}

// Encode converts rows × cols elements of type from (src) to target and
// returns the type and bytes to store. An Inferflow target that ggml does
// not know is simulated: the values are the format's, stored as F32.
func Encode(src []byte, from ggml.Type, cols, rows int, target ggml.Type, threads int) (ggml.Type, []byte, bool) {
	q := encodeRows(src, from, target, cols, rows, threads)
	f := ForType(target)
	if f == nil || target.Known() {
		return target, q, false
	}
	out := make([]float32, rows*cols)
	f.DequantizeRow(q, out)
	return ggml.F32, ggml.F32Bytes(out), true
}

// rows splits [0, n) into contiguous ranges run on up to threads goroutines.
func rows(n, threads int, fn func(r0, r1 int)) {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	threads = max(1, min(threads, n/16))
	var wg sync.WaitGroup
	for i := 0; i < threads; i++ {
		r0, r1 := i*n/threads, (i+1)*n/threads
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(r0, r1)
		}()
	}
	wg.Wait()
}

// Summary describes a report in one line, e.g. "Q3H_B64: 56 of 57 matrices,
// 4.02 bits/weight".
func (r *Report) Summary() string {
	conv, types := 0, map[string]bool{}
	for _, t := range r.Tensors {
		if t.Kept == "" {
			conv++
			types[TypeName(t.To)] = true
		}
	}
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	sort.Strings(names)
	s := fmt.Sprintf("%s: %d of %d matrices converted, %.2f bits/weight", strings.Join(names, "+"), conv, len(r.Tensors), r.BitsPerWeight())
	if r.Simulated {
		s += " (simulated: Inferflow weights held dequantized as F32)"
	}
	return s
}
