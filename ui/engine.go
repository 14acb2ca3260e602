// Package ui holds flowchat's Fyne screens and widgets. It talks to the rest
// of the program only through the small interfaces declared here, which the
// app layer adapts; it never imports the engine.
//
// Threading: widgets are touched only on the Fyne UI goroutine. Work that
// happens elsewhere (a reply being generated) reaches them through one
// boundary per screen, a post function that is fyne.Do in the app and a
// queue pumped by the test in tests.
package ui

import (
	"context"
	"time"
)

// Roles of a Message, as chat templates name them.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation. Content is markdown.
type Message struct {
	Role, Content string
}

// Stats describes one generated reply.
type Stats struct {
	PromptTokens, GenTokens int
	// TimeToFirstToken covers prompt processing; Total runs from the call
	// to the last token.
	TimeToFirstToken, Total time.Duration
}

// Engine is what the chat window needs from a loaded model.
type Engine interface {
	// ModelName is shown in the title and status bar.
	ModelName() string
	// Generate replies to msgs, calling onPiece with each piece of text as it
	// is produced, from the calling goroutine. Cancelling ctx stops it: it
	// then returns ctx's error with the stats of what was produced.
	Generate(ctx context.Context, msgs []Message, onPiece func(text string)) (Stats, error)
}
