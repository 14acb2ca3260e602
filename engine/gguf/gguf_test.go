package gguf

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
)

func sampleWriter() *Writer {
	w := NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("u8", uint8(7))
	w.Set("i8", int8(-7))
	w.Set("u16", uint16(65535))
	w.Set("i16", int16(-300))
	w.Set("u32", uint32(1<<31))
	w.Set("i32", int32(-5))
	w.Set("f32", float32(1.5))
	w.Set("bool", true)
	w.Set("u64", uint64(1<<40))
	w.Set("i64", int64(-1<<40))
	w.Set("f64", 2.25)
	w.Set("strs", []string{"a", "", "ünï"})
	w.Set("f32s", []float32{1, -2, 3.5})
	w.Set("i32s", []int32{1, -2, 3})
	w.Set("nested", []Value{valueOf([]int32{1, 2}), valueOf([]int32{3})})
	w.AddTensor("a", ggml.F32, []uint64{3, 2}, make([]byte, 24))
	w.AddTensor("b", ggml.Q8_0, []uint64{64}, bytes.Repeat([]byte{1}, 68))
	return w
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if _, err := sampleWriter().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 3 || len(f.KV) != 16 || len(f.Tensors) != 2 {
		t.Fatalf("version %d, %d kv, %d tensors", f.Version, len(f.KV), len(f.Tensors))
	}
	checks := map[string]any{
		"u8": uint8(7), "i8": int8(-7), "u16": uint16(65535), "i16": int16(-300), "u32": uint32(1 << 31),
		"i32": int32(-5), "f32": float32(1.5), "bool": true, "u64": uint64(1 << 40), "i64": int64(-1 << 40),
		"f64": 2.25, "strs": []string{"a", "", "ünï"}, "f32s": []float32{1, -2, 3.5}, "i32s": []int32{1, -2, 3},
	}
	for k, want := range checks {
		v, ok := f.Get(k)
		if !ok || !reflect.DeepEqual(v.V, want) {
			t.Errorf("%s = %#v, want %#v", k, v.V, want)
		}
	}
	nested, _ := f.Get("nested")
	if vs := nested.V.([]Value); len(vs) != 2 || !reflect.DeepEqual(vs[1].V, []int32{3}) {
		t.Errorf("nested = %#v", nested.V)
	}
	if n, ok := f.Int("u16"); !ok || n != 65535 {
		t.Errorf("Int(u16) = %d %v", n, ok)
	}
	b, _ := f.Tensor("b")
	if b.Offset%32 != 0 || (f.DataOffset)%32 != 0 || len(f.TensorData(b)) != 68 || f.TensorData(b)[0] != 1 {
		t.Errorf("tensor b: %+v, data offset %d", b, f.DataOffset)
	}
}

func TestRealFile(t *testing.T) {
	path := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if a, _ := f.String("general.architecture"); a != "llama" {
		t.Errorf("architecture %q", a)
	}
	toks, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok || len(toks) != 512 {
		t.Errorf("tokens: %d %v", len(toks), ok)
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || !reflect.DeepEqual(emb.Shape, []uint64{64, 512}) || emb.Type != ggml.F32 {
		t.Fatalf("token_embd: %+v", emb)
	}
	// Rewriting the file with our writer reproduces it byte for byte
	// (same order, same alignment): a differential test of the writer.
	w := NewWriter()
	w.CopyKV(f)
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		w.AddTensor(ti.Name, ti.Type, ti.Shape, f.TensorData(ti))
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(path)
	if !bytes.Equal(buf.Bytes(), orig) {
		t.Errorf("rewritten file differs: %d vs %d bytes", buf.Len(), len(orig))
	}
}

func TestAllFixturesParse(t *testing.T) {
	root := fixtures.Shared(t)
	paths, _ := filepath.Glob(filepath.Join(root, "*", "*.gguf"))
	more, _ := filepath.Glob(filepath.Join(root, "models", "*", "*.gguf"))
	paths = append(paths, more...)
	if len(paths) < 10 {
		t.Fatalf("only %d fixture files found", len(paths))
	}
	for _, p := range paths {
		f, err := Open(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if _, ok := f.String("general.architecture"); !ok {
			t.Errorf("%s: no architecture", p)
		}
		f.Close()
	}
}

func TestCorrupt(t *testing.T) {
	var buf bytes.Buffer
	sampleWriter().WriteTo(&buf)
	good := buf.Bytes()
	cases := map[string][]byte{
		"empty":     nil,
		"bad magic": append([]byte("GGUX"), good[4:]...),
		"v1":        append(append([]byte{}, good[:4]...), append([]byte{1, 0, 0, 0}, good[8:]...)...),
		"truncated": good[:len(good)-40],
		"header":    good[:30],
	}
	huge := append([]byte{}, good...)
	huge[16] = 0xff // kv count's low byte → absurd count
	huge[23] = 0x7f
	cases["huge count"] = huge
	for name, data := range cases {
		_, err := Parse(data)
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
}

func TestUnknownTensorType(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter()
	w.AddTensor("x", ggml.F32, []uint64{1}, make([]byte, 4))
	w.WriteTo(&buf)
	b := buf.Bytes()
	// The type field follows name(8+1), ndims(4), dim(8).
	i := bytes.Index(b, []byte{1, 0, 0, 0, 0, 0, 0, 0, 'x'})
	b[i+9+4+8] = 99
	_, err := Parse(b)
	if !errors.Is(err, ErrUnsupportedTensorType) {
		t.Fatalf("err = %v", err)
	}
}

func TestAtomicWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.gguf")
	if err := sampleWriter().WriteFile(p); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(p); err != nil {
		t.Fatal(err)
	}
	// A failing tensor writer leaves the earlier file intact and no temp file.
	w := NewWriter()
	w.AddTensorFunc("bad", ggml.F32, []uint64{4}, func(o io.Writer) error { return errors.New("disk full") })
	if err := w.WriteFile(p); err == nil {
		t.Fatal("want error")
	}
	if _, err := Open(p); err != nil {
		t.Fatalf("earlier file damaged: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("leftover files: %v", ents)
	}
}

func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	sampleWriter().WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse(data)
		if err != nil {
			return
		}
		for i := range g.Tensors {
			_ = g.TensorData(&g.Tensors[i])
		}
	})
}
