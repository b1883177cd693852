//! The GPUs jobs get: which of the chain's device ids (blake2-256 of a GPU's UUID) this machine
//! really has, read through the probe, and their UUIDs for the container's device request.

use std::collections::HashMap;

use stint_primitives::{device_id, DeviceId};

use crate::config::GpuMode;

/// The GPUs of this machine, by the id the chain knows them by.
#[derive(Clone, Debug, Default)]
pub struct Gpus {
	mode: Option<GpuMode>,
	by_id: HashMap<DeviceId, String>,
	/// Why none could be read, if none could.
	pub missing: Option<String>,
	/// Whether the executor can pass them to jobs was not known at start (it did not answer):
	/// none is offered until it says it can.
	pub unverified: bool,
}

impl Gpus {
	/// Reads the machine's GPUs and self-tests each one (mode `auto`): only those that pass are
	/// offered and run on. Mode `off`: none.
	pub fn detect(mode: GpuMode) -> Self {
		match mode {
			GpuMode::Off => Self { mode: Some(mode), ..Default::default() },
			GpuMode::Auto => match stint_probe::selftest::run() {
				Ok(tests) => {
					for test in &tests {
						let verdict = describe(test);
						match test.passed() {
							true => crate::log::info("gpu", None, verdict),
							false => crate::log::alert(
								"gpu",
								None,
								format!("{verdict}: this GPU is not offered"),
							),
						}
					}
					Self::from_uuids(tests.into_iter().filter(|t| t.passed()).map(|t| t.uuid))
				}
				Err(why) => {
					Self { mode: Some(mode), missing: Some(why.to_string()), ..Default::default() }
				}
			},
		}
	}

	/// The GPUs with these UUIDs (mode `auto`).
	pub fn from_uuids(uuids: impl IntoIterator<Item = String>) -> Self {
		Self {
			mode: Some(GpuMode::Auto),
			by_id: uuids.into_iter().map(|uuid| (device_id(&uuid), uuid)).collect(),
			missing: None,
			unverified: false,
		}
	}

	/// None of these GPUs can be given to jobs (the executor cannot pass GPUs through): the
	/// worker then offers and runs none of them.
	pub fn unusable(self, why: impl Into<String>) -> Self {
		Self {
			mode: self.mode,
			by_id: HashMap::new(),
			missing: Some(why.into()),
			unverified: false,
		}
	}

	/// Whether GPUs are passed to jobs at all.
	pub fn passthrough(&self) -> bool {
		self.mode != Some(GpuMode::Off)
	}

	/// Whether this machine can serve `device` (with GPUs off: any device bound to the key).
	pub fn sees(&self, device: &DeviceId) -> bool {
		!self.passthrough() || self.by_id.contains_key(device)
	}

	/// The UUIDs to pass for `devices`; with GPUs off, none. The devices it does not see, if
	/// any, as the error.
	pub fn uuids_for(&self, devices: &[DeviceId]) -> Result<Vec<String>, Vec<DeviceId>> {
		if !self.passthrough() {
			return Ok(Vec::new());
		}
		let unknown: Vec<DeviceId> =
			devices.iter().filter(|d| !self.by_id.contains_key(*d)).copied().collect();
		match unknown.is_empty() {
			true => Ok(devices.iter().map(|d| self.by_id[d].clone()).collect()),
			false => Err(unknown),
		}
	}
}

/// One line about a GPU's self-test.
pub fn describe(test: &stint_probe::selftest::DeviceSelfTest) -> String {
	let run = |run: &Result<stint_probe::selftest::KernelRun, String>| match run {
		Ok(run) if run.ok => format!("ok in {:.2} ms", run.millis),
		Ok(run) => format!("WRONG SUM {} (expected {})", run.checksum, test.expected),
		Err(why) => format!("failed: {why}"),
	};
	let nvrtc = match (&test.nvrtc, &test.nvrtc_unusable) {
		(Some(result), _) => format!("; NVRTC kernel {}", run(result)),
		(None, Some(why)) => format!("; NVRTC kernel not run, not the GPU's fault ({why})"),
		(None, None) => "; NVRTC not installed".to_string(),
	};
	format!(
		"self-test {} ({}, {}): PTX kernel {}{nvrtc}",
		test.uuid,
		test.ordinal,
		test.name,
		run(&test.ptx)
	)
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn only_the_gpus_seen_are_passed_by_uuid() {
		let gpus = Gpus::from_uuids(["GPU-a".to_string(), "GPU-b".to_string()]);
		let (a, b, c) = (device_id("GPU-a"), device_id("GPU-b"), device_id("GPU-c"));
		assert_eq!(gpus.uuids_for(&[b, a]), Ok(vec!["GPU-b".into(), "GPU-a".into()]));
		assert_eq!(gpus.uuids_for(&[a, c]), Err(vec![c]));
		assert!(gpus.sees(&a) && !gpus.sees(&c));
		let off = Gpus::detect(GpuMode::Off);
		assert_eq!(off.uuids_for(&[c]), Ok(vec![]));
		assert!(off.sees(&c) && !off.passthrough());
	}

	#[test]
	fn gpus_an_executor_cannot_pass_through_are_neither_offered_nor_run_on() {
		let gpus = Gpus::from_uuids(["GPU-a".to_string()]).unusable("no NVIDIA runtime");
		let a = device_id("GPU-a");
		assert!(!gpus.sees(&a));
		assert_eq!(gpus.uuids_for(&[a]), Err(vec![a]));
		assert!(gpus.passthrough());
		assert_eq!(gpus.missing.as_deref(), Some("no NVIDIA runtime"));
	}
}
