package hf

import (
	"math"
	"strings"
	"testing"

	"flowchat/engine/model"
	"flowchat/engine/spec"
)

// marianConfig is a small opus-mt style config.json (no
// decoder_start_token_id: the pad token starts decoding).
var marianConfig = map[string]any{"model_type": "marian", "d_model": 64, "encoder_layers": 2, "decoder_layers": 2, "num_layers": 2,
	"encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128,
	"activation_function": "swish", "scale_embedding": true, "normalize_before": false, "vocab_size": 300,
	"pad_token_id": 299, "eos_token_id": 0}

// marianShapes leaves lm_head out (tied) and stores final_logits_bias as
// the [1, vocab] buffer Marian checkpoints have.
func marianShapes(c string) []int64 {
	switch c {
	case "output.weight":
		return nil
	case "output.bias":
		return []int64{1, 300}
	}
	return shapesFor(64, 128, 300, 0, 64)(c)
}

// TestMarianLogitsBias: final_logits_bias is added to the tied head's
// logits (the difference with the bias removed is the bias), and the
// config maps to a post-norm SiLU network starting from the pad token.
func TestMarianLogitsBias(t *testing.T) {
	f, err := Open(randomFolder(t, "marian-hf", marianConfig, marianShapes), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := f.Spec.Network
	if n.Activation != "silu" || !n.PostNorm || n.SinusoidalStyle != "marian" {
		t.Errorf("spec: activation %q, post_norm %v, sinusoidal_style %q", n.Activation, n.PostNorm, n.SinusoidalStyle)
	}
	src, err := f.Source()
	if err != nil {
		t.Fatal(err)
	}
	bw, ok := src.Weight("output.bias")
	if !ok {
		t.Fatal("final_logits_bias not mapped to output.bias")
	}
	bias := bw.Floats()
	first := func(m *model.Model) []float32 {
		out, err := m.NewState(16, 8).Forward([]int32{5, 17, 42, 7}, false)
		if err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), out...)
	}
	m, err := f.Build(model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.DecoderStart != 299 {
		t.Errorf("decoder start %d, want the pad token 299", m.DecoderStart)
	}
	with := first(m)
	m.Output.B = nil
	without := first(m)
	for i := range with {
		if d := with[i] - without[i]; math.Abs(float64(d-bias[i])) > 1e-5 {
			t.Fatalf("logit %d: bias adds %g, want %g", i, d, bias[i])
		}
	}
}

// TestRandomT5Relu: an original T5 (v1.0) folder, feed_forward_proj relu
// with an ungated DenseReluDense (wi, wo), loads and decodes.
func TestRandomT5Relu(t *testing.T) {
	cfg := map[string]any{"model_type": "t5", "d_model": 64, "num_layers": 2, "num_heads": 4, "d_kv": 16, "d_ff": 128,
		"feed_forward_proj": "relu", "relative_attention_num_buckets": 32, "decoder_start_token_id": 0}
	shapes := func(c string) []int64 {
		if strings.Contains(c, "attn_rel_b") {
			return []int64{32, 4} // [buckets, heads]
		}
		return shapesFor(64, 128, 300, 0, 64, "ffn_gate")(c)
	}
	f, err := Open(randomFolder(t, "t5-hf", cfg, shapes, "wi_0", "wi_1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if a := f.Spec.Network.Activation; a != "relu" {
		t.Errorf("activation %q, want relu", a)
	}
	m, err := f.Build(model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	runRandom(t, m, 300)
}

// TestSeqSpec: config.json's activation and embedding scale parameterize
// encoder-decoder specs only, without touching the builtin spec.
func TestSeqSpec(t *testing.T) {
	t5, _ := spec.ForArchitecture("t5", "safetensors")
	gpt2, _ := spec.ForArchitecture("gpt2", "safetensors")
	for _, c := range []struct {
		s          *spec.Spec
		cfg        Config
		act, scale string
		fails      bool
	}{
		{t5, Config{"feed_forward_proj": "relu"}, "relu", "", false},
		{t5, Config{"feed_forward_proj": "gated-gelu"}, "geglu_exact", "", false},
		{t5, Config{"feed_forward_proj": "gated-silu"}, "swiglu", "", false},
		{t5, Config{"activation_function": "swish", "scale_embedding": true}, "silu", `"sqrt_dim"`, false},
		{t5, Config{"feed_forward_proj": "gated-mystery"}, "", "", true},
		{gpt2, Config{"activation_function": "relu", "scale_embedding": true}, gpt2.Network.Activation, string(gpt2.Network.EmbeddingScale), false},
	} {
		got, err := c.cfg.SeqSpec(c.s)
		if c.fails {
			if err == nil {
				t.Errorf("%v: no error", c.cfg)
			}
			continue
		}
		if err != nil || got.Network.Activation != c.act || string(got.Network.EmbeddingScale) != c.scale {
			t.Errorf("%v: activation %q scale %s (%v), want %q %s", c.cfg, got.Network.Activation, got.Network.EmbeddingScale, err, c.act, c.scale)
		}
	}
	if t5.Network.Activation != "geglu_exact" {
		t.Errorf("builtin spec modified: %q", t5.Network.Activation)
	}
}
