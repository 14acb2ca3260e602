package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"flowchat/engine/device"
	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
)

// deviceFixtures are decoder-only fixtures whose blocks the device layer
// runs, with their weight types, all read by the kernels as stored
// (TestDeviceWeightTypes covers every other GGML type).
var deviceFixtures = []string{
	"models/stories260K/stories260K-F32.gguf",
	"models/stories260K/stories260K-F16.gguf",
	"models/stories260K/stories260K-Q8_0mix.gguf",
	"models/tinystories-656K/TinyStories-656K-Q4_0.gguf",
	"arch/rand-llama-gqa-F32.gguf",
	"arch/rand-llama-gqa-Q8_0.gguf",
	"arch/rand-llama-gqa-Q4_0.gguf",
	"arch/rand-llama-gqa-Q4_K.gguf",
	"arch/rand-llama-gqa-Q6_K.gguf",
}

var devPrompt = []int32{1, 403, 407, 261, 378, 317, 269, 274, 287, 263, 377, 267}

// genLogits runs the prompt in chunks of chunk tokens, then steps greedy
// decode steps, and returns the logits of the prompt's last token and of
// every step.
func genLogits(t *testing.T, m *Model, prompt []int32, chunk, steps int) [][]float32 {
	t.Helper()
	lg, _ := forcedLogits(t, m, prompt, chunk, steps, nil)
	return lg
}

// forcedLogits is genLogits decoding the tokens given (nil: greedy); it
// also returns the tokens decoded.
func forcedLogits(t *testing.T, m *Model, prompt []int32, chunk, steps int, forced []int32) ([][]float32, []int32) {
	t.Helper()
	return stateLogits(t, m.NewState(64, 16), prompt, chunk, steps, forced)
}

// stateLogits is forcedLogits on the fresh State s.
func stateLogits(t *testing.T, s *State, prompt []int32, chunk, steps int, forced []int32) ([][]float32, []int32) {
	t.Helper()
	var out [][]float32
	var last []float32
	for i := 0; i < len(prompt); i += chunk {
		lg, err := s.Forward(prompt[i:min(i+chunk, len(prompt))], false)
		if err != nil {
			t.Fatal(err)
		}
		last = lg
	}
	out = append(out, slices.Clone(last))
	var toks []int32
	for i := range steps {
		tok := argmax(last)
		if forced != nil {
			tok = forced[i]
		}
		toks = append(toks, tok)
		lg, err := s.Forward([]int32{tok}, false)
		if err != nil {
			t.Fatal(err)
		}
		last = lg
		out = append(out, slices.Clone(lg))
	}
	return out, toks
}

func prompt(m *Model) []int32 {
	p := slices.Clone(devPrompt)
	for i := range p {
		p[i] %= int32(m.NVocab)
	}
	return p
}

func place(t *testing.T, m *Model, p Placement) {
	t.Helper()
	if err := m.Place(p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Unplace)
}

func standIns(n int) []device.Device {
	devs := make([]device.Device, n)
	for i := range devs {
		devs[i] = device.NewStandIn(fmt.Sprintf("standin:%d", i), 0, 32)
	}
	return devs
}

// TestDeviceMatchesCPU: every block and the head on a stand-in device (the
// kernels' twins) against the CPU engine, prompt and 6 decode steps. The
// arithmetic differs by design (the CPU engine quantizes activations to
// Q8_0 for Q8_0/Q4_0/K-quant weights and sums in another order; the
// device reads float32 activations; RoPE angles by repeated products vs
// the CPU's table), so the bound is on the relative RMS of the logits:
// 1e-4 for F32 weights (rounding order only; measured ≤ 5e-7), 2e-3 for
// F16 (the CPU rounds activations to fp16, 2^-11; measured ≤ 4e-4), 5e-2
// for quantized weights (the CPU's Q8_0 activation rounding, ~2^-8 per
// element, accumulates through the blocks; measured ≤ 3e-2), and the same
// greedy token at every step for float weights. Both runs decode the CPU's
// greedy tokens, so a near tie cannot send them down different texts.
func TestDeviceMatchesCPU(t *testing.T) {
	for _, file := range deviceFixtures {
		t.Run(file, func(t *testing.T) {
			m := loadFixture(t, file)
			p := prompt(m)
			want, toks := forcedLogits(t, m, p, len(p), 6, nil)
			place(t, m, LastLayers(m.NLayer, m.NLayer+1, device.NewStandIn("standin", 0, 32)))
			if n, out := m.Offloaded(); n != m.NLayer || !out {
				t.Fatalf("offloaded %d blocks, head %v", n, out)
			}
			got, _ := forcedLogits(t, m, p, len(p), 6, toks)
			bound, float := weightBound(m)
			worst := 0.0
			for i := range want {
				e := fixtures.RelRMS(got[i], want[i])
				worst = max(worst, e)
				if e > bound || math.IsNaN(e) {
					t.Errorf("step %d: rel RMS %.3g > %.g", i, e, bound)
				}
				if float && argmax(got[i]) != argmax(want[i]) {
					t.Errorf("step %d: greedy token %d, CPU %d", i, argmax(got[i]), argmax(want[i]))
				}
			}
			t.Logf("worst rel RMS %.3g (bound %.g)", worst, bound)
		})
	}
}

// TestDeviceBoundaries: the same blocks split over two stand-in devices at
// every split point, or over three by layer ranges, give logits bit
// identical to one device: the activations crossing a boundary are the
// float32 rows themselves, and each device's arithmetic is the twins'.
// Prompt chunking does not change a bit either (the device attends each
// row on its own and the matrix kernels treat columns independently).
func TestDeviceBoundaries(t *testing.T) {
	for _, file := range []string{"models/stories260K/stories260K-F32.gguf", "arch/rand-llama-gqa-Q8_0.gguf", "models/tinystories-656K/TinyStories-656K-Q4_0.gguf"} {
		t.Run(file, func(t *testing.T) {
			m := loadFixture(t, file)
			p := prompt(m)
			place(t, m, LastLayers(m.NLayer, m.NLayer+1, standIns(1)[0]))
			want := genLogits(t, m, p, len(p), 4)
			sameBits(t, "prompt in chunks of 5", genLogits(t, m, p, 5, 4), want)
			for k := 1; k < m.NLayer; k++ {
				place(t, m, ByRanges(standIns(2), []int{k, m.NLayer - k}))
				sameBits(t, fmt.Sprintf("2 devices split at %d", k), genLogits(t, m, p, len(p), 4), want)
			}
			if m.NLayer >= 3 {
				a := m.NLayer / 3
				place(t, m, ByRanges(standIns(3), []int{a, a, m.NLayer - 2*a}))
				sameBits(t, "3 devices", genLogits(t, m, p, 5, 4), want)
			}
		})
	}
}

// TestHostDeviceSplit: host blocks then device blocks in one forward pass,
// at every split point. The split's logits lie between the two pure runs'
// (within the float bound of TestDeviceMatchesCPU of each), the all-host
// placement is the CPU engine bit for bit, and chunked prompts give the
// same bits as one batch (both halves are batching-invariant).
func TestHostDeviceSplit(t *testing.T) {
	m := loadFixture(t, "models/stories260K/stories260K-F32.gguf")
	p := prompt(m)
	cpu := genLogits(t, m, p, len(p), 4)
	place(t, m, LastLayers(m.NLayer, 0, standIns(1)[0]))
	sameBits(t, "0 device blocks", genLogits(t, m, p, len(p), 4), cpu)
	place(t, m, LastLayers(m.NLayer, m.NLayer+1, standIns(1)[0]))
	dev := genLogits(t, m, p, len(p), 4)
	for k := 1; k <= m.NLayer; k++ {
		place(t, m, LastLayers(m.NLayer, k, standIns(1)[0]))
		got := genLogits(t, m, p, len(p), 4)
		sameBits(t, fmt.Sprintf("%d device blocks, prompt in chunks", k), genLogits(t, m, p, 3, 4), got)
		for i := range got {
			if e1, e2 := fixtures.RelRMS(got[i], cpu[i]), fixtures.RelRMS(got[i], dev[i]); e1 > 1e-4 || e2 > 1e-4 {
				t.Errorf("%d device blocks, step %d: rel RMS %.3g to the CPU, %.3g to the device", k, i, e1, e2)
			}
		}
	}
}

// TestDevicePagedBatch: sequences of a KV pool in one batch, with blocks
// interleaved so that the device gathers non-consecutive rows and a fork
// copies rows on the device, equal the same sequences run alone on states
// of their own, bit for bit.
func TestDevicePagedBatch(t *testing.T) {
	m := loadFixture(t, "arch/rand-llama-gqa-F32.gguf")
	place(t, m, ByRanges(standIns(2), []int{m.NLayer / 2, m.NLayer - m.NLayer/2}))
	pagedBatchCheck(t, m)
}

// pagedBatchCheck is TestDevicePagedBatch under m's placement; it returns
// the pool.
func pagedBatchCheck(t *testing.T, m *Model) *KVPool { return pagedBatchCheckKV(t, m, ggml.F32) }

// pagedBatchCheckKV is pagedBatchCheck with a pool (and solo States) of
// cache type kv.
func pagedBatchCheckKV(t *testing.T, m *Model, kv ggml.Type) *KVPool {
	t.Helper()
	pa, pb := prompt(m), prompt(m)[:7]
	pool, err := m.NewKVPool(PoolOptions{Blocks: 32, BlockTokens: 4, Ctx: 64, KVType: kv})
	if err != nil {
		t.Fatal(err)
	}
	batch := pool.NewBatch(32)
	a, b := pool.NewSeq(), pool.NewSeq()
	solo := func(p []int32, steps int) [][]float32 {
		s := m.NewState(64, 16)
		if err := s.SetKVType(kv); err != nil {
			t.Fatal(err)
		}
		lg, _ := stateLogits(t, s, p, len(p), steps, nil)
		return lg
	}
	want := [][][]float32{solo(pa, 3), solo(pb, 3)}
	seqs := []*State{a, b}
	toks := [][]int32{pa, pb}
	// Prompts in chunks of 4, alternating: the blocks interleave.
	for i := 0; i < len(pa); i += 4 {
		var segs []Segment
		for j, s := range seqs {
			if i < len(toks[j]) {
				chunk := toks[j][i:min(i+4, len(toks[j]))]
				if err := s.Reserve(len(chunk)); err != nil {
					t.Fatal(err)
				}
				segs = append(segs, Segment{Seq: s, Tokens: chunk, Logits: LogitsLast, Prompt: true})
			}
		}
		if _, err := batch.Forward(segs); err != nil {
			t.Fatal(err)
		}
	}
	// Decode: both sequences each step from their last logits.
	last := [][]float32{want[0][0], want[1][0]}
	for step := 1; step <= 3; step++ {
		segs := make([]Segment, 2)
		for j, s := range seqs {
			if err := s.Reserve(1); err != nil {
				t.Fatal(err)
			}
			segs[j] = Segment{Seq: s, Tokens: []int32{(argmax(last[j]))}, Logits: LogitsLast}
		}
		lg, err := batch.Forward(segs)
		if err != nil {
			t.Fatal(err)
		}
		for j := range seqs {
			last[j] = slices.Clone(lg[j*m.NVocab : (j+1)*m.NVocab])
			sameBits(t, fmt.Sprintf("sequence %d step %d", j, step), [][]float32{last[j]}, [][]float32{want[j][step]})
		}
	}
	// A fork shares a's blocks; writing its next token copies the last
	// partly filled block (on the device too).
	f := a.Fork()
	if err := f.Reserve(1); err != nil {
		t.Fatal(err)
	}
	tok := (argmax(last[0]))
	lg, err := batch.Forward([]Segment{{Seq: f, Tokens: []int32{tok}, Logits: LogitsLast}})
	if err != nil {
		t.Fatal(err)
	}
	ref := solo(pa, 4)
	sameBits(t, "fork", [][]float32{lg}, [][]float32{ref[4]})
	return pool
}

// TestPlaceUnsupported: a block the device kernels cannot run is an error
// that names it and the reason.
func TestPlaceUnsupported(t *testing.T) {
	m := loadFixture(t, "arch/rand-gpt2-F32.gguf")
	err := m.Place(LastLayers(m.NLayer, 1, standIns(1)[0]))
	if !errors.Is(err, errDeviceUnsupported) {
		t.Fatalf("got %v, want errDeviceUnsupported", err)
	}
	t.Log(err)
}

// TestPlaceOutOfMemory: a device too small is ErrOutOfMemory, not a panic,
// and frees what it had allocated.
func TestPlaceOutOfMemory(t *testing.T) {
	m := loadFixture(t, "models/stories260K/stories260K-F32.gguf")
	d := device.NewStandIn("small", 100<<10, 32)
	err := m.Place(LastLayers(m.NLayer, m.NLayer, d))
	if !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("got %v, want ErrOutOfMemory", err)
	}
	if d.Allocated() != 0 {
		t.Errorf("%d bytes left allocated", d.Allocated())
	}
}

// weightBound is TestDeviceMatchesCPU's bound for m's weight types, and
// whether they are all float types.
func weightBound(m *Model) (bound float64, float bool) {
	_, types := m.Describe()
	bound = 1e-4
	for typ := range types {
		switch typ {
		case ggml.F32:
		case ggml.F16:
			bound = max(bound, 2e-3)
		default:
			return 5e-2, false
		}
	}
	return bound, true
}

func sameBits(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Errorf("%s: step %d logit %d = %v, want %v", what, i, j, got[i][j], want[i][j])
				return
			}
		}
	}
}
