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
//   FAKE_OMIT_COMPUTE    leave out the compute set (allocations, streams, modules…)
//   FAKE_OMIT_PROPS      leave out hipGetDeviceProperties and hipDeviceGetAttribute
//   FAKE_ANY_FUNCTION    hipModuleGetFunction finds any name (launches only record)
//   FAKE_SAME_ARCH       device 1 is a wave64 gfx90a too (two devices the kernels run on)
//   FAKE_KERNELS         the code objects hipRTC made are modules of the real
//                        kernels, run on the host by native/cuda's CPU shim
//                        (native/cuda/testdata/fakekernels.cpp, linked in by
//                        g++ with -DFC_WARP_SIZE=64 for the gfx90a device)
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_DEVICES
#define FAKE_DEVICES 2
#endif
#ifndef FAKE_INIT_RESULT
#define FAKE_INIT_RESULT 0
#endif
#ifdef FAKE_SAME_ARCH
#define ARCH0(o) 1
#else
#define ARCH0(o) ((o) == 0)
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

#ifndef FAKE_OMIT_PROPS
/* ROCm 5's hipDeviceProp_t is 792 bytes with warpSize at 276 and
 * gcnArchName at 396; the package finds gcnArchName by content, so the
 * fake puts it where ROCm 6's larger struct would not, past byte 792.
 * Device 0 is a wave64 gfx90a, device 1 a wave32 gfx1100. */
hipError_t hipGetDeviceProperties(void *prop, int ordinal) {
	if (ordinal < 0 || ordinal >= FAKE_DEVICES) return 101;
	memset(prop, 0, 1200);
	snprintf((char *)prop, 256, "Fake Instinct %d", ordinal);
	strcpy((char *)prop + 300, "gfx-not-a-target");
	strcpy((char *)prop + 1100, ARCH0(ordinal) ? "gfx90a:sramecc+:xnack-" : "gfx1100");
	return 0;
}

hipError_t hipDeviceGetAttribute(int *v, int attr, int ordinal) {
	if (ordinal < 0 || ordinal >= FAKE_DEVICES) return 101;
	switch (attr) {
	case 87: *v = ARCH0(ordinal) ? 64 : 32; return 0; /* hipDeviceAttributeWarpSize */
	case 63: *v = ordinal == 0 ? 104 : 48; return 0; /* hipDeviceAttributeMultiprocessorCount */
	}
	return 1;
}
#endif

#ifndef FAKE_OMIT_COMPUTE
typedef void *hipStream_t, *hipEvent_t, *hipModule_t, *hipFunction_t;
typedef unsigned long long hipDeviceptr_t;

static int allocs, streams, events, modules, peerEnabled[8];
static unsigned lastLaunch[9];
static int lastLaunchDevice = -1;

/* As the fake libcuda: copies, events and peer calls are logged one line
   each (fakeCallLog), and streams and events remember their device. */
static char callLog[1 << 16];
static size_t callLogLen;
static void logCall(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	if (callLogLen + 64 < sizeof callLog) callLogLen += (size_t)vsnprintf(callLog + callLogLen, 64, fmt, ap);
	va_end(ap);
}
const char *fakeCallLog(void) { return callLog; }
void fakeClearLog(void) { callLogLen = 0; callLog[0] = 0; }
static int streamDev[1024], eventDev[1024], streamsMade, eventsMade;
static int streamOK(void *s) {
	size_t i = (size_t)s;
	return s == 0 || (i > 0x5000 && i < 0x5000 + 1024 && streamDev[i - 0x5000] == current);
}
static int streamNo(void *s) { return s ? (int)((size_t)s - 0x5000) : 0; }
static int eventNo(void *e) { return (int)((size_t)e - 0x6000); }
static struct { char *p; size_t n; } pinnedMem[64];
static int isPinned(const void *p, size_t n) {
	for (int i = 0; i < 64; i++)
		if (pinnedMem[i].p && (const char *)p >= pinnedMem[i].p && (const char *)p + n <= pinnedMem[i].p + pinnedMem[i].n) return 1;
	return 0;
}

hipError_t hipDeviceSynchronize(void) { return 0; }

hipError_t hipMalloc(hipDeviceptr_t *p, size_t n) {
	void *m = malloc(n);
	if (!m) return 2;
	*p = (hipDeviceptr_t)m;
	allocs++;
	return 0;
}
hipError_t hipFree(hipDeviceptr_t p) { free((void *)p); allocs--; return 0; }
hipError_t hipHostMalloc(void **pp, size_t n, unsigned flags) {
	if (flags != 0 && flags != 1) return 1; /* hipHostMallocDefault, hipHostMallocPortable */
	hipError_t r = hipMalloc((hipDeviceptr_t *)pp, n);
	for (int i = 0; r == 0 && i < 64; i++)
		if (!pinnedMem[i].p) { pinnedMem[i].p = *pp; pinnedMem[i].n = n; break; }
	return r;
}
hipError_t hipHostFree(void *p) {
	for (int i = 0; i < 64; i++)
		if (pinnedMem[i].p == p) pinnedMem[i].p = NULL;
	return hipFree((hipDeviceptr_t)p);
}

hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t n, hipStream_t s) {
	if (!streamOK(s)) return 400;
	logCall("htod s%d %s\n", streamNo(s), isPinned(src, n) ? "pinned" : "pageable");
	memcpy((void *)dst, src, n);
	return 0;
}
hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t s) {
	if (!streamOK(s)) return 400;
	logCall("dtoh s%d %s\n", streamNo(s), isPinned(dst, n) ? "pinned" : "pageable");
	memcpy(dst, (void *)src, n);
	return 0;
}
hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t s) { memmove((void *)dst, (void *)src, n); return 0; }
hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int v, size_t n, hipStream_t s) {
	for (size_t i = 0; i < n; i++) ((int *)dst)[i] = v;
	return 0;
}
/* The copy runs on a stream of the current device, after one of the two
   enabled access to the other (stricter than HIP, which would stage it:
   the package enables access first). */
hipError_t hipMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t n, hipStream_t s) {
	if (dd == sd || dd < 0 || sd < 0 || dd >= FAKE_DEVICES || sd >= FAKE_DEVICES) return 101;
	if (!streamOK(s)) return 400;
	if (!(peerEnabled[dd] & (1 << sd)) && !(peerEnabled[sd] & (1 << dd))) return 217;
	logCall("peer d%d←d%d s%d\n", dd, sd, streamNo(s));
	memcpy(dst, src, n);
	return 0;
}
hipError_t hipDeviceCanAccessPeer(int *can, int d, int peer) { *can = d != peer; return 0; }
hipError_t hipDeviceEnablePeerAccess(int peer, unsigned flags) {
	if (peer == current) return 101;
	if (peerEnabled[current] & (1 << peer)) return 704; /* hipErrorPeerAccessAlreadyEnabled */
	peerEnabled[current] |= 1 << peer;
	logCall("enable d%d→d%d\n", current, peer);
	return 0;
}

hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags) {
	if (flags != 1) return 1; /* the package asks for hipStreamNonBlocking */
	if (++streamsMade >= 1024) return 2;
	streamDev[streamsMade] = current;
	streams++;
	*s = (hipStream_t)(size_t)(0x5000 + streamsMade);
	return 0;
}
hipError_t hipStreamDestroy(hipStream_t s) { streams--; return 0; }
hipError_t hipStreamSynchronize(hipStream_t s) { return 0; }
hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags) {
	if (!e || !streamOK(s) || flags != 0) return 400;
	logCall("wait s%d e%d\n", streamNo(s), eventNo(e));
	return 0;
}

hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags) {
	if (++eventsMade >= 1024) return 2;
	eventDev[eventsMade] = current;
	events++;
	*e = (hipEvent_t)(size_t)(0x6000 + eventsMade);
	return 0;
}
hipError_t hipEventDestroy(hipEvent_t e) { events--; return 0; }
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) {
	if (!e || !streamOK(s) || eventDev[eventNo(e)] != current) return 400;
	logCall("record e%d s%d\n", eventNo(e), streamNo(s));
	return 0;
}
hipError_t hipEventSynchronize(hipEvent_t e) { return e ? 0 : 400; }
hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b) { *ms = 1.5f; return 0; }

#ifdef FAKE_KERNELS
const void *fakeKernelFind(const char *name);
int fakeKernelLaunch(const void *f, unsigned gx, unsigned gy, unsigned bx, unsigned by, void **params);
#endif

static int fakeModule;
hipError_t hipModuleLoadData(hipModule_t *m, const void *image) {
	if (memcmp(image, "\x7f" "ELF", 4) != 0) return 200; /* hipErrorInvalidImage */
	*m = &fakeModule;
	modules++;
	return 0;
}
hipError_t hipModuleUnload(hipModule_t m) { modules--; return 0; }

/* axpy runs on the host; with FAKE_ANY_FUNCTION every other name is a
 * kernel that only records its launch (for the launchers' shapes). */
static int axpyFunction, otherFunction;
static char lastName[64];
hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name) {
	if (m != &fakeModule) return 400;
	if (strcmp(name, "axpy") == 0) {
		*f = &axpyFunction;
		return 0;
	}
#ifdef FAKE_KERNELS
	*f = (hipFunction_t)fakeKernelFind(name);
	return *f ? 0 : 500;
#endif
#ifdef FAKE_ANY_FUNCTION
	snprintf(lastName, sizeof lastName, "%s", name);
	*f = &otherFunction;
	return 0;
#endif
	return 500; /* hipErrorNotFound */
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
	unsigned by, unsigned bz, unsigned shared, hipStream_t s, void **params, void **extra) {
	if (extra != NULL) return 1;
	unsigned dims[9] = {gx, gy, gz, bx, by, bz, shared};
	memcpy(lastLaunch, dims, sizeof dims);
	lastLaunchDevice = current;
#ifdef FAKE_KERNELS
	if (f != &axpyFunction) {
		if (gz != 1 || bz != 1 || !ARCH0(current)) return 1; /* the kernels run on the wave64 devices */
		return fakeKernelLaunch(f, gx, gy, bx, by, params) ? 0 : 400;
	}
#endif
	if (f != &axpyFunction && f != &otherFunction) return 1;
	if (f == &otherFunction) return 0;
	float *y = *(float **)params[0];
	const float *x = *(const float **)params[1];
	float a = *(float *)params[2];
	int n = *(int *)params[3];
	for (unsigned i = 0; i < gx * bx; i++)
		if ((int)i < n) y[i] += a * x[i];
	return 0;
}

hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *n, hipFunction_t f, int blockSize, size_t dyn) {
	*n = (int)((65536 - dyn) / (size_t)blockSize / 32);
	return 0;
}

int fakeAllocs(void) { return allocs; }
int fakeObjects(void) { return streams + events + modules; }
unsigned fakeLastLaunch(int i) { return lastLaunch[i]; }
int fakeLastLaunchDevice(void) { return lastLaunchDevice; }
#endif
