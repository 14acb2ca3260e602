package quantlab

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// keyRow is a chart's legend, drawn in a band of its own between the
// title and the data: plot's legend sits inside the data area, where
// the tallest bars' value labels and the scatter's points ran under it.
// Entries are laid out in rows, right-aligned with the data area, as many
// to a row as fit.
type keyRow struct {
	names  []string
	thumbs []plot.Thumbnailer
}

func (k *keyRow) add(name string, t plot.Thumbnailer) {
	k.names, k.thumbs = append(k.names, name), append(k.thumbs, t)
}

// Gaps of the key, in points.
const (
	keyThumb = 16 // a thumbnail's width
	keyInner = 3  // thumbnail to name
	keyOuter = 10 // entry to entry
	keyBelow = 6  // last row to the data area (and its top labels)
)

// entryWidth is entry i's width in sty.
func (k *keyRow) entryWidth(sty text.Style, i int) vg.Length {
	return vg.Points(keyThumb+keyInner) + sty.Width(k.names[i])
}

// rows splits the entries into rows no wider than w.
func (k *keyRow) rows(sty text.Style, w vg.Length) [][]int {
	var rows [][]int
	var used vg.Length
	for i := range k.names {
		ew := k.entryWidth(sty, i)
		if n := len(rows); n > 0 && used+vg.Points(keyOuter)+ew <= w {
			rows[n-1], used = append(rows[n-1], i), used+vg.Points(keyOuter)+ew
			continue
		}
		rows, used = append(rows, []int{i}), ew
	}
	return rows
}

// rowHeight is one row's height in sty.
func rowHeight(sty text.Style) vg.Length { return sty.FontExtents().Height * 1.2 }

// height is the band the key needs in a chart w wide (0 without entries).
func (k *keyRow) height(sty text.Style, w vg.Length) vg.Length {
	if len(k.names) == 0 {
		return 0
	}
	return vg.Length(len(k.rows(sty, w)))*rowHeight(sty) + vg.Points(keyBelow)
}

// draw lays the key out under top, its rows ending at right, and returns
// each entry's rectangle.
func (k *keyRow) draw(c draw.Canvas, sty text.Style, top, right vg.Length) []vg.Rectangle {
	sty.XAlign, sty.YAlign = text.XLeft, text.YCenter
	rh := rowHeight(sty)
	var boxes []vg.Rectangle
	for r, row := range k.rows(sty, right-c.Min.X) {
		w := vg.Length(len(row)-1) * vg.Points(keyOuter)
		for _, i := range row {
			w += k.entryWidth(sty, i)
		}
		x, y := right-w, top-vg.Length(r)*rh-rh/2
		for _, i := range row {
			ew := k.entryWidth(sty, i)
			thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - rh/2}, Max: vg.Point{X: x + vg.Points(keyThumb), Y: y + rh/2}}}
			k.thumbs[i].Thumbnail(&thumb)
			c.FillText(sty, vg.Point{X: x + vg.Points(keyThumb+keyInner), Y: y}, k.names[i])
			boxes = append(boxes, vg.Rectangle{Min: vg.Point{X: x, Y: y - rh/2}, Max: vg.Point{X: x + ew, Y: y + rh/2}})
			x += ew + vg.Points(keyOuter)
		}
	}
	return boxes
}
