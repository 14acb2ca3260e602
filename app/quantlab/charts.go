package quantlab

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"flowchat/engine/eval"
	"flowchat/engine/quant"
)

// Chart names one of the Lab's charts; it is also the PNG's file stem.
type Chart string

const (
	SizeQuality Chart = "size-quality" // bits/weight vs KLD, points labelled
	PPLBars     Chart = "ppl"          // perplexity per level, ± standard error
	KLDBars     Chart = "kld"          // KL divergence from the base per level
	Top1Bars    Chart = "top1"         // top-1 agreement with the base, %
	TPSBars     Chart = "tps"          // generation tokens/s (when timed)
)

// ChartDPI is the resolution charts are drawn at: text sizes are in
// points, so a 10-point label is 13 pixels high.
const ChartDPI = 96

// ErrEmptyReport is returned when a report has no levels to draw.
var ErrEmptyReport = errors.New("quantlab: the report has no levels")

// Charts lists the charts rep has data for, in the order to show them.
func Charts(rep *eval.LabReport) []Chart {
	cs := []Chart{SizeQuality, KLDBars, PPLBars, Top1Bars}
	if hasTPS(rep) {
		cs = append(cs, TPSBars)
	}
	return cs
}

// Style is a chart's colours: the GUI passes its theme's, so that charts
// are not white panels on a dark window.
type Style struct {
	Background, Foreground, Grid color.Color
}

// PrintStyle is black on white, for the PNG files.
var PrintStyle = Style{Background: color.White, Foreground: color.Black, Grid: color.Gray{Y: 0xc0}}

func init() {
	// Liberation Sans, not plot's default serif: the charts sit in a
	// sans-serif UI
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

// Render draws chart c of rep as a w×h-pixel RGBA image, in PrintStyle.
func Render(rep *eval.LabReport, c Chart, w, h int) (image.Image, error) {
	return RenderStyled(rep, c, w, h, PrintStyle)
}

// RenderStyled draws chart c of rep in the colours of s.
func RenderStyled(rep *eval.LabReport, c Chart, w, h int, s Style) (image.Image, error) {
	img, _, err := render(rep, c, w, h, s)
	return img, err
}

// chart is a plot with its key and value labels.
type chart struct {
	p      *plot.Plot
	key    keyRow
	labels *pointLabels
}

// layout is where a drawn chart put its parts, in points from the image's
// bottom-left corner (the tests check that none runs into another).
type layout struct {
	bounds, data, title vg.Rectangle // the image, the data area, the title
	key, labels         []vg.Rectangle
}

func render(rep *eval.LabReport, c Chart, w, h int, s Style) (image.Image, layout, error) {
	if len(rep.Levels) == 0 {
		return nil, layout{}, ErrEmptyReport
	}
	if w < 64 || h < 64 {
		return nil, layout{}, fmt.Errorf("quantlab: chart size %d×%d is too small", w, h)
	}
	var ch chart
	if c == SizeQuality {
		ch = scatterPlot(rep, s)
	} else {
		m, ok := metrics[c]
		if !ok {
			return nil, layout{}, fmt.Errorf("quantlab: unknown chart %q", c)
		}
		ch = barPlot(rep, m, s)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	cv := vgimg.NewWith(vgimg.UseImage(img), vgimg.UseDPI(ChartDPI))
	full := draw.New(cv)
	full.SetColor(s.Background)
	full.Fill(full.Rectangle.Path())
	// a margin all round: plot fits the outermost labels exactly to the
	// canvas, so they touched the image's edge
	m := vg.Points(chartMargin)
	lay := ch.draw(draw.Crop(full, m, -m, m, -m))
	lay.bounds = full.Rectangle
	return cv.Image(), lay, nil
}

// chartMargin is the empty border around a chart, in points.
const chartMargin = 5

// draw draws ch on dc with its key in a band under the title, and
// returns where its parts went.
func (ch *chart) draw(dc draw.Canvas) layout {
	p := ch.p
	title := p.Title.TextStyle.Rectangle(p.Title.Text).Size()
	sty := p.Legend.TextStyle // the plot's font, in the style's foreground
	band := ch.key.height(sty, dc.Size().X)
	p.Title.Padding += band
	if ch.labels != nil {
		ch.labels.ceiling = dc.Max.Y - title.Y - p.Title.Padding
	}
	// The y axis's name is drawn here, in a strip of its own: plot makes
	// room for it around the data's arithmetic middle, which on a log
	// axis is near the top, and so lost a quarter of the chart's height.
	yl := p.Y.Label
	p.Y.Label.Text = ""
	inner := dc
	if yl.Text != "" {
		inner = draw.Crop(dc, yl.TextStyle.Height(yl.Text)+yl.Padding, 0, 0, 0)
	}
	ch.headroom(inner)
	p.Draw(inner)
	lay := layout{bounds: dc.Rectangle, data: p.DataCanvas(inner).Rectangle, title: vg.Rectangle{
		Min: vg.Point{X: dc.Center().X - title.X/2, Y: dc.Max.Y - title.Y}, Max: vg.Point{X: dc.Center().X + title.X/2, Y: dc.Max.Y}}}
	if yl.Text != "" {
		ys := yl.TextStyle
		ys.Rotation += math.Pi / 2
		dc.FillText(ys, vg.Point{X: dc.Min.X + yl.TextStyle.Height(yl.Text) - yl.TextStyle.FontExtents().Descent, Y: (lay.data.Min.Y + lay.data.Max.Y) / 2}, yl.Text)
	}
	p.Y.Label.Text = yl.Text
	lay.key = ch.key.draw(dc, sty, dc.Max.Y-title.Y-vg.Points(4), lay.data.Max.X)
	if ch.labels != nil {
		lay.labels = ch.labels.drawn
	}
	return lay
}

// WriteCharts writes every chart of rep as DIR/<chart>.png (w×h pixels),
// each atomically, and returns the paths written.
func WriteCharts(dir string, rep *eval.LabReport, w, h int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("quantlab: %w", err)
	}
	var paths []string
	for _, c := range Charts(rep) {
		img, err := Render(rep, c, w, h)
		if err != nil {
			return paths, err
		}
		path := filepath.Join(dir, string(c)+".png")
		if err := writePNG(path, img); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writePNG(path string, img image.Image) error {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return fmt.Errorf("quantlab: %s: %w", path, err)
	}
	if err := writeFileAtomic(path, b.Bytes()); err != nil {
		return fmt.Errorf("quantlab: %w", err)
	}
	return nil
}

// LevelLabel is a level's name on charts: a GGUF file's base name without
// the extension, a type as given.
func LevelLabel(level string) string {
	if isFileLevel(level) {
		return strings.TrimSuffix(filepath.Base(level), filepath.Ext(level))
	}
	return level
}

// family groups levels by where their format comes from; each has a colour.
type family struct {
	name  string
	color color.Color
}

var (
	famFull      = family{"full precision", color.RGBA{0x70, 0x70, 0x70, 0xff}}
	famInferflow = family{"Inferflow", color.RGBA{0x1f, 0x77, 0xb4, 0xff}}
	famGGML      = family{"GGML", color.RGBA{0xff, 0x7f, 0x0e, 0xff}}
	famFile      = family{"file", color.RGBA{0x2c, 0xa0, 0x2c, 0xff}}
	families     = []family{famFull, famInferflow, famGGML, famFile}
)

func familyOf(level string) family {
	switch {
	case isFileLevel(level):
		return famFile
	case strings.EqualFold(level, "F32") || strings.EqualFold(level, "F16") || strings.EqualFold(level, "BF16"):
		return famFull
	}
	if _, err := quant.Parse(level); err == nil {
		return famInferflow
	}
	return famGGML
}

// useLog reports whether values are better read on a log axis: all
// positive ones spanning at least a decade, none negative.
func useLog(vs []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vs {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
		if v > 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return hi > 0 && hi/lo >= 10
}

// decades widens [lo, hi] (both > 0) to whole powers of ten.
func decades(lo, hi float64) (float64, float64) {
	return math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
}

// applyStyle colours p's background, title, axes and legend.
func applyStyle(p *plot.Plot, s Style) {
	p.BackgroundColor = s.Background
	p.Title.TextStyle.Color = s.Foreground
	p.Legend.TextStyle.Color = s.Foreground
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Color = s.Foreground
		a.Tick.Label.Color = s.Foreground
		a.LineStyle.Color = s.Foreground
		a.Tick.LineStyle.Color = s.Foreground
	}
}

func newPlot(title, xLabel, yLabel string, st Style) *plot.Plot {
	p := plot.New()
	applyStyle(p, st)
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Title.Padding = vg.Points(8)
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = st.Grid, st.Grid
	p.Add(g)
	return p
}

// decadeTicks marks a log axis at every power of ten (labelled) and at
// 2…9 times each (unlabelled). plot.LogTicks truncates log10 toward zero,
// so it drops the lowest decade of an axis below 1.
type decadeTicks struct{}

// Ticks implements plot.Ticker.
func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	const eps = 1e-9
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo) + eps); e <= math.Ceil(math.Log10(hi)-eps); e++ {
		d := math.Pow(10, e)
		for k := 1.0; k <= 9; k++ {
			v := k * d
			if v < lo*(1-eps) || v > hi*(1+eps) {
				continue
			}
			t := plot.Tick{Value: v}
			if k == 1 {
				t.Label = strconv.FormatFloat(d, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// headroom raises the y axis's top until every value label fits under it
// with a gap: the labels of the tallest bars (100% top-1 agreement, Q2's
// perplexity) sat above the data, in the margin under the title.
func (ch *chart) headroom(c draw.Canvas) {
	l, p := ch.labels, ch.p
	if l == nil {
		return
	}
	sty := l.style(p)
	logY := p.Y.Scale == (plot.LogScale{})
	f, inv := func(v float64) float64 { return v }, func(v float64) float64 { return v }
	if logY {
		f, inv = math.Log, math.Exp
	}
	for range 2 { // the data area's height moves a little with the axis
		h := float64(p.DataCanvas(c).Size().Y)
		lo, hi := f(p.Y.Min), f(p.Y.Max)
		top := hi
		for i, xy := range l.xys {
			a := float64(sty.Rectangle(l.labels[i]).Add(l.offset).Max.Y + vg.Points(3))
			if logY && xy.Y <= 0 || a >= h || xy.Y <= p.Y.Min {
				continue
			}
			top = max(top, lo+(f(xy.Y)-lo)*h/(h-a))
		}
		if top == hi {
			return
		}
		p.Y.Max = inv(top)
	}
}
