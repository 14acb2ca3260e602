package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// chatScreen is one conversation with one engine. Every field is owned by
// the UI goroutine; the generating goroutine reaches them only via post.
type chatScreen struct {
	engine Engine
	// post runs f on the UI goroutine: fyne.Do in the app. It is the only
	// way background work touches this screen.
	post func(f func())

	history []Message          // finished turns, sent with the next request
	cancel  context.CancelFunc // non-nil while a reply is being generated

	messages *fyne.Container // messageViews, oldest first
	scroll   *container.Scroll
	empty    fyne.CanvasObject // shown until the first message
	input    *composer
	sendStop *widget.Button
	model    *widget.Label
	speed    *widget.Label
	content  fyne.CanvasObject
}

// NewChatScreen returns the chat screen for e. Background updates reach it
// through fyne.Do.
func NewChatScreen(e Engine) fyne.CanvasObject {
	return newChatScreen(e, fyne.Do).content
}

func newChatScreen(e Engine, post func(func())) *chatScreen {
	c := &chatScreen{engine: e, post: post}
	c.messages = container.NewVBox()
	c.scroll = container.NewVScroll(container.NewPadded(c.messages))
	c.empty = container.NewCenter(widget.NewLabelWithStyle(
		"Start a conversation with "+e.ModelName(), fyne.TextAlignCenter, fyne.TextStyle{Italic: true}))
	c.input = newComposer(c.send)
	c.input.SetPlaceHolder("Message " + e.ModelName() + " (Enter to send, Shift+Enter for a new line)")
	c.sendStop = widget.NewButton("", c.sendOrStop)
	c.model = widget.NewLabelWithStyle(e.ModelName(), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.speed = widget.NewLabel("")
	c.setBusy(false)
	c.content = c.layout()
	return c
}

// layout: conversation above, composer with its button below, then the
// status line (model on the left, last reply's speed on the right).
func (c *chatScreen) layout() fyne.CanvasObject {
	composerRow := container.NewBorder(nil, nil, nil,
		container.NewVBox(layout.NewSpacer(), c.sendStop), c.input)
	status := container.NewBorder(nil, nil,
		container.NewHBox(widget.NewIcon(theme.ComputerIcon()), c.model), c.speed)
	bottom := container.NewVBox(container.NewPadded(composerRow), widget.NewSeparator(), status)
	return container.NewBorder(nil, bottom, nil, nil, container.NewStack(c.scroll, c.empty))
}

func (c *chatScreen) busy() bool { return c.cancel != nil }

func (c *chatScreen) setBusy(busy bool) {
	if busy {
		c.sendStop.SetText("Stop")
		c.sendStop.SetIcon(theme.MediaStopIcon())
		c.sendStop.Importance = widget.DangerImportance
	} else {
		c.sendStop.SetText("Send")
		c.sendStop.SetIcon(theme.MailSendIcon())
		c.sendStop.Importance = widget.HighImportance
	}
	c.sendStop.Refresh()
}

func (c *chatScreen) sendOrStop() {
	if c.busy() {
		c.stop()
		return
	}
	c.send()
}

// stop cancels the reply being generated, if any; the engine returns soon
// after and finish shows what was produced.
func (c *chatScreen) stop() {
	if c.cancel != nil {
		c.cancel()
	}
}

// addMessage appends a view and scrolls to it.
func (c *chatScreen) addMessage(role, author, markdown string) *messageView {
	m := newMessageView(role, author, markdown)
	c.empty.Hide()
	c.messages.Add(m)
	c.scroll.ScrollToBottom()
	return m
}

// atBottom reports whether the newest text is in view, within one line, so
// that streaming follows the reply only if the user has not scrolled up.
func (c *chatScreen) atBottom() bool {
	slack := c.input.Theme().Size(theme.SizeNameText) * 2
	return c.scroll.Offset.Y+c.scroll.Size().Height+slack >= c.scroll.Content.MinSize().Height
}

// focusComposer puts the keyboard back in the composer, when on a canvas.
func (c *chatScreen) focusComposer() {
	if cv := fyne.CurrentApp().Driver().CanvasForObject(c.input); cv != nil {
		cv.Focus(c.input)
	}
}
