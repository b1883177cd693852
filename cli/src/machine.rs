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
	/// The worker's key: a secret URI (its public key is registered and its consent signed
	/// here) or `0x` and 32 bytes (then `worker_key_proof` gives its consent).
	pub worker_key: String,
	/// With a public `worker_key`: its consent to act for the provider, `0x` and 64 bytes
	/// (`stint --key <worker key> provider key-proof <provider>`).
	pub worker_key_proof: Option<String>,
	/// Absent when the hardware comes from the probe (`--probe`).
	pub hardware: Option<Hardware>,
}

/// The provider's info, worker key and hardware, checked.
pub struct Provider {
	pub info: ProviderInfo,
	/// The worker's sr25519 public key.
	pub worker_key: [u8; 32],
	/// Its consent to act for the provider.
	pub proof: [u8; 64],
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
/// The file's own fields are checked before the probe runs, so a mistake in the file is named
/// even on a machine without a GPU.
pub fn provider(
	file: ProviderFile,
	source: HardwareSource,
	account: &stint_client::AccountId,
	scope: stint_client::ConsentScope,
) -> Result<Provider, Refusal> {
	let (info, worker_key, proof) = check_info(&file, account, scope).map_err(Refusal::File)?;
	let hardware = match (file.hardware, source) {
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
			let hardware =
				stint_probe::machine(scratch).map_err(|e| Refusal::Probe(e.to_string()))?;
			self_tested(&hardware).map_err(Refusal::Probe)?;
			hardware
		}
	};
	let hardware = check_hardware(hardware).map_err(Refusal::File)?;
	Ok(Provider { info, worker_key, proof, hardware })
}

/// Every GPU read passes the self-test (see `stint-worker selftest`): one that computes wrong
/// is not registered, since no worker would offer it.
fn self_tested(hardware: &Hardware) -> Result<(), String> {
	let tests = stint_probe::selftest::run()
		.map_err(|why| format!("the GPUs were read but could not be self-tested: {why}"))?;
	let failed: Vec<String> = tests
		.iter()
		.filter(|test| !test.passed())
		.map(|test| format!("{} ({})", test.uuid, test.name))
		.collect();
	match (failed.is_empty(), tests.len() == hardware.gpus.len()) {
		(true, true) => Ok(()),
		(true, false) => Err("the GPUs changed between the reading and the self-test".into()),
		(false, _) => Err(format!(
			"{} failed the self-test (`stint-worker selftest` says why): not registered",
			failed.join(", ")
		)),
	}
}

/// The name, endpoint and region, and the worker key.
fn check_info(
	file: &ProviderFile,
	account: &stint_client::AccountId,
	scope: stint_client::ConsentScope,
) -> Result<(ProviderInfo, [u8; 32], [u8; 64]), String> {
	let region: [u8; 2] =
		file.region.as_bytes().try_into().ok().filter(is_valid_region).ok_or_else(|| {
			format!("region: `{}` is not a two-letter upper-case code", file.region)
		})?;
	let (worker_key, proof) = stint_client::worker_key_with_proof(
		&file.worker_key,
		file.worker_key_proof.as_deref(),
		account,
		scope,
	)
	.map_err(|e| format!("worker_key: {e}"))?;
	let info = ProviderInfo {
		name: stint_client::Bounded(file.name.clone().into_bytes()),
		endpoint: stint_client::Bounded(file.endpoint.clone().into_bytes()),
		region,
	};
	Ok((info, worker_key, proof))
}

fn check_hardware(hardware: Hardware) -> Result<HardwareSpec, String> {
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
	Ok(HardwareSpec {
		gpus: stint_client::Bounded(gpus),
		cpu_cores: hardware.cpu_cores,
		ram_mib: hardware.ram_mib,
		disk_gib: hardware.disk_gib,
	})
}

#[cfg(test)]
mod tests {
	use super::*;

	const FILE: &str = r#"name = "dave-gpus"
endpoint = "https://gpus.example:8600"
region = "NL"
worker_key = "//Dave//stash"
"#;

	fn refusal(text: &str, source: HardwareSource) -> String {
		let account = stint_client::AccountId::from([0; 32]);
		match provider(parse(text).unwrap(), source, &account, Default::default()) {
			Err(Refusal::File(why)) => format!("file: {why}"),
			Err(Refusal::Probe(why)) => format!("probe: {why}"),
			Ok(_) => "accepted".into(),
		}
	}

	#[test]
	fn the_file_is_checked_before_the_probe_runs() {
		let scratch = std::path::Path::new(".");
		let bad_region = FILE.replace("\"NL\"", "\"Netherlands\"");
		assert!(refusal(&bad_region, HardwareSource::Probe(scratch)).starts_with("file: region"));
		let bad_key = FILE.replace("//Dave//stash", "0x1234");
		assert!(refusal(&bad_key, HardwareSource::Probe(scratch)).starts_with("file: worker_key"));
		// A public key without its consent is refused, naming how to make one.
		let public = FILE.replace("//Dave//stash", &format!("0x{}", "11".repeat(32)));
		assert!(refusal(&public, HardwareSource::Probe(scratch)).contains("key-proof"));
		assert!(refusal(FILE, HardwareSource::File).starts_with("file: hardware: missing"));
		let with_hardware = format!(
			"{FILE}[hardware]\ncpu_cores = 8\nram_mib = 1024\ndisk_gib = 10\n\n[[hardware.gpus]]\n\
			 model = \"NVIDIA L4\"\nvram_mib = 23034\ncompute_capability = \"8.9\"\n\
			 cuda_driver_version = 13000\nuuid = \"GPU-dave-0\"\n"
		);
		assert!(refusal(&with_hardware, HardwareSource::Probe(scratch)).contains("use one"));
		assert_eq!(refusal(&with_hardware, HardwareSource::File), "accepted");
		let bad_cc = with_hardware.replace("\"8.9\"", "\"eight\"");
		assert!(refusal(&bad_cc, HardwareSource::File)
			.starts_with("file: hardware.gpus[0].compute_capability"));
	}
}
