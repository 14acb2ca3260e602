package hf

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flowchat/engine/model"
	"flowchat/engine/safetensors"
	"flowchat/engine/spec"
)

// randomFolder writes a random-weight HF folder for a spec: every tensor
// its mapping names (canonical shapes from d, ff, vocab, positions), at
// the file layout (inverse transforms applied to the shape). File names
// containing one of skipFiles are left out (alternative names of a tensor).
func randomFolder(t *testing.T, family string, cfg map[string]any, shapes func(canonical string) []int64, skipFiles ...string) string {
	all, _ := spec.Builtin()
	var sp *spec.Spec
	for _, s := range all {
		if s.Family == family {
			sp = s
		}
	}
	rng := rand.New(rand.NewSource(7))
	var tensors []safetensors.Tensor
	layers := int(cfg["num_layers"].(int))
	seen := map[string]bool{}
	for file, canon := range sp.Network.TensorNameMapping {
		for i := 0; i < layers; i++ {
			c := strings.ReplaceAll(canon, "{i}", itoa(i))
			name := sp.Network.TensorNamePrefix + strings.ReplaceAll(file, "{i}", itoa(i))
			shape := shapes(c)
			if shape == nil || seen[name] || containsAny(name, skipFiles) {
				continue
			}
			seen[name] = true
			if tr := sp.Network.Transform(name); strings.HasPrefix(tr, "drop_rows") {
				shape = []int64{shape[0] + 2, shape[1]}
			} else if tr == "transpose" && len(shape) == 2 {
				shape = []int64{shape[1], shape[0]}
			}
			n := int64(1)
			for _, d := range shape {
				n *= d
			}
			x := make([]float32, n)
			for j := range x {
				x[j] = float32(rng.NormFloat64()) * 0.1
				if strings.Contains(c, "norm.weight") {
					x[j] += 1
				}
			}
			tensors = append(tensors, safetensors.Tensor{Name: name, DType: "F32", Shape: shape, Data: f32bytes(x)})
			if !strings.Contains(canon, "{i}") {
				break
			}
		}
	}
	dir := t.TempDir()
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), tensors, nil); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(cfg)
	os.WriteFile(filepath.Join(dir, "config.json"), js, 0o644)
	return dir
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func itoa(i int) string { return string(rune('0' + i)) }

// shapesFor gives canonical shapes ([rows, cols]) for d-wide models with
// ff-wide FFNs, a vocabulary of V and P positions; nil drops a tensor.
func shapesFor(d, ff, V, P, kv int64, drop ...string) func(string) []int64 {
	return func(c string) []int64 {
		for _, s := range drop {
			if strings.Contains(c, s) {
				return nil
			}
		}
		base := c[strings.LastIndexByte(c[:strings.LastIndexByte(c, '.')], '.')+1:]
		bias := strings.HasSuffix(c, ".bias")
		rows, cols := d, d
		switch {
		case strings.HasPrefix(c, "token_embd.") || strings.HasPrefix(c, "output."):
			rows = V
		case strings.HasPrefix(c, "position_embd."):
			rows = P
		case strings.Contains(base, "attn_k.") || strings.Contains(base, "attn_v."):
			rows = kv
		case strings.Contains(base, "ffn_up.") || strings.Contains(base, "ffn_gate."):
			rows = ff
		case strings.Contains(base, "ffn_down."):
			cols = ff
		case strings.Contains(c, "norm"):
			return []int64{d}
		}
		if bias {
			return []int64{rows}
		}
		return []int64{rows, cols}
	}
}

// TestRandomFamilies loads random-weight models of the families without a
// reference fixture and runs them: prompt logits, then sampled decoding.
func TestRandomFamilies(t *testing.T) {
	for _, c := range []struct {
		family string
		cfg    map[string]any
		shapes func(string) []int64
	}{
		{"starcoder2-hf", map[string]any{"model_type": "starcoder2", "hidden_size": 64, "num_hidden_layers": 2, "num_layers": 2, "num_attention_heads": 4,
			"num_key_value_heads": 2, "intermediate_size": 128, "rope_theta": 1e5}, shapesFor(64, 128, 300, 0, 32)},
		{"opt-hf", map[string]any{"model_type": "opt", "hidden_size": 64, "num_hidden_layers": 2, "num_layers": 2, "num_attention_heads": 4,
			"ffn_dim": 128, "max_position_embeddings": 64}, shapesFor(64, 128, 300, 64, 64)},
		{"gemma2-hf", map[string]any{"model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 2, "num_layers": 2, "num_attention_heads": 4,
			"num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128}, shapesFor(64, 128, 300, 0, 32)},
		{"m2m100-hf", map[string]any{"model_type": "m2m100", "d_model": 64, "encoder_layers": 2, "num_layers": 2, "encoder_attention_heads": 4,
			"encoder_ffn_dim": 128, "decoder_start_token_id": 2}, shapesFor(64, 128, 300, 0, 64, "rel_b")},
		// Marian: tied head (no lm_head) with final_logits_bias [1, vocab];
		// the decoder starts from pad_token_id.
		{"marian-hf", marianConfig, marianShapes},
	} {
		t.Run(c.family, func(t *testing.T) {
			f, err := Open(randomFolder(t, c.family, c.cfg, c.shapes), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := f.Build(model.Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			runRandom(t, m, 300)
		})
	}
}

// runRandom runs a prompt, then eight sampled tokens, checking that every
// step's V logits are finite.
func runRandom(t *testing.T, m *model.Model, V int) {
	t.Helper()
	s := m.NewState(64, 16)
	logits, err := s.Forward([]int32{5, 17, 42, 7}, false)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for step := 0; step < 8; step++ {
		for _, v := range logits {
			if v != v || v > 1e30 || v < -1e30 {
				t.Fatalf("step %d: non-finite logit", step)
			}
		}
		tok := int32(rng.Intn(m.NVocab))
		if logits, err = s.Forward([]int32{tok}, false); err != nil {
			t.Fatal(err)
		}
	}
	if len(logits) != V {
		t.Errorf("%d logits, want %d", len(logits), V)
	}
}
