package spec

import (
	"testing"
)

func TestBuiltinSpecsParse(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, s := range all {
		for _, a := range s.Architectures {
			key := s.ModelFileFormat + "/" + a
			if prev, dup := seen[key]; dup {
				t.Errorf("architecture %s is served by %s and %s", key, prev, s.Family)
			}
			seen[key] = s.Family
		}
	}
}

func TestTransforms(t *testing.T) {
	n := Network{TensorNamePrefix: "transformer.", TensorTransforms: map[string]string{
		"h.{i}.attn.c_attn.weight": "transpose", "embed_positions.weight": "drop_rows:2"}}
	for name, want := range map[string]string{
		"transformer.h.3.attn.c_attn.weight": "transpose",
		"h.0.attn.c_attn.weight":             "transpose",
		"embed_positions.weight":             "drop_rows:2",
		"transformer.h.3.attn.c_attn.bias":   "",
	} {
		if got := n.Transform(name); got != want {
			t.Errorf("Transform(%q) = %q, want %q", name, got, want)
		}
	}
	for _, bad := range []string{"flip", "drop_rows", "drop_rows:x", "drop_rows:-1", "transpose:1"} {
		if _, _, err := ParseTransform(bad); err == nil {
			t.Errorf("ParseTransform(%q) accepted", bad)
		}
	}
}

// FuzzParse: any bytes give a spec or an error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`# c
{"model_family":"x","architectures":["x"],"model_file_format":"gguf","network_structure":{"type":"transformer.decoder_only","normalization_function":"rms","activation_function":"silu","position_embedding":"rope","qk_column_order":"half","embedding_scale":"sqrt_dim","tensor_transforms":{"a.{i}.w":"drop_rows:2"},"tensor_name_mapping":{"a.{i}.w":"blk.{i}.attn_q.weight"}}}`))
	f.Add([]byte(`{"network_structure":{"embedding_scale":1.5}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "fuzz.json")
		if err != nil {
			return
		}
		s.Network.Canonical("a.1.w")
		s.Network.Transform("a.1.w")
		if _, err := s.Network.EmbeddingScaleFor(64); err != nil {
			t.Fatalf("validated spec has a bad embedding scale: %v", err)
		}
	})
}
