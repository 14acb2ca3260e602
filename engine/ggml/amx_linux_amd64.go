//go:build !noasm

package ggml

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux asks a process to request the AMX tile data state before its first
// tile instruction (Documentation/arch/x86/xstate.rst): the permission
// covers every thread of the process, and the kernel then enlarges a
// thread's saved state on its first tile use. The request fails where a
// thread's alternate signal stack is too small for the larger signal
// frame; Go's signal stacks (32 KB) hold it.
const (
	archReqXcompPerm = 0x1023 // ARCH_REQ_XCOMP_PERM
	archGetXcompPerm = 0x1022 // ARCH_GET_XCOMP_PERM
	xfeatureTileData = 18     // XFEATURE_XTILEDATA
)

// amxPermit requests XTILEDATA once (at start-up) and checks it was granted.
func amxPermit() error {
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureTileData, 0); e != 0 {
		return fmt.Errorf("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): %w", e)
	}
	var mask uint64
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archGetXcompPerm, uintptr(unsafe.Pointer(&mask)), 0); e != 0 {
		return fmt.Errorf("arch_prctl(ARCH_GET_XCOMP_PERM): %w", e)
	}
	if mask&(1<<xfeatureTileData) == 0 {
		return fmt.Errorf("arch_prctl granted the state components %#x, without XTILEDATA", mask)
	}
	return nil
}
