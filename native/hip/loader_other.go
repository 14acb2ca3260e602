//go:build !linux

package hip

import (
	"errors"
	"fmt"
	"runtime"
)

var errNoLoader = fmt.Errorf("HIP loader not implemented on %s", runtime.GOOS)

func openLibrary(path string) (uintptr, error) { return 0, errNoLoader }

func lookup(handle uintptr, name string) (uintptr, error) { return 0, errNoLoader }

func register(fptr any, sym uintptr) { panic(errors.New("hip: register without a loader")) }
