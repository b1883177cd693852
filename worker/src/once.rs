//! `stint-worker run-once job.toml`: one job through the executor, no chain. The quickest way to
//! test a machine: it prints the execution receipt (for the chain of all-zero genesis, lease 0)
//! and leaves the outputs, logs and receipt in the folder the job file names.
//!
//! ```toml
//! image = "local/hello@sha256:<64 hex>"   # pinned, as an order pins it
//! command = ["/hello", "--write", "result.txt"]
//! env = { GREETING = "hi" }
//! max_output_bytes = 1048576
//! timeout_secs = 60                        # then SIGTERM, grace, SIGKILL (reason TimeLimit)
//! gpus = []                                # GPU UUIDs to pass, e.g. ["GPU-…"]
//! out = "run-once-out"                     # outputs/, logs/, receipt.scale, receipt.json
//!                                          # (relative: from the job file's folder)
//! # program = "bin/selftest"               # run natively: image = "native/selftest@sha256:<file's>",
//!                                          # command's words past the first: its declared
//!                                          # arguments; no env
//! ```

use std::{
	collections::HashMap,
	path::{Path, PathBuf},
	time::Duration,
};

use codec::Encode;
use serde::Deserialize;
use stint_primitives::{device_id, EnvVar, JobSpec, ReportKind, StopReason};

use crate::{
	commit::{self, LeaseDirs},
	config::Limits,
	executor::{folders, Executor, JobRequest, JobState, CHAIN_LABEL, INSTANCE_LABEL, LEASE_LABEL},
	journal::LeaseEntry,
	runner::{build_receipt, ReceiptRun},
};

/// A job file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
	pub image: String,
	#[serde(default)]
	pub command: Vec<String>,
	#[serde(default)]
	pub env: std::collections::BTreeMap<String, String>,
	#[serde(default = "default_output")]
	pub max_output_bytes: u64,
	#[serde(default = "default_timeout")]
	pub timeout_secs: u64,
	#[serde(default)]
	pub gpus: Vec<String>,
	pub out: PathBuf,
	/// Run this program natively (unisolated) instead of a container: the image must then be
	/// `native/<name>@sha256:<the file's sha256>`.
	#[serde(default)]
	pub program: Option<PathBuf>,
}

fn default_output() -> u64 {
	1 << 30
}
fn default_timeout() -> u64 {
	3600
}

/// What `run-once` prints.
#[derive(Debug, serde::Serialize)]
pub struct OnceReport {
	pub exit_code: i32,
	pub stop_reason: StopReason,
	pub output_root: String,
	pub receipt_hash: String,
	pub out: PathBuf,
	pub receipt: stint_primitives::ExecutionReceipt,
}

fn bounded<const N: u32>(text: &str, what: &str) -> Result<stint_primitives::Text<N>, String> {
	text.as_bytes().to_vec().try_into().map_err(|_| format!("{what} is longer than {N} bytes"))
}

impl JobFile {
	/// The job spec an order would carry.
	pub fn spec(&self) -> Result<JobSpec, String> {
		if !stint_primitives::is_pinned_image(self.image.as_bytes()) {
			return Err(format!("{}: pin the image as name@sha256:<64 hex digits>", self.image));
		}
		let command = self
			.command
			.iter()
			.map(|word| bounded(word, "a command word"))
			.collect::<Result<Vec<_>, _>>()?;
		let env = self
			.env
			.iter()
			.map(|(key, value)| {
				if !stint_primitives::is_job_env_name(key.as_bytes()) {
					return Err(format!(
						"{key}: a job may not set this variable (the loader's, the GPUs' and the \
						 worker's own are reserved)"
					));
				}
				Ok(EnvVar {
					key: bounded(key, "a variable name")?,
					value: bounded(value, "a value")?,
				})
			})
			.collect::<Result<Vec<_>, String>>()?;
		Ok(JobSpec {
			image: bounded(&self.image, "the image")?,
			command: command.try_into().map_err(|_| "too many command words")?,
			env: env.try_into().map_err(|_| "too many variables")?,
			inputs: Default::default(),
			max_output_bytes: self.max_output_bytes,
		})
	}
}

/// Waits for the job of `handle` to end: by itself, stopped at the job file's time limit, or
/// killed once its outputs are over the limit (looked at every second).
async fn watch<E: Executor>(
	executor: &E,
	handle: &str,
	outputs: &Path,
	job: &JobFile,
) -> Result<(JobState, StopReason), String> {
	let deadline = tokio::time::Instant::now() + Duration::from_secs(job.timeout_secs);
	let second = Duration::from_secs(1);
	let mut look = tokio::time::interval_at(tokio::time::Instant::now() + second, second);
	let wait = executor.wait(handle);
	tokio::pin!(wait);
	loop {
		tokio::select! {
			state = &mut wait => return Ok((state?, StopReason::Exited)),
			() = tokio::time::sleep_until(deadline) => {
				executor.stop(handle, Limits::default().stop_grace_secs).await?;
				return Ok((executor.wait(handle).await?, StopReason::TimeLimit));
			}
			_ = look.tick() => {
				let used = crate::executor::held::job_usage(executor, handle, None, outputs).await;
				if used.over(job.max_output_bytes) {
					executor.stop(handle, 0).await?;
					return Ok((executor.wait(handle).await?, StopReason::OutputOverLimit));
				}
			}
		}
	}
}

/// Runs the job in `job` on `executor` with the default limits and reports.
pub async fn run_once<E: Executor>(executor: &E, job: &JobFile) -> Result<OnceReport, String> {
	run_once_with(executor, job, Limits::default()).await
}

/// Runs the job in `job` on `executor` with `limits` (the worker's `[limits]`) and reports.
pub async fn run_once_with<E: Executor>(
	executor: &E,
	job: &JobFile,
	limits: Limits,
) -> Result<OnceReport, String> {
	let spec = job.spec()?;
	let devices = job.gpus.iter().map(|uuid| device_id(uuid)).collect();
	let mut entry = LeaseEntry::new(0, [0; 32], spec.clone(), devices, executor.kind());
	let dirs = LeaseDirs { root: job.out.clone() };
	dirs.create().map_err(|e| format!("{}: {e}", job.out.display()))?;
	let image_id = executor.resolve(&spec.image).await.map_err(|e| e.to_string())?;
	let host = stint_probe::host(&job.out)?;
	let labels = HashMap::from([
		(CHAIN_LABEL.to_string(), "none".to_string()),
		(INSTANCE_LABEL.to_string(), format!("once{:x}", crate::unix_ms())),
		(LEASE_LABEL.to_string(), "0".to_string()),
	]);
	let request = JobRequest {
		lease: 0,
		spec,
		devices: entry.devices.clone(),
		gpu_uuids: job.gpus.clone(),
		dirs: dirs.clone(),
		nano_cpus: host.cpu_cores as i64 * 1_000_000_000,
		memory_bytes: ((host.ram_mib << 20) as f64 * 0.9) as i64,
		limits,
		labels,
	};
	let started = crate::unix_ms();
	let handle = executor.start(&request, &image_id).await.map_err(|e| e.to_string())?;
	let ran = async {
		let (state, mut reason) = watch(executor, &handle, &dirs.outputs(), job).await?;
		let (exit_code, oom) = match state {
			JobState::Exited { code, oom } => (code, oom),
			other => return Err(format!("the job ended as {other:?}")),
		};
		if oom && reason == StopReason::Exited {
			reason = StopReason::OutOfMemory;
		}
		// Past the limit between two looks; what it closed to this process opened while its
		// container is there.
		let used = folders::counted(executor, &handle, None, &dirs.outputs()).await;
		if used.over(job.max_output_bytes) && reason == StopReason::Exited {
			reason = StopReason::OutputOverLimit;
		}
		// Each stream's head as the job printed it (the copy made while it ran, where there is
		// one), however much it printed.
		executor.follow_logs(&handle, &dirs.logs(), request.limits.log_bytes).await?;
		let _ = std::fs::remove_dir_all(dirs.live_logs());
		Ok((exit_code, reason))
	}
	.await;
	// Whatever happened: no job of a finished run is left behind (running or not).
	let _ = executor.remove(&handle).await;
	let (exit_code, reason) = ran?;
	let outputs = commit::manifest(&dirs.outputs()).map_err(|e| e.to_string())?;
	let logs = commit::logs_manifest(&dirs.logs()).map_err(|e| e.to_string())?;
	let ended = crate::unix_ms();
	entry.image_digest = stint_primitives::image_digest(job.image.as_bytes()).unwrap_or_default();
	let gpu_seconds = (ended - started) / 1000 * job.gpus.len() as u64;
	let receipt = build_receipt(
		[0; 32],
		&entry,
		ReportKind::Final,
		ReceiptRun {
			started: stint_primitives::Instant { block: 0, unix_ms: started },
			ended: stint_primitives::Instant { block: 0, unix_ms: ended },
			exit_code,
			stop_reason: reason,
			gpu_seconds,
		},
		&outputs,
		&logs,
	);
	std::fs::write(dirs.receipt(), receipt.encode()).map_err(|e| e.to_string())?;
	let json = serde_json::to_string_pretty(&receipt).expect("plain data serializes");
	std::fs::write(dirs.root.join("receipt.json"), json).map_err(|e| e.to_string())?;
	Ok(OnceReport {
		exit_code,
		stop_reason: reason,
		output_root: format!("0x{}", hex::encode(receipt.output_root)),
		receipt_hash: format!("0x{}", hex::encode(receipt.hash())),
		out: job.out.clone(),
		receipt,
	})
}
