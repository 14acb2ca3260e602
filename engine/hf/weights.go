package hf

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"flowchat/engine/ggml"
	"flowchat/engine/model"
	"flowchat/engine/pickle"
	"flowchat/engine/safetensors"
	"flowchat/engine/spec"
)

// rawTensor is a checkpoint tensor in PyTorch order, whatever the container.
type rawTensor struct {
	name  string
	dtype string
	shape []int64
	data  []byte
}

// Weights are a model's checkpoint tensors, from safetensors or PyTorch
// files, before they are mapped to canonical names.
type Weights struct {
	Format  string // "safetensors" or "pytorch"
	Files   []string
	Size    int64
	tensors []rawTensor
	close   func() error
}

// Close releases the mapped files.
func (w *Weights) Close() error {
	if w.close == nil {
		return nil
	}
	c := w.close
	w.close = nil
	return c()
}

// Names lists the tensor names, sorted.
func (w *Weights) Names() []string {
	out := make([]string, len(w.tensors))
	for i, t := range w.tensors {
		out[i] = t.name
	}
	sort.Strings(out)
	return out
}

// DTypes counts tensors by dtype.
func (w *Weights) DTypes() map[string]int {
	m := map[string]int{}
	for _, t := range w.tensors {
		m[t.dtype]++
	}
	return m
}

// weightFiles lists the checkpoint candidates of a folder, preferred first.
var weightFiles = []string{
	safetensors.IndexName, "model.safetensors",
	pickle.IndexName, "pytorch_model.bin",
}

// OpenWeights opens a folder's checkpoint (safetensors preferred) or one
// checkpoint file.
func OpenWeights(path string) (*Weights, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		for _, name := range weightFiles {
			if p := filepath.Join(path, name); exists(p) {
				return OpenWeights(p)
			}
		}
		return nil, fmt.Errorf("%s: no model.safetensors or pytorch_model.bin (or their .index.json)", path)
	}
	base := filepath.Base(path)
	if strings.HasSuffix(base, ".safetensors") || base == safetensors.IndexName {
		return fromSafetensors(path)
	}
	return fromPickle(path)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func fromSafetensors(path string) (*Weights, error) {
	s, err := safetensors.OpenModel(path)
	if err != nil {
		return nil, err
	}
	w := &Weights{Format: "safetensors", Size: s.Size(), close: s.Close}
	for _, f := range s.Files {
		w.Files = append(w.Files, f.Path)
	}
	for _, name := range s.Names() {
		t, _ := s.Tensor(name)
		w.tensors = append(w.tensors, rawTensor{name, t.DType, t.Shape, t.Data})
	}
	return w, nil
}

func fromPickle(path string) (*Weights, error) {
	c, err := pickle.OpenModel(path)
	if err != nil {
		return nil, err
	}
	w := &Weights{Format: "pytorch", Files: []string{path}, Size: c.Size, close: c.Close}
	for _, t := range c.Tensors {
		w.tensors = append(w.tensors, rawTensor{t.Name, t.DType, t.Shape, t.Data})
	}
	return w, nil
}

// Source serves weights under the canonical names of a spec, after the
// spec's layout transforms. It implements model.Source.
type Source struct {
	byName map[string]*model.Weight
}

// Weight returns the tensor with canonical name name.
func (s *Source) Weight(name string) (*model.Weight, bool) {
	w, ok := s.byName[name]
	return w, ok
}

// Source maps the weights through spec network n; nHead is needed by the
// qkv_heads transform. Integer tensors (buffers such as position ids) are
// left out.
func (w *Weights) Source(n *spec.Network, nHead int) (*Source, error) {
	src := &Source{byName: map[string]*model.Weight{}}
	for _, t := range w.tensors {
		if !isFloat(t.dtype) {
			continue
		}
		wt, err := toWeight(t, n.Transform(t.name), nHead)
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", t.name, err)
		}
		src.byName[n.Canonical(t.name)] = wt
	}
	// Tied embeddings saved once under the head's name (safetensors drops
	// the duplicate): the head's matrix is the embedding table.
	if _, ok := src.byName["token_embd.weight"]; !ok {
		if w, ok := src.byName["output.weight"]; ok {
			src.byName["token_embd.weight"] = w
		}
	}
	return src, nil
}

func isFloat(dtype string) bool {
	return dtype == "F32" || dtype == "F16" || dtype == "BF16" || dtype == "F64"
}

// toWeight converts one tensor: F64 becomes F32; F32, F16 and BF16 keep
// their bytes (a PyTorch row is a GGML row); the transform reorders rows.
func toWeight(t rawTensor, transform string, nHead int) (*model.Weight, error) {
	typ := map[string]ggml.Type{"F32": ggml.F32, "F16": ggml.F16, "BF16": ggml.BF16, "F64": ggml.F32}[t.dtype]
	data := t.data
	if t.dtype == "F64" {
		data = f64ToF32(data)
	}
	rows, cols := int64(1), int64(1)
	if len(t.shape) > 0 {
		cols = t.shape[len(t.shape)-1]
		for _, d := range t.shape[:len(t.shape)-1] {
			rows *= d
		}
	}
	if cols*rows*int64(typ.TypeSize()) != int64(len(data)) {
		return nil, fmt.Errorf("%d bytes for shape %v", len(data), t.shape)
	}
	w := &model.Weight{Name: t.name, Type: typ, Cols: int(cols), Rows: int(rows), Data: data}
	if transform == "" {
		return w, nil
	}
	return applyTransform(w, transform, nHead, len(t.shape) == 1)
}

func f64ToF32(b []byte) []byte {
	out := make([]byte, len(b)/2)
	for i := 0; i < len(b)/8; i++ {
		f := math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(f)))
	}
	return out
}

// applyTransform reorders a tensor as the spec's tensor_transforms says.
func applyTransform(w *model.Weight, transform string, nHead int, vector bool) (*model.Weight, error) {
	kind, arg, err := spec.ParseTransform(transform)
	if err != nil {
		return nil, err
	}
	sz := w.Type.TypeSize()
	switch kind {
	case "transpose":
		if vector {
			return w, nil
		}
		out := make([]byte, len(w.Data))
		for r := 0; r < w.Rows; r++ {
			for c := 0; c < w.Cols; c++ {
				copy(out[(c*w.Rows+r)*sz:(c*w.Rows+r+1)*sz], w.Data[(r*w.Cols+c)*sz:])
			}
		}
		return &model.Weight{Name: w.Name, Type: w.Type, Cols: w.Rows, Rows: w.Cols, Data: out}, nil
	case "drop_rows":
		if vector || arg > w.Rows {
			return nil, fmt.Errorf("drop_rows:%d of a tensor with %d rows", arg, w.Rows)
		}
		return &model.Weight{Name: w.Name, Type: w.Type, Cols: w.Cols, Rows: w.Rows - arg, Data: w.Data[arg*w.Cols*sz:]}, nil
	}
	return qkvHeads(w, nHead, vector)
}

// qkvHeads reorders fused QKV rows from [head][q,k,v][dim] to
// [q,k,v][head][dim]; a bias vector is treated as one column of rows.
func qkvHeads(w *model.Weight, nHead int, vector bool) (*model.Weight, error) {
	rows, rowBytes := w.Rows, w.Cols*w.Type.TypeSize()
	if vector {
		rows, rowBytes = w.Cols, w.Type.TypeSize()
	}
	if nHead <= 0 || rows%(3*nHead) != 0 {
		return nil, fmt.Errorf("qkv_heads: %d rows do not split into 3 × %d heads", rows, nHead)
	}
	dim := rows / (3 * nHead)
	out := make([]byte, len(w.Data))
	for h := 0; h < nHead; h++ {
		for j := 0; j < 3; j++ {
			src := (h*3 + j) * dim * rowBytes
			dst := (j*nHead + h) * dim * rowBytes
			copy(out[dst:dst+dim*rowBytes], w.Data[src:])
		}
	}
	return &model.Weight{Name: w.Name, Type: w.Type, Cols: w.Cols, Rows: w.Rows, Data: out}, nil
}
