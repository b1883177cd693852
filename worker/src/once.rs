//! `stint-worker run-once job.toml`: one job through the executor, no chain. The quickest way to
//! test a machine, and a job before ordering it: it reads exactly the file a buyer orders with
//! `stint order create` (`stint_client::job_file`, checked whole the same way), runs its
//! `[job]` (inputs fetched and checked against their hashes, as a lease's are), prints the
//! execution receipt (for the chain of all-zero genesis, lease 0) and leaves the inputs,
//! outputs, logs and receipt in the folder `--out` names.
//!
//! What only this machine decides is given on the command line: `--out`, `--gpu <UUID>`
//! (repeatable), `--timeout-secs` (then SIGTERM, grace, SIGKILL: reason TimeLimit) and
//! `--program <path>` (run natively, unisolated: the image must then be
//! `native/<name>@sha256:<the file's sha256>`, the command's words past the first are the
//! program's declared arguments, and no environment is passed).

use std::{
	collections::HashMap,
	path::{Path, PathBuf},
	sync::atomic::AtomicBool,
	time::Duration,
};

use codec::Encode;
use stint_client::job_file::{Job, JobFile};
use stint_primitives::{device_id, ReportKind, StopReason};

use crate::{
	commit::{self, LeaseDirs},
	config::Limits,
	executor::{folders, Executor, JobRequest, JobState, CHAIN_LABEL, INSTANCE_LABEL, LEASE_LABEL},
	journal::LeaseEntry,
	runner::{build_receipt, fetch_inputs, ReceiptRun},
};

/// How long a run-once job may run by default (`--timeout-secs`).
pub const DEFAULT_TIMEOUT_SECS: u64 = 3600;

/// One run-once job: a buyer's job and how this machine runs it.
#[derive(Clone, Debug)]
pub struct OnceJob {
	/// The `[job]` table of a buyer's job file.
	pub job: Job,
	/// GPU UUIDs to pass (`nvidia-smi -L`'s `GPU-…`).
	pub gpus: Vec<String>,
	/// Then SIGTERM, grace, SIGKILL (reason TimeLimit).
	pub timeout_secs: u64,
	/// Where the inputs/, outputs/, logs/, receipt.scale and receipt.json go.
	pub out: PathBuf,
}

impl OnceJob {
	/// `job`, on no GPU, with the default time limit, into `out`.
	pub fn new(job: Job, out: PathBuf) -> Self {
		Self { job, gpus: Vec::new(), timeout_secs: DEFAULT_TIMEOUT_SECS, out }
	}

	/// The job of a buyer's job file, which must be one `stint order create` would order.
	pub fn from_file(text: &str, out: PathBuf) -> Result<Self, String> {
		let file = JobFile::parse(text)?;
		file.order()?;
		Ok(Self::new(file.job, out))
	}
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

/// Waits for the job of `handle` to end: by itself, stopped at the job file's time limit, or
/// killed once its outputs are over the limit (looked at every second).
async fn watch<E: Executor>(
	executor: &E,
	handle: &str,
	outputs: &Path,
	job: &OnceJob,
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
				if used.over(job.job.max_output_bytes) {
					executor.stop(handle, 0).await?;
					return Ok((executor.wait(handle).await?, StopReason::OutputOverLimit));
				}
			}
		}
	}
}

/// Runs the job in `job` on `executor` with the default limits and reports.
pub async fn run_once<E: Executor>(executor: &E, job: &OnceJob) -> Result<OnceReport, String> {
	run_once_with(executor, job, Limits::default()).await
}

/// Runs the job in `job` on `executor` with `limits` (the worker's `[limits]`) and reports.
pub async fn run_once_with<E: Executor>(
	executor: &E,
	job: &OnceJob,
	limits: Limits,
) -> Result<OnceReport, String> {
	let spec = job.job.spec()?;
	let devices = job.gpus.iter().map(|uuid| device_id(uuid)).collect();
	let mut entry = LeaseEntry::new(0, [0; 32], spec.clone(), devices, executor.kind());
	let dirs = LeaseDirs { root: job.out.clone() };
	dirs.create().map_err(|e| format!("{}: {e}", job.out.display()))?;
	// The inputs, as a lease fetches them (from this machine, private addresses too: nobody
	// else's job is run here), beside the room the outputs may take.
	let inputs: Vec<(String, [u8; 32])> = spec
		.inputs
		.iter()
		.map(|input| (String::from_utf8_lossy(&input.uri).into_owned(), input.content_hash))
		.collect();
	let budget = stint_probe::free_bytes(&job.out)?.saturating_sub(spec.max_output_bytes);
	let folder = dirs.inputs();
	entry.input_hashes = tokio::task::spawn_blocking(move || {
		fetch_inputs(&inputs, &folder, true, budget, &AtomicBool::new(false))
	})
	.await
	.map_err(|e| e.to_string())?
	.map_err(|e| e.to_string())?;
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
		if used.over(job.job.max_output_bytes) && reason == StopReason::Exited {
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
	entry.image_digest =
		stint_primitives::image_digest(job.job.image.as_bytes()).unwrap_or_default();
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

#[cfg(test)]
mod tests {
	use super::*;

	const ORDER: &str = r#"
[job]
image = "ghcr.io/acme/train@sha256:5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592"
command = ["python", "train.py"]
env = { EPOCHS = "3" }

[gpus]
count = 1

[terms]
max_price_per_block = "0.5"
duration_blocks = 600
bid_window_blocks = 10
"#;

	/// The file a buyer orders is the file run-once runs, and what `stint order create` would
	/// refuse run-once refuses with the same named field.
	#[test]
	fn run_once_reads_the_buyers_file_and_its_rules() {
		let job = OnceJob::from_file(ORDER, "out".into()).unwrap();
		let ordered = stint_client::job_file::parse(ORDER).unwrap();
		assert_eq!(job.job.spec().unwrap(), ordered.spec);
		assert_eq!((job.timeout_secs, job.gpus.len()), (DEFAULT_TIMEOUT_SECS, 0));

		for (broken, field) in [
			(ORDER.replace("@sha256:5d41", ":latest#"), "job.image"),
			(ORDER.replace("EPOCHS", "LD_PRELOAD"), "job.env.LD_PRELOAD"),
			(ORDER.replace("\"0.5\"", "\"half\""), "terms.max_price_per_block"),
		] {
			let refused = OnceJob::from_file(&broken, "out".into()).unwrap_err();
			assert!(refused.starts_with(field), "{refused}");
			assert_eq!(stint_client::job_file::parse(&broken).unwrap_err(), refused);
		}
		// The old run-once format (no [job] table) is not a job file.
		assert!(OnceJob::from_file("image = \"x\"\nout = \"o\"\n", "out".into()).is_err());
	}
}
