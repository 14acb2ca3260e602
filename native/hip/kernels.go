package hip

import "flowchat/native/cuda"

// KernelSources returns native/cuda's kernel translation units, each with
// all of its headers, sorted by name: the same files NVRTC compiles.
// fc_port.h selects its HIP branch under hipRTC (__HIPCC_RTC__).
func KernelSources() []Source {
	cs := cuda.KernelSources()
	out := make([]Source, len(cs))
	for i, s := range cs {
		out[i] = Source(s)
	}
	return out
}

// kernelNames lists the FC_KERNEL functions of a source.
func kernelNames(src Source) []string { return cuda.KernelNames(src.Code) }
