package ggml

import "unsafe"

// F32Bytes reinterprets f as its little-endian bytes without copying
// (amd64 and arm64 are little-endian). The result aliases f.
func F32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(f)*4)
}

// BytesF32 reinterprets b as float32 values without copying; len(b) must be
// a multiple of 4 and b 4-byte aligned (true for GGUF tensor data, which is
// aligned to 32 bytes). The result aliases b.
func BytesF32(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	if len(b)%4 != 0 || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		panic("ggml: BytesF32 needs a 4-byte aligned multiple of 4 bytes")
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// bytesU16 reinterprets b as uint16 values (little-endian) without copying.
func bytesU16(b []byte) []uint16 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func put16(b []byte, v uint16) { b[0], b[1] = byte(v), byte(v>>8) }

func put32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// f16 reads the fp16 value at b[0:2] as float32.
func f16(b []byte) float32 { return fp16Table[le16(b)] }
