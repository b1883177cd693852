//! The provider file (TOML): who the provider is, its worker key and its machine. Read by
//! `stint provider register` and `stint provider update`. The machine (`[hardware]`) is either in
//! the file or read off this machine by the worker's probe (`--probe`, [`stint_probe`]).

use serde::Deserialize;
use stint_client::{
	runtime::runtime_types::pallet_providers::types::{HardwareSpec, ProviderInfo},
	Static,
};
use stint_primitives::{device_id, is_valid_region, ComputeCapability, GpuDevice};
use stint_probe::Hardware;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
	pub name: String,
	/// Where buyers fetch results from.
	pub endpoint: String,
	pub region: String,
	/// The worker's key: a secret URI (its public key is registered) or `0x` and 32 bytes.
	pub worker_key: String,
	/// Absent when the hardware comes from the probe (`--probe`).
	pub hardware: Option<Hardware>,
}

/// The provider's info, worker key and hardware, checked.
pub struct Provider {
	pub info: ProviderInfo,
	/// The worker's sr25519 public key.
	pub worker_key: [u8; 32],
	pub hardware: HardwareSpec,
}

pub fn parse(text: &str) -> Result<ProviderFile, String> {
	toml::from_str(text).map_err(|e| e.to_string())
}

/// Where the machine's description comes from.
pub enum HardwareSource<'a> {
	/// The file's `[hardware]` section.
	File,
	/// The worker's probe, with the directory whose free space is offered as disk.
	Probe(&'a std::path::Path),
}

/// Why a provider file could not be turned into a registration.
pub enum Refusal {
	/// The file is wrong: names the field.
	File(String),
	/// The probe could not read this machine.
	Probe(String),
}

/// The file's provider with its hardware from `source`, checked.
pub fn provider(mut file: ProviderFile, source: HardwareSource) -> Result<Provider, Refusal> {
	let hardware = match (file.hardware.take(), source) {
		(Some(hardware), HardwareSource::File) => hardware,
		(None, HardwareSource::File) => {
			return Err(Refusal::File(
				"hardware: missing (add a [hardware] section, or pass --probe to read it off this \
				 machine)"
					.into(),
			))
		}
		(Some(_), HardwareSource::Probe(_)) => {
			return Err(Refusal::File(
				"hardware: the file has a [hardware] section and --probe was given: use one".into(),
			))
		}
		(None, HardwareSource::Probe(scratch)) => {
			stint_probe::machine(scratch).map_err(|e| Refusal::Probe(e.to_string()))?
		}
	};
	check(file, hardware).map_err(Refusal::File)
}

fn check(file: ProviderFile, hardware: Hardware) -> Result<Provider, String> {
	let region: [u8; 2] =
		file.region.as_bytes().try_into().ok().filter(is_valid_region).ok_or_else(|| {
			format!("region: `{}` is not a two-letter upper-case code", file.region)
		})?;
	let worker_key =
		stint_client::parse_worker_key(&file.worker_key).map_err(|e| format!("worker_key: {e}"))?;
	let gpus = hardware
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
			cpu_cores: hardware.cpu_cores,
			ram_mib: hardware.ram_mib,
			disk_gib: hardware.disk_gib,
		},
	})
}
