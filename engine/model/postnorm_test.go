package model

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand"
	"strings"
	"testing"

	"flowchat/engine/ggml"
	"flowchat/engine/spec"
)

// memSource serves float32 tensors by canonical name.
type memSource map[string]*Weight

func (s memSource) Weight(name string) (*Weight, bool) { w, ok := s[name]; return w, ok }

func (s memSource) put(rng *rand.Rand, name string, rows, cols int) []float64 {
	v := make([]float64, rows*cols)
	data := make([]byte, 4*len(v))
	for i := range v {
		v[i] = float64(float32(rng.NormFloat64() * 0.3))
		if strings.HasSuffix(name, "norm.weight") {
			v[i] = float64(float32(1 + v[i]))
		}
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(v[i])))
	}
	s[name] = &Weight{Name: name, Type: ggml.F32, Cols: cols, Rows: rows, Data: data}
	return v
}

// refNet is a float64 twin of a Marian-style (post-LayerNorm, SiLU,
// tied head with bias) one-layer encoder-decoder, written from the Hugging
// Face layer definitions: x = LN(x + block(x)) for every sub-block.
type refNet struct {
	d, heads, ff, V int
	w               map[string][]float64
}

func (r *refNet) lin(name string, x []float64, out int) []float64 {
	W, b := r.w[name+".weight"], r.w[name+".bias"]
	y := make([]float64, out)
	for o := range y {
		for i, xi := range x {
			y[o] += W[o*len(x)+i] * xi
		}
		if b != nil {
			y[o] += b[o]
		}
	}
	return y
}

func (r *refNet) ln(name string, x []float64) []float64 {
	mean, v := 0.0, 0.0
	for _, a := range x {
		mean += a / float64(len(x))
	}
	for _, a := range x {
		v += (a - mean) * (a - mean) / float64(len(x))
	}
	y := make([]float64, len(x))
	for i, a := range x {
		y[i] = (a-mean)/math.Sqrt(v+1e-5)*r.w[name+".weight"][i] + r.w[name+".bias"][i]
	}
	return y
}

// attn attends query rows xs over key rows kv; causal limits row t to keys ≤ t.
func (r *refNet) attn(p string, xs, kv [][]float64, causal bool) [][]float64 {
	hd := r.d / r.heads
	out := make([][]float64, len(xs))
	for t, x := range xs {
		q, o := r.lin(p+"q", x, r.d), make([]float64, r.d)
		for h := 0; h < r.heads; h++ {
			n := len(kv)
			if causal {
				n = t + 1
			}
			sc, sum := make([]float64, n), 0.0
			for j := 0; j < n; j++ {
				k := r.lin(p+"k", kv[j], r.d)
				for i := h * hd; i < (h+1)*hd; i++ {
					sc[j] += q[i] * k[i] / math.Sqrt(float64(hd))
				}
				sc[j] = math.Exp(sc[j])
				sum += sc[j]
			}
			for j := 0; j < n; j++ {
				v := r.lin(p+"v", kv[j], r.d)
				for i := h * hd; i < (h+1)*hd; i++ {
					o[i] += sc[j] / sum * v[i]
				}
			}
		}
		out[t] = r.lin(p+"o", o, r.d)
	}
	return out
}

func (r *refNet) ffn(p string, x []float64) []float64 {
	u := r.lin(p+"ffn_up", x, r.ff)
	for i, a := range u {
		u[i] = a / (1 + math.Exp(-a))
	}
	return r.lin(p+"ffn_down", u, r.d)
}

// residNorm is LN(x + y) row by row.
func (r *refNet) residNorm(name string, x, y [][]float64) [][]float64 {
	for t := range x {
		for i := range x[t] {
			x[t][i] += y[t][i]
		}
		x[t] = r.ln(name, x[t])
	}
	return x
}

func (r *refNet) embed(toks []int32) [][]float64 {
	out := make([][]float64, len(toks))
	for t, tok := range toks {
		out[t] = make([]float64, r.d)
		for i := 0; i < r.d/2; i++ {
			a := float64(t) / math.Pow(10000, float64(2*i)/float64(r.d))
			out[t][i] = r.w["token_embd.weight"][int(tok)*r.d+i]*math.Sqrt(float64(r.d)) + math.Sin(a)
			out[t][r.d/2+i] = r.w["token_embd.weight"][int(tok)*r.d+r.d/2+i]*math.Sqrt(float64(r.d)) + math.Cos(a)
		}
	}
	return out
}

// logits of the last decoder row for encoder input enc and decoder input dec.
func (r *refNet) logits(enc, dec []int32) []float64 {
	x := r.embed(enc)
	x = r.residNorm("enc.blk.0.attn_norm", x, r.attn("enc.blk.0.attn_", x, x, false))
	for t := range x {
		x[t] = r.ln("enc.blk.0.ffn_norm", addv(x[t], r.ffn("enc.blk.0.", x[t])))
	}
	y := r.embed(dec)
	y = r.residNorm("dec.blk.0.attn_norm", y, r.attn("dec.blk.0.attn_", y, y, true))
	y = r.residNorm("dec.blk.0.cross_attn_norm", y, r.attn("dec.blk.0.cross_attn_", y, x, false))
	last := y[len(y)-1]
	last = r.ln("dec.blk.0.ffn_norm", addv(last, r.ffn("dec.blk.0.", last)))
	out := make([]float64, r.V)
	for v := range out {
		for i, a := range last {
			out[v] += r.w["token_embd.weight"][v*r.d+i] * a
		}
		out[v] += r.w["output.bias"][v]
	}
	return out
}

func addv(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

// TestPostNormSeq2Seq: a post-norm encoder-decoder with Marian positions,
// SiLU and a biased tied head matches its float64 twin on the first two
// decoder steps.
func TestPostNormSeq2Seq(t *testing.T) {
	const d, heads, ff, V = 8, 2, 16, 11
	rng := rand.New(rand.NewSource(3))
	src, ref := memSource{}, &refNet{d: d, heads: heads, ff: ff, V: V, w: map[string][]float64{}}
	put := func(name string, rows, cols int) { ref.w[name] = src.put(rng, name, rows, cols) }
	put("token_embd.weight", V, d)
	put("output.bias", 1, V)
	for _, p := range []string{"enc.blk.0.", "dec.blk.0."} {
		attns := []string{"attn_"}
		if p == "dec.blk.0." {
			attns = append(attns, "cross_attn_")
		}
		for _, a := range attns {
			for _, m := range []string{"q", "k", "v", "o"} {
				put(p+a+m+".weight", d, d)
				put(p+a+m+".bias", 1, d)
			}
			put(p+a+"norm.weight", 1, d)
			put(p+a+"norm.bias", 1, d)
		}
		put(p+"ffn_norm.weight", 1, d)
		put(p+"ffn_norm.bias", 1, d)
		put(p+"ffn_up.weight", ff, d)
		put(p+"ffn_up.bias", 1, ff)
		put(p+"ffn_down.weight", d, ff)
		put(p+"ffn_down.bias", 1, d)
	}
	s := &spec.Spec{Family: "postnorm-test", Network: spec.Network{Type: "transformer.encoder_decoder", Normalization: "std",
		Activation: "silu", PositionEmbedding: "sinusoidal", SinusoidalStyle: "marian", PostNorm: true,
		EmbeddingScale: json.RawMessage(`"sqrt_dim"`)}}
	c := Config{Arch: "test", NEmbd: d, NLayer: 1, NHead: heads, NHeadKV: heads, HeadDim: d / heads, HeadDimV: d / heads,
		NFF: ff, NormEps: 1e-5, DecoderStart: 3}
	m, err := Build(s, c, src, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	st := m.NewState(16, 8)
	enc := []int32{5, 1, 9, 2}
	got, err := st.Forward(enc, false)
	if err != nil {
		t.Fatal(err)
	}
	dec := []int32{3}
	for step := 0; step < 3; step++ {
		want := ref.logits(enc, dec)
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
				t.Fatalf("step %d logit %d: %g, twin %g", step, i, got[i], want[i])
			}
		}
		dec = append(dec, int32(step+6))
		if got, err = st.Forward(dec[len(dec)-1:], false); err != nil {
			t.Fatal(err)
		}
	}
}
