package model

import (
	"math"
	"testing"

	"flowchat/engine/device"
	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/quant"
)

// TestDeviceWeightTypes: rand-llama-gqa with every matrix converted by
// the reference quantizers to each type the kernels read (GGML's and
// Inferflow's formats; the head too), on a
// stand-in: every block's matrices are uploaded in that type, not
// converted (a kernel-native matrix takes exactly its stored bytes, which
// is what the memory estimate counts), and the logits of the prompt and 4
// decode steps stay within the quantized bound of the CPU engine's on
// the same weights (the CPU quantizes activations; the device does not).
func TestDeviceWeightTypes(t *testing.T) {
	for _, typ := range []ggml.Type{ggml.BF16, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.IQ4_NL,
		ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K,
		quant.Q8_B32, quant.Q8_B64, quant.Q6_B64, quant.Q5_B64, quant.Q4_B32, quant.Q4_B64,
		quant.Q3H_B64, quant.Q3_B32, quant.Q2_B32} {
		t.Run(typ.String(), func(t *testing.T) {
			m := loadFixture(t, "arch/rand-llama-gqa-F32.gguf")
			r, err := m.Requantize(quant.Options{Type: typ, SetOutput: true, OutputType: typ, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range r.Tensors {
				if c.Kept == "" && c.To != typ {
					t.Fatalf("%s became %v, not %v: %s", c.Name, c.To, typ, c.Note)
				}
			}
			p := prompt(m)
			want, toks := forcedLogits(t, m, p, len(p), 4, nil)
			d := device.NewStandIn("standin", 0, 32)
			place(t, m, LastLayers(m.NLayer, m.NLayer+1, d))
			wt, _ := device.KernelType(typ)
			var native int64
			converted := 0
			for l := range m.NLayer {
				L, sh := &m.Layers[l], m.off.w[l].shards[0]
				for _, x := range []struct {
					w  *Weight
					dl devLinear
				}{{L.Attn.Q.W, sh.q}, {L.Attn.K.W, sh.k}, {L.Attn.V.W, sh.v}, {L.Attn.O.W, sh.o},
					{L.FFN.Gate.W, sh.gate}, {L.FFN.Up.W, sh.up}, {L.FFN.Down.W, sh.dn}} {
					if x.w.Type == typ {
						converted++
						if x.dl.t != wt {
							t.Errorf("block %d: a %v matrix was uploaded as %v", l, typ, x.dl.t)
						}
					}
					if got, want := DeviceMatrixBytes(x.w.Type, x.w.Cols, x.w.Rows), int64(len(x.w.Data)); got != want {
						t.Errorf("block %d: %v matrix counted as %d device bytes, stores %d", l, x.w.Type, got, want)
					}
					native += int64(len(x.w.Data))
				}
			}
			if converted == 0 {
				t.Fatalf("no block matrix is %v", typ)
			}
			if native == 0 || d.Allocated() < native {
				t.Errorf("device holds %d bytes, the blocks' matrices alone %d", d.Allocated(), native)
			}
			got, _ := forcedLogits(t, m, p, len(p), 4, toks)
			worst := 0.0
			for i := range want {
				e := fixtures.RelRMS(got[i], want[i])
				worst = max(worst, e)
				if e > 5e-2 || math.IsNaN(e) {
					t.Errorf("step %d: rel RMS %.3g > 5e-2", i, e)
				}
			}
			t.Logf("worst rel RMS %.3g", worst)
		})
	}
}

// TestDeviceKVTypes: a session whose cache is F16 or Q8_0 keeps its
// cache so on the device (Q8_0 where heads are whole blocks), written by
// the device's StoreKV, which gives the host's rows bit for bit; so the
// device run stays within TestDeviceMatchesCPU's float bound of the CPU
// engine's run with the same cache type. Paged batches over such a pool
// (gathers, a fork's row copies) equal solo runs bit for bit.
func TestDeviceKVTypes(t *testing.T) {
	quantized := false
	for _, kv := range []ggml.Type{ggml.F16, ggml.Q8_0} {
		for _, file := range []string{"models/stories260K/stories260K-F32.gguf", "arch/rand-llama-gqa-F32.gguf"} {
			t.Run(kv.String()+"/"+file, func(t *testing.T) {
				m := loadFixture(t, file)
				if m.kvDim()%kv.BlockSize() != 0 {
					t.Skipf("K rows of %d are not whole %v blocks", m.kvDim(), kv)
				}
				p := prompt(m)
				state := func(kv ggml.Type) *State {
					s := m.NewState(64, 16)
					if err := s.SetKVType(kv); err != nil {
						t.Fatal(err)
					}
					return s
				}
				dt := device.KVType(kv, m.HeadDim)
				host := kv // the CPU run to compare with: the device's cache type
				if dt == device.F32 {
					host = ggml.F32 // heads of stories260K are not whole Q8_0 blocks
				}
				want, toks := stateLogits(t, state(host), p, len(p), 6, nil)
				d := device.NewStandIn("standin", 0, 32)
				place(t, m, LastLayers(m.NLayer, m.NLayer+1, d))
				s := state(kv)
				got, _ := stateLogits(t, s, p, len(p), 6, toks)
				if s.dkv == nil || s.dkv.t != dt {
					t.Fatalf("the device cache is not %v", dt)
				}
				quantized = quantized || dt == device.Q8_0
				if k, kd := s.dkv.k[0][0], m.off.w[0].shards[0].kvDim(m.HeadDim); k.Bytes() != 64*dt.RowBytes(kd) {
					t.Errorf("block 0's device keys take %d bytes, want 64 rows of %d %v elements", k.Bytes(), kd, dt)
				}
				for i := range want {
					if e := fixtures.RelRMS(got[i], want[i]); e > 1e-4 || math.IsNaN(e) {
						t.Errorf("step %d: rel RMS %.3g > 1e-4", i, e)
					}
					if argmax(got[i]) != argmax(want[i]) {
						t.Errorf("step %d: greedy token %d, CPU %d", i, argmax(got[i]), argmax(want[i]))
					}
				}
				pagedBatchCheckKV(t, m, kv)
			})
		}
	}
	if !quantized {
		t.Error("no fixture ran a Q8_0 device cache")
	}
}
