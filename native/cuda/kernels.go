package cuda

import (
	"embed"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// kernelFS holds the CUDA C kernel sources and our portability header.
//
//go:embed kernels/*.cu kernels/*.h
var kernelFS embed.FS

// KernelSources returns every kernel translation unit, each with all of our
// headers, sorted by name.
func KernelSources() []Source {
	headers := map[string]string{}
	var units []string
	entries, _ := fs.ReadDir(kernelFS, "kernels")
	for _, e := range entries {
		b, _ := fs.ReadFile(kernelFS, path.Join("kernels", e.Name()))
		switch {
		case strings.HasSuffix(e.Name(), ".h"):
			headers[e.Name()] = string(b)
		case strings.HasSuffix(e.Name(), ".cu"):
			units = append(units, e.Name())
		}
	}
	slices.Sort(units)
	out := make([]Source, len(units))
	for i, u := range units {
		b, _ := fs.ReadFile(kernelFS, path.Join("kernels", u))
		out[i] = Source{Name: u, Code: string(b), Headers: headers}
	}
	return out
}

// KernelSource returns the unit named name ("matmul.cu").
func KernelSource(name string) (Source, bool) {
	for _, s := range KernelSources() {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}

// kernelNames lists the FC_KERNEL functions of a source.
func kernelNames(src Source) []string { return KernelNames(src.Code) }

// KernelNames lists the FC_KERNEL functions of a kernel source's code: the
// name on the line after "FC_KERNEL void …", before the parameter list.
func KernelNames(code string) []string {
	var names []string
	lines := strings.Split(code, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "FC_KERNEL ") || i+1 >= len(lines) {
			continue
		}
		decl := lines[i+1]
		if name, _, ok := strings.Cut(decl, "("); ok && strings.HasPrefix(l, "FC_KERNEL void") {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}
