/* A stand-in for the NVIDIA driver library (libcuda.so) for tests on machines without a GPU:
 * the driver API entry points the probe calls, with the same ABI, describing two GPUs:
 * 0 an NVIDIA H200 (SXM, 9.0), 1 an NVIDIA H100 PCIe (8.9), driver API 12080; device UUIDs are
 * the bytes 16*ordinal .. 16*ordinal+15. STUB_CUDA=no-device makes cuInit answer
 * CUDA_ERROR_NO_DEVICE. */
#include <stdlib.h>
#include <string.h>
typedef struct { char bytes[16]; } CUuuid;
static int no_device(void) { const char *m = getenv("STUB_CUDA"); return m && !strcmp(m, "no-device"); }
int cuInit(unsigned int flags) { return no_device() ? 100 : 0; }
int cuDriverGetVersion(int *v) { *v = 12080; return 0; }
int cuDeviceGetCount(int *n) { *n = 2; return 0; }
int cuDeviceGet(int *dev, int ordinal) { if (ordinal < 0 || ordinal > 1) return 101; *dev = ordinal; return 0; }
int cuDeviceGetName(char *name, int len, int dev) {
	strncpy(name, dev == 0 ? "NVIDIA H200" : "NVIDIA H100 PCIe", len); return 0;
}
int cuDeviceTotalMem_v2(size_t *bytes, int dev) { *bytes = (size_t)(dev == 0 ? 143155 : 81559) << 20; return 0; }
int cuDeviceGetAttribute(int *v, int attribute, int dev) {
	if (attribute == 75) { *v = dev == 0 ? 9 : 8; return 0; }
	if (attribute == 76) { *v = dev == 0 ? 0 : 9; return 0; }
	return 1;
}
int cuDeviceGetUuid(CUuuid *uuid, int dev) { for (int i = 0; i < 16; i++) uuid->bytes[i] = (char)(16 * dev + i); return 0; }
