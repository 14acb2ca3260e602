package hip

import (
	"os"
	"path/filepath"

	"github.com/ebitengine/purego"
)

// libraryName is what the loader tries first and what messages name.
const libraryName = "libamdhip64.so"

// candidates are tried in order: the linker path (unversioned, then the
// ROCm 6 and 5 sonames), then the ROCm install directory, which is often
// not on the linker path.
func candidates() []string {
	root := os.Getenv("ROCM_PATH")
	if root == "" {
		root = "/opt/rocm"
	}
	return []string{libraryName, libraryName + ".6", libraryName + ".5",
		filepath.Join(root, "lib", libraryName)}
}

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
