package hip

import "github.com/ebitengine/purego"

// openLibrary dlopens path. The handle is never closed: the runtime does not
// support being unloaded.
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
