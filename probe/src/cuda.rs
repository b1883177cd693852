//! The CUDA driver API calls of the probe: the only unsafe code of the crate.
//!
//! cudarc loads `libcuda.so.1` on the first call and panics if it is missing or lacks a symbol, so
//! the library's presence is checked first and every call runs inside `catch_unwind`.
#![allow(unsafe_code)]

use crate::{format_uuid, interface_of, Gpu, GpuError, GpuVendor};
use cudarc::driver::{
	result::{self, device, DriverError},
	sys::{self, CUdevice_attribute, CUresult},
};
use std::{ffi::c_int, panic};

/// Whether the driver library can be loaded.
pub fn driver_present() -> bool {
	// SAFETY: only tries to dlopen the library's candidate names; nothing is called.
	unsafe { sys::is_culib_present() }
}

pub fn devices() -> Result<Vec<Gpu>, GpuError> {
	if !driver_present() {
		return Err(GpuError::NoDriver);
	}
	panic::catch_unwind(read_devices).unwrap_or_else(|payload| {
		let error = payload
			.downcast_ref::<String>()
			.cloned()
			.or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
			.unwrap_or_else(|| "the driver library is unusable".into());
		Err(GpuError::Driver { call: "loading the driver", error })
	})
}

fn failed(call: &'static str) -> impl Fn(DriverError) -> GpuError {
	move |e| GpuError::Driver { call, error: format!("{:?}", e.0) }
}

fn read_devices() -> Result<Vec<Gpu>, GpuError> {
	match result::init() {
		Err(DriverError(CUresult::CUDA_ERROR_NO_DEVICE)) => return Err(GpuError::NoDevice),
		other => other.map_err(failed("cuInit"))?,
	}
	let mut version: c_int = 0;
	// SAFETY: the driver is initialised and writes one int.
	unsafe { sys::cuDriverGetVersion(&mut version) }
		.result()
		.map_err(failed("cuDriverGetVersion"))?;
	let count = device::get_count().map_err(failed("cuDeviceGetCount"))?;
	if count <= 0 {
		return Err(GpuError::NoDevice);
	}
	(0..count)
		.map(|ordinal| {
			let dev = device::get(ordinal).map_err(failed("cuDeviceGet"))?;
			let model = device::get_name(dev).map_err(failed("cuDeviceGetName"))?;
			// SAFETY: `dev` came from cuDeviceGet.
			let bytes = unsafe { device::total_mem(dev) }.map_err(failed("cuDeviceTotalMem"))?;
			let attribute = |attribute| {
				// SAFETY: `dev` came from cuDeviceGet.
				unsafe { device::get_attribute(dev, attribute) }
					.map_err(failed("cuDeviceGetAttribute"))
			};
			let major =
				attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
			let minor =
				attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
			let uuid = device::get_uuid(dev).map_err(failed("cuDeviceGetUuid"))?;
			let uuid: [u8; 16] = uuid.bytes.map(|b| b as u8);
			Ok(Gpu {
				vendor: GpuVendor::Nvidia,
				interface: interface_of(&model),
				model,
				vram_mib: u32::try_from(bytes >> 20).unwrap_or(u32::MAX),
				compute_capability: format!("{major}.{minor}"),
				cuda_driver_version: version as u32,
				uuid: format_uuid(&uuid),
			})
		})
		.collect()
}
