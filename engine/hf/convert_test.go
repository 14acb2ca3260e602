package hf

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
	"flowchat/engine/model"
	"flowchat/engine/safetensors"
	"flowchat/engine/spec"
)

// hfName inverts a spec's tensor_name_mapping: canonical → file name.
func hfName(n *spec.Network, canonical string) (string, bool) {
	for file, c := range n.TensorNameMapping {
		if !strings.Contains(c, "{i}") {
			if c == canonical {
				return n.TensorNamePrefix + file, true
			}
			continue
		}
		pre, post, _ := strings.Cut(c, "{i}")
		if strings.HasPrefix(canonical, pre) && strings.HasSuffix(canonical, post) {
			layer := canonical[len(pre) : len(canonical)-len(post)]
			if !strings.ContainsAny(layer, ".") {
				return n.TensorNamePrefix + strings.ReplaceAll(file, "{i}", layer), true
			}
		}
	}
	return "", false
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func f32bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// unpermute undoes convert_hf_to_gguf.py's Q/K row permutation (HF
// rotate-half → GGUF interleaved pairs) for rows of width cols.
func unpermute(x []float32, heads, cols int) []float32 {
	rows := len(x) / cols
	hd := rows / heads
	out := make([]float32, len(x))
	for h := 0; h < heads; h++ {
		for i := 0; i < hd/2; i++ {
			for j := 0; j < 2; j++ {
				src := h*hd + 2*i + j // GGUF row
				dst := h*hd + j*hd/2 + i
				copy(out[dst*cols:(dst+1)*cols], x[src*cols:(src+1)*cols])
			}
		}
	}
	return out
}

// toHF writes a GGUF arch fixture as a Hugging Face folder for spec sp.
func toHF(t *testing.T, ggufRel, family string, fix func(name string, shape []int64, x []float32) []float32) (string, *gguf.File) {
	f, err := gguf.Open(fixtures.Path(t, ggufRel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var sp *spec.Spec
	all, _ := spec.Builtin()
	for _, s := range all {
		if s.Family == family {
			sp = s
		}
	}
	if sp == nil {
		t.Fatalf("no spec %s", family)
	}
	var tensors []safetensors.Tensor
	for _, ti := range f.Tensors {
		name, ok := hfName(&sp.Network, ti.Name)
		if !ok {
			t.Fatalf("%s: no HF name for %s", family, ti.Name)
		}
		shape := []int64{}
		for i := len(ti.Shape) - 1; i >= 0; i-- {
			shape = append(shape, int64(ti.Shape[i]))
		}
		x := f32s(f.TensorData(&ti))
		if fix != nil {
			x = fix(ti.Name, shape, x)
		}
		x, shape = inverseTransform(t, sp.Network.Transform(name), x, shape, f)
		tensors = append(tensors, safetensors.Tensor{Name: name, DType: "F32", Shape: shape, Data: f32bytes(x)})
	}
	sort.Slice(tensors, func(i, j int) bool { return tensors[i].Name < tensors[j].Name })
	dir := t.TempDir()
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), tensors, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, dir, f, sp)
	return dir, f
}

func inverseTransform(t *testing.T, tr string, x []float32, shape []int64, f *gguf.File) ([]float32, []int64) {
	if tr == "" {
		return x, shape
	}
	kind, arg, _ := spec.ParseTransform(tr)
	switch kind {
	case "transpose":
		if len(shape) != 2 {
			return x, shape
		}
		r, c := int(shape[0]), int(shape[1])
		out := make([]float32, len(x))
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				out[j*r+i] = x[i*c+j]
			}
		}
		return out, []int64{shape[1], shape[0]}
	case "drop_rows":
		return append(make([]float32, arg*int(shape[1])), x...), []int64{shape[0] + int64(arg), shape[1]}
	}
	// qkv_heads inverse: [q,k,v][head][dim] → [head][q,k,v][dim]
	heads := int(ggufInt(f, "attention.head_count"))
	cols := 1
	if len(shape) == 2 {
		cols = int(shape[1])
	}
	rows := len(x) / cols
	dim := rows / (3 * heads)
	out := make([]float32, len(x))
	for h := 0; h < heads; h++ {
		for j := 0; j < 3; j++ {
			copy(out[(h*3+j)*dim*cols:(h*3+j+1)*dim*cols], x[(j*heads+h)*dim*cols:(j*heads+h+1)*dim*cols])
		}
	}
	return out, shape
}

func ggufInt(f *gguf.File, key string) int64 {
	arch, _ := f.String("general.architecture")
	v, _ := f.Int(arch + "." + key)
	return v
}

func writeConfig(t *testing.T, dir string, f *gguf.File, sp *spec.Spec) {
	arch, _ := f.String("general.architecture")
	cfg := map[string]any{"model_type": arch}
	for gk, hk := range map[string]string{
		"embedding_length": "hidden_size", "block_count": "num_hidden_layers", "attention.head_count": "num_attention_heads",
		"attention.head_count_kv": "num_key_value_heads", "feed_forward_length": "intermediate_size",
		"attention.key_length": "head_dim", "context_length": "max_position_embeddings",
	} {
		if v, ok := f.Int(arch + "." + gk); ok {
			cfg[hk] = v
		}
	}
	for gk, hk := range map[string]string{"rope.freq_base": "rope_theta", "attention.layer_norm_rms_epsilon": "rms_norm_eps", "attention.layer_norm_epsilon": "layer_norm_eps"} {
		if v, ok := f.Float(arch + "." + gk); ok {
			cfg[hk] = v
		}
	}
	if n, ok := f.Int(arch + ".rope.dimension_count"); ok && cfg["head_dim"] == nil {
		cfg["partial_rotary_factor"] = float64(n) / float64(cfg["hidden_size"].(int64)/cfg["num_attention_heads"].(int64))
	}
	js, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestArchAsHF converts each random-weight arch fixture to a Hugging Face
// folder (HF tensor names from the family's -hf spec, the inverse of its
// layout transforms, config.json from the GGUF metadata) and checks the
// folder's logits against llama.cpp's for the GGUF. Families whose HF spec
// uses the exact GELU where llama.cpp uses its fp16 table get a looser bound.
func TestArchAsHF(t *testing.T) {
	for _, c := range []struct {
		arch, family string
		tol          float64
	}{
		{"llama-gqa", "llama-hf", 1e-3}, {"qwen2", "qwen2-hf", 1e-3}, {"phi3", "phi3-hf", 1e-3},
		{"gemma", "gemma-hf", 1e-3}, {"stablelm", "stablelm-hf", 1e-3},
		{"gpt2", "gpt2-hf", 3e-2}, {"falcon", "falcon-hf", 3e-2}, {"bloom", "bloom-hf", 3e-2},
	} {
		t.Run(c.arch, func(t *testing.T) {
			rel := "arch/rand-" + c.arch + "-F32.gguf"
			var heads int
			fix := func(name string, shape []int64, x []float32) []float32 {
				switch {
				case c.arch == "llama-gqa" && strings.HasSuffix(name, "attn_q.weight"):
					return unpermute(x, heads, int(shape[1]))
				case c.arch == "llama-gqa" && strings.HasSuffix(name, "attn_k.weight"):
					return unpermute(x, heads/4, int(shape[1]))
				case c.arch == "gemma" && strings.HasSuffix(name, "norm.weight"):
					for i := range x {
						x[i]-- // GGUF stores 1 + w
					}
				}
				return x
			}
			heads = 8
			dir, _ := toHF(t, rel, c.family, fix)
			folder, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer folder.Close()
			if folder.Spec.Family != c.family {
				t.Fatalf("spec %s", folder.Spec.Family)
			}
			m, err := folder.Build(model.Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			sub := c.arch
			if c.arch == "llama-gqa" {
				sub += "/F32"
			}
			refDir := filepath.Dir(fixtures.Path(t, "reference/arch/"+sub+"/s0.json"))
			paths, _ := filepath.Glob(filepath.Join(refDir, "s*.json"))
			if len(paths) == 0 {
				t.Fatalf("no reference cases in %s", refDir)
			}
			for _, p := range paths {
				var rc struct {
					InputIDs []int32 `json:"input_ids"`
					Logits   string  `json:"prompt_logits_file"`
				}
				data, _ := os.ReadFile(p)
				json.Unmarshal(data, &rc)
				ref := fixtures.ReadF32(t, filepath.Join(refDir, rc.Logits))
				got, err := m.NewState(256, 64).Forward(rc.InputIDs, true)
				if err != nil {
					t.Fatal(err)
				}
				V, worst := m.NVocab, 0.0
				for r := 0; r < len(rc.InputIDs); r++ {
					worst = max(worst, fixtures.RelRMS(got[r*V:(r+1)*V], ref[r*V:(r+1)*V]))
				}
				t.Logf("%s: worst rel RMS %.2e", filepath.Base(p), worst)
				if worst > c.tol {
					t.Errorf("%s: worst rel RMS %.2e > %.0e", filepath.Base(p), worst, c.tol)
				}
			}
		})
	}
}

// TestEncodersAsHF converts the random BERT and T5 fixtures to HF folders
// and checks BERT's pooled embedding and T5's first decoder step against
// llama.cpp's.
func TestEncodersAsHF(t *testing.T) {
	for _, c := range []struct{ arch, family, ref string }{
		{"bert", "bert-hf", "s0.pooled_mean.f32"}, {"t5", "t5-hf", "s0.dec_step_logits.f32"},
	} {
		t.Run(c.arch, func(t *testing.T) {
			dir, f := toHF(t, "arch/rand-"+c.arch+"-F32.gguf", c.family, nil)
			if c.arch == "t5" { // HF T5 names its hyperparameters differently
				cfg := map[string]any{"model_type": "t5", "d_model": 64, "num_layers": 2, "num_heads": 4, "d_kv": 16, "d_ff": 128,
					"relative_attention_num_buckets": ggufInt(f, "attention.relative_buckets_count"), "layer_norm_epsilon": 1e-6, "decoder_start_token_id": 0}
				js, _ := json.Marshal(cfg)
				os.WriteFile(filepath.Join(dir, "config.json"), js, 0o644)
			}
			folder, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer folder.Close()
			m, err := folder.Build(model.Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			refDir := filepath.Dir(fixtures.Path(t, "reference/arch/"+c.arch+"/s0.json"))
			var rc struct {
				InputIDs []int32 `json:"input_ids"`
			}
			data, _ := os.ReadFile(filepath.Join(refDir, "s0.json"))
			json.Unmarshal(data, &rc)
			ref := fixtures.ReadF32(t, filepath.Join(refDir, c.ref))
			var got []float32
			if c.arch == "bert" {
				_, got, err = m.Embed(rc.InputIDs)
			} else {
				got, err = m.NewState(128, 64).Forward(rc.InputIDs, false)
				ref = ref[:m.NVocab]
			}
			if err != nil {
				t.Fatal(err)
			}
			// BERT-HF uses the exact GELU, llama.cpp its fp16 table.
			if e := fixtures.RelRMS(got, ref); e > 1e-2 {
				t.Errorf("rel RMS %.2e", e)
			} else {
				t.Logf("rel RMS %.2e", e)
			}
		})
	}
}
