package ui

import "fyne.io/fyne/v2/widget"

// Remote tab hooks for the external tests.
func (a *App) RemoteName() *widget.Entry    { return a.remote.name }
func (a *App) RemoteURL() *widget.Entry     { return a.remote.url }
func (a *App) RemoteKey() *widget.Entry     { return a.remote.key }
func (a *App) RemoteSave() *widget.Button   { return a.remote.save }
func (a *App) RemoteModels() *widget.Select { return a.remote.models }
func (a *App) RemoteUse() *widget.Button    { return a.remote.use }
func (a *App) RemoteState() string          { return a.remote.state.Text }
func (a *App) UnsupportedNote(key string) string {
	if f, ok := a.panel.fields[key]; ok {
		return visibleText(f.why)
	}
	return visibleText(a.panel.texts[key].why)
}
