// Package assets holds the files bundled into the binary: the demo model
// that makes the app work offline on first start (stories260K, a 260K
// parameter llama trained on TinyStories; MIT, see NOTICE.md), and the icon.
package assets

import _ "embed"

// DemoModel is a GGUF file (F32 weights, 1.2 MB).
//
//go:embed demo.gguf
var DemoModel []byte

// DemoModelName is the file name the demo model is installed under.
const DemoModelName = "stories260K-demo.gguf"

// Catalog is the curated list of small chat models for first-time users
// (see app/library.ParseCatalog).
//
//go:embed catalog.json
var Catalog []byte
