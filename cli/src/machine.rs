//! The provider file (TOML): who the provider is, its worker key and its machine. Read by
//! `stint provider register` and `stint provider update`.

use serde::Deserialize;
use stint_client::{
	keypair,
	runtime::runtime_types::pallet_providers::types::{HardwareSpec, ProviderInfo},
	Static,
};
use stint_primitives::{
	device_id, is_valid_region, ComputeCapability, GpuDevice, GpuInterface, GpuVendor,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
	pub name: String,
	/// Where buyers fetch results from.
	pub endpoint: String,
	pub region: String,
	/// The worker's key: a secret URI (its public key is registered) or `0x` and 32 bytes.
	pub worker_key: String,
	pub hardware: Machine,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
	pub cpu_cores: u32,
	pub ram_mib: u64,
	pub disk_gib: u64,
	pub gpus: Vec<Gpu>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
	#[serde(default = "nvidia")]
	pub vendor: GpuVendor,
	pub model: String,
	pub vram_mib: u32,
	/// `major.minor`, e.g. `9.0`.
	pub compute_capability: String,
	pub cuda_driver_version: u32,
	#[serde(default = "pcie")]
	pub interface: GpuInterface,
	/// The UUID the driver reports (`GPU-…`); the chain stores its blake2-256.
	pub uuid: String,
}

fn nvidia() -> GpuVendor {
	GpuVendor::Nvidia
}

fn pcie() -> GpuInterface {
	GpuInterface::Pcie
}

/// The provider's info, worker key and hardware, checked.
pub struct Provider {
	pub info: ProviderInfo,
	/// The worker's sr25519 public key.
	pub worker_key: [u8; 32],
	pub hardware: HardwareSpec,
}

pub fn parse(text: &str) -> Result<Provider, String> {
	let file: ProviderFile = toml::from_str(text).map_err(|e| e.to_string())?;
	let region: [u8; 2] =
		file.region.as_bytes().try_into().ok().filter(is_valid_region).ok_or_else(|| {
			format!("region: `{}` is not a two-letter upper-case code", file.region)
		})?;
	let worker_key = match file.worker_key.strip_prefix("0x") {
		Some(hex) => hex::decode(hex)
			.ok()
			.and_then(|b| <[u8; 32]>::try_from(b).ok())
			.ok_or_else(|| "worker_key: not 32 bytes of hex".to_string())?,
		None => keypair(&file.worker_key).map_err(|e| format!("worker_key: {e}"))?.public_key().0,
	};
	let gpus = file
		.hardware
		.gpus
		.iter()
		.enumerate()
		.map(|(i, gpu)| {
			let cc = &gpu.compute_capability;
			let (major, minor) = cc.split_once('.').unwrap_or((cc, "0"));
			let bad_cc = || format!("hardware.gpus[{i}].compute_capability: `{cc}`");
			Ok(Static(GpuDevice {
				vendor: gpu.vendor,
				model: gpu.model.as_bytes().to_vec().try_into().map_err(|_| {
					format!(
						"hardware.gpus[{i}].model: longer than {} bytes",
						stint_primitives::MAX_GPU_MODEL_LEN
					)
				})?,
				vram_mib: gpu.vram_mib,
				compute_capability: ComputeCapability {
					major: major.parse().map_err(|_| bad_cc())?,
					minor: minor.parse().map_err(|_| bad_cc())?,
				},
				cuda_driver_version: gpu.cuda_driver_version,
				interface: gpu.interface,
				uuid_hash: device_id(&gpu.uuid),
			}))
		})
		.collect::<Result<Vec<_>, String>>()?;
	Ok(Provider {
		info: ProviderInfo {
			name: file.name.into_bytes(),
			endpoint: file.endpoint.into_bytes(),
			region,
		},
		worker_key,
		hardware: HardwareSpec {
			gpus,
			cpu_cores: file.hardware.cpu_cores,
			ram_mib: file.hardware.ram_mib,
			disk_gib: file.hardware.disk_gib,
		},
	})
}
