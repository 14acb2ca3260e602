package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// statusBar is the window's bottom line: loaded model, device, memory in
// use, generation speed, and a message with a spinner for long work.
type statusBar struct {
	model, device, memory, speed, message *widget.Label
	busy                                  *widget.ProgressBarInfinite
	prefill                               *widget.ProgressBar // the prompt being evaluated
	content                               fyne.CanvasObject
}

func newStatusBar() *statusBar {
	s := &statusBar{
		model:  widget.NewLabelWithStyle("no model", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		device: widget.NewLabel(""), memory: widget.NewLabel(""), speed: widget.NewLabel(""),
		message: statusLabel(), busy: widget.NewProgressBarInfinite(), prefill: widget.NewProgressBar(),
	}
	s.busy.Hide()
	s.prefill.Hide()
	sep := func() fyne.CanvasObject { return widget.NewSeparator() }
	left := container.NewHBox(widget.NewIcon(theme.ComputerIcon()), s.model, sep(), s.device, sep(), s.memory, sep(), s.speed)
	right := container.NewGridWrap(fyne.NewSize(140, 20), container.NewStack(s.busy, s.prefill))
	s.content = container.NewVBox(widget.NewSeparator(), container.NewBorder(nil, nil, left, right, s.message))
	return s
}

// SetModel shows the loaded model and its device.
func (s *statusBar) SetModel(name, device string) {
	s.model.SetText(name)
	s.device.SetText(device)
}

// SetMemory shows the process's memory in use.
func (s *statusBar) SetMemory(n uint64) {
	if n == 0 {
		s.memory.SetText("")
		return
	}
	s.memory.SetText(humanBytes(n) + " in use")
}

// SetSpeed shows the last reply's speed (or how it ended).
func (s *statusBar) SetSpeed(t string) { s.speed.SetText(t) }

// SetBusy shows what long work is under way with a spinner; "" hides it.
func (s *statusBar) SetBusy(what string) {
	s.prefill.Hide()
	if what == "" {
		s.busy.Stop()
		s.busy.Hide()
		s.message.SetText("")
		return
	}
	s.message.Importance = widget.MediumImportance
	s.message.SetText(what)
	s.busy.Show()
	s.busy.Start()
}

// SetPrefill shows how far the prompt's evaluation is, in place of the
// spinner.
func (s *statusBar) SetPrefill(done, total int) {
	if total <= 0 {
		return
	}
	s.busy.Stop()
	s.busy.Hide()
	s.prefill.SetValue(float64(done) / float64(total))
	s.prefill.Show()
	s.message.Importance = widget.MediumImportance
	s.message.SetText(fmt.Sprintf("processing the prompt… %s / %s tokens", groupDigits(done), groupDigits(total)))
}

// SetMessage shows a note; errors in the danger colour.
func (s *statusBar) SetMessage(text string, isErr bool) {
	s.message.Importance = widget.MediumImportance
	if isErr {
		s.message.Importance = widget.DangerImportance
		text = "⚠ " + text
	}
	// one line: a multi-line error (a wrapped Go error, a server's
	// answer) would be drawn over the line's other fields
	s.message.SetText(strings.Join(strings.Fields(text), " "))
}

// humanBytes writes n in binary units: 1.5 GiB.
func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// humanCount writes a parameter count: 1.10B, 15.2M.
func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
