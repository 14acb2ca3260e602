package ggml

import "encoding/binary"

// ReadSum returns the sum, mod 2³², of p read as little-endian 32-bit
// words (a last partial word zero-extended). It is the memory read probe's
// reader (BenchmarkReadBandwidth, flowchat bench's bandwidth column):
// decode's figures are compared with the best rate a core reads at, so the
// reader must be at least as good at streaming as the kernels are. On amd64
// it reads with AVX2 integer adds and a software prefetch into L2
// (PREFETCHT1) 4 KiB ahead. On the 2-vCPU Xeon VM (2026-11-27) a prefetch
// into L1 4 KiB ahead read 11.5–13.3 GB/s on one core and 22.2–23.2 on
// two, against 10.1–10.9 and 19.6–19.9 with none (512 B ahead read no
// better than none); into L2, five alternations read 12.5–13.8 and
// 21.5–26.2 against the L1 hint's 12.0–12.7 and 22.2–23.7. Integer adds,
// not float: the words are arbitrary bits, and denormal floats can take a
// slow path.
func ReadSum(p []byte) uint32 { return sumBlocks(p, 128, readSum) }

// sumBlocks is read over the whole blocks of p (block a power of two) plus
// the plain sum of the rest.
func sumBlocks(p []byte, block int, read func([]byte) uint32) uint32 {
	n := len(p) &^ (block - 1)
	var s uint32
	if n > 0 {
		s = read(p[:n])
	}
	return s + readSumGo(p[n:])
}

// readSum sums a whole number of 128-byte blocks; assembly where there is.
var readSum = readSumGo

// ReadStreams returns ReadSum(p), read as four streams side by side (the
// quarters of p, 64 bytes of each in turn) with no software prefetch: the
// read probe's third reader. On the 2-vCPU AMD EPYC Zen 3 VM (2026-12-07,
// sitting 19) the hardware prefetchers following four streams read 1 GiB
// at 15–20 GB/s on one core and 28–35 on two, against ReadSum's 10–13 and
// 19–23 (docs/PERFORMANCE.md): a probe of ReadSum alone put that class's
// read bandwidth a third too low. On the Xeon and Zen 5 VMs ReadSum was
// the faster reader; the probe takes the best of its readers.
func ReadStreams(p []byte) uint32 { return sumBlocks(p, 256, readStreams) }

// readStreams sums a whole number of 256-byte blocks as four streams;
// assembly where there is.
var readStreams = readSumGo

func readSumGo(p []byte) uint32 {
	var s uint32
	for ; len(p) >= 4; p = p[4:] {
		s += binary.LittleEndian.Uint32(p)
	}
	var last [4]byte
	copy(last[:], p)
	return s + binary.LittleEndian.Uint32(last[:])
}
