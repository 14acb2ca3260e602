package quantlab

import (
	"errors"
	"image"
	"image/color"
	"math"
	"testing"

	"gonum.org/v1/plot"

	"flowchat/engine/eval"
)

// hasColour reports whether some pixel is within a small distance of c.
func hasColour(img image.Image, c color.Color) bool {
	want := color.RGBAModel.Convert(c).(color.RGBA)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			got := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if absDiff(got.R, want.R)+absDiff(got.G, want.G)+absDiff(got.B, want.B) < 12 {
				return true
			}
		}
	}
	return false
}

func absDiff(a, b uint8) int { return int(max(a, b) - min(a, b)) }

// TestChartsEdgeCases draws every chart of reports a real run can give
// (the base's KLD of 0, a NaN from an empty chunk, one level, all zeros)
// without panicking, at the size asked, with a level's family colour
// present exactly when the level is.
func TestChartsEdgeCases(t *testing.T) {
	reports := map[string]*eval.LabReport{
		"base and levels": {BasePPL: 4, Levels: []eval.LevelResult{
			{Level: "F32", BitsPerWeight: 32, PPL: 4, Top1: 1},
			{Level: "Q8", BitsPerWeight: 9, PPL: 4.01, KLD: 0.0006, KLDStdErr: 0.00002, Top1: 0.98, GenTPS: 100},
			{Level: "Q2", BitsPerWeight: 3, PPL: 400, PPLStdErr: 40, KLD: 4.8, Top1: 0.1, GenTPS: 150},
			{Level: "/models/m-Q4_0.gguf", BitsPerWeight: 4.5, PPL: 4.5, KLD: 0.1, Top1: 0.8, GenTPS: 120},
		}},
		"one level": {BasePPL: 4, Levels: []eval.LevelResult{{Level: "Q4_0", BitsPerWeight: 4.5, PPL: 4.5, KLD: 0.1, Top1: 0.8}}},
		"zeros":     {Levels: []eval.LevelResult{{Level: "F32"}, {Level: "Q8"}}},
		"nan":       {BasePPL: math.NaN(), Levels: []eval.LevelResult{{Level: "Q8", PPL: math.NaN(), KLD: math.Inf(1), BitsPerWeight: 9}, {Level: "Q3H", PPL: 5, KLD: 0.3, BitsPerWeight: 4}}},
	}
	for name, rep := range reports {
		for _, c := range append(Charts(rep), TPSBars) {
			img, err := Render(rep, c, 300, 200)
			if err != nil {
				t.Fatalf("%s %s: %v", name, c, err)
			}
			if b := img.Bounds(); b.Dx() != 300 || b.Dy() != 200 {
				t.Errorf("%s %s: %v", name, c, b)
			}
		}
	}
	rep := reports["base and levels"]
	img, _ := Render(rep, KLDBars, 480, 320)
	if !hasColour(img, famInferflow.color) || !hasColour(img, famFile.color) || hasColour(img, famGGML.color) {
		t.Errorf("KLD bars: family colours do not match the levels (Inferflow and file, no GGML)")
	}
	if _, err := Render(&eval.LabReport{}, PPLBars, 300, 200); !errors.Is(err, ErrEmptyReport) {
		t.Errorf("empty report: %v", err)
	}
	if _, err := Render(rep, Chart("pie"), 300, 200); err == nil {
		t.Errorf("unknown chart drawn")
	}
	if _, err := Render(rep, PPLBars, 10, 10); err == nil {
		t.Errorf("10×10 chart drawn")
	}
}

// TestDecadeTicks labels every power of ten in range, the lowest included.
func TestDecadeTicks(t *testing.T) {
	var labels []string
	for _, tk := range (decadeTicks{}).Ticks(1e-4, 10) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"0.0001", "0.001", "0.01", "0.1", "1", "10"}; len(labels) != len(want) || labels[0] != want[0] || labels[5] != want[5] {
		t.Errorf("labels %q, want %q", labels, want)
	}
}

// TestTop1IsLinear: top-1 agreement, a percentage, stays on a linear axis
// even where its values span decades (which puts KLD on a log axis).
func TestTop1IsLinear(t *testing.T) {
	rep := &eval.LabReport{BasePPL: 4, Levels: []eval.LevelResult{
		{Level: "F32", PPL: 4, Top1: 1},
		{Level: "Q4", PPL: 4.2, KLD: 0.002, Top1: 0.95},
		{Level: "Q2", PPL: 900, KLD: 5, Top1: 0.004},
	}}
	if p := barPlot(rep, metrics[Top1Bars], PrintStyle); p.Y.Scale == (plot.LogScale{}) {
		t.Error("top-1 agreement drawn on a log axis")
	}
	if p := barPlot(rep, metrics[KLDBars], PrintStyle); p.Y.Scale != (plot.LogScale{}) {
		t.Error("KLD spanning decades is not on a log axis (the test's data no longer exercises the choice)")
	}
}

// TestRenderStyled: a chart drawn in a dark style has the style's
// background and its text in the style's foreground, not black on white.
func TestRenderStyled(t *testing.T) {
	rep := &eval.LabReport{BasePPL: 4, Levels: []eval.LevelResult{
		{Level: "F32", BitsPerWeight: 32, PPL: 4, Top1: 1},
		{Level: "Q4", BitsPerWeight: 5, PPL: 4.2, KLD: 0.02, Top1: 0.95},
	}}
	dark := Style{Background: color.NRGBA{0x17, 0x17, 0x18, 0xff}, Foreground: color.NRGBA{0xf3, 0xf3, 0xf3, 0xff}, Grid: color.NRGBA{0x40, 0x40, 0x40, 0xff}}
	for _, c := range Charts(rep) {
		img, err := RenderStyled(rep, c, 320, 200, dark)
		if err != nil {
			t.Fatal(err)
		}
		if got := color.NRGBAModel.Convert(img.At(1, 1)); got != dark.Background {
			t.Errorf("%s: corner %v, want the background", c, got)
		}
		if !hasColour(img, dark.Foreground) || hasColour(img, color.White) {
			t.Errorf("%s: foreground missing or white drawn", c)
		}
	}
}

// TestScatterLabelsInside: the largest level's label, beside a point at
// the right edge of the plot, is drawn on the point's left rather than
// cut at the chart's edge: no text pixel in the image's last columns.
func TestScatterLabelsInside(t *testing.T) {
	rep := &eval.LabReport{BasePPL: 4, Levels: []eval.LevelResult{
		{Level: "Q2", BitsPerWeight: 5.45, KLD: 1.8},
		{Level: "Q4_B32", BitsPerWeight: 6.2, KLD: 0.02},
		{Level: "Q8", BitsPerWeight: 9.1, KLD: 0.0006},
	}}
	st := Style{Background: color.Black, Foreground: color.NRGBA{0xff, 0xff, 0x00, 0xff}, Grid: color.Black}
	img, err := RenderStyled(rep, SizeQuality, 720, 450, st)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	for x := b.Max.X - 4; x < b.Max.X; x++ {
		for y := b.Min.Y + 120; y < b.Max.Y; y++ { // below the legend
			r, g, bl, _ := img.At(x, y).RGBA()
			if r > 0x8000 && g > 0x8000 && bl < 0x4000 {
				t.Fatalf("label text at (%d, %d), at the chart's right edge", x, y)
			}
		}
	}
}
