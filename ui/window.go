package ui

import "fyne.io/fyne/v2"

// NewMainWindow returns flowchat's main window, chatting with e. Closing
// the window stops a reply in progress.
func NewMainWindow(a fyne.App, e Engine) fyne.Window {
	w := a.NewWindow("flowchat — " + e.ModelName())
	c := newChatScreen(e, fyne.Do)
	w.SetContent(c.content)
	w.SetOnClosed(c.stop)
	w.Resize(fyne.NewSize(760, 680))
	w.Canvas().Focus(c.input)
	return w
}
