package ui_test

import (
	"testing"

	"fyne.io/fyne/v2"

	"flowchat/ui"
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

// TestModelPanelSmallWindow: at 900×600 with the local server switch under
// the model's state, the model list keeps at least three rows, and the
// load dialog fits the window (its form scrolls).
func TestModelPanelSmallWindow(t *testing.T) {
	h, _ := fullHarness(t, nil, false)
	small := fyne.NewSize(900, 600)
	h.w.Resize(small)
	h.pumpIdle()
	for i, it := range h.a.SideTabs().Items {
		if it.Text == "Model" || it.Text == "Models" {
			h.a.SideTabs().SelectIndex(i)
		}
	}
	h.pumpIdle()
	list := h.a.ModelList()
	row := list.CreateItem().MinSize().Height
	if got := list.Size().Height; got < 3*row {
		t.Errorf("the model list is %.0f px tall, less than three rows (%.0f px each)", got, row)
	}
	for _, win := range []fyne.Size{small, fyne.NewSize(1200, 800), fyne.NewSize(640, 480)} {
		if d := ui.LoadDialogSize(win); d.Width > win.Width || d.Height > win.Height || d.Width < 300 || d.Height < 300 {
			t.Errorf("in a %v window the load dialog is %v", win, d)
		}
	}
}
