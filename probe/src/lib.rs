//! What a provider's machine has, read off the machine itself: its NVIDIA GPUs through the CUDA
//! driver API, its CPU cores, memory and the free space of the disk jobs write to.
//!
//! The driver (`libcuda.so.1`) is loaded when first needed, so everything here builds and runs on a
//! machine without CUDA: there [`gpus`] answers [`GpuError::NoDriver`] instead of failing to start.
//!
//! The result is a [`Hardware`]: the `[hardware]` section of the provider file (docs/provider.md),
//! which `stint provider register --probe` sends to the chain and `stint-worker probe` prints.

mod cuda;
mod host;
pub mod selftest;

pub use host::{free_bytes, read as host, Host};
use serde::{Deserialize, Serialize};
use std::{fmt, path::Path};
pub use stint_primitives::{GpuInterface, GpuVendor};

/// A machine as the provider file's `[hardware]` section describes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
	pub cpu_cores: u32,
	pub ram_mib: u64,
	/// Free space where jobs write, in GiB.
	pub disk_gib: u64,
	pub gpus: Vec<Gpu>,
}

/// One GPU, as one `[[hardware.gpus]]` table of the provider file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
	#[serde(default = "nvidia")]
	pub vendor: GpuVendor,
	/// The name the driver reports, e.g. `NVIDIA H200`.
	pub model: String,
	pub vram_mib: u32,
	/// `major.minor`, e.g. `9.0`.
	pub compute_capability: String,
	/// As `cuDriverGetVersion` reports it: 1000 × major + 10 × minor (13000 is CUDA 13.0).
	pub cuda_driver_version: u32,
	#[serde(default = "pcie")]
	pub interface: GpuInterface,
	/// The UUID the driver reports (`GPU-…`, as `nvidia-smi -L` shows it).
	pub uuid: String,
}

fn nvidia() -> GpuVendor {
	GpuVendor::Nvidia
}

fn pcie() -> GpuInterface {
	GpuInterface::Pcie
}

/// Why no GPU could be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuError {
	/// The CUDA driver library (`libcuda.so.1`) is not installed or cannot be loaded.
	NoDriver,
	/// The driver loaded but sees no device (`CUDA_ERROR_NO_DEVICE`, or a device count of 0).
	NoDevice,
	/// A driver call failed.
	Driver { call: &'static str, error: String },
}

impl fmt::Display for GpuError {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		match self {
			Self::NoDriver => write!(
				f,
				"no CUDA driver: libcuda.so.1 could not be loaded (is the NVIDIA driver installed? \
				 LD_LIBRARY_PATH is searched)"
			),
			Self::NoDevice => write!(f, "the CUDA driver sees no GPU"),
			Self::Driver { call, error } => write!(f, "CUDA driver: {call} failed: {error}"),
		}
	}
}

impl std::error::Error for GpuError {}

/// Why a machine could not be probed.
#[derive(Debug)]
pub enum ProbeError {
	Gpu(GpuError),
	/// Memory or disk could not be read.
	Host(String),
}

impl fmt::Display for ProbeError {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		match self {
			Self::Gpu(error) => write!(f, "probe: {error}"),
			Self::Host(why) => write!(f, "probe: {why}"),
		}
	}
}

impl std::error::Error for ProbeError {}

/// The NVIDIA GPUs the CUDA driver sees, in its device order.
pub fn gpus() -> Result<Vec<Gpu>, GpuError> {
	cuda::devices()
}

/// The machine: its GPUs (at least one), CPU cores, memory and the free space at `scratch`, the
/// directory jobs write to.
pub fn machine(scratch: &Path) -> Result<Hardware, ProbeError> {
	let gpus = gpus().map_err(ProbeError::Gpu)?;
	let host = host::read(scratch).map_err(ProbeError::Host)?;
	Ok(Hardware { cpu_cores: host.cpu_cores, ram_mib: host.ram_mib, disk_gib: host.disk_gib, gpus })
}

/// The machine as far as it can be read: its host side always, and its GPUs when the driver sees
/// any. Without a driver or a device the GPU list is empty and the reason comes back beside it; a
/// driver that is there but fails, and a host that cannot be read, are errors.
pub fn machine_or_host(scratch: &Path) -> Result<(Hardware, Option<GpuError>), ProbeError> {
	let host = host::read(scratch).map_err(ProbeError::Host)?;
	let (gpus, missing) = match gpus() {
		Ok(gpus) => (gpus, None),
		Err(why @ (GpuError::NoDriver | GpuError::NoDevice)) => (Vec::new(), Some(why)),
		Err(failure) => return Err(ProbeError::Gpu(failure)),
	};
	let hardware = Hardware {
		cpu_cores: host.cpu_cores,
		ram_mib: host.ram_mib,
		disk_gib: host.disk_gib,
		gpus,
	};
	Ok((hardware, missing))
}

/// `hardware` as the provider file's `[hardware]` section.
pub fn to_toml(hardware: &Hardware) -> String {
	#[derive(Serialize)]
	struct Section<'a> {
		hardware: &'a Hardware,
	}
	toml::to_string(&Section { hardware }).expect("plain strings and integers always serialize")
}

/// The driver's 16-byte device UUID in the form `nvidia-smi -L` prints:
/// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
pub fn format_uuid(bytes: &[u8; 16]) -> String {
	let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
	format!("GPU-{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// How a GPU is attached, from its model name: the driver API does not say. Names with `PCIe` or
/// `NVL` (the PCIe H100/H200 NVL cards) are PCIe; names with `SXM`, the SXM-only `… HBM3` H100s
/// and the bare data-centre names (`NVIDIA H200`, `NVIDIA B200`, …) are SXM; anything else is
/// taken as PCIe. The provider file can correct it.
pub fn interface_of(model: &str) -> GpuInterface {
	const SXM_ONLY: [&str; 7] = [
		"NVIDIA H20",
		"NVIDIA H200",
		"NVIDIA H800",
		"NVIDIA B200",
		"NVIDIA B300",
		"NVIDIA GB200",
		"NVIDIA GB300",
	];
	let words: Vec<&str> = model.split([' ', '-']).collect();
	if words.iter().any(|w| w.eq_ignore_ascii_case("PCIe") || *w == "NVL") {
		GpuInterface::Pcie
	} else if words.iter().any(|w| w.starts_with("SXM") || *w == "HBM3")
		|| SXM_ONLY.contains(&model.trim())
	{
		GpuInterface::Sxm
	} else {
		GpuInterface::Pcie
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn uuids_print_as_nvidia_smi_does() {
		let bytes = [
			0x5f, 0x3a, 0x1c, 0x2d, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
			0xaa, 0xbb,
		];
		assert_eq!(format_uuid(&bytes), "GPU-5f3a1c2d-0011-2233-4455-66778899aabb");
	}

	#[test]
	fn interfaces_follow_the_model_name() {
		use GpuInterface::*;
		for (model, interface) in [
			("NVIDIA H200", Sxm),
			("NVIDIA H200 NVL", Pcie),
			("NVIDIA H100 80GB HBM3", Sxm),
			("NVIDIA H100 PCIe", Pcie),
			("NVIDIA A100-SXM4-80GB", Sxm),
			("NVIDIA A100 80GB PCIe", Pcie),
			("NVIDIA L4", Pcie),
			("NVIDIA GeForce RTX 4090", Pcie),
			("NVIDIA B200", Sxm),
		] {
			assert_eq!(interface_of(model), interface, "{model}");
		}
	}

	#[test]
	fn the_toml_is_the_provider_files_hardware_section() {
		let hardware = Hardware {
			cpu_cores: 32,
			ram_mib: 262_144,
			disk_gib: 2000,
			gpus: vec![Gpu {
				vendor: GpuVendor::Nvidia,
				model: "NVIDIA H200".into(),
				vram_mib: 143_771,
				compute_capability: "9.0".into(),
				cuda_driver_version: 13_000,
				interface: GpuInterface::Sxm,
				uuid: "GPU-5f3a1c2d-0011-2233-4455-66778899aabb".into(),
			}],
		};
		let text = to_toml(&hardware);
		assert!(text.starts_with("[hardware]\n"), "{text}");
		assert!(text.contains("[[hardware.gpus]]\n"), "{text}");
		#[derive(Deserialize)]
		struct File {
			hardware: Hardware,
		}
		let back: File = toml::from_str(&text).unwrap();
		assert_eq!(back.hardware, hardware);
	}

	#[test]
	fn without_a_driver_the_probe_says_so() {
		// On a machine with a driver and a GPU this reads the real devices instead.
		match gpus() {
			Err(GpuError::NoDriver) => assert!(!cuda::driver_present()),
			Err(GpuError::NoDevice) => assert!(cuda::driver_present()),
			Err(other) => panic!("driver present but failing: {other}"),
			Ok(gpus) => {
				assert!(!gpus.is_empty());
				for gpu in gpus {
					assert!(gpu.uuid.starts_with("GPU-") && gpu.vram_mib > 0, "{gpu:?}");
				}
			}
		}
		let dir = tempfile::tempdir().unwrap();
		match machine(dir.path()) {
			Err(ProbeError::Gpu(_)) | Ok(_) => {}
			Err(other) => panic!("{other}"),
		}
	}
}
