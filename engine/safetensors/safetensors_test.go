package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"flowchat/engine/fixtures"
)

func sample() []Tensor {
	f32 := make([]byte, 2*3*4)
	for i := range f32 {
		f32[i] = byte(i)
	}
	return []Tensor{
		{Name: "a.weight", DType: "F32", Shape: []int64{2, 3}, Data: f32},
		{Name: "b.bias", DType: "BF16", Shape: []int64{3}, Data: []byte{1, 2, 3, 4, 5, 6}},
		{Name: "empty", DType: "F16", Shape: []int64{0, 4}, Data: nil},
	}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sample(), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(buf.Bytes()); (8+n)%8 != 0 {
		t.Errorf("data starts at %d, not 8-byte aligned", 8+n)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["format"] != "pt" {
		t.Errorf("metadata %v", f.Metadata)
	}
	for _, want := range sample() {
		got, ok := f.Tensor(want.Name)
		if !ok {
			t.Fatalf("%s missing", want.Name)
		}
		if got.DType != want.DType || !bytes.Equal(got.Data, want.Data) || len(got.Shape) != len(want.Shape) {
			t.Errorf("%s: got %s %v %v", want.Name, got.DType, got.Shape, got.Data)
		}
	}
}

// header builds a file from a header object and a body of n bytes.
func header(t *testing.T, h map[string]any, n int) []byte {
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	return append(append(out, js...), make([]byte, n)...)
}

func TestMalformed(t *testing.T) {
	ent := func(dt string, shape []int64, b, e int64) map[string]any {
		return map[string]any{"dtype": dt, "shape": shape, "data_offsets": []int64{b, e}}
	}
	huge := binary.LittleEndian.AppendUint64(nil, 1<<40)
	cases := map[string][]byte{
		"short":          {1, 2, 3},
		"huge header":    append(huge, '{', '}'),
		"header past":    binary.LittleEndian.AppendUint64(nil, 100),
		"not json":       append(binary.LittleEndian.AppendUint64(nil, 2), '{', '['),
		"unknown dtype":  header(t, map[string]any{"x": ent("Q4", []int64{2}, 0, 2)}, 2),
		"range past end": header(t, map[string]any{"x": ent("F32", []int64{2}, 0, 8)}, 4),
		"size mismatch":  header(t, map[string]any{"x": ent("F32", []int64{2}, 0, 4)}, 8),
		"negative dim":   header(t, map[string]any{"x": ent("F32", []int64{-2, -2}, 0, 16)}, 16),
		"overflow":       header(t, map[string]any{"x": ent("F32", []int64{1 << 40, 1 << 40}, 0, 0)}, 0),
		"overlap": header(t, map[string]any{
			"x": ent("F32", []int64{2}, 0, 8), "y": ent("F32", []int64{2}, 4, 12)}, 12),
		"bad metadata": header(t, map[string]any{"__metadata__": map[string]any{"k": 1}}, 0),
	}
	for name, data := range cases {
		if _, err := Parse(data); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
}

// TestFixtures reads the TinyStories-656K safetensors variants: the sharded
// set has the same tensors and bytes as the single file.
func TestFixtures(t *testing.T) {
	single, err := OpenModel(fixtures.Path(t, "models/tinystories-656K/hf/model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	sharded, err := OpenModel(fixtures.Path(t, "pytorch/tinystories-656K-safetensors-sharded"))
	if err != nil {
		t.Fatal(err)
	}
	defer sharded.Close()
	// The single file stores 20 tensors; embed_tokens is an alias of
	// lm_head recorded in the metadata (tied weights).
	if len(sharded.Files) != 2 || len(single.Files[0].Tensors) != 20 || len(single.Names()) != 21 {
		t.Fatalf("%d shards, %d tensors, %d names", len(sharded.Files), len(single.Files[0].Tensors), len(single.Names()))
	}
	for _, name := range sharded.Names() {
		a, _ := single.Tensor(name)
		b, ok := sharded.Tensor(name)
		if !ok || !bytes.Equal(a.Data, b.Data) || a.DType != "F32" {
			t.Errorf("%s differs between single and sharded files", name)
		}
	}
	emb, _ := single.Tensor("model.embed_tokens.weight")
	if emb.Shape[0] != 2048 || emb.Shape[1] != 128 {
		t.Errorf("embed shape %v", emb.Shape)
	}
	for _, v := range []string{"f16", "bf16"} {
		s, err := OpenModel(fixtures.Path(t, "pytorch/tinystories-656K-safetensors-"+v))
		if err != nil {
			t.Fatal(err)
		}
		e, _ := s.Tensor("model.embed_tokens.weight")
		if e.DType != map[string]string{"f16": "F16", "bf16": "BF16"}[v] || len(e.Data) != 2048*128*2 {
			t.Errorf("%s: embed %s %d bytes", v, e.DType, len(e.Data))
		}
		s.Close()
	}
}

func TestIndexRefusesPaths(t *testing.T) {
	dir := t.TempDir()
	for _, shard := range []string{"../x.safetensors", "/etc/passwd", "sub/x.safetensors"} {
		ix, _ := json.Marshal(map[string]any{"weight_map": map[string]string{"a": shard}})
		p := filepath.Join(dir, IndexName)
		if err := os.WriteFile(p, ix, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenIndex(p); !errors.Is(err, ErrFormat) {
			t.Errorf("shard %q: err = %v", shard, err)
		}
	}
}

func TestIndexMissingTensor(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "s1.safetensors"), sample()[:1], nil); err != nil {
		t.Fatal(err)
	}
	ix, _ := json.Marshal(map[string]any{"weight_map": map[string]string{"a.weight": "s1.safetensors", "b.bias": "s1.safetensors"}})
	p := filepath.Join(dir, IndexName)
	os.WriteFile(p, ix, 0o644)
	if _, err := OpenModel(dir); !errors.Is(err, ErrFormat) {
		t.Errorf("err = %v, want ErrFormat for a tensor the shard lacks", err)
	}
}

// FuzzParse feeds arbitrary bytes to the header parser: it must return an
// error or a file whose tensors lie inside the input, never panic.
func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	Write(&buf, sample(), map[string]string{"k": "v"})
	f.Add(buf.Bytes())
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '})
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		for _, tn := range file.Tensors {
			n, err := byteSize(tn.Shape, DTypeSize[tn.DType])
			if err != nil || n != uint64(len(tn.Data)) {
				t.Fatalf("tensor %q: %d bytes for shape %v", tn.Name, len(tn.Data), tn.Shape)
			}
		}
	})
}
