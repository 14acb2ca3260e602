package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// Hooks for the external tests (package ui_test), which need the fake
// engine in ui/fake and so cannot live in package ui.

type ChatScreen = chatScreen

// NewChatScreenWithPost builds a chat screen whose background updates go to
// post instead of fyne.Do, so a test can run them on its own goroutine.
func NewChatScreenWithPost(e Engine, post func(func())) *ChatScreen {
	return newChatScreen(e, post)
}

func (c *chatScreen) Content() fyne.CanvasObject { return c.content }
func (c *chatScreen) Composer() *composer        { return c.input }
func (c *chatScreen) SendStop() *widget.Button   { return c.sendStop }
func (c *chatScreen) Busy() bool                 { return c.busy() }
func (c *chatScreen) SpeedText() string          { return c.speed.Text }

// Views returns the message views, oldest first.
func (c *chatScreen) Views() []*messageView {
	var out []*messageView
	for _, o := range c.messages.Objects {
		out = append(out, o.(*messageView))
	}
	return out
}

func (m *messageView) Body() *widget.RichText { return m.body }
func (m *messageView) Footer() string {
	if !m.footer.Visible() {
		return ""
	}
	return m.footer.Text
}
func (m *messageView) ErrorText() string {
	if !m.errMsg.Visible() {
		return ""
	}
	return m.errMsg.Text
}
