package quant

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
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

// TestQuantizeFileMatchesLlamaQuantize converts the F32 fixtures and
// checks every tensor against the files llama-quantize wrote (an
// independent implementation): TinyStories-656K as Q8_0 and as Q4_0 with a
// Q8_0 head; stories260K's "mix" files, where the 172-wide ffn_down
// matrices fall back to F16.
func TestQuantizeFileMatchesLlamaQuantize(t *testing.T) {
	cases := []struct {
		src, ref string
		opt      Options
	}{
		{"tinystories-656K/TinyStories-656K-F32", "tinystories-656K/TinyStories-656K-Q8_0", Options{Type: ggml.Q8_0}},
		{"tinystories-656K/TinyStories-656K-F32", "tinystories-656K/TinyStories-656K-Q4_0", Options{Type: ggml.Q4_0, OutputType: ggml.Q8_0, SetOutput: true}},
		{"stories260K/stories260K-F32", "stories260K/stories260K-Q8_0mix", Options{Type: ggml.Q8_0}},
		{"stories260K/stories260K-F32", "stories260K/stories260K-Q4_0mix", Options{Type: ggml.Q4_0}},
		{"stories260K/stories260K-F32", "stories260K/stories260K-Q4_1mix", Options{Type: ggml.Q4_1}},
		{"stories260K/stories260K-F32", "stories260K/stories260K-Q5_0mix", Options{Type: ggml.Q5_0}},
	}
	for _, c := range cases {
		src, err := gguf.Open(fixtures.Path(t, "models/"+c.src+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		ref, err := gguf.Open(fixtures.Path(t, "models/"+c.ref+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		defer ref.Close()
		out, _ := writeQuantized(t, src, c.opt)
		if len(out.Tensors) != len(ref.Tensors) {
			t.Fatalf("%s: %d tensors, llama-quantize wrote %d", c.ref, len(out.Tensors), len(ref.Tensors))
		}
		for _, rt := range ref.Tensors {
			ot, ok := out.Tensor(rt.Name)
			if !ok || ot.Type != rt.Type || !bytes.Equal(out.TensorData(ot), ref.TensorData(&rt)) {
				t.Errorf("%s: tensor %s differs from llama-quantize's (%v)", c.ref, rt.Name, rt.Type)
			}
		}
		if ft, _ := out.Int("general.file_type"); ft != int64(fileTypes[c.opt.Type]) {
			t.Errorf("%s: general.file_type %d", c.ref, ft)
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
		if !isMatrix(&SourceTensor{Name: st.Name, Shape: st.Shape}) {
			continue
		}
		want := make([]byte, int(st.Rows())*f.RowSize(int(st.Shape[0])))
		f.QuantizeRow(ggml.BytesF32(src.TensorData(&st)), want)
		if ot.Type != f.Type || !bytes.Equal(out.TensorData(ot), want) {
			t.Errorf("%s: %v, data differs from QuantizeRow", st.Name, ot.Type)
		}
	}
}

// TestUnknownTypeRejected checks what a reader sees for a tensor type id
// it does not know (what llama.cpp sees in a file with Inferflow types;
// here the first id above them that nothing registers): a clear
// unsupported-type error naming the tensor, not garbage.
func TestUnknownTypeRejected(t *testing.T) {
	unknown := Q3H_B64 + 1
	for unknown.Known() {
		unknown++
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
	binary.LittleEndian.PutUint32(b[i:], uint32(unknown))
	_, err := gguf.Parse(b)
	if !errors.Is(err, gguf.ErrUnsupportedTensorType) || !strings.Contains(err.Error(), "x.weight") {
		t.Fatalf("type %d: err = %v, want ErrUnsupportedTensorType naming x.weight", unknown, err)
	}
}
