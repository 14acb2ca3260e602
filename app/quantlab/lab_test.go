package quantlab

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"flowchat/engine/eval"
	"flowchat/engine/fixtures"
)

const stories = "models/stories260K/stories260K-F32.gguf"

// counting wraps eval.RunLab and counts its calls.
func counting(n *int) ComputeFunc {
	return func(ctx context.Context, base string, opt eval.LabOptions) (*eval.LabReport, error) {
		*n++
		return eval.RunLab(ctx, base, opt)
	}
}

// TestLabOnStories260K runs the whole Lab on stories260K over the start of
// the bundled text: the paper's ordering holds, the table lists the levels
// in order, the charts decode at their size, and a second run is read from
// the cache without computing.
func TestLabOnStories260K(t *testing.T) {
	model := fixtures.Path(t, stories)
	levels := []string{"Q8", "Q4_B32", "Q3H", "Q3", "Q2"}
	var runs int
	cache := t.TempDir()
	req := Request{Model: model, Levels: levels, MaxChunks: 6, Threads: 1, GenTokens: 16}
	opt := Options{CacheDir: cache, Compute: counting(&runs)}
	res, err := Run(context.Background(), req, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cached || runs != 1 {
		t.Fatalf("first run: cached %v after %d computations", res.Cached, runs)
	}
	checkOrdering(t, res.Report)
	checkTable(t, res.Report, levels)
	checkCharts(t, res.Report)

	again, err := Run(context.Background(), req, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || runs != 1 {
		t.Fatalf("second run: cached %v after %d computations, want a cache hit", again.Cached, runs)
	}
	if !reflect.DeepEqual(again.Report, res.Report) || !again.Created.Equal(res.Created) {
		t.Errorf("cached report differs from the computed one")
	}
	saved, err := List(cache)
	if err != nil || len(saved) != 1 || !reflect.DeepEqual(saved[0].Result.Report, res.Report) {
		t.Errorf("List: %d entries, err %v", len(saved), err)
	}
}

func checkOrdering(t *testing.T, rep *eval.LabReport) {
	t.Helper()
	by := map[string]eval.LevelResult{}
	for _, l := range rep.Levels {
		by[l.Level] = l
		t.Logf("%-6s %5.2f bits/weight  PPL %8.3f  KLD %.5f  top-1 %5.1f%%  %6.0f tok/s", l.Level, l.BitsPerWeight, l.PPL, l.KLD, 100*l.Top1, l.GenTPS)
	}
	for _, pair := range [][2]string{{"Q8", "Q4_B32"}, {"Q4_B32", "Q2"}, {"Q3H", "Q3"}} {
		if a, b := by[pair[0]], by[pair[1]]; !(a.KLD < b.KLD) {
			t.Errorf("KLD %s = %g is not below %s = %g", a.Level, a.KLD, b.Level, b.KLD)
		}
	}
	if rep.Chunks != 6 || rep.Ctx != 128 {
		t.Errorf("report over %d chunks of %d tokens, want 6 of 128", rep.Chunks, rep.Ctx)
	}
}

func checkTable(t *testing.T, rep *eval.LabReport, levels []string) {
	t.Helper()
	tab := NewTable(rep)
	var b bytes.Buffer
	if err := tab.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2+len(levels) || tab.Header[len(tab.Header)-1] != "tok/s" {
		t.Fatalf("table has %d lines (want %d) and header %q", len(lines), 2+len(levels), tab.Header)
	}
	for i, l := range levels {
		if cells := strings.Split(lines[2+i], "|"); strings.TrimSpace(cells[1]) != l {
			t.Errorf("row %d is %q, want level %s", i, lines[2+i], l)
		}
	}
}

func checkCharts(t *testing.T, rep *eval.LabReport) {
	t.Helper()
	const w, h = 640, 400
	paths, err := WriteCharts(t.TempDir(), rep, w, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 5 {
		t.Errorf("wrote %d charts, want 5 (scatter, KLD, PPL, top-1, tok/s)", len(paths))
	}
	for _, p := range paths {
		img := decodePNG(t, p)
		if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
			t.Errorf("%s is %d×%d, want %d×%d", filepath.Base(p), b.Dx(), b.Dy(), w, h)
		}
		if n := colouredPixels(img); n < 500 {
			t.Errorf("%s has only %d coloured pixels: nothing plotted", filepath.Base(p), n)
		}
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// colouredPixels counts pixels of a family colour's hue (not grey): the
// points and bars, as opposed to axes and text.
func colouredPixels(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if max(r, g, bl)-min(r, g, bl) > 0x4000 {
				n++
			}
		}
	}
	return n
}
