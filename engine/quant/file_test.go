package quant

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
)

// writeQuantized converts the F32 file to opt in a temporary GGUF and
// opens the result.
func writeQuantized(t *testing.T, src *gguf.File, opt Options) (*gguf.File, Report) {
	t.Helper()
	w, rep, err := QuantizeFile(src, opt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	out, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	return out, rep
}

// TestQuantizeFileMatchesLlamaQuantize converts TinyStories-656K F32 to
// Q8_0 and to Q4_0 with a Q8_0 output head and checks every tensor against
// the files llama-quantize wrote (an independent implementation).
func TestQuantizeFileMatchesLlamaQuantize(t *testing.T) {
	dir := "models/tinystories-656K/"
	src, err := gguf.Open(fixtures.Path(t, dir+"TinyStories-656K-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for name, opt := range map[string]Options{
		"Q8_0": {Type: ggml.Q8_0},
		"Q4_0": {Type: ggml.Q4_0, OutputType: ggml.Q8_0, SetOutput: true},
	} {
		ref, err := gguf.Open(fixtures.Path(t, dir+"TinyStories-656K-"+name+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		defer ref.Close()
		out, rep := writeQuantized(t, src, opt)
		if len(out.Tensors) != len(ref.Tensors) || len(rep.Tensors) == 0 {
			t.Fatalf("%s: %d tensors, llama-quantize wrote %d", name, len(out.Tensors), len(ref.Tensors))
		}
		for _, rt := range ref.Tensors {
			ot, ok := out.Tensor(rt.Name)
			if !ok || ot.Type != rt.Type || !bytes.Equal(out.TensorData(ot), ref.TensorData(&rt)) {
				t.Errorf("%s: tensor %s differs from llama-quantize's (%v)", name, rt.Name, rt.Type)
			}
		}
		if ft, _ := out.Int("general.file_type"); ft != int64(fileTypes[opt.Type]) {
			t.Errorf("%s: general.file_type %d", name, ft)
		}
	}
}

// TestQuantizeFileInferflow writes Inferflow types: refused with
// ErrUnregistered while ggml does not know them, and otherwise read back
// with every matrix equal to QuantizeRow of the source.
func TestQuantizeFileInferflow(t *testing.T) {
	src, err := gguf.Open(fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	f := ForType(Q3H_B64)
	if !f.Type.Known() {
		if _, _, err := QuantizeFile(src, Options{Type: f.Type}); !errors.Is(err, ErrUnregistered) {
			t.Fatalf("err = %v, want ErrUnregistered", err)
		}
		t.Skip("the Inferflow types are not registered with ggml: only the refusal is checked")
	}
	out, _ := writeQuantized(t, src, Options{Type: f.Type})
	for _, st := range src.Tensors {
		ot, _ := out.Tensor(st.Name)
		if !isMatrix(&st) {
			continue
		}
		want := make([]byte, int(st.Rows())*f.RowSize(int(st.Shape[0])))
		f.QuantizeRow(ggml.BytesF32(src.TensorData(&st)), want)
		if ot.Type != f.Type || !bytes.Equal(out.TensorData(ot), want) {
			t.Errorf("%s: %v, data differs from QuantizeRow", st.Name, ot.Type)
		}
	}
}

// TestUnknownTypeRejected checks what a reader that does not know the
// Inferflow ids (this build's gguf without registration, or llama.cpp)
// sees: a clear unsupported-type error naming the tensor, not garbage.
func TestUnknownTypeRejected(t *testing.T) {
	if Q3H_B64.Known() {
		t.Skip("the Inferflow types are registered: this reader knows them")
	}
	var buf bytes.Buffer
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	w.AddTensor("x.weight", ggml.F32, []uint64{4}, make([]byte, 16))
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	i := bytes.Index(b, []byte("x.weight")) + len("x.weight") + 4 + 8 // name, n_dims, dim 0
	binary.LittleEndian.PutUint32(b[i:], uint32(Q3H_B64))
	_, err := gguf.Parse(b)
	if !errors.Is(err, gguf.ErrUnsupportedTensorType) {
		t.Fatalf("err = %v, want ErrUnsupportedTensorType", err)
	}
	t.Log(err)
}
