// Package specs embeds the model specification files (one JSON file per
// model family) into the binary. See engine/spec for their format.
package specs

import "embed"

// FS holds every *.json spec file of this directory.
//
//go:embed *.json
var FS embed.FS
