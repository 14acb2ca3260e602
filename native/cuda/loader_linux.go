package cuda

import "github.com/ebitengine/purego"

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
