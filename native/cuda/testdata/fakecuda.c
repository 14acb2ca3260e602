// A stand-in for libcuda.so.1 used by the package tests on machines without
// an NVIDIA driver. It implements only the entry points the package binds,
// with the signatures of cuda.h, so the tests check argument passing through
// purego (out-pointers, 64-bit sizes, the name buffer) and the error paths.
//
// Build-time knobs (-D):
//   FAKE_DEVICES=n        number of devices cuDeviceGetCount reports (default 2)
//   FAKE_INIT_RESULT=r    what cuInit returns (default 0, CUDA_SUCCESS)
//   FAKE_OMIT_TOTALMEM    leave out cuDeviceTotalMem_v2 (a required symbol)
//   FAKE_OMIT_CONTEXT     leave out the optional context entry points
#include <stddef.h>
#include <stdio.h>

#ifndef FAKE_DEVICES
#define FAKE_DEVICES 2
#endif
#ifndef FAKE_INIT_RESULT
#define FAKE_INIT_RESULT 0
#endif

typedef int CUresult;
typedef int CUdevice;
typedef struct fakectx *CUcontext;

static int initialized;
static int retained[FAKE_DEVICES + 1];
static struct fakectx { int dev; } contexts[FAKE_DEVICES + 1];
static CUcontext stack[16];
static int depth;

CUresult cuInit(unsigned int flags) {
	if (flags != 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
	if (FAKE_INIT_RESULT == 0) initialized = 1;
	return FAKE_INIT_RESULT;
}

CUresult cuDriverGetVersion(int *v) { *v = 12040; return 0; }

CUresult cuDeviceGetCount(int *n) {
	if (!initialized) return 3; /* CUDA_ERROR_NOT_INITIALIZED */
	*n = FAKE_DEVICES;
	return 0;
}

/* Device handles differ from ordinals so that mixing them up shows. */
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	if (ordinal < 0 || ordinal >= FAKE_DEVICES) return 101;
	*d = 100 + ordinal;
	return 0;
}

static int valid(CUdevice d) { return d >= 100 && d < 100 + FAKE_DEVICES; }

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
	if (!valid(d)) return 101;
	snprintf(name, (size_t)len, "Fake GPU %d", d - 100);
	return 0;
}

#ifndef FAKE_OMIT_TOTALMEM
/* (ordinal+1) * 24 GiB: above 4 GiB so a 32-bit truncation would show. */
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
	if (!valid(d)) return 101;
	*bytes = (size_t)(d - 100 + 1) * 24 * ((size_t)1 << 30);
	return 0;
}
#endif

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
	if (!valid(d)) return 101;
	switch (attr) {
	case 75: *v = 8 + (d - 100); return 0; /* major */
	case 76: *v = 9; return 0;             /* minor */
	}
	return 1;
}

#ifndef FAKE_OMIT_CONTEXT
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d) {
	if (!valid(d)) return 101;
	retained[d - 100]++;
	contexts[d - 100].dev = d;
	*ctx = &contexts[d - 100];
	return 0;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	if (!valid(d) || retained[d - 100] == 0) return 201;
	retained[d - 100]--;
	return 0;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
	if (depth == 16) return 1;
	stack[depth++] = ctx;
	return 0;
}

CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
	if (depth == 0) return 201;
	*ctx = stack[--depth];
	return 0;
}

/* Free is a third of total so free and total cannot be swapped unnoticed. */
CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
	if (depth == 0) return 201; /* CUDA_ERROR_INVALID_CONTEXT */
	CUdevice d = stack[depth - 1]->dev;
	*total = (size_t)(d - 100 + 1) * 24 * ((size_t)1 << 30);
	*free = *total / 3;
	return 0;
}

/* Test hooks: the references and stack depth left behind. */
int fakeRetained(int ordinal) { return retained[ordinal]; }
int fakeDepth(void) { return depth; }
#endif
