//! `stint-worker`: the provider's daemon.
//!
//! It finds the leases assigned to its worker key on chain (`MarketApi::duties`, read at every
//! finalized block), runs each job on the leased GPUs (a Docker container through bollard, or a
//! program the provider's configuration names), and commits each result exactly once, signed by
//! the worker key: the output root, the execution receipt's hash, the exit code.
//!
//! - [`runner`]: the daemon, `stint-worker run`: the chain session, each lease's steps, the
//!   reports and receipts, bidding and the settlement beat, as named tasks (one at a time of a
//!   kind, `runner::tasks`), each step's failure through one policy ([`runner::StepError`]);
//! - [`config`], `worker.toml`;
//! - [`chain`]: the node connection (failover, stall detection) and the calls it sends;
//! - [`duties`]: [`duties::plan`], the pure function from chain state, journal and containers to
//!   actions, run at every finalized block;
//! - [`bidding`]: which open orders to bid on, at what price;
//! - [`executor`]: the [`executor::Executor`] trait, Docker and native; an image's size from its
//!   registry's manifest before it is pulled ([`executor::manifest`]);
//! - [`images`]: the images it pulled, on record, pruned by age and total size;
//! - [`commit`]: manifests, the receipt, the signed report;
//! - [`journal`]: what the worker did, durably (redb), so a crash never signs or sends twice;
//! - [`api`]: the outputs API the buyer fetches results from (`FetchAuth`);
//! - [`metrics`]: Prometheus on loopback;
//! - [`http`]: the servers of both, with limits no stranger can get around;
//! - [`once`]: `run-once`, one job of a buyer's job file without a chain;
//! - [`quota`]: each lease's outputs in a filesystem of the order's size;
//! - [`gpu`]: the leased devices' UUIDs, from the probe, and the one rule for whether jobs can
//!   have them ([`gpu::judge`], applied by [`gpu::Gpus::settle`]);
//! - [`toolkit`]: the NVIDIA Container Toolkit's version, checked before GPUs go to jobs;
//! - [`bench`]: `bench-executor`, the Docker executor's cost over a bare `docker run`;
//! - [`log`]: the worker's log lines and alerts.
//!
//! What the machine has (GPUs, CPUs, memory, disk) is the `stint-probe` crate's, shared with
//! the CLI.

pub mod api;
pub mod bench;
pub mod bidding;
pub mod chain;
pub mod commit;
pub mod config;
pub mod duties;
pub mod executor;
pub mod gpu;
pub mod http;
pub mod images;
pub mod journal;
pub mod log;
pub mod metrics;
pub mod once;
pub mod quota;
pub mod runner;
pub mod toolkit;

/// `stint-worker <version>`, as receipts record it.
pub const WORKER_VERSION: &str = concat!("stint-worker ", env!("CARGO_PKG_VERSION"));

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
	std::time::SystemTime::now()
		.duration_since(std::time::UNIX_EPOCH)
		.map(|d| d.as_secs())
		.unwrap_or_default()
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
	std::time::SystemTime::now()
		.duration_since(std::time::UNIX_EPOCH)
		.map(|d| d.as_millis() as u64)
		.unwrap_or_default()
}
