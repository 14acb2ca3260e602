package ui

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/store"
)

// sidebar lists the conversations, newest first, filtered by a search of
// their text, with buttons to start, rename, delete, export and import.
type sidebar struct {
	a       *App
	search  *widget.Entry
	list    *widget.List
	shown   []*store.Conversation // a.convs filtered by the search
	rename  *widget.Button
	del     *widget.Button
	export  *widget.Button
	content fyne.CanvasObject
	syncing bool // the list's selection is being set from a.conv
}

func newSidebar(a *App) *sidebar {
	s := &sidebar{a: a, search: widget.NewEntry()}
	s.search.SetPlaceHolder("Search conversations")
	s.search.OnChanged = func(string) { s.refresh() }
	s.list = widget.NewList(func() int { return len(s.shown) }, s.newRow, s.updateRow)
	s.list.OnSelected = s.selected
	newBtn := widget.NewButtonWithIcon("New chat", theme.ContentAddIcon(), a.newConversation)
	newBtn.Importance = widget.HighImportance
	importBtn := widget.NewButtonWithIcon("", theme.FileIcon(), s.askImport)
	s.rename = widget.NewButtonWithIcon("", theme.DocumentCreateIcon(), s.askRename)
	s.del = widget.NewButtonWithIcon("", theme.DeleteIcon(), s.askDelete)
	s.export = widget.NewButtonWithIcon("Export", theme.DocumentSaveIcon(), s.askExport)
	top := container.NewVBox(container.NewBorder(nil, nil, nil, importBtn, newBtn), s.search)
	bottom := container.NewHBox(s.rename, s.del, s.export)
	s.content = container.NewBorder(top, bottom, nil, nil, s.list)
	return s
}

func (s *sidebar) newRow() fyne.CanvasObject {
	title := widget.NewLabel("")
	title.Truncation = fyne.TextTruncateEllipsis
	when := widget.NewLabel("")
	when.SizeName = theme.SizeNameCaptionText
	when.Importance = widget.LowImportance
	return container.NewVBox(title, when)
}

func (s *sidebar) updateRow(i widget.ListItemID, o fyne.CanvasObject) {
	c := s.shown[i]
	box := o.(*fyne.Container)
	box.Objects[0].(*widget.Label).SetText(titleOf(c))
	box.Objects[1].(*widget.Label).SetText(fmt.Sprintf("%s · %d messages", relativeTime(c.Updated, time.Now()), len(c.Path())))
}

// relativeTime writes t as people read a list: "14:05", "Mon", "3 Jan".
func relativeTime(t, now time.Time) string {
	t = t.Local()
	switch {
	case now.Sub(t) < 24*time.Hour && t.Day() == now.Day():
		return t.Format("15:04")
	case now.Sub(t) < 6*24*time.Hour:
		return t.Format("Mon 15:04")
	case t.Year() == now.Year():
		return t.Format("2 Jan")
	}
	return t.Format("2 Jan 2006")
}

// refresh filters and redraws the list, keeping the current conversation
// selected.
func (s *sidebar) refresh() {
	store.SortNewestFirst(s.a.convs)
	s.shown = s.shown[:0]
	for _, c := range s.a.convs {
		if c.Matches(s.search.Text) {
			s.shown = append(s.shown, c)
		}
	}
	s.list.Refresh()
	s.syncing = true
	if i := slices.Index(s.shown, s.a.conv); i >= 0 {
		s.list.Select(i)
	} else {
		s.list.UnselectAll()
	}
	s.syncing = false
	has := s.a.conv != nil
	for _, b := range []*widget.Button{s.rename, s.del, s.export} {
		setEnabled(b, has)
	}
}

func (s *sidebar) selected(i widget.ListItemID) {
	if s.syncing || i >= len(s.shown) {
		return
	}
	s.a.openConversation(s.shown[i])
}

func (s *sidebar) askRename() {
	c := s.a.conv
	if c == nil || s.a.win == nil {
		return
	}
	e := widget.NewEntry()
	e.SetText(titleOf(c))
	dialog.ShowForm("Rename conversation", "Rename", "Cancel", []*widget.FormItem{widget.NewFormItem("Title", e)}, func(ok bool) {
		if ok {
			s.a.renameConversation(c, e.Text)
		}
	}, s.a.win)
}

func (s *sidebar) askDelete() {
	c := s.a.conv
	if c == nil || s.a.win == nil {
		return
	}
	dialog.ShowConfirm("Delete conversation", "Delete “"+titleOf(c)+"” and all its versions? This cannot be undone.", func(ok bool) {
		if ok {
			s.a.deleteConversation(c)
		}
	}, s.a.win)
}

func (s *sidebar) askExport() {
	c := s.a.conv
	if c == nil || s.a.win == nil {
		return
	}
	save := func(format string) {
		d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
			if err != nil || w == nil {
				return
			}
			defer w.Close()
			if err := s.a.exportConversation(c, format, w); err != nil {
				s.a.showError("Export", err)
			} else {
				s.a.status.SetMessage("exported to "+w.URI().Path(), false)
			}
		}, s.a.win)
		d.SetFileName(fileSafe(titleOf(c)) + "." + format)
		d.Show()
	}
	dialog.ShowCustom("Export conversation", "Cancel", container.NewVBox(
		widget.NewButton("Markdown (the branch shown)", func() { save("md") }),
		widget.NewButton("JSON (every branch; can be imported)", func() { save("json") }),
	), s.a.win)
}

func (s *sidebar) askImport() {
	if s.a.win == nil {
		return
	}
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		defer r.Close()
		if err := s.a.importConversation(r); err != nil {
			s.a.showError("Import", err)
		}
	}, s.a.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".json"}))
	d.Show()
}

// fileSafe turns a title into a file name.
func fileSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) || r < 32 {
			return '-'
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// newConversation shows a new, empty conversation (saved once it has
// content).
func (a *App) newConversation() {
	c := store.New()
	a.convs = append([]*store.Conversation{c}, a.convs...)
	a.openConversation(c)
}

// openConversation shows c.
func (a *App) openConversation(c *store.Conversation) {
	if a.conv == c {
		return
	}
	// An untouched new chat disappears when left.
	if old := a.conv; old != nil && len(old.Messages) == 0 && old.System == "" {
		a.convs = slices.DeleteFunc(a.convs, func(x *store.Conversation) bool { return x == old })
	}
	a.conv = c
	a.settings.LastConversation = c.ID
	a.saveSettings()
	a.chat.show()
	if a.busy() { // its reply streams on; others go on in the background
		a.status.SetBusy("generating…")
	} else {
		a.status.SetBusy("")
	}
	a.side.refresh()
	a.requestExplain()
	a.followConversation(c)
}

// openInitialConversation reopens the conversation of the last session,
// or starts a new one.
func (a *App) openInitialConversation() {
	i := slices.IndexFunc(a.convs, func(c *store.Conversation) bool { return c.ID == a.settings.LastConversation })
	if i >= 0 {
		a.openConversation(a.convs[i])
		return
	}
	a.newConversation()
}

func (a *App) renameConversation(c *store.Conversation, title string) {
	title = strings.TrimSpace(title)
	if title == "" {
		return
	}
	c.Title = title
	c.Updated = time.Now().UTC()
	a.saveConv(c, nil)
	if a.conv == c {
		a.chat.title.SetText(title)
	}
	a.side.refresh()
}

func (a *App) deleteConversation(c *store.Conversation) {
	if g := a.gens[c]; g != nil {
		g.cancel()
	}
	a.convs = slices.DeleteFunc(a.convs, func(x *store.Conversation) bool { return x == c })
	a.storage.DeleteAsync(c.ID)
	if a.conv == c {
		a.conv = nil
		if len(a.convs) > 0 {
			a.openConversation(a.convs[0])
		} else {
			a.newConversation()
		}
	}
	a.side.refresh()
}

// exportConversation writes c as Markdown ("md") or JSON ("json").
func (a *App) exportConversation(c *store.Conversation, format string, w io.Writer) error {
	var b []byte
	switch format {
	case "md":
		b = []byte(store.ExportMarkdown(c))
	case "json":
		var err error
		if b, err = store.ExportJSON(c); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown export format %q", format)
	}
	_, err := w.Write(b)
	return err
}

// importConversation reads a JSON conversation, saves it and shows it.
func (a *App) importConversation(r io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return err
	}
	c, err := store.ImportJSON(b)
	if err != nil {
		return err
	}
	a.convs = append(a.convs, c)
	a.saveConv(c, nil)
	a.openConversation(c)
	return nil
}
