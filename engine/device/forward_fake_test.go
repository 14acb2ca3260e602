//go:build linux

package device_test

import (
	"math"
	"testing"
	"time"

	"flowchat/engine/device"
	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
	"flowchat/engine/model"
	"flowchat/native/cuda"
	"flowchat/native/hip"
)

// TestFakeForward runs forward passes (a prompt, then a greedy decode
// step; the host runs the first blocks, the device the last) through the generic
// adapter on each vendor's fake library, whose kernels are the real
// sources compiled by NVRTC / hipRTC and run by the CPU shim (wavefront
// 32 for the fake CUDA device, 64 for the fake gfx90a), and holds the
// logits against a stand-in device at the same warp size: the same
// greedy tokens, relative RMS ≤ 1e-5 (the shim's glibc cos/sin/exp may be
// one ulp from Go's in RoPE and SiLU; measured 0: the same bits), on an
// F32 model with an F32 cache. The shim is slow (about 40 s a backend
// here): -short skips it. Also run once with rand-llama-gqa-Q8_0 and a
// Q8_0 device cache (0 too, 100 s a backend), left out of the suite.
func TestFakeForward(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short: the CPU shim runs a forward pass in about 40 s per backend")
	}
	cudaLib, cudaSkip, hipLib, hipSkip := device.FakeLibraries()
	backends := []struct {
		name string
		warp int
		skip func() string
		open func() (device.Device, error)
	}{
		{"cuda", 32, func() string {
			if cudaLib == "" {
				return cudaSkip
			}
			if _, err := cuda.LoadNVRTC(); err != nil {
				return "the CUDA device compiles its kernels with NVRTC: " + err.Error()
			}
			return ""
		}, func() (device.Device, error) { return device.OpenCUDA(0) }},
		{"hip", 64, func() string {
			if hipLib == "" {
				return hipSkip
			}
			if _, err := hip.LoadHIPRTC(); err != nil {
				return "the HIP device compiles its kernels with hipRTC: " + err.Error()
			}
			return ""
		}, func() (device.Device, error) { return device.OpenHIP(0) }},
	}
	cases := []struct {
		file string
		kv   ggml.Type
	}{
		{"models/stories260K/stories260K-F32.gguf", ggml.F32},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if why := b.skip(); why != "" {
				t.Skip("skipping: " + why)
			}
			d, err := b.open()
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			for _, c := range cases {
				start := time.Now()
				m := loadModel(t, c.file)
				want, toks := greedyLogits(t, m, device.NewStandIn("ref", 0, b.warp), c.kv, nil)
				got, _ := greedyLogits(t, m, d, c.kv, toks)
				for step := range want {
					if r := relRMS(got[step], want[step]); r > 1e-5 {
						t.Errorf("%s %v cache, step %d: logits %.2e from the stand-in's (relative RMS)", c.file, c.kv, step, r)
					}
					if argmax(got[step]) != argmax(want[step]) {
						t.Errorf("%s %v cache, step %d: greedy token %d, stand-in %d", c.file, c.kv, step, argmax(got[step]), argmax(want[step]))
					}
					t.Logf("%s %v cache, step %d: relative RMS %.2e", c.file, c.kv, step, relRMS(got[step], want[step]))
				}
				t.Logf("%s: %v", c.file, time.Since(start))
			}
		})
	}
}

func loadModel(t *testing.T, rel string) *model.Model {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := model.FromGGUF(f, nil, model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// greedyLogits places the last block on d (the CPU shim launches an OS
// thread per GPU thread: a whole model would take minutes here) and
// returns the logits of a 3-token prompt's last row and of a decode step, feeding
// toks when given (the reference's tokens) or the greedy choice.
func greedyLogits(t *testing.T, m *model.Model, d device.Device, kv ggml.Type, toks []int32) ([][]float32, []int32) {
	t.Helper()
	if err := m.Place(model.LastLayers(m.NLayer, 1, d)); err != nil {
		t.Fatal(err)
	}
	defer m.Unplace()
	s := m.NewState(32, 8)
	if err := s.SetKVType(kv); err != nil {
		t.Fatal(err)
	}
	in := []int32{1, 5, 9}
	follow := toks != nil
	var out [][]float32
	for step := range 2 {
		logits, err := s.Forward(in, false)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]float32(nil), logits[len(logits)-m.NVocab:]...))
		next := int32(argmax(logits[len(logits)-m.NVocab:]))
		if follow {
			next = toks[step]
		} else {
			toks = append(toks, next)
		}
		in = []int32{next}
	}
	return out, toks
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

func relRMS(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num / den)
}
