package quant

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
)

// ErrUnregistered is returned when an Inferflow type must be written to or
// read from a GGUF file but the tensor layer (ggml) does not know it yet.
var ErrUnregistered = errors.New("quant: the Inferflow tensor types are not registered with ggml (see docs/QUANTIZATION.md)")

// fileTypes are llama.cpp's general.file_type values of the GGML targets
// (LLAMA_FTYPE_*); other targets leave the key out.
var fileTypes = map[ggml.Type]uint32{
	ggml.F32: 0, ggml.F16: 1, ggml.Q4_0: 2, ggml.Q4_1: 3, ggml.Q8_0: 7, ggml.Q5_0: 8, ggml.Q5_1: 9,
	ggml.Q2_K: 10, ggml.Q3_K: 12, ggml.Q4_K: 15, ggml.Q5_K: 17, ggml.Q6_K: 18, ggml.IQ4_NL: 25, ggml.BF16: 32,
}

// SourceTensor is one tensor of a model being written: its GGUF name, its
// shape in GGML order (Shape[0] is the row length), its element type and
// bytes. A GGUF file provides them directly; a safetensors checkpoint
// provides them once its names are mapped to GGUF's and its metadata to
// GGUF keys (F32, F16 and BF16 are all GGML types).
type SourceTensor struct {
	Name  string
	Shape []uint64
	Type  ggml.Type
	Data  []byte
}

// rows is the number of rows of t (elements / Shape[0]).
func (t *SourceTensor) rows() int {
	n := 1
	for _, d := range t.Shape[1:] {
		n *= int(d)
	}
	return n
}

// QuantizeFile prepares a GGUF writer holding f's metadata and tensors with
// the weight matrices converted as QuantizeTensors does; f must stay open
// until the writer has written.
func QuantizeFile(f *gguf.File, opt Options) (*gguf.Writer, Report, error) {
	ts := make([]SourceTensor, len(f.Tensors))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		ts[i] = SourceTensor{Name: t.Name, Shape: t.Shape, Type: t.Type, Data: f.TensorData(t)}
	}
	return QuantizeTensors(f.KV, ts, opt)
}

// QuantizeTensors prepares a GGUF writer holding the metadata kv and the
// tensors, with the weight matrices (tensors named *.weight with more than
// one row) converted as (*model.Model).Requantize converts a loaded model.
// Tensor bytes are produced when the writer writes, one tensor at a time.
func QuantizeTensors(kv []gguf.KeyValue, tensors []SourceTensor, opt Options) (*gguf.Writer, Report, error) {
	if ForType(opt.Type) != nil && !opt.Type.Known() || opt.SetOutput && ForType(opt.OutputType) != nil && !opt.OutputType.Known() {
		return nil, Report{}, ErrUnregistered
	}
	if !opt.SetOutput {
		opt.OutputType = opt.Type
	}
	if err := opt.Validate(); err != nil {
		return nil, Report{}, err
	}
	w := gguf.NewWriter()
	copyKV(w, kv, opt.Type)
	head := outputName(tensors)
	var rep Report
	for i := range tensors {
		t := &tensors[i]
		if !t.Type.Known() {
			return nil, rep, fmt.Errorf("quant: tensor %s: %w %v", t.Name, gguf.ErrUnsupportedTensorType, t.Type)
		}
		if !isMatrix(t) {
			w.AddTensor(t.Name, t.Type, t.Shape, t.Data)
			continue
		}
		target := opt.Type
		if opt.SetOutput && t.Name == head {
			target = opt.OutputType
		}
		c := Plan(t.Name, t.Type, int(t.Shape[0]), t.rows(), target, opt.MinElements)
		rep.Tensors = append(rep.Tensors, c)
		if c.Kept != "" {
			w.AddTensor(t.Name, t.Type, t.Shape, t.Data)
			continue
		}
		w.AddTensorFunc(t.Name, c.To, t.Shape, func(out io.Writer) error {
			_, err := out.Write(encodeRows(t.Data, t.Type, c.To, int(t.Shape[0]), t.rows(), opt.Threads))
			return err
		})
	}
	return w, rep, nil
}

// isMatrix reports whether t is a weight matrix to convert.
func isMatrix(t *SourceTensor) bool {
	return strings.HasSuffix(t.Name, ".weight") && len(t.Shape) >= 2 && t.rows() > 1
}

// outputName is the output head's tensor: output.weight, else the token
// embedding it is tied to.
func outputName(ts []SourceTensor) string {
	for _, t := range ts {
		if t.Name == "output.weight" {
			return t.Name
		}
	}
	return "token_embd.weight"
}

// copyKV copies the metadata with the file type set for target.
func copyKV(w *gguf.Writer, kvs []gguf.KeyValue, target ggml.Type) {
	for _, kv := range kvs {
		if kv.Key != "general.file_type" {
			w.Set(kv.Key, kv.Value)
		}
	}
	if ft, ok := fileTypes[target]; ok {
		w.Set("general.file_type", ft)
	}
	w.Set("general.quantization_version", uint32(2))
	w.Set("flowchat.quantization.type", TypeName(target))
}

// encodeRows converts rows of cols elements from type `from` to `to`.
func encodeRows(src []byte, from, to ggml.Type, cols, nrows, threads int) []byte {
	out := make([]byte, nrows*rowSize(to, cols))
	rs, ors := from.RowSize(cols), rowSize(to, cols)
	rows(nrows, threads, func(r0, r1 int) {
		x := make([]float32, cols)
		for r := r0; r < r1; r++ {
			ggml.DequantizeRow(from, src[r*rs:(r+1)*rs], x)
			quantizeRow(to, x, out[r*ors:(r+1)*ors])
		}
	})
	return out
}

// quantizeRow encodes one row as t, an Inferflow format or a GGML type.
func quantizeRow(t ggml.Type, x []float32, dst []byte) {
	if f := ForType(t); f != nil {
		f.QuantizeRow(x, dst)
		return
	}
	ggml.QuantizeRow(t, x, dst)
}
