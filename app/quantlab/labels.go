package quantlab

import (
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pointLabels draws a label beside each point. With avoid set, a label
// that would overlap one already drawn moves up until it does not (levels
// of equal size and similar quality, Q4_B64 and Q4_0, otherwise print on
// top of each other). It has no data range of its own: points outside the
// axes are skipped.
type pointLabels struct {
	xys    plotter.XYs
	labels []string
	offset vg.Point
	avoid  bool
	// backdrop, when set, is painted (three quarters opaque) behind each
	// label, so that lines and grid under it do not cross the text: the
	// chart's background colour.
	backdrop color.Color
	align    text.XAlignment
	yAlign   text.YAlignment // the zero value is YBottom
	// ceiling is the highest a label moved to avoid another may reach
	// (the top of the room the plot left under the title and key); 0: no
	// limit. drawn is where each label went, in drawing order.
	ceiling vg.Length
	drawn   []vg.Rectangle
}

func (l *pointLabels) style(p *plot.Plot) text.Style {
	s := p.X.Tick.Label // the plot's font and text handler
	s.XAlign, s.YAlign = l.align, l.yAlign
	s.Rotation = 0
	return s
}

// Plot implements plot.Plotter.
func (l *pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := l.style(p)
	var placed []vg.Rectangle
	defer func() { l.drawn = placed }()
	for _, i := range l.byY() {
		pt := vg.Point{X: trX(l.xys[i].X), Y: trY(l.xys[i].Y)}
		if !c.Contains(pt) {
			continue
		}
		at := pt
		pt = pt.Add(l.offset)
		r := sty.Rectangle(l.labels[i]).Add(pt)
		if l.align == text.XLeft && r.Max.X > c.Max.X {
			// past the right edge (the largest level): on the point's left
			w := r.Max.X - r.Min.X
			pt.X = at.X - l.offset.X - w
			r = r.Add(vg.Point{X: pt.X - r.Min.X})
		}
		if l.avoid {
			dy := clearance(r, placed, 1)
			if l.ceiling != 0 && r.Max.Y+dy > l.ceiling {
				// no room above (the key's band, the title): below instead
				dy = clearance(r, placed, -1)
			}
			pt.Y, r = pt.Y+dy, r.Add(vg.Point{Y: dy})
		}
		placed = append(placed, r)
		if l.backdrop != nil {
			c.FillPolygon(translucent(l.backdrop), c.ClipPolygonXY([]vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}))
		}
		c.FillText(sty, pt, l.labels[i])
	}
}

// byY orders the labels bottom to top, so moving one up never moves it
// into a label still to come below it.
func (l *pointLabels) byY() []int {
	idx := make([]int, len(l.xys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return l.xys[idx[a]].Y < l.xys[idx[b]].Y })
	return idx
}

func translucent(c color.Color) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = 0xc0
	return n
}

// clearance is how far r must move, up (dir 1) or down (dir -1), to
// overlap none of placed.
func clearance(r vg.Rectangle, placed []vg.Rectangle, dir int) vg.Length {
	var dy vg.Length
	for moved := true; moved; {
		moved = false
		for _, q := range placed {
			s := r.Add(vg.Point{Y: dy})
			if !overlap(s, q) {
				continue
			}
			if dir > 0 {
				dy += q.Max.Y - s.Min.Y + 1
			} else {
				dy -= s.Max.Y - q.Min.Y + 1
			}
			moved = true
		}
	}
	return dy
}

func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// GlyphBoxes implements plot.GlyphBoxer, so the plot leaves room for the
// labels at their unmoved places.
func (l *pointLabels) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	sty := l.style(p)
	var bs []plot.GlyphBox
	for i, xy := range l.xys {
		if p.Y.Scale == (plot.LogScale{}) && xy.Y <= 0 {
			continue
		}
		bs = append(bs, plot.GlyphBox{X: p.X.Norm(xy.X), Y: p.Y.Norm(xy.Y), Rectangle: sty.Rectangle(l.labels[i]).Add(l.offset)})
	}
	return bs
}
