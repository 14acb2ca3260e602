package hip

import (
	"io/fs"
	"path"
	"slices"
	"strings"

	"flowchat/native/cuda"
)

// KernelSources returns native/cuda's kernel translation units, each with
// all of its headers, sorted by name: the same files NVRTC compiles.
// fc_port.h selects its HIP branch under hipRTC (__HIPCC_RTC__).
func KernelSources() []Source {
	kfs := cuda.KernelFS()
	headers := map[string]string{}
	var units []string
	entries, _ := fs.ReadDir(kfs, "kernels")
	for _, e := range entries {
		b, _ := fs.ReadFile(kfs, path.Join("kernels", e.Name()))
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
		b, _ := fs.ReadFile(kfs, path.Join("kernels", u))
		out[i] = Source{Name: u, Code: string(b), Headers: headers}
	}
	return out
}

// kernelNames lists the FC_KERNEL functions of a source (the line after
// "FC_KERNEL void …", up to the parameter list).
func kernelNames(src Source) []string {
	var names []string
	lines := strings.Split(src.Code, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "FC_KERNEL void") || i+1 >= len(lines) {
			continue
		}
		if name, _, ok := strings.Cut(lines[i+1], "("); ok {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}
