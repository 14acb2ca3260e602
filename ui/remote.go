package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/store"
)

// remotePanel is the Remote tab: saved endpoints (name, base URL, API
// key, dialect), the chosen endpoint's models, and "Use" to answer the
// conversation with one of them.
type remotePanel struct {
	a         *App
	r         Remotes
	endpoints *widget.Select
	name, url *widget.Entry
	key       *widget.Entry // typed only; never filled from the store
	dialect   *widget.Select
	save      *widget.Button
	models    *widget.Select
	use       *widget.Button
	state     *widget.Label
	current   store.Endpoint // the endpoint the form shows; ID "" = new
	content   fyne.CanvasObject
}

// dialectAuto labels the dialect chooser's "detect" entry.
const dialectAuto = "detect"

func newRemotePanel(a *App, r Remotes) *remotePanel {
	p := &remotePanel{a: a, r: r, name: widget.NewEntry(), url: widget.NewEntry(), key: widget.NewPasswordEntry(),
		state: helpLabel("Chat with a model on another machine: vLLM, llama.cpp's server, Ollama, flowchat serve or any OpenAI-compatible endpoint.")}
	p.name.SetPlaceHolder("Name, e.g. GPU box")
	p.url.SetPlaceHolder("Base URL, e.g. http://gpu-box:8000/v1")
	p.key.SetPlaceHolder("API key (optional; kept in a file only you can read)")
	var dialects []string
	for _, d := range r.Dialects() {
		dialects = append(dialects, cmpOr(d, dialectAuto))
	}
	p.dialect = widget.NewSelect(dialects, nil)
	p.dialect.SetSelected(dialectAuto)
	p.endpoints = widget.NewSelect(nil, p.endpointChosen)
	p.endpoints.PlaceHolder = "(new endpoint)"
	p.save = widget.NewButton("Save endpoint", p.saveEndpoint)
	p.models = widget.NewSelect(nil, func(string) { p.updateButtons() })
	p.models.PlaceHolder = "(list the models first)"
	p.use = widget.NewButton("Use this model", p.useModel)
	p.use.Importance = widget.HighImportance
	p.content = container.NewVScroll(container.NewVBox(
		p.state,
		container.NewBorder(nil, nil, widget.NewLabel("Endpoint"), widget.NewButton("New", p.newEndpoint), p.endpoints),
		p.name, p.url, p.key,
		container.NewBorder(nil, nil, widget.NewLabel("Dialect"), nil, p.dialect),
		p.save,
		widget.NewSeparator(),
		container.NewBorder(nil, nil, widget.NewLabel("Model"), widget.NewButton("List", p.listModels), p.models),
		p.use,
	))
	p.refresh()
	return p
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// refresh lists the saved endpoints.
func (p *remotePanel) refresh() {
	var names []string
	for _, e := range p.a.settings.Endpoints {
		names = append(names, e.Name)
	}
	p.endpoints.SetOptions(names)
	p.updateButtons()
}

func (p *remotePanel) updateButtons() {
	setEnabled(p.use, p.current.ID != "" && p.models.Selected != "" && !p.a.loading)
}

func (p *remotePanel) newEndpoint() {
	p.current = store.Endpoint{}
	p.endpoints.ClearSelected()
	p.name.SetText("")
	p.url.SetText("")
	p.key.SetText("")
	p.dialect.SetSelected(dialectAuto)
	p.models.SetOptions(nil)
	p.models.ClearSelected()
	p.updateButtons()
}

func (p *remotePanel) endpointChosen(name string) {
	e, ok := p.a.settings.Endpoint(name)
	if !ok || e.ID == p.current.ID {
		return
	}
	p.current = e
	p.name.SetText(e.Name)
	p.url.SetText(e.BaseURL)
	p.key.SetText("")
	p.dialect.SetSelected(cmpOr(e.Dialect, dialectAuto))
	p.models.SetOptions(nil)
	p.models.ClearSelected()
	p.listModels()
}

// saveEndpoint stores the form: the endpoint in the settings, a typed key
// in its key file.
func (p *remotePanel) saveEndpoint() {
	e := p.current
	e.Name, e.BaseURL = strings.TrimSpace(p.name.Text), strings.TrimSpace(p.url.Text)
	e.Dialect = p.dialect.Selected
	if e.Dialect == dialectAuto {
		e.Dialect = ""
	}
	e, err := p.a.settings.SetEndpoint(e)
	if err == nil && p.key.Text != "" {
		err = p.r.SaveKey(e.ID, p.key.Text)
	}
	if err != nil {
		p.state.SetText(err.Error())
		return
	}
	p.key.SetText("")
	p.current = e
	p.a.saveSettings()
	p.refresh()
	p.endpoints.SetSelected(e.Name)
	p.listModels()
}

// listModels asks the endpoint for its models, off the UI goroutine.
func (p *remotePanel) listModels() {
	e := p.current
	if e.ID == "" {
		p.state.SetText("Save the endpoint first.")
		return
	}
	p.state.SetText("Asking " + e.Name + " for its models…")
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ids, err := p.r.Models(ctx, e)
		p.a.post(func() { p.modelsListed(e, ids, err) })
	}()
}

func (p *remotePanel) modelsListed(e store.Endpoint, ids []string, err error) {
	if e.ID != p.current.ID {
		return
	}
	if err != nil {
		p.state.SetText(err.Error())
		return
	}
	p.state.SetText(fmt.Sprintf("%s offers %d model(s).", e.Name, len(ids)))
	p.models.SetOptions(ids)
	switch {
	case slices.Contains(ids, e.Model):
		p.models.SetSelected(e.Model)
	case len(ids) == 1:
		p.models.SetSelected(ids[0])
	}
	p.updateButtons()
}

func (p *remotePanel) useModel() {
	if p.current.ID != "" && p.models.Selected != "" {
		p.a.connectRemote(p.current, p.models.Selected)
	}
}

// connectRemote makes model on endpoint e the engine, replacing the one
// loaded, and the current conversation's choice.
func (a *App) connectRemote(e store.Endpoint, model string) {
	if a.loading || a.deps.Remotes == nil {
		return
	}
	if a.anyBusy() {
		a.stopAll()
	}
	a.loading = true
	a.status.SetBusy("connecting to " + e.Name + "…")
	if a.remote != nil {
		a.remote.state.SetText("Connecting to " + e.Name + "…")
		a.remote.updateButtons()
	}
	a.stopServer()
	old := a.engine
	go func() {
		if old != nil {
			old.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r, err := a.deps.Remotes.Connect(ctx, e, model)
		var eng Engine
		if err == nil {
			eng = r
		}
		a.post(func() { a.remoteConnected(e, model, old, eng, err) })
	}()
}

func (a *App) remoteConnected(e store.Endpoint, model string, old, eng Engine, err error) {
	last := a.settings.LastModel
	a.modelLoaded("remote:"+e.Name+"/"+model, LoadOptions{}, old, eng, err)
	a.settings.LastModel = last // the next start loads the local model again
	if a.remote != nil {
		a.remote.updateButtons()
	}
	if err != nil {
		if a.remote != nil {
			a.remote.state.SetText(err.Error())
		}
		return
	}
	if a.remote != nil {
		a.remote.state.SetText("Using " + model + " on " + e.Name + ".")
	}
	e.Model = model
	a.settings.SetEndpoint(e)
	a.saveSettings()
	if c := a.conv; c != nil {
		c.Engine, c.Model = engineName(eng), model
		if len(c.Messages) > 0 {
			a.saveConv(c, nil)
		}
	}
}

// followConversation reconnects to the remote engine a conversation was
// using, when another engine is loaded.
func (a *App) followConversation(c *store.Conversation) {
	name, ok := strings.CutPrefix(c.Engine, "remote:")
	if !ok || a.deps.Remotes == nil || c.Model == "" {
		return
	}
	if a.engine != nil && engineName(a.engine) == c.Engine && a.engine.Info().Name == c.Model {
		return
	}
	if e, ok := a.settings.Endpoint(name); ok {
		a.connectRemote(e, c.Model)
	}
}

// unsupportedOf is what e cannot honour of the sampling panel.
func unsupportedOf(e Engine) map[string]string {
	if r, ok := e.(RemoteEngine); ok {
		return r.Unsupported()
	}
	return nil
}
