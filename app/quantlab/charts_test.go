package quantlab

import (
	"errors"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

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
	if p := barPlot(rep, metrics[Top1Bars], PrintStyle).p; p.Y.Scale == (plot.LogScale{}) {
		t.Error("top-1 agreement drawn on a log axis")
	}
	if p := barPlot(rep, metrics[KLDBars], PrintStyle).p; p.Y.Scale != (plot.LogScale{}) {
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

// demoReport is a Lab run on the demo model as the GUI shows it: twelve
// levels, the tallest bars at the top of their axes (Q2's KLD and
// perplexity, 100% top-1 agreement).
func demoReport() *eval.LabReport {
	rep := &eval.LabReport{BasePPL: 3.3267}
	for _, l := range []struct {
		name           string
		bits, ppl, kld float64
		top1, tps      float64
	}{
		{"F32", 32, 3.3267, 0, 1, 21243}, {"Q8", 9, 3.3219, 0.00053, 0.986, 18501}, {"Q6", 6.5, 3.3708, 0.0054, 0.964, 17000},
		{"Q5", 5.5, 3.4426, 0.0238, 0.923, 16000}, {"Q4_B32", 5, 3.5726, 0.0707, 0.881, 16500}, {"Q4_B64", 4.5, 3.6244, 0.0928, 0.875, 16800},
		{"Q3H", 4, 4.7491, 0.288, 0.706, 15000}, {"Q3", 4, 5.7647, 0.5661, 0.641, 15500}, {"Q2", 3, 518.5, 4.9009, 0.073, 14000},
		{"Q8_0", 8.5, 3.3313, 0.0006, 0.988, 23179}, {"Q4_0", 4.5, 3.6752, 0.0871, 0.875, 21610}, {"Q4_K", 15.9, 3.3265, 7.4e-7, 1, 12000},
	} {
		rep.Levels = append(rep.Levels, eval.LevelResult{Level: l.name, BitsPerWeight: l.bits, PPL: l.ppl, PPLStdErr: l.ppl / 100,
			KLD: l.kld, KLDStdErr: l.kld / 20, Top1: l.top1, GenTPS: l.tps})
	}
	return rep
}

// TestChartRoom: on every chart of a real report, at the GUI's size and a
// small one, every value label and key entry lies inside the image (3 pt
// from its edges), a bar's label inside the data area (the axis rises to
// make room), no label touches the title or the key, and the key is above
// the data area, not over bars, points or labels (plot's legend sat
// inside the data area, under the tallest bars' labels).
func TestChartRoom(t *testing.T) {
	rep := demoReport()
	inset := func(r vg.Rectangle, d vg.Length) vg.Rectangle {
		return vg.Rectangle{Min: vg.Point{X: r.Min.X + d, Y: r.Min.Y + d}, Max: vg.Point{X: r.Max.X - d, Y: r.Max.Y - d}}
	}
	inside := func(r, b vg.Rectangle) bool {
		return r.Min.X >= b.Min.X && r.Min.Y >= b.Min.Y && r.Max.X <= b.Max.X && r.Max.Y <= b.Max.Y
	}
	for _, size := range [][2]int{{720, 450}, {440, 275}} {
		for _, c := range Charts(rep) {
			_, lay, err := render(rep, c, size[0], size[1], PrintStyle)
			if err != nil {
				t.Fatal(err)
			}
			if len(lay.labels) != len(rep.Levels) && c != SizeQuality {
				t.Errorf("%s %v: %d labels drawn, want %d", c, size, len(lay.labels), len(rep.Levels))
			}
			if c == PPLBars || c == SizeQuality {
				if len(lay.key) == 0 {
					t.Errorf("%s %v: no key drawn", c, size)
				}
			}
			for _, k := range lay.key {
				if !inside(k, inset(lay.bounds, vg.Points(3))) || k.Min.Y < lay.data.Max.Y || overlap(k, lay.title) {
					t.Errorf("%s %v: key entry %v outside the band between the title %v and the data %v", c, size, k, lay.title, lay.data)
				}
			}
			for _, l := range lay.labels {
				if !inside(l, inset(lay.bounds, vg.Points(3))) {
					t.Errorf("%s %v: label %v within 3 pt of the edge of %v", c, size, l, lay.bounds)
				}
				if c != SizeQuality && l.Max.Y > lay.data.Max.Y {
					t.Errorf("%s %v: label %v above the data area %v", c, size, l, lay.data)
				}
				if overlap(l, lay.title) {
					t.Errorf("%s %v: label %v on the title %v", c, size, l, lay.title)
				}
				for _, k := range lay.key {
					if overlap(l, k) {
						t.Errorf("%s %v: label %v under the key entry %v", c, size, l, k)
					}
				}
			}
		}
	}
}

// TestNumberFormats: perplexities have four significant digits and KL
// divergences three, whatever their size, so one chart's labels do not
// mix 3.3267 with 518.5.
func TestNumberFormats(t *testing.T) {
	for v, want := range map[float64]string{3.32671: "3.327", 12.3456: "12.35", 518.52: "518.5", 1234.5: "1234", 4: "4.000"} {
		if got := PPL(v); got != want {
			t.Errorf("PPL(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{4.9009: "4.90", 0.02381: "0.0238", 0.00053: "0.000530", 7.4e-7: "7.40e-07", 0: "0"} {
		if got := KLD(v); got != want {
			t.Errorf("KLD(%v) = %q, want %q", v, got, want)
		}
	}
	tab := NewTable(demoReport())
	if got := tab.Rows[8][4]; got != "518.5 ± 5.2" {
		t.Errorf("Q2's PPL cell %q", got)
	}
	if got := tab.Rows[1][5]; got != "0.000530 ± 0.000027" {
		t.Errorf("Q8's KLD cell %q", got)
	}
	if got := tab.Rows[0][5]; got != "0 ± 0" {
		t.Errorf("the base's KLD cell %q", got)
	}
	if got := tab.Rows[11][5]; got != "7.40e-07 ± 3.7e-08" {
		t.Errorf("Q4_K's KLD cell %q", got)
	}
	var ppl []string
	for _, l := range barPlotLabels(PPLBars) {
		ppl = append(ppl, l)
		if d := strings.Count(strings.TrimLeft(strings.ReplaceAll(l, ".", ""), "0"), "") - 1; d != 4 {
			t.Errorf("perplexity label %q has %d significant digits", l, d)
		}
	}
	if len(ppl) != 12 {
		t.Errorf("perplexity labels %q", ppl)
	}
}

// barPlotLabels are the value labels of chart c of demoReport.
func barPlotLabels(c Chart) []string {
	return barPlot(demoReport(), metrics[c], PrintStyle).labels.labels
}
