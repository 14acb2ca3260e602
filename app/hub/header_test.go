package hub

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
)

// ggufFixtures returns every GGUF file of the fixture set.
func ggufFixtures(t testing.TB) []string {
	root := fixtures.Shared(t)
	var paths []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".gguf") {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) == 0 {
		t.Skip("no GGUF fixtures")
	}
	return paths
}

// TestHeaderMatchesGGUFReader compares the header walker with the engine's
// full GGUF reader on every fixture: keys, values, tensor directory, data
// offset.
func TestHeaderMatchesGGUFReader(t *testing.T) {
	for _, p := range ggufFixtures(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := gguf.Parse(data)
			if err != nil {
				t.Skipf("engine reader refuses it: %v", err)
			}
			h, err := ParseHeader(data)
			if err != nil {
				t.Fatal(err)
			}
			compareKV(t, ref, h)
			compareTensors(t, ref, h)
			if h.DataOffset != ref.DataOffset || h.Alignment != ref.Alignment {
				t.Errorf("data offset %d align %d, reader says %d align %d", h.DataOffset, h.Alignment, ref.DataOffset, ref.Alignment)
			}
		})
	}
}

func compareKV(t *testing.T, ref *gguf.File, h *Header) {
	t.Helper()
	for _, kv := range ref.KV {
		if kv.Value.Type == gguf.TypeArray {
			if n := reflect.ValueOf(kv.Value.V).Len(); h.ArrayLen[kv.Key] != uint64(n) {
				t.Errorf("%s: array length %d, reader says %d", kv.Key, h.ArrayLen[kv.Key], n)
			}
			continue
		}
		if got, want := h.KV[kv.Key], normalize(kv.Value.V); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, reader says %#v", kv.Key, got, want)
		}
	}
	if len(h.KV)+countLongArrays(h) < len(ref.KV) {
		t.Errorf("%d keys kept, reader has %d", len(h.KV), len(ref.KV))
	}
}

func countLongArrays(h *Header) int {
	n := 0
	for k := range h.ArrayLen {
		if _, kept := h.KV[k]; !kept {
			n++
		}
	}
	return n
}

// normalize converts a reader value to the walker's representation.
func normalize(v any) any {
	switch x := v.(type) {
	case uint8, int8, uint16, int16, uint32, int32, int64:
		return reflect.ValueOf(x).Convert(reflect.TypeFor[int64]()).Interface()
	case uint64:
		if x > math.MaxInt64 {
			return x
		}
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

func compareTensors(t *testing.T, ref *gguf.File, h *Header) {
	t.Helper()
	if len(h.Tensors) != len(ref.Tensors) {
		t.Fatalf("%d tensors, reader has %d", len(h.Tensors), len(ref.Tensors))
	}
	for i, rt := range ref.Tensors {
		ht := h.Tensors[i]
		if ht.Name != rt.Name || !reflect.DeepEqual(ht.Shape, rt.Shape) || ht.Type != uint32(rt.Type) || ht.Offset != rt.Offset || ht.Size != rt.Size {
			t.Errorf("tensor %d: %+v, reader says %+v", i, ht, rt)
		}
	}
}

// TestHeaderGrowingPrefix feeds each fixture's header in growing prefixes
// (what the walker asks for, at least 1.5× the last) and checks that every
// step asks for more than it had, that one byte less than asked for is
// still short, and that the end result equals the whole-file parse.
func TestHeaderGrowingPrefix(t *testing.T) {
	for _, p := range ggufFixtures(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := ParseHeader(data)
		if err != nil {
			continue // covered by the reader comparison
		}
		n, steps := 0, 0
		var h *Header
		for ; ; steps++ {
			h, err = ParseHeader(data[:n])
			var short *ShortError
			if !errors.As(err, &short) {
				break
			}
			if short.Need <= int64(n) || short.Need > int64(len(data)) {
				t.Fatalf("%s: prefix %d asks for %d bytes", filepath.Base(p), n, short.Need)
			}
			if _, err := ParseHeader(data[:short.Need-1]); !errors.Is(err, ErrShortHeader) {
				t.Fatalf("%s: prefix %d asked for %d bytes but %d were enough", filepath.Base(p), n, short.Need, short.Need-1)
			}
			n = min(max(int(short.Need), n*3/2), len(data))
		}
		if err != nil || !reflect.DeepEqual(h, whole) {
			t.Fatalf("%s: after %d steps: %v", filepath.Base(p), steps, err)
		}
	}
}

type archInfo struct {
	Arch     string `json:"arch"`
	NVocab   int64  `json:"n_vocab"`
	NEmbd    int64  `json:"n_embd"`
	NHead    int64  `json:"n_head"`
	NHeadKV  int64  `json:"n_head_kv"`
	HeadDim  int64  `json:"head_dim"`
	NFF      int64  `json:"n_ff"`
	NLayer   int64  `json:"n_layer"`
	NCtx     int64  `json:"n_ctx_train"`
	FileName string `json:"file"`
}

// TestInfoMatchesArchInfo checks the derived hyperparameters against the
// fixture generator's own record (arch_info.json).
func TestInfoMatchesArchInfo(t *testing.T) {
	raw, err := os.ReadFile(fixtures.Path(t, "arch/arch_info.json"))
	if err != nil {
		t.Fatal(err)
	}
	var archs map[string]archInfo
	if err := json.Unmarshal(raw, &archs); err != nil {
		t.Fatal(err)
	}
	for name, a := range archs {
		p := fixtures.Find("arch/" + a.FileName)
		if p == "" {
			continue
		}
		h, err := ReadHeaderFile(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := h.Info()
		want := ModelInfo{Architecture: a.Arch, ContextLength: a.NCtx, BlockCount: a.NLayer, EmbeddingLength: a.NEmbd,
			FeedForwardLength: a.NFF, HeadCount: a.NHead, HeadCountKV: a.NHeadKV, KeyLength: a.HeadDim, ValueLength: a.HeadDim, VocabSize: a.NVocab}
		got.Name, got.FileType, got.ParamCount, got.WeightBytes = "", "", 0, 0
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

// TestInfoFileTypeFromTensors: a file without general.file_type (the
// bundled demo, converted from llama2.c) gets the type holding most of
// its tensor bytes; `models` listed its quant as "-".
func TestInfoFileTypeFromTensors(t *testing.T) {
	h, err := ReadHeaderFile("../../assets/demo.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Int("general.file_type"); ok {
		t.Fatal("the demo now has general.file_type: the test no longer exercises the fallback")
	}
	if got := h.Info().FileType; got != "F32" {
		t.Errorf("demo file type %q, want F32", got)
	}
	mixed := Header{Tensors: []TensorEntry{{Type: 0, Size: 100}, {Type: 12, Size: 900}, {Type: 14, Size: 300}}}
	if got := mixed.mainType(); got != "Q4_K" {
		t.Errorf("mixed file: %q, want Q4_K", got)
	}
}

// TestParamCountLlamaGQA counts llama-gqa's parameters from its
// hyperparameters (arch_info.json) by the llama layout and compares.
func TestParamCountLlamaGQA(t *testing.T) {
	h, err := ReadHeaderFile(fixtures.Path(t, "arch/rand-llama-gqa-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	const vocab, embd, kvDim, ff, layers = 512, 256, 2 * 32, 512, 2
	perLayer := embd + embd*embd + 2*embd*kvDim + embd*embd + embd + 3*embd*ff
	want := uint64(2*vocab*embd + embd + layers*perLayer)
	info := h.Info()
	if info.ParamCount != want || info.WeightBytes != 4*want {
		t.Errorf("params %d bytes %d, want %d and %d", info.ParamCount, info.WeightBytes, want, 4*want)
	}
}

// TestTensorTypeTable checks our block layouts against the engine's for
// every type the engine knows.
func TestTensorTypeTable(t *testing.T) {
	for id := range uint32(64) {
		gt := ggml.Type(id)
		if !gt.Known() {
			continue
		}
		tt, ok := tensorTypes[id]
		if !ok || tt.block != uint64(gt.BlockSize()) || tt.bytes != uint64(gt.TypeSize()) || tt.name != gt.String() {
			t.Errorf("type %d: ours %+v, engine %v %d/%d", id, tt, gt, gt.BlockSize(), gt.TypeSize())
		}
	}
}

func TestHeaderRejects(t *testing.T) {
	cases := map[string][]byte{
		"magic":   []byte("GGUX\x03\x00\x00\x00"),
		"version": []byte("GGUF\x01\x00\x00\x00"),
		"counts":  append([]byte("GGUF\x03\x00\x00\x00"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0),
		"string":  append([]byte("GGUF\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
	}
	for name, b := range cases {
		if _, err := ParseHeader(b); !errors.Is(err, ErrBadHeader) {
			t.Errorf("%s: %v, want ErrBadHeader", name, err)
		}
	}
}

// FuzzParseHeader: no panics; a ShortError asks for more than it got; a
// header that parses from a prefix parses the same from a longer one.
func FuzzParseHeader(f *testing.F) {
	for _, p := range ggufFixtures(f) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data[:min(len(data), 4096)])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		var short *ShortError
		if errors.As(err, &short) && short.Need <= int64(len(b)) {
			t.Fatalf("short error asks for %d bytes of %d", short.Need, len(b))
		}
		if err != nil {
			return
		}
		h.Info()
		h2, err := ParseHeader(append(b[:len(b):len(b)], 0, 1, 2, 3))
		if err != nil || !reflect.DeepEqual(h, h2) {
			t.Fatalf("longer prefix parses differently: %v", err)
		}
	})
}
