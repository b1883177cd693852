//! The GPUs jobs get: which of the chain's device ids (blake2-256 of a GPU's UUID) this machine
//! really has, read through the probe, their UUIDs for the container's device request, and
//! whether jobs can have them at all. That last question has one owner: [`judge`] turns what
//! the executor answers into a [`Verdict`], and [`Gpus::settle`] applies it, at start and again
//! once an engine that was down at start answers. Bids offer ([`Gpus::offers`]) and jobs get
//! ([`Gpus::uuids_for`]) only what it allows.

use std::{collections::HashMap, sync::Mutex};

use stint_primitives::{device_id, DeviceId, ExecutorKind};

use crate::{config::GpuMode, executor::Executor, log};

/// Whether jobs can have the machine's GPUs, as far as the worker knows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Passthrough {
	/// The executor has not said yet: none is offered until it does.
	#[default]
	Unknown,
	/// Jobs can have them.
	Yes,
	/// Jobs cannot have them, for this reason: none is offered nor run on.
	No(String),
}

/// What the executor's answer means for the GPUs (see [`judge`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
	/// Offer them; say this beside, if anything.
	Offer(Option<String>),
	/// Offer none until the executor answers.
	Wait,
	/// Offer none, for this reason.
	Withhold(String),
	/// Offer none: the engine gives containers GPUs through an NVIDIA Container Toolkit an
	/// image can take over. At start the worker refuses to run.
	Unsafe(String),
}

/// When a verdict is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
	/// At start: an unsafe toolkit stops the worker.
	Start,
	/// While running (an engine down at start answered): an unsafe toolkit withholds the GPUs.
	Running,
}

/// The rule: what `supported` (whether the executor can pass GPUs to jobs; `None`: it does not
/// answer) means for an executor of `kind`, given the NVIDIA Container Toolkit found
/// (`toolkit`, asked only for Docker: `None` where its version cannot be told).
pub fn judge(
	supported: Option<bool>,
	kind: ExecutorKind,
	toolkit: impl FnOnce() -> Option<Result<(), String>>,
) -> Verdict {
	match supported {
		None => Verdict::Wait,
		Some(false) => Verdict::Withhold(
			"the Docker engine has no NVIDIA runtime: GPUs cannot be passed to containers, so \
			 none is offered"
				.into(),
		),
		Some(true) if kind != ExecutorKind::Docker => Verdict::Offer(None),
		Some(true) => match toolkit() {
			Some(Ok(())) => Verdict::Offer(None),
			Some(Err(why)) => Verdict::Unsafe(why),
			None => Verdict::Offer(Some(
				"cannot tell the NVIDIA Container Toolkit's version (neither nvidia-ctk nor \
				 nvidia-container-cli answers): make sure it is 1.17.8 or later (CVE-2025-23266)"
					.into(),
			)),
		},
	}
}

/// The GPUs of this machine, by the id the chain knows them by.
#[derive(Debug, Default)]
pub struct Gpus {
	mode: Option<GpuMode>,
	by_id: HashMap<DeviceId, String>,
	/// Why none could be read, if none could.
	pub missing: Option<String>,
	/// Whether jobs can have them: set by [`Gpus::settle`] alone.
	passthrough: Mutex<Passthrough>,
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

	/// The GPUs with these UUIDs (mode `auto`); whether jobs can have them is not known yet.
	pub fn from_uuids(uuids: impl IntoIterator<Item = String>) -> Self {
		Self {
			mode: Some(GpuMode::Auto),
			by_id: uuids.into_iter().map(|uuid| (device_id(&uuid), uuid)).collect(),
			..Default::default()
		}
	}

	/// Whether GPUs are passed to jobs at all (mode `auto`).
	pub fn passthrough(&self) -> bool {
		self.mode != Some(GpuMode::Off)
	}

	/// Whether jobs can have the GPUs, as last settled.
	pub fn state(&self) -> Passthrough {
		self.passthrough.lock().expect("not poisoned").clone()
	}

	/// Asks `executor` whether jobs can have the GPUs, unless that is settled already, and
	/// applies [`judge`]'s verdict, saying it once. `Err` only at start, for a toolkit an image
	/// can take over: the worker must not run.
	pub async fn settle<E: Executor>(&self, executor: &E, when: When) -> Result<(), String> {
		if !self.passthrough() || self.state() != Passthrough::Unknown {
			return Ok(());
		}
		if let Some(why) = &self.missing {
			if when == When::Start {
				log::alert(
					"gpu",
					None,
					format!(
						"no GPU ({why}): leases on GPUs will not be run; set gpus = \"off\" on \
						 a development chain"
					),
				);
			}
			*self.passthrough.lock().expect("not poisoned") = Passthrough::No(why.clone());
			return Ok(());
		}
		let verdict = judge(executor.gpus_supported().await, executor.kind(), || {
			crate::toolkit::installed().map(crate::toolkit::check)
		});
		let state = match verdict {
			Verdict::Offer(warning) => {
				if let Some(warning) = warning {
					log::alert("gpu", None, warning);
				}
				if when == When::Running {
					log::info("gpu", None, "the executor can pass GPUs to jobs: they are offered");
				}
				Passthrough::Yes
			}
			Verdict::Wait => {
				if when == When::Start {
					log::warn(
						"gpu",
						None,
						"the executor does not answer: no GPU is offered until it says it can \
						 pass GPUs to jobs",
					);
				}
				Passthrough::Unknown
			}
			Verdict::Withhold(why) => {
				log::alert("gpu", None, &why);
				Passthrough::No(why)
			}
			Verdict::Unsafe(why) if when == When::Start => return Err(why),
			Verdict::Unsafe(why) => {
				log::alert("gpu", None, format!("{why}: no GPU is offered"));
				Passthrough::No(why)
			}
		};
		*self.passthrough.lock().expect("not poisoned") = state;
		Ok(())
	}

	/// Whether this machine can serve `device` (with GPUs off: any device bound to the key).
	pub fn sees(&self, device: &DeviceId) -> bool {
		!self.passthrough() || self.by_id.contains_key(device)
	}

	/// Whether bids may offer `device`: the machine sees it and jobs can be given it.
	pub fn offers(&self, device: &DeviceId) -> bool {
		self.sees(device) && (!self.passthrough() || self.state() == Passthrough::Yes)
	}

	/// The UUIDs to pass for `devices`; with GPUs off, none. The devices it does not see (all
	/// of them where jobs cannot have GPUs), if any, as the error.
	pub fn uuids_for(&self, devices: &[DeviceId]) -> Result<Vec<String>, Vec<DeviceId>> {
		if !self.passthrough() {
			return Ok(Vec::new());
		}
		if let Passthrough::No(_) = self.state() {
			return Err(devices.to_vec());
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

	/// One rule for what the executor's answer means, table-tested: the worker's start and its
	/// later check both apply it.
	#[test]
	fn one_rule_decides_whether_jobs_can_have_the_gpus() {
		use ExecutorKind::{Docker, Native};
		let old = || Some(Err("toolkit 1.17.7 is older than 1.17.8".to_string()));
		let unasked = || -> Option<Result<(), String>> { panic!("the toolkit is Docker's") };
		assert_eq!(judge(None, Docker, unasked), Verdict::Wait);
		assert!(matches!(judge(Some(false), Docker, unasked), Verdict::Withhold(_)));
		assert_eq!(judge(Some(true), Native, unasked), Verdict::Offer(None));
		assert_eq!(judge(Some(true), Docker, || Some(Ok(()))), Verdict::Offer(None));
		assert!(matches!(judge(Some(true), Docker, || None), Verdict::Offer(Some(_))));
		assert!(
			matches!(judge(Some(true), Docker, old), Verdict::Unsafe(why) if why.contains("1.17.7"))
		);
	}

	#[test]
	fn gpus_an_executor_cannot_pass_through_are_neither_offered_nor_run_on() {
		let gpus = Gpus::from_uuids(["GPU-a".to_string()]);
		let a = device_id("GPU-a");
		assert!(!gpus.offers(&a), "not before the executor said it can");
		assert_eq!(gpus.uuids_for(&[a]), Ok(vec!["GPU-a".into()]));
		*gpus.passthrough.lock().unwrap() = Passthrough::No("no NVIDIA runtime".into());
		assert!(!gpus.offers(&a));
		assert_eq!(gpus.uuids_for(&[a]), Err(vec![a]));
		assert!(gpus.passthrough());
		*gpus.passthrough.lock().unwrap() = Passthrough::Yes;
		assert!(gpus.offers(&a) && !gpus.offers(&device_id("GPU-c")));
		let off = Gpus::detect(GpuMode::Off);
		assert!(off.offers(&a), "with GPUs off, every bound device");
	}
}
