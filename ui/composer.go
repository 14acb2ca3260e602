package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// composer is the message entry: a multi-line Entry where Enter sends and
// Shift+Enter starts a new line, the reverse of Entry's own default.
type composer struct {
	widget.Entry
	onSend func()
	onStop func() // Escape: stop the reply being generated
	shift  bool   // a Shift key is held (desktop KeyDown/KeyUp)
}

func newComposer(onSend func()) *composer {
	c := &composer{onSend: onSend}
	c.ExtendBaseWidget(c)
	c.MultiLine = true
	c.Wrapping = fyne.TextWrapWord
	c.SetMinRowsVisible(3)
	return c
}

// TypedKey sends on Enter unless Shift is held. Entry.OnSubmitted stays nil,
// so Entry itself inserts the newline for Shift+Enter.
func (c *composer) TypedKey(k *fyne.KeyEvent) {
	if (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && !c.shiftHeld() {
		c.onSend()
		return
	}
	if k.Name == fyne.KeyEscape && c.onStop != nil {
		c.onStop()
	}
	c.Entry.TypedKey(k)
}

func (c *composer) KeyDown(k *fyne.KeyEvent) {
	c.Entry.KeyDown(k)
	if isShift(k.Name) {
		c.shift = true
	}
}

func (c *composer) KeyUp(k *fyne.KeyEvent) {
	c.Entry.KeyUp(k)
	if isShift(k.Name) {
		c.shift = false
	}
}

// FocusLost forgets Shift: its KeyUp goes to whichever widget has focus.
func (c *composer) FocusLost() {
	c.shift = false
	c.Entry.FocusLost()
}

// shiftHeld also asks a desktop driver, which knows about a Shift pressed
// before the composer had focus.
func (c *composer) shiftHeld() bool {
	if c.shift {
		return true
	}
	d, ok := fyne.CurrentApp().Driver().(desktop.Driver)
	return ok && d.CurrentKeyModifiers()&fyne.KeyModifierShift != 0
}

func isShift(k fyne.KeyName) bool {
	return k == desktop.KeyShiftLeft || k == desktop.KeyShiftRight
}
