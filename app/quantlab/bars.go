package quantlab

import (
	"cmp"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"flowchat/engine/eval"
)

// metric is what one bar chart shows of each level.
type metric struct {
	title, yLabel string
	value         func(r *eval.LevelResult) (v, stderr float64)
	format        func(v float64) string
	// ref, when set, is drawn as a dashed line labelled "base".
	ref func(rep *eval.LabReport) float64
	// linear keeps the axis linear whatever the spread: a percentage
	// (top-1 agreement) on a log axis reads as a ratio it is not.
	linear bool
}

var metrics = map[Chart]metric{
	PPLBars: {"Perplexity (lower is better)", "perplexity",
		func(r *eval.LevelResult) (float64, float64) { return r.PPL, r.PPLStdErr }, PPL,
		func(rep *eval.LabReport) float64 { return rep.BasePPL }, false},
	KLDBars: {"KL divergence from the base (lower is better)", "nats per token",
		func(r *eval.LevelResult) (float64, float64) { return r.KLD, r.KLDStdErr }, KLD, nil, false},
	Top1Bars: {"Top-1 agreement with the base (higher is better)", "% of positions",
		func(r *eval.LevelResult) (float64, float64) { return 100 * r.Top1, 0 },
		func(v float64) string { return fmt.Sprintf("%.1f%%", v) }, nil, true},
	TPSBars: {"Generation speed (higher is better)", "tokens per second",
		func(r *eval.LevelResult) (float64, float64) { return r.GenTPS, 0 },
		func(v float64) string { return fmt.Sprintf("%.0f", v) }, nil, false},
}

// barPlot draws one bar per level with its standard error and value.
func barPlot(rep *eval.LabReport, m metric, st Style) chart {
	b := &bars{ink: st.Foreground}
	var names []string
	for i := range rep.Levels {
		v, e := m.value(&rep.Levels[i])
		if !finite(v) {
			v = 0
		}
		if !finite(e) {
			e = 0
		}
		b.vals, b.errs = append(b.vals, v), append(b.errs, e)
		b.colors = append(b.colors, familyOf(rep.Levels[i].Level).color)
		names = append(names, LevelLabel(rep.Levels[i].Level))
	}
	b.log = !m.linear && useLog(b.vals)
	yLabel := m.yLabel
	if b.log {
		yLabel += ", log scale"
	}
	ch := chart{p: newPlot(m.title, "", yLabel, st)}
	p := ch.p
	p.Add(b)
	if m.ref != nil && finite(m.ref(rep)) && (m.ref(rep) > 0 || !b.log) {
		ch.key.add("base", addRef(p, m.ref(rep), len(names), st.Foreground))
	}
	p.Y.Min, p.Y.Max = b.yRange()
	if b.log {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, decadeTicks{}
	}
	ch.labels = b.labels(m.format, p.Y.Min)
	p.Add(ch.labels)
	nominalX(p, names)
	return ch
}

// addRef draws a dashed horizontal line at y across n bars.
func addRef(p *plot.Plot, y float64, n int, ink color.Color) *plotter.Line {
	l, _ := plotter.NewLine(plotter.XYs{{X: -0.5, Y: y}, {X: float64(n) - 0.5, Y: y}})
	l.LineStyle = draw.LineStyle{Color: ink, Width: vg.Points(0.75), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	p.Add(l)
	return l
}

// nominalX names the bars; many names are slanted so they do not collide.
func nominalX(p *plot.Plot, names []string) {
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	if len(names) > 6 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = text.XRight, text.YCenter
	}
}

// bars is a bar chart whose bars rise from the bottom of the y axis, so
// they work on a log axis too (plot's BarChart starts at 0). A bar of 0
// on a log axis is not drawn; its label says 0.
type bars struct {
	vals, errs []float64
	colors     []color.Color
	ink        color.Color // whiskers; nil = black
	log        bool
}

// Plot implements plot.Plotter.
func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	half := (trX(1) - trX(0)) * 0.3
	whisker := draw.LineStyle{Color: cmp.Or[color.Color](b.ink, color.Black), Width: vg.Points(1)}
	for i, v := range b.vals {
		if b.log && v <= 0 {
			continue
		}
		x, y0, y1 := trX(float64(i)), trY(max(p.Y.Min, 0)), trY(v)
		if b.log {
			y0 = trY(p.Y.Min)
		}
		rect := []vg.Point{{X: x - half, Y: y0}, {X: x + half, Y: y0}, {X: x + half, Y: y1}, {X: x - half, Y: y1}}
		c.FillPolygon(b.colors[i], c.ClipPolygonXY(rect))
		if e := b.errs[i]; e > 0 {
			lo, hi := trY(b.clampLow(v-e, p.Y.Min)), trY(v+e)
			c.StrokeLines(whisker, c.ClipLinesXY([]vg.Point{{X: x, Y: lo}, {X: x, Y: hi}},
				[]vg.Point{{X: x - half/3, Y: hi}, {X: x + half/3, Y: hi}})...)
		}
	}
}

func (b *bars) clampLow(v, axisMin float64) float64 {
	if b.log && v < axisMin {
		return axisMin
	}
	return v
}

// DataRange implements plot.DataRanger.
func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = b.yRange()
	return -0.5, float64(len(b.vals)) - 0.5, ymin, ymax
}

// yRange spans the bars and their error bars: from 0 (the decade below
// the smallest positive bar on a log axis) to the highest whisker.
func (b *bars) yRange() (float64, float64) {
	lo, hi := math.Inf(1), 0.0
	for i, v := range b.vals {
		hi = max(hi, v+b.errs[i])
		if v > 0 {
			lo = min(lo, v)
		}
		if !b.log {
			lo = min(lo, 0, v-b.errs[i])
		}
	}
	if b.log {
		return decades(lo, hi)
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// labels print each bar's value above its whisker ("0" at the axis for a
// bar a log axis cannot show).
func (b *bars) labels(format func(float64) string, axisMin float64) *pointLabels {
	l := &pointLabels{offset: vg.Point{Y: vg.Points(2)}, align: text.XCenter, yAlign: text.YBottom}
	for i, v := range b.vals {
		y := v + b.errs[i]
		if b.log && v <= 0 {
			y = axisMin
		}
		l.xys = append(l.xys, plotter.XY{X: float64(i), Y: y})
		l.labels = append(l.labels, format(v))
	}
	return l
}
