/* A stand-in for the NVIDIA driver library (libcuda.so) for tests on machines without a GPU:
 * the driver API entry points the probe and the self-test call, with the same ABI, describing
 * two GPUs: 0 an NVIDIA H200 (SXM, 9.0), 1 an NVIDIA H100 PCIe (8.9), driver API 12080 (or
 * $STUB_CUDA_VERSION); device UUIDs are the bytes 16*ordinal .. 16*ordinal+15.
 *
 * Device memory is host memory. A module loads from PTX text only if it targets a compute
 * capability the device has (`.target sm_XY`) and a PTX ISA the driver knows (CUDA 10.2: up to
 * 6.5, 11.0: 7.0, 12.0: 8.0, 12.8: 8.7, 12.9: 8.8, 13.0: 9.0), as a real driver's JIT would; a launch of its `fill` entry runs the
 * self-test kernel's formula on the host, one element per thread of the grid, so a launch that
 * is too small leaves elements untouched. GPU 0 has memory pools (the asynchronous allocator),
 * GPU 1 not, so both of cudarc's allocation paths run.
 *
 * STUB_CUDA: `no-device` makes cuInit answer CUDA_ERROR_NO_DEVICE; `bad-1` makes GPU 1 compute
 * one element wrong (a faulty GPU). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	SUCCESS = 0,
	INVALID_VALUE = 1,
	OUT_OF_MEMORY = 2,
	NO_DEVICE = 100,
	INVALID_DEVICE = 101,
	INVALID_IMAGE = 200,
	INVALID_CONTEXT = 201,
	INVALID_HANDLE = 400,
	NOT_FOUND = 500,
	INVALID_PTX = 218,
	UNSUPPORTED_PTX_VERSION = 222,
};
#define DEVICES 2

typedef struct { char bytes[16]; } CUuuid;
typedef struct { int device; } Context;
typedef struct { int device; int has_fill; } Module;
typedef struct { Module *module; } Function;

static Context contexts[DEVICES] = { { 0 }, { 1 } };
static __thread Context *current;

static int mode(const char *want) { const char *m = getenv("STUB_CUDA"); return m && !strcmp(m, want); }
static int compute_capability(int dev) { return dev == 0 ? 90 : 89; }

static const char *error_name(int error) {
	switch (error) {
	case SUCCESS: return "CUDA_SUCCESS";
	case INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
	case OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
	case NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
	case INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
	case INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
	case INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
	case INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
	case UNSUPPORTED_PTX_VERSION: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
	case INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
	case NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
	default: return NULL;
	}
}
int cuGetErrorName(int error, const char **name) { *name = error_name(error); return *name ? SUCCESS : INVALID_VALUE; }
int cuGetErrorString(int error, const char **text) { *text = error_name(error); return *text ? SUCCESS : INVALID_VALUE; }

int cuInit(unsigned int flags) { (void)flags; return mode("no-device") ? NO_DEVICE : SUCCESS; }
static int driver_version(void) {
	const char *v = getenv("STUB_CUDA_VERSION");
	return v && *v ? atoi(v) : 12080;
}
/* The newest PTX ISA the driver's JIT accepts, times ten. */
static int ptx_isa_max(void) {
	int v = driver_version();
	return v >= 13000 ? 90 : v >= 12090 ? 88 : v >= 12080 ? 87 : v >= 12000 ? 80 : v >= 11000 ? 70 : 65;
}
int cuDriverGetVersion(int *v) { *v = driver_version(); return SUCCESS; }
int cuDeviceGetCount(int *n) { *n = DEVICES; return SUCCESS; }
int cuDeviceGet(int *dev, int ordinal) {
	if (ordinal < 0 || ordinal >= DEVICES) return INVALID_DEVICE;
	*dev = ordinal;
	return SUCCESS;
}
int cuDeviceGetName(char *name, int len, int dev) {
	strncpy(name, dev == 0 ? "NVIDIA H200" : "NVIDIA H100 PCIe", len);
	return SUCCESS;
}
int cuDeviceTotalMem_v2(size_t *bytes, int dev) { *bytes = (size_t)(dev == 0 ? 143155 : 81559) << 20; return SUCCESS; }
int cuDeviceGetAttribute(int *v, int attribute, int dev) {
	if (dev < 0 || dev >= DEVICES) return INVALID_DEVICE;
	switch (attribute) {
	case 75: *v = compute_capability(dev) / 10; return SUCCESS; /* major */
	case 76: *v = compute_capability(dev) % 10; return SUCCESS; /* minor */
	case 115: *v = dev == 0; return SUCCESS;                     /* memory pools */
	default: return INVALID_VALUE;
	}
}
int cuDeviceGetUuid(CUuuid *uuid, int dev) { for (int i = 0; i < 16; i++) uuid->bytes[i] = (char)(16 * dev + i); return SUCCESS; }

/* Contexts: one primary context per device. */
int cuDevicePrimaryCtxRetain(Context **ctx, int dev) {
	if (dev < 0 || dev >= DEVICES) return INVALID_DEVICE;
	*ctx = &contexts[dev];
	return SUCCESS;
}
int cuDevicePrimaryCtxRelease_v2(int dev) { return dev >= 0 && dev < DEVICES ? SUCCESS : INVALID_DEVICE; }
int cuCtxSetCurrent(Context *ctx) { current = ctx; return SUCCESS; }
int cuCtxGetCurrent(Context **ctx) { *ctx = current; return SUCCESS; }
int cuCtxSynchronize(void) { return current ? SUCCESS : INVALID_CONTEXT; }

/* The PTX number after `key` (`.target sm_90` -> 90, `.version 8.7` -> 87), or -1. */
static int ptx_number(const char *ptx, const char *key) {
	const char *at = strstr(ptx, key);
	if (!at) return -1;
	at += strlen(key);
	while (*at == ' ' || *at == '\t') at++;
	if (!strncmp(at, "sm_", 3)) at += 3;
	int major = 0, minor = 0, digits = 0;
	for (; *at >= '0' && *at <= '9'; at++, digits++) major = major * 10 + (*at - '0');
	if (*at == '.') {
		at++;
		for (; *at >= '0' && *at <= '9'; at++) minor = minor * 10 + (*at - '0');
		return major * 10 + minor;
	}
	return digits ? major : -1;
}

int cuModuleLoadData(Module **module, const void *image) {
	if (!current) return INVALID_CONTEXT;
	const char *ptx = image;
	int version = ptx_number(ptx, ".version"), target = ptx_number(ptx, ".target");
	if (version < 0 || target < 0) return INVALID_IMAGE;
	if (version > ptx_isa_max()) return UNSUPPORTED_PTX_VERSION;
	if (target > compute_capability(current->device)) return INVALID_PTX;
	Module *m = calloc(1, sizeof *m);
	if (!m) return OUT_OF_MEMORY;
	m->device = current->device;
	m->has_fill = strstr(ptx, ".entry fill(") != NULL;
	*module = m;
	return SUCCESS;
}
int cuModuleUnload(Module *module) { free(module); return SUCCESS; }
int cuModuleGetFunction(Function **f, Module *module, const char *name) {
	if (!module) return INVALID_HANDLE;
	if (strcmp(name, "fill") || !module->has_fill) return NOT_FOUND;
	Function *fn = calloc(1, sizeof *fn);
	if (!fn) return OUT_OF_MEMORY;
	fn->module = module;
	*f = fn;
	return SUCCESS;
}

/* Memory: device pointers are host pointers. */
static int alloc(uint64_t *ptr, size_t bytes) {
	if (!current) return INVALID_CONTEXT;
	void *p = malloc(bytes ? bytes : 1);
	if (!p) return OUT_OF_MEMORY;
	memset(p, 0xa5, bytes); /* not zero: an allocation nobody cleared shows */
	*ptr = (uint64_t)(uintptr_t)p;
	return SUCCESS;
}
int cuMemAlloc_v2(uint64_t *ptr, size_t bytes) { return alloc(ptr, bytes); }
int cuMemAllocAsync(uint64_t *ptr, size_t bytes, void *stream) {
	(void)stream;
	if (current && current->device != 0) return INVALID_VALUE; /* no memory pools on GPU 1 */
	return alloc(ptr, bytes);
}
int cuMemFree_v2(uint64_t ptr) { free((void *)(uintptr_t)ptr); return SUCCESS; }
int cuMemFreeAsync(uint64_t ptr, void *stream) { (void)stream; return cuMemFree_v2(ptr); }
int cuMemsetD8Async(uint64_t dst, unsigned char value, size_t n, void *stream) {
	(void)stream;
	memset((void *)(uintptr_t)dst, value, n);
	return SUCCESS;
}
int cuMemsetD8_v2(uint64_t dst, unsigned char value, size_t n) { return cuMemsetD8Async(dst, value, n, NULL); }
int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t n, void *stream) {
	(void)stream;
	memcpy(dst, (void *)(uintptr_t)src, n);
	return SUCCESS;
}
int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n) { return cuMemcpyDtoHAsync_v2(dst, src, n, NULL); }

/* Streams and events: everything runs at once, so there is nothing to wait for. */
int cuStreamSynchronize(void *stream) { (void)stream; return SUCCESS; }
int cuStreamQuery(void *stream) { (void)stream; return SUCCESS; }
int cuStreamWaitEvent(void *stream, void *event, unsigned int flags) { (void)stream; (void)event; (void)flags; return SUCCESS; }
static int events;
int cuEventCreate(void **event, unsigned int flags) { (void)flags; *event = &events; events++; return SUCCESS; }
int cuEventRecord(void *event, void *stream) { (void)event; (void)stream; return SUCCESS; }
int cuEventSynchronize(void *event) { (void)event; return SUCCESS; }
int cuEventDestroy_v2(void *event) { (void)event; events--; return SUCCESS; }

/* `fill(out, n, seed)`: out[i] = (i * 2654435761) ^ seed for each thread i < n. */
int cuLaunchKernel(Function *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		   unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
	(void)shared; (void)stream; (void)extra;
	if (!f || !params) return INVALID_VALUE;
	if (!current || current->device != f->module->device) return INVALID_CONTEXT;
	if (bx == 0 || bx > 1024 || gx == 0 || gy != 1 || gz != 1 || by != 1 || bz != 1) return INVALID_VALUE;
	uint32_t *out = (uint32_t *)(uintptr_t)*(uint64_t *)params[0];
	uint32_t n = *(uint32_t *)params[1], seed = *(uint32_t *)params[2];
	uint64_t threads = (uint64_t)gx * bx;
	for (uint64_t i = 0; i < threads && i < n; i++) out[i] = ((uint32_t)i * 2654435761u) ^ seed;
	if (mode("bad-1") && current->device == 1 && n > 12345) out[12345] ^= 1u << 7;
	return SUCCESS;
}
