// A stand-in for libamdhip64.so used by the package tests on machines
// without ROCm. It implements only the entry points the package binds, with
// the signatures of hip_runtime_api.h, so the tests check argument passing
// through purego and the error paths.
//
// Build-time knobs (-D):
//   FAKE_DEVICES=n       number of devices (default 2); 0 makes
//                        hipGetDeviceCount fail with hipErrorNoDevice, as HIP does
//   FAKE_INIT_RESULT=r   what hipInit returns (default 0, hipSuccess)
//   FAKE_OMIT_NAME       leave out hipDeviceGetName (a required symbol)
//   FAKE_OMIT_MEMINFO    leave out hipMemGetInfo (optional)
#include <stddef.h>
#include <stdio.h>

#ifndef FAKE_DEVICES
#define FAKE_DEVICES 2
#endif
#ifndef FAKE_INIT_RESULT
#define FAKE_INIT_RESULT 0
#endif

typedef int hipError_t;
typedef int hipDevice_t;

static int initialized;
static __thread int current; /* HIP's current device is per thread */

hipError_t hipInit(unsigned int flags) {
	if (flags != 0) return 1;
	if (FAKE_INIT_RESULT == 0) initialized = 1;
	return FAKE_INIT_RESULT;
}

hipError_t hipRuntimeGetVersion(int *v) { *v = 60241134; return 0; }

hipError_t hipGetDeviceCount(int *n) {
	if (!initialized) return 3;
	if (FAKE_DEVICES == 0) return 100; /* hipErrorNoDevice */
	*n = FAKE_DEVICES;
	return 0;
}

/* Device handles differ from ordinals so that mixing them up shows. */
hipError_t hipDeviceGet(hipDevice_t *d, int ordinal) {
	if (ordinal < 0 || ordinal >= FAKE_DEVICES) return 101;
	*d = 100 + ordinal;
	return 0;
}

static int valid(hipDevice_t d) { return d >= 100 && d < 100 + FAKE_DEVICES; }

static size_t memOf(int ordinal) { return (size_t)(ordinal + 1) * 64 * ((size_t)1 << 30); }

#ifndef FAKE_OMIT_NAME
hipError_t hipDeviceGetName(char *name, int len, hipDevice_t d) {
	if (!valid(d)) return 101;
	snprintf(name, (size_t)len, "Fake Instinct %d", d - 100);
	return 0;
}
#endif

/* (ordinal+1) * 64 GiB: above 4 GiB so a 32-bit truncation would show. */
hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t d) {
	if (!valid(d)) return 101;
	*bytes = memOf(d - 100);
	return 0;
}

hipError_t hipGetDevice(int *ordinal) { *ordinal = current; return 0; }

hipError_t hipSetDevice(int ordinal) {
	if (ordinal < 0 || ordinal >= FAKE_DEVICES) return 101;
	current = ordinal;
	return 0;
}

#ifndef FAKE_OMIT_MEMINFO
/* Free is a quarter of total so free and total cannot be swapped unnoticed. */
hipError_t hipMemGetInfo(size_t *free, size_t *total) {
	*total = memOf(current);
	*free = *total / 4;
	return 0;
}
#endif

/* Test hook: the calling thread's current device. */
int fakeCurrent(void) { return current; }
