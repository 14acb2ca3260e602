package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// NewMainWindow returns flowchat's main window built from d, and starts it:
// the remembered (or default) model begins loading in the background.
// Closing the window stops a reply in progress and flushes pending writes.
func NewMainWindow(fa fyne.App, d Deps) (fyne.Window, *App) {
	w := fa.NewWindow("flowchat")
	a := NewApp(d)
	w.SetContent(a.content)
	w.SetMainMenu(a.mainMenu())
	a.addShortcuts(w)
	w.SetOnClosed(a.Close)
	w.Resize(fyne.NewSize(1280, 800))
	a.Start(w)
	w.Canvas().Focus(a.chat.input)
	return w, a
}

func (a *App) mainMenu() *fyne.MainMenu {
	return fyne.NewMainMenu(
		fyne.NewMenu("File",
			fyne.NewMenuItem("New chat", a.newConversation),
			fyne.NewMenuItem("Open model file…", a.models.openFile),
			fyne.NewMenuItemSeparator(),
			fyne.NewMenuItem("Import conversation…", a.side.askImport),
			fyne.NewMenuItem("Export conversation…", a.side.askExport),
		),
		fyne.NewMenu("Chat",
			fyne.NewMenuItem("Stop reply", a.stopReply),
			fyne.NewMenuItem("Rename…", a.side.askRename),
			fyne.NewMenuItem("Delete…", a.side.askDelete),
		),
		fyne.NewMenu("Help",
			fyne.NewMenuItem("Welcome…", a.showWelcome),
		),
	)
}

// addShortcuts: Ctrl+N new chat, Escape stops a reply.
func (a *App) addShortcuts(w fyne.Window) {
	w.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault},
		func(fyne.Shortcut) { a.newConversation() })
	w.Canvas().SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			a.stopReply()
		}
	})
}
