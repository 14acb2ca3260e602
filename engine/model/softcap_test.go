package model

import (
	"math"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
)

func TestSoftcap(t *testing.T) {
	x := []float32{0, 10, -10, 1000, -1000}
	softcap(x, 30)
	want := []float64{0, 30 * math.Tanh(10.0/30), -30 * math.Tanh(10.0/30), 30, -30}
	for i := range x {
		if math.Abs(float64(x[i])-want[i]) > 1e-5 {
			t.Errorf("softcap[%d] = %v, want %v", i, x[i], want[i])
		}
	}
}

func TestSlidingLayers(t *testing.T) {
	m := &Model{Config: Config{SlidingWindow: 4, SlidingPattern: 2}}
	for l, want := range []bool{true, false, true, false} {
		if m.slidingLayer(l) != want {
			t.Errorf("layer %d sliding = %v", l, !want)
		}
	}
	if (&Model{}).slidingLayer(0) {
		t.Error("no window configured, yet layer 0 slides")
	}
}

// TestSlidingWindowMasksOldKeys: with a window of 2 on every layer, the
// first two positions see everything they would anyway and match the full
// model; later positions differ. A soft cap far above the scores changes
// nothing measurable.
func TestSlidingWindowMasksOldKeys(t *testing.T) {
	f, err := gguf.Open(fixtures.Path(t, "arch/rand-gemma-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := FromGGUF(f, nil, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ids := []int32{1, 403, 407, 261, 378, 432}
	full, _ := m.NewState(16, 16).Forward(ids, true)
	full = append([]float32(nil), full...)
	m.SlidingWindow, m.SlidingPattern = 2, 1
	win, _ := m.NewState(16, 16).Forward(ids, true)
	V := m.NVocab
	for p := range ids {
		e := fixtures.RelRMS(win[p*V:(p+1)*V], full[p*V:(p+1)*V])
		if p < 2 && e != 0 || p >= 3 && e < 1e-3 {
			t.Errorf("position %d: rel diff %.2e", p, e)
		}
	}
	m.SlidingWindow, m.AttnSoftcap = 0, 1e6
	capped, _ := m.NewState(16, 16).Forward(ids, true)
	if e := fixtures.RelRMS(capped, full); e > 1e-5 {
		t.Errorf("a cap of 1e6 moved the logits by %.2e", e)
	}
}

// TestSinusoidalPositionsDecoderOnly: a decoder-only spec with sinusoidal
// positions adds them (the same tokens at other positions give other
// logits), where "empty" adds nothing.
func TestSinusoidalPositionsDecoderOnly(t *testing.T) {
	f, err := gguf.Open(fixtures.Path(t, "arch/rand-bloom-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := FromGGUF(f, nil, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.alibi = nil // no positional signal at all: a repeated token repeats its logits
	ids := []int32{7, 7, 7}
	flat, _ := m.NewState(8, 8).Forward(ids, true)
	flat = append([]float32(nil), flat...)
	V := m.NVocab
	if e := fixtures.RelRMS(flat[2*V:3*V], flat[V:2*V]); e > 1e-6 {
		t.Fatalf("without positions a repeated token should repeat its logits (%.2e)", e)
	}
	m.sinusoidal = true
	pos, _ := m.NewState(8, 8).Forward(ids, true)
	if e := fixtures.RelRMS(pos[2*V:3*V], pos[V:2*V]); e < 1e-3 {
		t.Errorf("sinusoidal positions changed nothing (%.2e)", e)
	}
}
