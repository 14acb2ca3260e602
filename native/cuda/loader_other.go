//go:build !linux

package cuda

import (
	"errors"
	"fmt"
	"runtime"
)

const libraryName = "libcuda.so.1"

var errNoLoader = fmt.Errorf("CUDA loader not implemented on %s", runtime.GOOS)

// openLibrary reports that this build has no CUDA loader: the driver ships
// as nvcuda.dll on Windows and does not exist on macOS.
func openLibrary(path string) (uintptr, error) { return 0, errNoLoader }

func lookup(handle uintptr, name string) (uintptr, error) { return 0, errNoLoader }

func register(fptr any, sym uintptr) { panic(errors.New("cuda: register without a loader")) }

func callN(fn uintptr, args ...uintptr) uintptr { panic(errors.New("cuda: callN without a loader")) }
