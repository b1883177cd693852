//! Runs jobs: the [`Executor`] trait, with Docker ([`docker::Docker`], through bollard) and the
//! native executor ([`native::Native`], programs the configuration names) behind it.
//!
//! An executor finds each job again by its lease after a worker restart (containers are
//! labelled, native jobs leave a state folder), and never removes a stopped job by itself: its
//! exit code is collected, then the job is cleaned up when its lease's outputs are.
//!
//! Docker's images come pinned by digest, never from a loopback or private registry, refused
//! above `[limits] max_image_mib` from their registry's manifest ([`manifest`]) and watched
//! against it while they are pulled (`pull`).

use std::{collections::HashMap, future::Future};

use stint_primitives::{DeviceId, ExecutorKind, JobSpec, LeaseId, ReservedExit};

use crate::{commit::LeaseDirs, config::Limits};

pub mod docker;
mod files;
pub mod folders;
pub mod held;
mod job_user;
pub mod manifest;
pub mod native;
mod pull;
mod tar;

/// A job to start.
#[derive(Clone, Debug)]
pub struct JobRequest {
	pub lease: LeaseId,
	pub spec: JobSpec,
	/// The leased devices as the chain names them.
	pub devices: Vec<DeviceId>,
	/// Their UUIDs, passed to the job (empty when GPUs are off).
	pub gpu_uuids: Vec<String>,
	pub dirs: LeaseDirs,
	/// The job's share of the host: CPUs in billionths, memory in bytes.
	pub nano_cpus: i64,
	pub memory_bytes: i64,
	pub limits: Limits,
	/// Labels that find the job again: the chain, the worker key, the lease.
	pub labels: HashMap<String, String>,
}

/// Why a job could not be prepared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrepareError {
	/// The order's fault (image or input unavailable or not as pinned): reported with the
	/// reserved exit code.
	Order(ReservedExit, String),
	/// The provider's (engine down, disk full): the lease is not acknowledged.
	Provider(String),
}

impl std::fmt::Display for PrepareError {
	fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
		match self {
			Self::Order(code, why) => write!(f, "the order's fault ({}): {why}", code.code()),
			Self::Provider(why) => write!(f, "the provider's fault: {why}"),
		}
	}
}

/// Why a job did not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartError {
	/// The order's image and command start no process (the engine says which): reported at
	/// once with [`ReservedExit::JobUnstartable`], as trying again cannot mend it.
	Unstartable(String),
	/// Anything else (an engine down, GPUs it cannot give): tried again.
	Other(String),
}

/// Why the order's command or environment cannot be handed to a process: a NUL byte, which no
/// argument or variable can hold, or bytes that are not UTF-8, which the engine's API cannot
/// carry. The order's fault, said at once (its start would otherwise be tried again until the
/// job is given up as lost, the provider's fault).
pub fn unpassable(spec: &JobSpec) -> Option<String> {
	let bad = |bytes: &[u8]| bytes.contains(&0) || std::str::from_utf8(bytes).is_err();
	if let Some(n) = spec.command.iter().position(|word| bad(word)) {
		return Some(format!("word {n} of the command holds a NUL byte or is not UTF-8"));
	}
	spec.env.iter().find(|var| bad(&var.key) || bad(&var.value)).map(|var| {
		format!(
			"the variable {:?} holds a NUL byte or is not UTF-8",
			String::from_utf8_lossy(&var.key)
		)
	})
}

impl From<String> for StartError {
	fn from(why: String) -> Self {
		Self::Other(why)
	}
}

impl std::fmt::Display for StartError {
	fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
		match self {
			Self::Unstartable(why) => {
				write!(f, "the order's image and command cannot start: {why}")
			}
			Self::Other(why) => f.write_str(why),
		}
	}
}

/// Where a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
	/// Created, not started yet.
	Created,
	Running,
	Paused,
	/// It stopped with `code`; `oom` if the kernel's OOM killer stopped it.
	Exited {
		code: i32,
		oom: bool,
	},
	/// Gone: removed, or the engine lost it.
	Missing,
}

/// A job the executor knows of, found by its labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundJob {
	pub lease: LeaseId,
	pub handle: String,
	pub state: JobState,
	/// Where the job writes its outputs on this host, where the executor can tell.
	pub outputs: Option<std::path::PathBuf>,
}

/// What runs jobs.
pub trait Executor: Send + Sync + 'static {
	fn kind(&self) -> ExecutorKind;

	/// Whether leased GPUs can be passed to jobs (Docker: the engine has the NVIDIA runtime);
	/// `None` while that cannot be told (the engine does not answer).
	fn gpus_supported(&self) -> impl Future<Output = Option<bool>> + Send;

	/// Whether a new job could be started now (Docker: the engine answers); why not. The worker
	/// bids only while it is, and retracts its standing bids when it is not.
	fn ready(&self) -> impl Future<Output = Result<(), String>> + Send;

	/// Finds the image (or program) `image` (`name@sha256:<digest>`) pins, fetching it if
	/// needed; returns what [`Executor::start`] runs.
	fn resolve(&self, image: &[u8]) -> impl Future<Output = Result<String, PrepareError>> + Send;

	/// Creates and starts the job (or finds the one already created for this lease); returns
	/// its handle.
	fn start(
		&self,
		job: &JobRequest,
		image_id: &str,
	) -> impl Future<Output = Result<String, StartError>> + Send;

	fn state(&self, handle: &str) -> impl Future<Output = Result<JobState, String>> + Send;

	/// Waits until the job stops, then returns its state.
	fn wait(&self, handle: &str) -> impl Future<Output = Result<JobState, String>> + Send;

	/// SIGTERM, `grace_secs`, SIGKILL.
	fn stop(
		&self,
		handle: &str,
		grace_secs: u32,
	) -> impl Future<Output = Result<(), String>> + Send;

	fn pause(&self, handle: &str) -> impl Future<Output = Result<(), String>> + Send;

	fn unpause(&self, handle: &str) -> impl Future<Output = Result<(), String>> + Send;

	/// Writes the job's `stdout` and `stderr` into `dir`, each at most `cap` bytes.
	fn collect_logs(
		&self,
		handle: &str,
		dir: &std::path::Path,
		cap: u64,
	) -> impl Future<Output = Result<(), String>> + Send;

	/// Copies the job's `stdout` and `stderr` into `dir` from their start as the job writes them
	/// (each at most `cap` bytes), until it stops: what the outputs API serves while it runs.
	fn follow_logs(
		&self,
		handle: &str,
		dir: &std::path::Path,
		cap: u64,
	) -> impl Future<Output = Result<(), String>> + Send;

	/// The host pids of the job's processes while it runs (none once it stopped): what they
	/// hold open counts against its outputs' limit ([`held`]).
	fn processes(&self, handle: &str) -> impl Future<Output = Result<Vec<u32>, String>> + Send;

	/// Opens the folders `closed` (relative to `outputs`, the job's outputs on this host) that
	/// the job `handle` made and this process may not read, write or search: read, write and
	/// search for others, the rest kept ([`folders`]). The job may be running or stopped, not
	/// removed.
	fn open_folders(
		&self,
		handle: &str,
		outputs: &std::path::Path,
		closed: &[std::path::PathBuf],
	) -> impl Future<Output = Result<(), String>> + Send;

	/// Removes a stopped job (when its lease's retention is over).
	fn remove(&self, handle: &str) -> impl Future<Output = Result<(), String>> + Send;

	/// Every job carrying `labels` (all of them), whatever its state.
	fn list(
		&self,
		labels: &HashMap<String, String>,
	) -> impl Future<Output = Result<Vec<FoundJob>, String>> + Send;

	/// The images [`Executor::resolve`] pulled since this was last asked, by ID, with the
	/// room each takes: the worker keeps them on record to prune them ([`crate::images`]).
	/// None for an executor that pulls nothing.
	fn take_pulled(&self) -> Vec<(String, u64)> {
		Vec::new()
	}

	/// Removes an image it pulled; an error while a job (running or kept) still uses it.
	fn remove_image(&self, image_id: &str) -> impl Future<Output = Result<(), String>> + Send {
		let _ = image_id;
		std::future::ready(Ok(()))
	}
}

/// The label that names a job's lease.
pub const LEASE_LABEL: &str = "stint.lease";
/// The label that names the chain (its genesis hash).
pub const CHAIN_LABEL: &str = "stint.chain";
/// The label that names the worker key.
pub const WORKER_LABEL: &str = "stint.worker";
/// The label that names the worker's journal (one per data directory): jobs of another journal,
/// or left over from an earlier chain with the same genesis, are never taken for this one's.
pub const INSTANCE_LABEL: &str = "stint.instance";

/// The digest a pinned image reference names, as `sha256:<hex>`, and the name before it.
pub fn split_pinned(image: &[u8]) -> Option<(String, String)> {
	let text = std::str::from_utf8(image).ok()?;
	stint_primitives::is_pinned_image(image).then_some(())?;
	let at = text.rfind("@sha256:")?;
	Some((text[..at].to_string(), text[at + 1..].to_string()))
}

/// The registry an image name is pulled from (`docker.io` for names without one).
pub fn registry_of(name: &str) -> &str {
	match name.split_once('/') {
		Some((first, _)) if first.contains('.') || first.contains(':') || first == "localhost" => {
			first
		}
		_ => "docker.io",
	}
}

/// Whether `registry` (a host, with or without a port) is this machine or the provider's own
/// network: `localhost`, or a loopback, private, shared, link-local or unspecified address.
/// The engine pulls from a loopback registry over plain HTTP, and a pull from any of them is a
/// request to the provider's own services that a buyer chose: a job's image never comes from
/// one. (A name that resolves to such an address is not caught here; the allow-list is.)
pub fn private_registry(registry: &str) -> bool {
	let host = match registry.strip_prefix('[') {
		Some(rest) => rest.split(']').next().unwrap_or(rest),
		None => registry
			.rsplit_once(':')
			.filter(|(_, port)| port.bytes().all(|c| c.is_ascii_digit()))
			.map_or(registry, |(host, _)| host),
	};
	let host = host.to_ascii_lowercase();
	host == "localhost"
		|| host.ends_with(".localhost")
		|| host.parse::<std::net::IpAddr>().is_ok_and(crate::runner::is_inside)
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn loopback_and_private_registries_are_named() {
		for inside in [
			"localhost",
			"localhost:5000",
			"LOCALHOST:5000",
			"registry.localhost",
			"127.0.0.1:5000",
			"10.1.2.3",
			"192.168.0.9:443",
			"172.20.0.1:5000",
			"100.64.0.1",
			"169.254.1.1",
			"0.0.0.0:5000",
			"[::1]:5000",
			"[fd00::1]",
			"[::ffff:127.0.0.1]:5000",
		] {
			assert!(private_registry(inside), "{inside}");
		}
		for outside in ["docker.io", "ghcr.io", "8.8.8.8:5000", "registry.example.com:5000"] {
			assert!(!private_registry(outside), "{outside}");
		}
	}

	#[test]
	fn pinned_references_split_into_name_and_digest() {
		let digest = "ab".repeat(32);
		let image = format!("ghcr.io/acme/train@sha256:{digest}");
		assert_eq!(
			split_pinned(image.as_bytes()),
			Some(("ghcr.io/acme/train".into(), format!("sha256:{digest}")))
		);
		assert_eq!(split_pinned(b"ghcr.io/acme/train:latest"), None);
		assert_eq!(registry_of("ghcr.io/acme/train"), "ghcr.io");
		assert_eq!(registry_of("localhost:5000/x"), "localhost:5000");
		assert_eq!(registry_of("acme/train"), "docker.io");
		assert_eq!(registry_of("busybox"), "docker.io");
	}

	#[test]
	fn a_nul_byte_or_bytes_that_are_not_utf8_are_the_orders_fault_at_once() {
		fn text<const N: u32>(bytes: &[u8]) -> stint_primitives::Text<N> {
			bytes.to_vec().try_into().unwrap()
		}
		let mut spec = crate::journal::tests_spec();
		assert_eq!(unpassable(&spec), None);
		spec.command = vec![text(b"/job"), text(b"a\0b")].try_into().unwrap();
		assert!(unpassable(&spec).unwrap().contains("word 1"));
		spec.command = vec![text(b"/job"), text(&[0xff, 0xfe])].try_into().unwrap();
		assert!(unpassable(&spec).is_some());
		spec.command = vec![text(b"/job")].try_into().unwrap();
		let var = stint_primitives::EnvVar { key: text(b"SEED"), value: text(b"1\x002") };
		spec.env = vec![var].try_into().unwrap();
		assert!(unpassable(&spec).unwrap().contains("SEED"));
	}
}
