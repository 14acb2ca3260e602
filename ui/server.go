package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// LocalServer serves the loaded model over an OpenAI-compatible HTTP API
// (flowchat serve), sharing it with the chat window: the engine batches
// the server's requests with the chat's replies.
type LocalServer interface {
	// Start serves e on 127.0.0.1 and returns the API's base URL (…/v1).
	Start(e Engine) (url string, err error)
	// Stop stops serving; requests in flight end at their next token.
	Stop() error
}

// serverView is the model panel's "Local server" switch: the URL and a
// curl example to copy while it runs.
type serverView struct {
	a       *App
	srv     LocalServer
	toggle  *widget.Check
	url     *widget.Label
	example *widget.Entry
	copy    *widget.Button
	running bool
	content fyne.CanvasObject
}

func newServerView(a *App, srv LocalServer) *serverView {
	v := &serverView{a: a, srv: srv, url: widget.NewLabel(""), example: widget.NewMultiLineEntry()}
	v.toggle = widget.NewCheck("Local server (OpenAI-compatible API)", v.switched)
	v.url.Wrapping = fyne.TextWrapWord
	v.example.Wrapping = fyne.TextWrapBreak
	v.example.SetMinRowsVisible(3)
	v.copy = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
		if v.a.win != nil {
			v.a.win.Clipboard().SetContent(v.example.Text)
		}
	})
	v.content = container.NewVBox(widget.NewSeparator(), v.toggle, v.url, container.NewBorder(nil, nil, nil, v.copy, v.example))
	v.refresh()
	return v
}

// switched starts or stops the server as the user ticks the box.
func (v *serverView) switched(on bool) {
	if on == v.running {
		return
	}
	if !on {
		v.stop()
		return
	}
	if v.a.engine == nil {
		v.refresh()
		return
	}
	url, err := v.srv.Start(v.a.engine)
	if err != nil {
		v.a.showError("Local server", err)
		v.refresh()
		return
	}
	v.running = true
	v.url.SetText("Serving " + v.a.engine.Info().Name + " at " + url)
	v.example.SetText(fmt.Sprintf("curl %s/chat/completions -H 'Content-Type: application/json' -d '{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":64}'", url))
	v.refresh()
}

// stop stops a running server (the model is about to change or the app
// closes).
func (v *serverView) stop() {
	if !v.running {
		return
	}
	v.running = false
	if err := v.srv.Stop(); err != nil {
		v.a.status.SetMessage("the local server did not stop cleanly: "+err.Error(), true)
	}
	v.refresh()
}

// refresh shows the switch's state: usable with a model loaded, the URL
// and example only while serving.
func (v *serverView) refresh() {
	v.toggle.OnChanged = nil
	v.toggle.SetChecked(v.running)
	v.toggle.OnChanged = v.switched
	if v.a.engine == nil && !v.running {
		v.toggle.Disable()
	} else {
		v.toggle.Enable()
	}
	if v.running {
		v.url.Show()
		v.example.Show()
		v.copy.Show()
		return
	}
	v.url.SetText("")
	v.url.Hide()
	v.example.Hide()
	v.copy.Hide()
}
