package quantlab

import (
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"flowchat/engine/eval"
)

// scatterPlot is size against quality: bits per weight on x, KLD from the
// base on y (log when it spans a decade; levels with KLD 0, the base
// itself, cannot sit on a log axis and are left out), one colour per
// family, a dashed line through the levels no smaller level beats.
func scatterPlot(rep *eval.LabReport, st Style) chart {
	kld := make([]float64, len(rep.Levels))
	for i, l := range rep.Levels {
		kld[i] = l.KLD
	}
	logY := useLog(kld)
	yLabel := "KLD (nats/token)"
	if logY {
		yLabel += ", log scale"
	}
	ch := chart{p: newPlot("Size vs quality (lower left is better)", "bits per weight", yLabel, st)}
	p := ch.p
	var pts plotter.XYs
	var names []string
	for _, fam := range families {
		xys, ns := familyPoints(rep, fam, logY)
		if len(xys) == 0 {
			continue
		}
		s, _ := plotter.NewScatter(xys) // err only for NaN/Inf, excluded
		s.GlyphStyle = draw.GlyphStyle{Color: fam.color, Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
		p.Add(s)
		ch.key.add(fam.name, s)
		pts, names = append(pts, xys...), append(names, ns...)
	}
	if f := frontier(pts); len(f) > 1 {
		l, _ := plotter.NewLine(f)
		l.LineStyle = draw.LineStyle{Color: famFull.color, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(l)
		ch.key.add("best for its size", l)
	}
	ch.labels = &pointLabels{xys: pts, labels: names, offset: vg.Point{X: vg.Points(6)}, avoid: true, backdrop: st.Background, align: text.XLeft, yAlign: text.YCenter}
	p.Add(ch.labels)
	if logY {
		setLogY(p, pts)
	}
	return ch
}

// familyPoints are the levels of one family as (bits/weight, KLD), finite
// and, on a log axis, positive.
func familyPoints(rep *eval.LabReport, fam family, logY bool) (plotter.XYs, []string) {
	var xys plotter.XYs
	var names []string
	for _, l := range rep.Levels {
		if familyOf(l.Level) != fam || !finite(l.BitsPerWeight) || !finite(l.KLD) || logY && l.KLD <= 0 {
			continue
		}
		xys = append(xys, plotter.XY{X: l.BitsPerWeight, Y: l.KLD})
		names = append(names, LevelLabel(l.Level))
	}
	return xys, names
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// frontier is the Pareto front of size against divergence: walking from
// the fewest bits up, the points with a lower KLD than every smaller one.
func frontier(pts plotter.XYs) plotter.XYs {
	s := append(plotter.XYs(nil), pts...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].X < s[j].X || s[i].X == s[j].X && s[i].Y < s[j].Y })
	var f plotter.XYs
	best := math.Inf(1)
	for _, p := range s {
		if p.Y < best {
			f, best = append(f, p), p.Y
		}
	}
	return f
}

// setLogY puts the y axis on a log scale over whole decades of pts' y.
func setLogY(p *plot.Plot, pts plotter.XYs) {
	lo, hi := math.Inf(1), 0.0
	for _, q := range pts {
		lo, hi = min(lo, q.Y), max(hi, q.Y)
	}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, decadeTicks{}
	p.Y.Min, p.Y.Max = decades(lo, hi)
}
