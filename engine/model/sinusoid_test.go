package model

import (
	"math"
	"testing"

	"flowchat/engine/spec"
)

// TestSinusoidMarian: Marian's positions for d = 4 against values worked
// by hand: angles pos/10000^0 and pos/10000^(2/4) = pos/100, sin of both
// then cos of both, no position offset.
func TestSinusoidMarian(t *testing.T) {
	for _, c := range []struct {
		pos  int
		want [4]float32
	}{
		{0, [4]float32{0, 0, 1, 1}},
		{1, [4]float32{0.84147098, 0.0099998333, 0.54030231, 0.99995000}}, // sin 1, sin .01, cos 1, cos .01
		{3, [4]float32{0.14112001, 0.029995500, -0.98999250, 0.99955003}}, // sin 3, sin .03, cos 3, cos .03
	} {
		var got [4]float32
		sinusoidMarian(got[:], c.pos)
		for i := range got {
			if math.Abs(float64(got[i]-c.want[i])) > 1e-6 {
				t.Errorf("pos %d: %v, want %v", c.pos, got, c.want)
				break
			}
		}
	}
}

// TestSinusoidStyle: the spec option picks the convention, fairseq by default.
func TestSinusoidStyle(t *testing.T) {
	var a, b [8]float32
	for _, c := range []struct {
		style string
		want  func([]float32, int)
	}{{"", sinusoid}, {"fairseq", sinusoid}, {"marian", sinusoidMarian}} {
		f := sinusoidFor(&spec.Network{PositionEmbedding: "sinusoidal", SinusoidalStyle: c.style})
		f(a[:], 5)
		c.want(b[:], 5)
		if a != b {
			t.Errorf("style %q: %v, want %v", c.style, a, b)
		}
	}
	if sinusoidFor(&spec.Network{PositionEmbedding: "empty"}) != nil {
		t.Error("positions without a sinusoidal spec")
	}
}
