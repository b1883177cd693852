//! The typed hardware inventory a provider registers, and the GPU requirements an order states.
//!
//! The worker's probe fills these from the real devices (through CUDA), the registry stores them,
//! and the market matches bids against an order's requirements with [`GpuRequirements::admits`].

use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use polkadot_sdk::{
	sp_arithmetic::Permill,
	sp_core::{bounded::BoundedVec, ConstU32},
};
use scale_info::TypeInfo;

/// The longest GPU model name, in bytes (e.g. `NVIDIA H200`).
pub const MAX_GPU_MODEL_LEN: u32 = 64;
/// How many models an order may list as acceptable.
pub const MAX_ALLOWED_MODELS: u32 = 8;

/// A GPU model name as the driver reports it, e.g. `NVIDIA H200`.
pub type GpuModel = BoundedVec<u8, ConstU32<MAX_GPU_MODEL_LEN>>;

/// A device's identity in the registry: the blake2-256 hash of its UUID (`GPU-…` for NVIDIA).
/// The same physical GPU cannot be registered by two providers.
pub type DeviceId = [u8; 32];

/// Who made the GPU.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub enum GpuVendor {
	Nvidia,
	Amd,
	Intel,
	Other,
}

/// How the GPU is attached.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub enum GpuInterface {
	Pcie,
	Sxm,
}

/// A CUDA compute capability such as 9.0 (Hopper). Ordered: 8.6 < 8.9 < 9.0.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	PartialOrd,
	Ord,
	Debug,
	Default,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct ComputeCapability {
	pub major: u8,
	pub minor: u8,
}

/// One GPU of a provider's machine.
#[derive(
	Clone,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct GpuDevice {
	pub vendor: GpuVendor,
	/// Model name as the driver reports it.
	pub model: GpuModel,
	/// Memory in MiB. Never zero.
	pub vram_mib: u32,
	pub compute_capability: ComputeCapability,
	/// The CUDA driver API version the driver supports, as `cuDriverGetVersion` reports it
	/// (1000 × major + 10 × minor: 13000 is CUDA 13.0).
	pub cuda_driver_version: u32,
	pub interface: GpuInterface,
	/// blake2-256 of the device UUID.
	pub uuid_hash: DeviceId,
}

/// The registry id of the GPU whose UUID (as the driver reports it, `GPU-…`) is `uuid`.
pub fn device_id(uuid: &str) -> DeviceId {
	polkadot_sdk::sp_crypto_hashing::blake2_256(uuid.as_bytes())
}

/// A region code: an ISO 3166-1 alpha-2 country code in upper case, e.g. `*b"DE"`.
pub type RegionCode = [u8; 2];

/// Whether `region` is two upper-case ASCII letters.
pub fn is_valid_region(region: &RegionCode) -> bool {
	region.iter().all(u8::is_ascii_uppercase)
}

/// What an order needs from the devices a provider offers.
#[derive(
	Clone,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct GpuRequirements {
	/// How many GPUs, at least one.
	pub gpu_count: u32,
	/// Minimum memory of every GPU, in MiB.
	pub min_vram_mib: u32,
	/// Minimum compute capability of every GPU.
	pub min_compute_capability: ComputeCapability,
	/// If not empty, every GPU's model must be one of these.
	pub models: BoundedVec<GpuModel, ConstU32<MAX_ALLOWED_MODELS>>,
	/// Minimum CUDA driver API version (see [`GpuDevice::cuda_driver_version`]).
	pub min_cuda_driver_version: u32,
	/// If set, the provider must be registered in this region.
	pub region: Option<RegionCode>,
	/// The provider's reputation score must be at least this.
	pub min_reputation: Permill,
}

/// Why a set of devices does not meet an order's requirements.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Unfit {
	/// Not the number of devices the order asks for.
	WrongCount,
	/// A device has less memory than required.
	TooLittleVram,
	/// A device's compute capability is too low.
	ComputeCapabilityTooLow,
	/// A device's model is not in the order's list.
	ModelNotAllowed,
	/// A device's driver is too old.
	DriverTooOld,
}

impl GpuRequirements {
	/// Whether exactly these `devices` meet the requirements (region and reputation are the
	/// provider's, checked by the registry).
	pub fn admits(&self, devices: &[GpuDevice]) -> Result<(), Unfit> {
		if devices.len() as u64 != u64::from(self.gpu_count) {
			return Err(Unfit::WrongCount);
		}
		for device in devices {
			if device.vram_mib < self.min_vram_mib {
				return Err(Unfit::TooLittleVram);
			}
			if device.compute_capability < self.min_compute_capability {
				return Err(Unfit::ComputeCapabilityTooLow);
			}
			if !self.models.is_empty() && !self.models.contains(&device.model) {
				return Err(Unfit::ModelNotAllowed);
			}
			if device.cuda_driver_version < self.min_cuda_driver_version {
				return Err(Unfit::DriverTooOld);
			}
		}
		Ok(())
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	fn gpu(model: &str, vram_mib: u32, major: u8, minor: u8, driver: u32) -> GpuDevice {
		GpuDevice {
			vendor: GpuVendor::Nvidia,
			model: model.as_bytes().to_vec().try_into().unwrap(),
			vram_mib,
			compute_capability: ComputeCapability { major, minor },
			cuda_driver_version: driver,
			interface: GpuInterface::Sxm,
			uuid_hash: [vram_mib as u8; 32],
		}
	}

	fn needs(count: u32) -> GpuRequirements {
		GpuRequirements {
			gpu_count: count,
			min_vram_mib: 80_000,
			min_compute_capability: ComputeCapability { major: 8, minor: 0 },
			models: Default::default(),
			min_cuda_driver_version: 12_000,
			region: None,
			min_reputation: Permill::zero(),
		}
	}

	#[test]
	fn compute_capability_orders_by_major_then_minor() {
		let cc = |major, minor| ComputeCapability { major, minor };
		assert!(cc(8, 6) < cc(8, 9));
		assert!(cc(8, 9) < cc(9, 0));
	}

	#[test]
	fn admits_checks_every_device() {
		let h200 = gpu("NVIDIA H200", 141_000, 9, 0, 13_000);
		assert_eq!(needs(1).admits(core::slice::from_ref(&h200)), Ok(()));
		assert_eq!(needs(2).admits(core::slice::from_ref(&h200)), Err(Unfit::WrongCount));
		let small = gpu("NVIDIA L4", 24_000, 8, 9, 13_000);
		assert_eq!(needs(2).admits(&[h200.clone(), small]), Err(Unfit::TooLittleVram));
		let old = gpu("Tesla V100", 80_000, 7, 0, 13_000);
		assert_eq!(needs(1).admits(&[old]), Err(Unfit::ComputeCapabilityTooLow));
		let old_driver = gpu("NVIDIA H100", 80_000, 9, 0, 11_080);
		assert_eq!(needs(1).admits(&[old_driver]), Err(Unfit::DriverTooOld));
		let mut only_h100 = needs(1);
		only_h100.models = vec![b"NVIDIA H100".to_vec().try_into().unwrap()].try_into().unwrap();
		assert_eq!(only_h100.admits(&[h200]), Err(Unfit::ModelNotAllowed));
	}

	#[test]
	fn regions_are_two_upper_case_letters() {
		assert!(is_valid_region(b"DE"));
		assert!(!is_valid_region(b"de"));
		assert!(!is_valid_region(b"D1"));
	}
}
