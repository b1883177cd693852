//! The GPU self-test: a small kernel, shipped as PTX text, loaded by the driver (which compiles
//! it for the device) on each GPU, run over a million elements; its output is checksummed (each
//! element weighted by its position), compared with the checksum computed here, and timed. Where
//! NVRTC loads, the same kernel is also compiled from CUDA C at run time and checked the same
//! way (unless the driver cannot take what that NVRTC writes: said, but not the GPU's failure).
//! Like the probe, it loads the driver library only when run, checks that it is there first, and
//! says "no GPU" without one.
#![allow(unsafe_code)]

use std::{panic, sync::Arc, time::Instant};

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use serde::{Deserialize, Serialize};

use crate::GpuError;

/// Elements the kernel writes.
pub const ELEMENTS: u32 = 1 << 20;
/// Mixed into every element, so a kernel that did nothing cannot pass.
pub const SEED: u32 = 0x5eed_1234;

/// `out[i] = (i * 2654435761) ^ seed`, for `i < n`: PTX for any GPU from compute capability 5.0,
/// which the driver compiles for the device it loads on.
pub const FILL_PTX: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry fill(
	.param .u64 out,
	.param .u32 n,
	.param .u32 seed
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<9>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	ld.param.u32 %r2, [seed];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r6, %r3, %r4, %r5;
	setp.ge.u32 %p1, %r6, %r1;
	@%p1 bra DONE;
	mul.lo.s32 %r7, %r6, -1640531535;
	xor.b32 %r8, %r7, %r2;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r6, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r8;
DONE:
	ret;
}
"#;

/// The same kernel in CUDA C, for NVRTC.
pub const FILL_CUDA: &str = r#"
extern "C" __global__ void fill(unsigned int *out, unsigned int n, unsigned int seed) {
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = (i * 2654435761u) ^ seed;
}
"#;

/// The checksum of the kernel's output: each element weighted by its position plus one, summed
/// modulo 2^64 (a plain sum would not see elements swapped, or a bit flipped in every other one).
pub fn checksum(out: &[u32]) -> u64 {
	out.iter()
		.enumerate()
		.fold(0u64, |sum, (i, &x)| sum.wrapping_add(u64::from(x).wrapping_mul(i as u64 + 1)))
}

/// The checksum the kernel's output must have.
pub fn expected_checksum(n: u32, seed: u32) -> u64 {
	let out: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761) ^ seed).collect();
	checksum(&out)
}

/// One run of the kernel on one GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRun {
	pub checksum: u64,
	pub ok: bool,
	/// Launch to results on the host, in milliseconds (the first launch includes loading).
	pub millis: f64,
}

/// The self-test of one GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceSelfTest {
	pub ordinal: usize,
	pub uuid: String,
	pub name: String,
	pub expected: u64,
	/// The shipped PTX, loaded by the driver.
	pub ptx: Result<KernelRun, String>,
	/// The kernel compiled by NVRTC, where NVRTC loads and the driver takes what it compiled.
	pub nvrtc: Option<Result<KernelRun, String>>,
	/// Why NVRTC's kernel did not run although NVRTC loads: it did not compile, or the driver
	/// refused its PTX (an NVRTC newer than the driver writes a PTX version the driver does not
	/// know). A mismatch of the machine's CUDA libraries, not a fault of the GPU: said, not failed.
	#[serde(default, skip_serializing_if = "Option::is_none")]
	pub nvrtc_unusable: Option<String>,
}

impl DeviceSelfTest {
	/// Passed: the PTX kernel gave the right sum (and NVRTC's did too, where it ran; one the
	/// driver could not load does not count against the GPU).
	pub fn passed(&self) -> bool {
		matches!(&self.ptx, Ok(run) if run.ok)
			&& !matches!(&self.nvrtc, Some(Err(_)) | Some(Ok(KernelRun { ok: false, .. })))
	}
}

/// Self-tests every GPU the driver sees.
pub fn run() -> Result<Vec<DeviceSelfTest>, GpuError> {
	if !crate::cuda::driver_present() {
		return Err(GpuError::NoDriver);
	}
	// The GPUs as the probe reads them (also: "no device" is told apart from a failure).
	let gpus = crate::gpus()?;
	panic::catch_unwind(|| {
		gpus.iter()
			.enumerate()
			.map(|(ordinal, gpu)| test_device(ordinal, &gpu.uuid, &gpu.model))
			.collect()
	})
	.map_err(|payload| GpuError::Driver {
		call: "the self-test",
		error: payload
			.downcast_ref::<String>()
			.cloned()
			.or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
			.unwrap_or_else(|| "the driver library is unusable".into()),
	})
}

fn test_device(ordinal: usize, uuid: &str, name: &str) -> DeviceSelfTest {
	let expected = expected_checksum(ELEMENTS, SEED);
	let context = CudaContext::new(ordinal).map_err(|e| format!("{e:?}"));
	let ptx = context.clone().and_then(|ctx| {
		launch(&ctx, cudarc::nvrtc::Ptx::from_src(FILL_PTX), expected).map_err(String::from)
	});
	// SAFETY: only tries to dlopen NVRTC's candidate names; nothing is called.
	let nvrtc_present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
	let (mut nvrtc, mut nvrtc_unusable) = (None, None);
	if let (true, Ok(ctx)) = (nvrtc_present, &context) {
		let compiled = panic::catch_unwind(|| cudarc::nvrtc::compile_ptx(FILL_CUDA))
			.map_err(|_| "NVRTC is unusable".to_string())
			.and_then(|compiled| compiled.map_err(|e| format!("NVRTC: {e:?}")));
		match compiled.map(|ptx| launch(ctx, ptx, expected)) {
			Err(why) | Ok(Err(Failure::Load(why))) => nvrtc_unusable = Some(why),
			Ok(Err(failure @ Failure::Run(_))) => nvrtc = Some(Err(failure.into())),
			Ok(Ok(run)) => nvrtc = Some(Ok(run)),
		}
	}
	DeviceSelfTest {
		ordinal,
		uuid: uuid.to_string(),
		name: name.to_string(),
		expected,
		ptx,
		nvrtc,
		nvrtc_unusable,
	}
}

/// How a launch failed: the driver did not take the kernel, or running it failed.
enum Failure {
	Load(String),
	Run(String),
}

impl From<Failure> for String {
	fn from(failure: Failure) -> String {
		match failure {
			Failure::Load(why) | Failure::Run(why) => why,
		}
	}
}

fn launch(
	ctx: &Arc<CudaContext>,
	ptx: cudarc::nvrtc::Ptx,
	expected: u64,
) -> Result<KernelRun, Failure> {
	fn error(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> String {
		move |e| format!("{what}: {e:?}")
	}
	let start = Instant::now();
	let module =
		ctx.load_module(ptx).map_err(error("loading the kernel")).map_err(Failure::Load)?;
	let fill =
		module.load_function("fill").map_err(error("finding the kernel")).map_err(Failure::Load)?;
	let run = || {
		let stream = ctx.default_stream();
		let mut out = stream.alloc_zeros::<u32>(ELEMENTS as usize).map_err(error("allocating"))?;
		let (n, seed) = (ELEMENTS, SEED);
		let mut builder = stream.launch_builder(&fill);
		builder.arg(&mut out).arg(&n).arg(&seed);
		// SAFETY: `fill` takes (u32*, u32, u32) and writes only the first `n` elements of `out`,
		// which holds `n`.
		unsafe { builder.launch(LaunchConfig::for_num_elems(ELEMENTS)) }
			.map_err(error("launching"))?;
		stream.clone_dtoh(&out).map_err(error("copying back"))
	};
	let host = run().map_err(Failure::Run)?;
	let millis = start.elapsed().as_secs_f64() * 1000.0;
	let checksum = checksum(&host);
	Ok(KernelRun { checksum, ok: checksum == expected, millis })
}

#[cfg(test)]
mod tests {
	use super::*;

	/// `expected_checksum(ELEMENTS, SEED)`, computed in Python from the formula.
	const PINNED: u64 = 18_444_391_016_565_833_728;

	#[test]
	fn the_expected_sum_is_the_kernels_formula() {
		assert_eq!(expected_checksum(0, SEED), 0);
		assert_eq!(expected_checksum(1, SEED), u64::from(SEED));
		assert_eq!(expected_checksum(2, 0), 2 * 2_654_435_761);
		// Pinned (computed independently), so that a change to the formula or constants is seen.
		assert_eq!(expected_checksum(ELEMENTS, SEED), PINNED);
		assert_ne!(expected_checksum(ELEMENTS, SEED + 1), PINNED);
		// Swapped elements, or one bit flipped in every other element, change it.
		let mut out: Vec<u32> = (0..8u32).map(|i| i.wrapping_mul(2_654_435_761) ^ SEED).collect();
		let good = checksum(&out);
		out.swap(2, 5);
		assert_ne!(checksum(&out), good);
		out.swap(2, 5);
		out.iter_mut().for_each(|x| *x ^= 1);
		assert_ne!(checksum(&out), good);
		// -1640531535 is 2654435761 as a 32-bit two's complement (the PTX's constant).
		assert_eq!((-1_640_531_535i32) as u32, 2_654_435_761);
	}

	#[test]
	fn without_a_driver_the_self_test_says_no_gpu() {
		if !crate::cuda::driver_present() {
			assert_eq!(run(), Err(GpuError::NoDriver));
		}
	}

	#[test]
	fn a_device_passes_only_when_every_kernel_that_ran_gave_the_sum() {
		let good = KernelRun { checksum: 1, ok: true, millis: 1.0 };
		let bad = KernelRun { checksum: 2, ok: false, millis: 1.0 };
		let test = |ptx: Result<KernelRun, String>, nvrtc| DeviceSelfTest {
			ordinal: 0,
			uuid: "GPU-x".into(),
			name: "x".into(),
			expected: 1,
			ptx,
			nvrtc,
			nvrtc_unusable: None,
		};
		assert!(test(Ok(good.clone()), None).passed());
		assert!(test(Ok(good.clone()), Some(Ok(good.clone()))).passed());
		assert!(!test(Ok(bad.clone()), None).passed());
		assert!(!test(Err("no".into()), None).passed());
		assert!(!test(Ok(good.clone()), Some(Ok(bad))).passed());
		assert!(!test(Ok(good), Some(Err("NVRTC: x".into()))).passed());
	}
}
