//! `stint-worker bench-executor`: the Docker executor's cost over a bare `docker run`. Runs a
//! trivial image `runs` times each way, interleaved (so a noisy machine weighs on both alike):
//! through the executor with the full host configuration a lease gets (create, start, wait for
//! the exit, collect the logs, remove), and as `docker run --rm --network none --read-only`. Reports the
//! median and 95th percentile of each and the overhead at the median.

use std::{collections::HashMap, process::Command, time::Instant};

use serde::Serialize;
use stint_client::job_file::Job;

use crate::{
	commit::LeaseDirs,
	config::Limits,
	executor::{docker::Docker, Executor, JobRequest, JobState, INSTANCE_LABEL, LEASE_LABEL},
};

/// Milliseconds: median and 95th percentile.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Spread {
	pub median_ms: f64,
	pub p95_ms: f64,
}

/// What the bench measured.
#[derive(Clone, Debug, Serialize)]
pub struct ExecutorBench {
	pub runs: usize,
	pub image: String,
	pub executor: Spread,
	pub bare_docker: Spread,
	/// Executor median minus bare median.
	pub overhead_ms: f64,
	/// The same, as a share of the bare median.
	pub overhead_ratio: f64,
	/// At most 10 % and at most 100 ms over bare Docker at the median.
	pub goal_met: bool,
}

fn spread(mut samples: Vec<f64>) -> Spread {
	samples.sort_by(|a, b| a.total_cmp(b));
	let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
	Spread { median_ms: at(0.5), p95_ms: at(0.95) }
}

/// Runs the bench with `image` (pinned), whose entry point exits at once.
pub async fn executor_overhead(
	docker: &Docker,
	image: &str,
	runs: usize,
	scratch: &std::path::Path,
) -> Result<ExecutorBench, String> {
	let spec = Job { max_output_bytes: 1 << 20, ..Job::new(image, &[]) }.spec()?;
	let image_id = docker.resolve(&spec.image).await.map_err(|e| e.to_string())?;
	let host = stint_probe::host(scratch)?;
	let instance = format!("bench{:x}", crate::unix_ms());
	let (mut ours, mut bare) = (Vec::new(), Vec::new());
	for run in 0..runs + 1 {
		// Through the executor.
		let dirs = LeaseDirs { root: scratch.join(run.to_string()) };
		dirs.create().map_err(|e| e.to_string())?;
		let job = JobRequest {
			lease: run as u64,
			spec: spec.clone(),
			devices: Vec::new(),
			gpu_uuids: Vec::new(),
			dirs: dirs.clone(),
			nano_cpus: host.cpu_cores as i64 * 1_000_000_000,
			memory_bytes: ((host.ram_mib << 20) as f64 * 0.5) as i64,
			limits: Limits::default(),
			labels: HashMap::from([
				(INSTANCE_LABEL.into(), instance.clone()),
				(LEASE_LABEL.into(), run.to_string()),
			]),
		};
		let start = Instant::now();
		let handle = docker.start(&job, &image_id).await.map_err(|e| e.to_string())?;
		match docker.wait(&handle).await? {
			JobState::Exited { code: 0, .. } => {}
			other => return Err(format!("the bench image ended as {other:?}")),
		}
		docker.collect_logs(&handle, &dirs.logs(), 1 << 20).await?;
		// Removed inside the timing too, as `docker run --rm` does (a lease's container is kept
		// until its retention ends; counting its removal here is the conservative comparison).
		docker.remove(&handle).await?;
		let took = start.elapsed().as_secs_f64() * 1000.0;
		// A bare run.
		let start = Instant::now();
		let status = Command::new("docker")
			.args(["run", "--rm", "--network", "none", "--read-only", &image_id])
			.output()
			.map_err(|e| format!("docker run: {e}"))?;
		let bare_took = start.elapsed().as_secs_f64() * 1000.0;
		if !status.status.success() {
			return Err(format!("docker run: {}", String::from_utf8_lossy(&status.stderr)));
		}
		// The first round warms both paths up and is not counted.
		if run > 0 {
			ours.push(took);
			bare.push(bare_took);
		}
	}
	let (executor, bare_docker) = (spread(ours), spread(bare));
	let overhead_ms = executor.median_ms - bare_docker.median_ms;
	let overhead_ratio = overhead_ms / bare_docker.median_ms;
	Ok(ExecutorBench {
		runs,
		image: image.to_string(),
		executor,
		bare_docker,
		overhead_ms,
		overhead_ratio,
		goal_met: overhead_ratio <= 0.10 && overhead_ms <= 100.0,
	})
}

#[cfg(test)]
mod tests {
	#[test]
	fn the_spread_is_the_median_and_the_95th_percentile() {
		let samples: Vec<f64> = (1..=100).map(f64::from).collect();
		let spread = super::spread(samples);
		assert_eq!(spread.median_ms, 51.0);
		assert_eq!(spread.p95_ms, 95.0);
	}
}
