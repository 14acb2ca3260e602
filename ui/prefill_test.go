package ui_test

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"flowchat/ui/fake"
)

// TestPrefillProgressInStatusBar: while the prompt is evaluated the status
// bar shows a determinate bar with the tokens done; the first piece of the
// reply replaces it with the spinner's "generating…".
func TestPrefillProgressInStatusBar(t *testing.T) {
	eng := scripted("Hello there.")
	eng.Gate = make(chan struct{})
	h := newHarness(t, eng)
	test.Type(h.a.Composer(), "Say hello")
	h.press(fyne.KeyReturn)
	n := len(fake.Pieces("Say hello")) + fake.PerMessageTokens
	want := fmt.Sprintf("processing the prompt… %d / %d tokens", n, n) // n < 1000: no digit groups
	h.pumpUntil("the prefill progress", func() bool { return h.a.StatusMessage() == want })
	if bar := h.a.PrefillBar(); !bar.Visible() || bar.Value != 1 {
		t.Errorf("prefill bar visible %v at %v", bar.Visible(), bar.Value)
	}
	eng.Gate <- struct{}{}
	h.pumpUntil("the first piece", func() bool { return strings.HasPrefix(h.a.StatusMessage(), "generating") })
	if h.a.PrefillBar().Visible() {
		t.Error("the prefill bar stayed after the first piece")
	}
	close(eng.Gate)
	h.pumpUntil("the reply", h.idle)
}
