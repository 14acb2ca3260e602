package cuda

import (
	"sync"

	"github.com/ebitengine/purego"
)

// libraryName is the driver's soname. The unversioned libcuda.so exists only
// with the development package, so it is not tried.
const libraryName = "libcuda.so.1"

// openLibrary dlopens path. RTLD_LOCAL keeps the driver's symbols out of the
// global namespace; the handle is never closed (the driver does not support
// being unloaded while contexts may exist).
func openLibrary(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// lookup finds a symbol without panicking when it is absent.
func lookup(handle uintptr, name string) (uintptr, error) {
	return purego.Dlsym(handle, name)
}

// register binds the C function at sym to the Go function pointer fptr.
func register(fptr any, sym uintptr) {
	purego.RegisterFunc(fptr, sym)
}

// callN calls the C function at fn with integer and pointer arguments
// (at most 15) and returns its integer result: purego.SyscallN, without
// RegisterFunc's reflection. Pointer arguments must be kept alive by the
// caller (runtime.KeepAlive) until it returns. The arguments go to
// SyscallN in a pooled frame: passed on directly, every caller's argument
// list would escape, an allocation per device operation.
func callN(fn uintptr, args ...uintptr) uintptr {
	f := callFrames.Get().(*[15]uintptr)
	n := copy(f[:], args)
	r, _, _ := purego.SyscallN(fn, f[:n]...)
	callFrames.Put(f)
	return r
}

var callFrames = sync.Pool{New: func() any { return new([15]uintptr) }}
