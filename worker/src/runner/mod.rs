//! The daemon: `stint-worker run`. At every finalized block it reads its duties, its journal and
//! its jobs, asks [`plan`] what to do about each lease, and runs the actions as tasks (one at a
//! time per lease). Beside that it bids on orders it can serve and settles its live streams.
//!
//! The metrics and the outputs API start first, node or not. No finalized block for
//! `stall_secs` means a half-open connection: the worker reconnects (to the next node); after
//! `max_failures` failed reconnections in a row it exits non-zero for its supervisor.
//!
//! - `session`: the worker's life: the servers, the node connection, the compatibility check,
//!   each block's pass (finalized and best) through [`plan`];
//! - `lease`: a lease's steps up to its job's start (prepare, acknowledge), and giving up a
//!   lease the machine cannot serve (`HostShort`);
//! - `job`: the running job: start, supervision, logs;
//! - `reports`: results and checkpoints, their receipts, a lease's end;
//! - `bids`: bidding rounds, settlement, the executor's health as it bears on new work;
//! - `verdicts`: verdict windows confirmed, replicas' sealed results revealed;
//! - `inputs`: an order's inputs, from public addresses only, checked against their hashes;
//! - `images`: the images pulled for leases, on record and pruned at each settlement beat;
//! - `step`: why a lease's step failed ([`StepError`]) and the one policy that turns it into a
//!   retry, an alert or a reserved exit code;
//! - `tasks`: named background tasks whose panics are said, one at a time of a kind.

use std::{
	collections::{BTreeMap, HashMap, HashSet},
	path::{Path, PathBuf},
	sync::{
		atomic::{AtomicBool, AtomicU32, Ordering},
		Arc, Mutex,
	},
	time::Duration,
};

use codec::Encode;
use stint_client::{
	runtime, AccountId, Client, DutyRecord, Keypair, LeaseStatus, ReplicaDecision, Static,
};
use stint_primitives::{
	BlockNumber, DeviceId, ExecutionReceipt, Instant, LeaseId, NextDuty, ReportKind, ReservedExit,
	StopReason, RECEIPT_DOMAIN,
};

use crate::{
	api::Api,
	bidding,
	chain::{crash_point, Chain, Sent, CALL_TIMEOUT},
	commit::{self, LeaseDirs},
	config::{Config, GpuMode},
	duties::{plan, Action, LeaseView, Now, OnChain, ACK_MARGIN},
	executor::{
		folders, held, Executor, FoundJob, JobRequest, JobState, PrepareError, StartError,
		CHAIN_LABEL, INSTANCE_LABEL, LEASE_LABEL, WORKER_LABEL,
	},
	gpu::{Gpus, When},
	journal::{Exit, Journal, LeaseEntry, Phase, ReplicaEntry},
	log,
	metrics::Metrics,
	quota::Quota,
};

mod bids;
mod images;
mod inputs;
pub(crate) use inputs::is_inside;
mod job;
mod lease;
mod reports;
mod session;
mod step;
mod tasks;
mod verdicts;

pub use inputs::fetch_inputs;
pub use reports::{build_receipt, ReceiptRun};
use step::missing;
pub use step::{Policy, StepError};
use tasks::{spawn_named, SingleFlight};

/// Why the worker stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
	#[error("{0}")]
	Setup(String),
	#[error("the chain failed {0} times in a row (no node, or no finalized block): exiting for the supervisor to restart")]
	ChainLost(u32),
}

/// 32 random bytes from the kernel, to seal a replica's result with.
fn random_salt() -> std::io::Result<[u8; 32]> {
	use std::io::Read;
	let mut salt = [0u8; 32];
	std::fs::File::open("/dev/urandom")?.read_exact(&mut salt)?;
	Ok(salt)
}

/// Whether a chain of this type (`system_chainType`) may be served with GPUs off.
fn gpus_off_allowed(chain_type: &str) -> bool {
	matches!(chain_type, "Development" | "Local")
}

/// What the machine lacked when a lease came (see `Worker::short`): no new bid until it is
/// back.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Shortage {
	/// Free disk (beside what live leases may still write) under this many bytes.
	Disk(u64),
	/// Leased GPUs the machine does not see.
	Gpus(Vec<DeviceId>),
	/// The executor could not prepare a job (its engine down or failing).
	Executor,
}

impl Shortage {
	fn what(&self) -> &'static str {
		match self {
			Self::Disk(_) => "the disk",
			Self::Gpus(_) => "the leased GPUs",
			Self::Executor => "the executor",
		}
	}
}

/// A running worker.
pub struct Worker<E: Executor> {
	pub config: Config,
	pub key: Keypair,
	pub account: AccountId,
	pub journal: Arc<Journal>,
	pub executor: Arc<E>,
	pub gpus: Gpus,
	pub metrics: Metrics,
	pub chain: Chain,
	/// Leases to take over though this journal never acknowledged them (`--adopt`).
	pub adopt: HashSet<LeaseId>,
	pub host: stint_probe::Host,
	/// This journal's own id (its jobs carry it).
	pub instance: String,
	/// Whether each lease's outputs get a filesystem of their own (the kernel's hard limit).
	pub quota: Quota,
	/// Each module's own state.
	following: session::Following,
	tasks: lease::Tasks,
	jobs: job::Jobs,
	bidding: bids::Bidding,
	settling: bids::Settling,
	verdicts: verdicts::Verdicts,
}

/// Removes a lease from the in-flight set when its action ends.
struct InFlight<E: Executor> {
	worker: Arc<Worker<E>>,
	lease: LeaseId,
}

impl<E: Executor> Drop for InFlight<E> {
	fn drop(&mut self) {
		self.worker.tasks.in_flight.lock().expect("not poisoned").remove(&self.lease);
	}
}

/// How long an acknowledged lease's job may fail to start before it is reported lost.
const START_GIVE_UP: Duration = Duration::from_secs(120);

fn lease_is_live(status: &LeaseStatus) -> bool {
	matches!(status, LeaseStatus::AwaitingAck | LeaseStatus::Running | LeaseStatus::Suspended)
}

/// A journaled lease that is not among this key's duties at a finalized block, as read there
/// (`next_id`: the id the next lease gets at that block, if read). A live one is someone
/// else's business now (touch nothing); a lease not yet created at that block was seen on a
/// best block ahead of finality: not ended, only not known yet. Only a lease that existed and
/// is gone or over is ended.
fn off_duty(status: Option<&LeaseStatus>, id: LeaseId, next_id: Option<LeaseId>) -> OnChain {
	match status {
		Some(status) if lease_is_live(status) => OnChain::Unknown,
		Some(_) => OnChain::Ended,
		None => match next_id {
			Some(next) if id < next => OnChain::Ended,
			_ => OnChain::Unknown,
		},
	}
}

impl<E: Executor> Worker<E> {
	/// A worker with `config`, signing with `key`, running jobs on `executor`.
	pub fn new(
		config: Config,
		key: Keypair,
		executor: E,
		gpus: Gpus,
		adopt: HashSet<LeaseId>,
	) -> Result<Arc<Self>, RunError> {
		let setup = |e: &dyn std::fmt::Display| RunError::Setup(e.to_string());
		std::fs::create_dir_all(&config.worker.data_dir).map_err(|e| setup(&e))?;
		let journal = Arc::new(
			Journal::open(&config.worker.data_dir.join("journal.redb")).map_err(|e| setup(&e))?,
		);
		let host = stint_probe::host(&config.worker.data_dir).map_err(|e| setup(&e))?;
		let instance = journal.instance().map_err(|e| setup(&e))?;
		// What this journal signed and the labels of the jobs it started name its worker key:
		// under another key its reports would be refused and its jobs not found.
		let public = format!("0x{}", hex::encode(key.public_key().0));
		match journal.meta("worker_key").map_err(|e| setup(&e))? {
			Some(known) if known != public => {
				return Err(RunError::Setup(format!(
					"this journal belongs to the worker key {known}, the configured key is \
					 {public}: give the new key a data directory of its own (the old key's \
					 leases are served by a worker with the old key)"
				)))
			}
			Some(_) => {}
			None => journal.set_meta("worker_key", &public).map_err(|e| setup(&e))?,
		}
		let metrics = Metrics::new();
		let chain =
			Chain::new(config.chain.urls.clone(), metrics.clone()).map_err(|e| setup(&e))?;
		let account = stint_client::account_of(&key);
		let quota = match config.limits.outputs_filesystem {
			true => Quota::detect(),
			false => Quota::off("`outputs_filesystem = false` in [limits]"),
		};
		Ok(Arc::new(Self {
			config,
			key,
			account,
			journal,
			executor: Arc::new(executor),
			gpus,
			metrics,
			chain,
			adopt,
			host,
			instance,
			quota,
			following: session::Following::default(),
			tasks: lease::Tasks::default(),
			jobs: job::Jobs::default(),
			bidding: bids::Bidding::default(),
			settling: bids::Settling::default(),
			verdicts: verdicts::Verdicts::default(),
		}))
	}

	fn genesis(&self) -> [u8; 32] {
		*self.following.genesis.lock().expect("not poisoned")
	}

	fn dirs(&self, lease: LeaseId) -> LeaseDirs {
		LeaseDirs::new(&self.config.worker.data_dir, lease)
	}

	/// The labels every job of this worker on this chain carries.
	pub fn labels(&self) -> HashMap<String, String> {
		HashMap::from([
			(CHAIN_LABEL.to_string(), hex::encode(self.genesis())),
			(WORKER_LABEL.to_string(), hex::encode(self.key.public_key().0)),
			(INSTANCE_LABEL.to_string(), self.instance.clone()),
		])
	}

	/// This worker's jobs by lease: those carrying its labels, and adopted ones (another journal
	/// started them, so they carry its instance label) followed by their handle.
	async fn jobs<'a>(
		&self,
		entries: impl Iterator<Item = &'a LeaseEntry>,
	) -> Result<HashMap<LeaseId, FoundJob>, String> {
		let mut jobs: HashMap<LeaseId, FoundJob> = self
			.executor
			.list(&self.labels())
			.await
			.map_err(|e| format!("cannot list jobs: {e}"))?
			.into_iter()
			.map(|job| (job.lease, job))
			.collect();
		for entry in entries.filter(|e| e.adopted) {
			if jobs.contains_key(&entry.lease) {
				continue;
			}
			if let Some(handle) = &entry.container {
				match self.executor.state(handle).await? {
					JobState::Missing => {}
					state => {
						let (lease, handle) = (entry.lease, handle.clone());
						let found = FoundJob { lease, handle, state, outputs: None };
						jobs.insert(entry.lease, found);
					}
				}
			}
		}
		Ok(jobs)
	}

	fn alert_once(&self, lease: LeaseId, why: &str) {
		if self.tasks.alerted.lock().expect("not poisoned").insert((lease, why.to_string())) {
			log::alert("duties", Some(lease), why);
		}
	}
}

/// Whether `action` takes on new work (what a worker whose calls no longer match the runtime
/// must not do): preparing or acknowledging a lease, adopting one.
pub fn takes_new_work(action: &Action) -> bool {
	matches!(action, Action::Prepare(_) | Action::Ack(_) | Action::Adopt(_) | Action::Renew(_))
}

/// Whether the journal's `entry` describes the lease `duty` is about: the same buyer, devices
/// and job (see [`LeaseView::stale`]). An adopted entry was made from the chain itself.
fn describes(entry: &LeaseEntry, duty: &DutyRecord) -> bool {
	entry.adopted
		|| (entry.buyer == duty.lease.buyer.0
			&& entry.devices == duty.lease.devices.0
			&& duty.spec.as_ref().is_none_or(|spec| *spec == entry.spec))
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn after_an_incompatible_upgrade_only_running_work_goes_on() {
		for new in [Action::Prepare(1), Action::Ack(1), Action::Adopt(1), Action::Renew(1)] {
			assert!(takes_new_work(&new), "{new:?}");
		}
		for running in [
			Action::Start(1),
			Action::Commit(1),
			Action::Checkpoint(1, 2),
			Action::Stop(1, StopReason::TimeLimit),
			Action::Pause(1),
			Action::Unpause(1),
			Action::Lost(1),
			Action::Finish(1),
			Action::Forget(1),
		] {
			assert!(!takes_new_work(&running), "{running:?}");
		}
	}

	#[test]
	fn a_lease_seen_ahead_of_finality_is_not_ended_by_a_finalized_block_without_it() {
		// Created on a best block: absent at the finalized one, whose next id is not past it.
		assert_eq!(off_duty(None, 7, Some(7)), OnChain::Unknown);
		assert_eq!(off_duty(None, 9, Some(7)), OnChain::Unknown);
		// The id unread: nothing is concluded either.
		assert_eq!(off_duty(None, 3, None), OnChain::Unknown);
		// Created, then gone (refunded, removed): ended.
		assert_eq!(off_duty(None, 6, Some(7)), OnChain::Ended);
		assert_eq!(off_duty(Some(&LeaseStatus::Completed), 6, Some(7)), OnChain::Ended);
		assert_eq!(off_duty(Some(&LeaseStatus::Running), 6, Some(7)), OnChain::Unknown);
	}

	#[test]
	fn gpus_off_only_on_development_and_local_chains() {
		assert!(gpus_off_allowed("Development"));
		assert!(gpus_off_allowed("Local"));
		assert!(!gpus_off_allowed("Live"));
		assert!(!gpus_off_allowed("Custom(\"x\")"));
	}
}
