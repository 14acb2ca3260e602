package ui_test

import (
	"testing"

	"fyne.io/fyne/v2"
)

// TestSmallWindowFits: at 900×600, with every optional screen, the
// window's content asks for no more than the window, and each pane of
// the chat gets at least its minimum width, so nothing is cut at the
// window's edge (the sampling panel was 458 px wide, its value boxes cut
// off, because the stage order's text sat on one unscrolled line).
func TestSmallWindowFits(t *testing.T) {
	h, _ := fullHarness(t, nil, false)
	small := fyne.NewSize(900, 600)
	if m := h.a.Content().MinSize(); m.Width > small.Width || m.Height > small.Height {
		t.Errorf("the window's content needs %v, more than %v", m, small)
	}
	h.w.Resize(small)
	h.pumpIdle()
	for _, tab := range []int{0, 1, 2} {
		h.a.SideTabs().SelectIndex(tab)
		h.pumpIdle()
		for name, p := range h.a.Panes() {
			if !p.Visible() || p.Size().IsZero() {
				continue
			}
			if s, m := p.Size(), p.MinSize(); s.Width+0.5 < m.Width {
				t.Errorf("%s tab %d: the %s pane is %.0f px wide, less than its minimum %.0f", h.a.SideTabs().Items[tab].Text, tab, name, s.Width, m.Width)
			}
		}
	}
}
