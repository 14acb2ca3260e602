//go:build !linux && !noasm

package ggml

import "errors"

// amxPermit: the AMX tier asks Linux for the tile state (amx_linux_amd64.go);
// elsewhere it stays off.
func amxPermit() error { return errors.New("the AMX tier is Linux-only") }
