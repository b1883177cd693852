//! The daemon: `stint-worker run`. At every finalized block it reads its duties, its journal and
//! its jobs, asks [`plan`] what to do about each lease, and runs the actions as tasks (one at a
//! time per lease). Beside that it bids on orders it can serve and settles its live streams.
//!
//! The metrics and the outputs API start first, node or not. No finalized block for
//! `stall_secs` means a half-open connection: the worker reconnects (to the next node); after
//! `max_failures` failed reconnections in a row it exits non-zero for its supervisor.

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
	gpu::Gpus,
	journal::{Exit, Journal, LeaseEntry, Phase, ReplicaEntry},
	log,
	metrics::Metrics,
	quota::Quota,
};

/// How many servable orders a bidding round looks for, and how many pages it reads at most.
const SERVABLE_PER_ROUND: u32 = 32;
const SERVABLE_PAGES_PER_ROUND: usize = 4;

/// Why the worker stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
	#[error("{0}")]
	Setup(String),
	#[error("the chain failed {0} times in a row (no node, or no finalized block): exiting for the supervisor to restart")]
	ChainLost(u32),
}

/// What the bidding policy reads of `order`, offered on `devices` (with their models).
fn candidate(
	order: u64,
	record: &stint_client::OrderRecord,
	devices: impl Iterator<Item = [u8; 32]>,
	models: &HashMap<[u8; 32], String>,
	buyer: stint_client::BuyerStanding,
	block: u32,
	accept_period: u32,
) -> bidding::Candidate {
	let manual = if record.terms.auto_accept { 0 } else { accept_period };
	bidding::Candidate {
		stands_for: record.bids_close_at.saturating_sub(block).saturating_add(manual),
		buyer,
		verdict_window: record.terms.verdict_window,
		order,
		devices: devices.map(|d| (d, models.get(&d).cloned().unwrap_or_default())).collect(),
		max_price_per_block: record.terms.max_price_per_block,
		duration: record.terms.duration,
		image: record.spec.0.image.to_vec(),
		max_output_bytes: record.spec.0.max_output_bytes,
		env: record.spec.0.env.iter().map(|var| var.key.to_vec()).collect(),
	}
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

/// A bid sent and not yet in a block: the devices it offers and the disk its order may write.
type PendingBid = (Vec<[u8; 32]>, u64);

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
	genesis: Mutex<[u8; 32]>,
	best: AtomicU32,
	in_flight: Mutex<HashSet<LeaseId>>,
	supervised: Mutex<HashSet<LeaseId>>,
	/// Leases whose logs this worker followed from the job's start to its end: that copy is the
	/// one kept, since by the end the engine's own capped file may have lost the streams' heads.
	followed: Mutex<HashSet<LeaseId>>,
	alerted: Mutex<HashSet<(LeaseId, String)>>,
	/// Orders whose bid the chain refused, and until which block not to try again.
	refused: Mutex<HashMap<u64, u32>>,
	/// Where the next bidding round goes on reading servable orders: the chain reads a bounded
	/// number of open orders per page, so a crowd of orders this worker cannot serve costs
	/// rounds, never the orders behind it. `None`: from the start.
	servable_cursor: Mutex<Option<u64>>,
	bidding: AtomicBool,
	/// Bids sent and not yet in a block: their orders and devices.
	pending_bids: Mutex<HashMap<u64, PendingBid>>,
	/// A best block's forward steps are being planned.
	planning_best: AtomicBool,
	/// When each new lease's block was authored, Unix ms (for accepted-to-running).
	first_seen: Mutex<HashMap<LeaseId, u64>>,
	/// Acknowledged leases whose job does not start, and since when it has failed to.
	start_failing: Mutex<HashMap<LeaseId, std::time::Instant>>,
	/// The devices bound to this worker key, as the chain said last.
	bound_devices: AtomicU32,
	/// The runtime's spec version last checked, and whether the calls this worker uses still
	/// match it: after an upgrade that changed them it takes no new work.
	compatibility: Mutex<(u32, bool)>,
	/// Since when the executor has not answered at bidding rounds (said once, until it
	/// answers).
	executor_down: Mutex<Option<std::time::Instant>>,
	/// Whether the executor can pass GPUs to jobs: `None` until it answered that (an engine
	/// down at start), and until then no GPU is offered.
	gpu_passthrough: Mutex<Option<bool>>,
	/// The failure that stops finalized blocks' duties, and best blocks' planning, said once.
	tick_failing: log::Repeats,
	best_failing: log::Repeats,
	/// The last settlement beat (finalized block / `settle_every`) acted on: finality may
	/// jump over the beat's own block, and the beat must not be lost with it.
	last_beat: AtomicU32,
	/// A beat's settlements and confirmations are still being sent: the next beat waits, so
	/// that one call is never sent twice (each would cost a fee, the second one for nothing).
	beat_busy: AtomicBool,
	/// A round of reveals is under way.
	reveal_busy: AtomicBool,
	/// Whether each lease's outputs get a filesystem of their own (the kernel's hard limit).
	pub quota: Quota,
}

/// Clears a flag when dropped.
struct Busy<'a>(&'a AtomicBool);

impl Drop for Busy<'_> {
	fn drop(&mut self) {
		self.0.store(false, Ordering::Release);
	}
}

/// Removes a lease from the in-flight set when its action ends.
struct InFlight<E: Executor> {
	worker: Arc<Worker<E>>,
	lease: LeaseId,
}

impl<E: Executor> Drop for InFlight<E> {
	fn drop(&mut self) {
		self.worker.in_flight.lock().expect("not poisoned").remove(&self.lease);
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
			gpu_passthrough: Mutex::new((!gpus.unverified).then_some(true)),
			gpus,
			metrics,
			chain,
			adopt,
			host,
			instance,
			genesis: Mutex::new([0; 32]),
			best: AtomicU32::new(0),
			in_flight: Mutex::new(HashSet::new()),
			supervised: Mutex::new(HashSet::new()),
			followed: Mutex::new(HashSet::new()),
			alerted: Mutex::new(HashSet::new()),
			refused: Mutex::new(HashMap::new()),
			servable_cursor: Mutex::new(None),
			bidding: AtomicBool::new(false),
			pending_bids: Mutex::new(HashMap::new()),
			planning_best: AtomicBool::new(false),
			first_seen: Mutex::new(HashMap::new()),
			start_failing: Mutex::new(HashMap::new()),
			bound_devices: AtomicU32::new(1),
			compatibility: Mutex::new((0, false)),
			executor_down: Mutex::new(None),
			tick_failing: log::Repeats::default(),
			best_failing: log::Repeats::default(),
			last_beat: AtomicU32::new(u32::MAX),
			beat_busy: AtomicBool::new(false),
			reveal_busy: AtomicBool::new(false),
			quota,
		}))
	}

	/// Whether bids may offer `device`: the machine sees it and jobs can be given it.
	fn offers(&self, device: &DeviceId) -> bool {
		self.gpus.sees(device)
			&& (!self.gpus.passthrough()
				|| *self.gpu_passthrough.lock().expect("not poisoned") == Some(true))
	}

	/// Asks the executor, once it answers, whether it can pass GPUs to jobs, if that is not
	/// known yet (an engine that was down when the worker started).
	async fn check_gpu_passthrough(&self) {
		if self.gpu_passthrough.lock().expect("not poisoned").is_some() {
			return;
		}
		let Some(supported) = self.executor.gpus_supported().await else { return };
		match supported {
			true => log::info("gpu", None, "the executor can pass GPUs to jobs: they are offered"),
			false => log::alert(
				"gpu",
				None,
				"the Docker engine has no NVIDIA runtime: GPUs cannot be passed to containers, so \
				 none is offered",
			),
		}
		*self.gpu_passthrough.lock().expect("not poisoned") = Some(supported);
	}

	fn genesis(&self) -> [u8; 32] {
		*self.genesis.lock().expect("not poisoned")
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
		if self.alerted.lock().expect("not poisoned").insert((lease, why.to_string())) {
			log::alert("duties", Some(lease), why);
		}
	}

	/// Starts the metrics and the outputs API: before the chain, so both answer without a node.
	/// The outputs of leases kept since before a reboot are mounted again first.
	pub fn serve(self: &Arc<Self>) -> Result<(), RunError> {
		match self.quota.unavailable() {
			Some(why) => log::warn(
				"worker",
				None,
				format!(
					"outputs are held to their limit by a walk every second, not by the kernel: \
					 {why}"
				),
			),
			None => {
				for (lease, why) in self.quota.remount_all(&self.config.worker.data_dir) {
					log::alert("worker", None, format!("{}: not mounted: {why}", lease.display()));
				}
			}
		}
		self.metrics.serve(self.config.metrics.listen).map_err(RunError::Setup)?;
		Api::new(self.journal.clone(), self.config.worker.data_dir.clone())
			.serve(self.config.api.listen)
			.map_err(RunError::Setup)?;
		log::info(
			"api",
			None,
			format!(
				"outputs API on http://{}, metrics on http://{}/metrics",
				self.config.api.listen, self.config.metrics.listen
			),
		);
		log::info(
			"worker",
			None,
			format!(
				"{} with journal {} (instance {})",
				crate::WORKER_VERSION,
				self.config.worker.data_dir.join("journal.redb").display(),
				self.instance
			),
		);
		Ok(())
	}

	/// Connects, checks who this key acts for, then follows the finalized chain until the
	/// connection is lost for good.
	pub async fn run(self: &Arc<Self>) -> Result<(), RunError> {
		let client = self.connect().await?;
		let mut client = client;
		let mut failures = 0u32;
		let mut last = (0u64, std::time::Instant::now());
		let mut best_seen = 0u64;
		let stall = Duration::from_secs(self.config.chain.stall_secs);
		loop {
			let head = tokio::time::timeout(stall, client.finalized_head()).await;
			let broken = match head {
				Ok(Ok((hash, number))) if number > last.0 => {
					last = (number, std::time::Instant::now());
					failures = 0;
					self.metrics.finalized_block.set(number as i64);
					let tick = self.tick(&client, hash, number as u32);
					match tokio::time::timeout(stall * 2, tick).await {
						Ok(Ok(())) => {
							if self.tick_failing.clear() {
								log::info("duties", None, format!("block {number}: duties done"));
							}
							None
						}
						Ok(Err(why)) => {
							self.metrics.errors.with_label_values(&["duties"]).inc();
							if self.tick_failing.fresh(&why) {
								log::warn(
									"duties",
									None,
									format!("block {number}: {why} (said once until it changes)"),
								);
							}
							None
						}
						Err(_) => Some(format!(
							"block {number}: the node does not answer (no reads in {} s)",
							(stall * 2).as_secs()
						)),
					}
				}
				Ok(Ok(_)) if last.1.elapsed() > stall => Some(format!(
					"no finalized block for {} s (a half-open connection?)",
					stall.as_secs()
				)),
				Ok(Ok(_)) => None,
				Ok(Err(e)) => Some(e.to_string()),
				Err(_) => Some(format!(
					"no finalized block for {} s: the node does not answer (a half-open \
					 connection?)",
					stall.as_secs()
				)),
			};
			if let Some(why) = broken {
				// A reconnection that succeeds to a node that still finalizes nothing is no
				// cure: only a new finalized block ends a run of failures.
				failures += 1;
				if failures >= self.config.chain.max_failures {
					log::error("chain", None, format!("{why}: failure {failures} in a row"));
					return Err(RunError::ChainLost(failures));
				}
				log::warn("chain", None, format!("{why}: reconnecting"));
				match self.chain.reconnect().await {
					Ok(fresh) => {
						client = fresh;
						last.1 = std::time::Instant::now();
						log::info(
							"chain",
							None,
							format!(
								"connected to {}",
								self.chain.failover.connected_to().await.unwrap_or_default()
							),
						);
					}
					Err(e) => {
						log::error("chain", None, format!("reconnection {failures} failed: {e}"));
					}
				}
				continue;
			}
			self.on_best(&client, &mut best_seen).await;
			tokio::time::sleep(Duration::from_millis(100)).await;
		}
	}

	/// Whether the calls this worker uses match the runtime (see [`Worker::check_compatibility`]).
	fn compatible(&self) -> bool {
		self.compatibility.lock().expect("not poisoned").1
	}

	/// Checked, and found not to match (not merely unchecked yet, as at start-up).
	fn known_incompatible(&self) -> bool {
		let (spec, compatible) = *self.compatibility.lock().expect("not poisoned");
		spec != 0 && !compatible
	}

	/// Checks, whenever the runtime's spec version changes, that the calls and runtime APIs this
	/// worker uses still match it. After an upgrade that changed them the worker takes no new
	/// work (no bids, no new leases) and says so loudly; running leases go on.
	///
	/// Until the first check succeeds the runtime counts as not matching: no bid goes out before
	/// the worker knows its calls are the chain's.
	async fn check_compatibility(&self, client: &Client) {
		let (spec, incompatible) =
			match tokio::time::timeout(CALL_TIMEOUT, client.worker_compatibility()).await {
				Ok(Ok(checked)) => checked,
				failed => {
					if self.compatibility.lock().expect("not poisoned").0 == 0 {
						let why = match failed {
							Ok(Err(e)) => e.to_string(),
							_ => "no answer in time".to_string(),
						};
						log::warn(
							"chain",
							None,
							format!("cannot check the runtime's calls yet ({why}): no new work"),
						);
					}
					return;
				}
			};
		let mut known = self.compatibility.lock().expect("not poisoned");
		if known.0 == spec {
			return;
		}
		*known = (spec, incompatible.is_empty());
		match incompatible.is_empty() {
			true => log::info("chain", None, format!("runtime spec version {spec}: compatible")),
			false => {
				self.metrics.errors.with_label_values(&["upgrade"]).inc();
				log::alert(
					"chain",
					None,
					format!(
						"runtime spec version {spec} changed calls this worker uses ({}): taking \
						 no new work until stint-worker is upgraded",
						incompatible.join("; ")
					),
				);
			}
		}
	}

	/// On each new best block: bid (bidding changes nothing a fork could make wrong: the chain
	/// checks every bid where it lands), and take the steps forward that need not wait for
	/// finality: prepare, acknowledge, start, commit, checkpoint. Stopping, pausing and giving
	/// up happen only on finalized blocks.
	async fn on_best(self: &Arc<Self>, client: &Client, best_seen: &mut u64) {
		let Ok(Ok((hash, number))) =
			tokio::time::timeout(Duration::from_secs(5), client.best_head()).await
		else {
			return;
		};
		if number <= *best_seen {
			return;
		}
		*best_seen = number;
		self.best.store(number as u32, Ordering::Relaxed);
		let at = client.at_block(hash);
		if !self.planning_best.swap(true, Ordering::SeqCst) {
			let (me, at) = (self.clone(), at.clone());
			tokio::spawn(async move {
				match me.plan_best(&at).await {
					Ok(()) => {
						me.best_failing.clear();
					}
					Err(why) if me.best_failing.fresh(&why) => {
						log::warn("duties", None, format!("best block {number}: {why}"));
					}
					Err(_) => {}
				}
				me.planning_best.store(false, Ordering::SeqCst);
			});
		}
		// With bidding disabled, or after an upgrade the worker does not match, the round
		// still retracts this key's standing bids: one that won would be a lease it does not
		// take, and a no-show is slashed. Until the runtime is checked, nothing is done.
		if !self.compatible() && !self.known_incompatible() {
			return;
		}
		if self.bidding.swap(true, Ordering::SeqCst) {
			return;
		}
		let me = self.clone();
		tokio::spawn(async move {
			if let Err(why) = me.bid_round(&at, number as u32).await {
				me.metrics.errors.with_label_values(&["bidding"]).inc();
				log::warn("bidding", None, why);
			}
			me.bidding.store(false, Ordering::SeqCst);
		});
	}

	/// The forward steps of [`plan`] on a best block (`at` reads there).
	async fn plan_best(self: &Arc<Self>, at: &Client) -> Result<(), String> {
		let duties = tokio::time::timeout(CALL_TIMEOUT, at.duties(&self.account))
			.await
			.map_err(|_| "duties: no answer in time".to_string())?
			.map_err(|e| format!("duties: {e}"))?;
		if duties.is_empty() {
			return Ok(());
		}
		let entries = self.journal.all().map_err(|e| e.to_string())?;
		let jobs = self.jobs(entries.iter()).await?;
		let now = Now {
			block: self.best.load(Ordering::Relaxed),
			unix: crate::unix_now(),
			retention_secs: 0,
		};
		for duty in duties {
			// One entry that cannot be read stops no other lease's steps.
			let entry = match self.journal.get(duty.id) {
				Ok(entry) => entry,
				Err(why) => {
					self.alert_once(duty.id, &why.to_string());
					continue;
				}
			};
			let in_flight = self.in_flight.lock().expect("not poisoned").contains(&duty.id);
			let view = LeaseView {
				id: duty.id,
				chain: OnChain::Live {
					next: duty.next,
					checkpoint_interval: duty.lease.checkpoint_interval,
				},
				entry: entry.as_ref(),
				job: jobs.get(&duty.id).map(|job| job.state),
				in_flight,
				adopt: false,
				stale: entry.as_ref().is_some_and(|entry| !describes(entry, &duty)),
			};
			for action in plan(&view, &now) {
				let forward = matches!(
					action,
					Action::Prepare(_)
						| Action::Ack(_) | Action::Start(_)
						| Action::Commit(_)
						| Action::Checkpoint(..)
				);
				if forward && (self.compatible() || !takes_new_work(&action)) {
					self.dispatch(action, Some(duty.clone()));
				}
			}
		}
		Ok(())
	}

	async fn connect(self: &Arc<Self>) -> Result<Client, RunError> {
		// A journal that knows its chain connects only to that chain's nodes, from the first
		// connection on: a URL of another chain listed first is passed over, not the end.
		let known = self.journal.meta("genesis").map_err(|e| RunError::Setup(e.to_string()))?;
		if let Some(genesis) = known.as_deref().and_then(stint_client::parse_hex32) {
			self.chain.failover.expect_genesis(genesis);
		}
		let mut failures = 0;
		let client = loop {
			match self.chain.client().await {
				Ok(client) => break client,
				Err(e) => {
					failures += 1;
					log::error("chain", None, e.to_string());
					if failures < self.config.chain.max_failures {
						continue;
					}
					// Nodes that answer, all of another chain: no restart mends that.
					if let (Some(known), true) = (&known, e.to_string().contains("another chain")) {
						return Err(RunError::Setup(format!(
							"this journal belongs to the chain {known} and the nodes answering \
							 are of another ({e}): give each chain a data directory of its own"
						)));
					}
					return Err(RunError::ChainLost(failures));
				}
			}
		};
		let genesis = client.genesis_hash();
		let genesis_hex = format!("0x{}", hex::encode(genesis));
		match self.journal.meta("genesis").map_err(|e| RunError::Setup(e.to_string()))? {
			Some(known) if known != genesis_hex => {
				return Err(RunError::Setup(format!(
					"this journal belongs to the chain {known}, the node is on {genesis_hex}: \
					 give this chain a data directory of its own"
				)))
			}
			_ => self
				.journal
				.set_meta("genesis", &genesis_hex)
				.map_err(|e| RunError::Setup(e.to_string()))?,
		}
		*self.genesis.lock().expect("not poisoned") = genesis;
		// A failover to a node of another chain would read every lease as gone.
		self.chain.failover.expect_genesis(genesis);
		if self.config.worker.gpus == GpuMode::Off {
			// Without passthrough every bound device counts as served: on a live chain that
			// would win GPU leases and run them on the CPU.
			let chain_type = client.chain_type().await.map_err(|e| {
				RunError::Setup(format!("cannot read the chain's type (gpus = \"off\"): {e}"))
			})?;
			if !gpus_off_allowed(&chain_type) {
				return Err(RunError::Setup(format!(
					"gpus = \"off\" is for development and local chains only; this chain is \
					 {chain_type}: set gpus = \"auto\""
				)));
			}
		}
		// Transactions signed before a restart and not known to be in keep their nonces, as long
		// as they may still be sent (a finished lease's never are: its nonce would be a gap
		// every later transaction waits behind).
		let entries = self.journal.all().map_err(|e| RunError::Setup(e.to_string()))?;
		let pending = entries.iter().filter(|e| e.phase != Phase::Done);
		for signed in pending.flat_map(|e| e.extrinsics.values()).filter(|x| !x.included) {
			self.chain.reserve(signed.nonce).await;
		}
		self.check_compatibility(&client).await;
		match client.acting_for(&self.account).await {
			Ok(Some((provider, devices))) => {
				let count = devices.as_ref().map_or(0, Vec::len);
				self.bound_devices.store(count.max(1) as u32, Ordering::Relaxed);
				log::info(
					"chain",
					None,
					format!(
						"worker key {} acts for provider {provider} ({} device(s) bound)",
						self.account, count
					),
				);
			}
			Ok(None) => log::alert(
				"chain",
				None,
				format!(
					"{} is neither a provider nor a worker key bound to one: nothing to do until \
					 it is bound (stint provider bind-worker)",
					self.account
				),
			),
			Err(e) => log::warn("chain", None, format!("cannot read whom this key acts for: {e}")),
		}
		Ok(client)
	}

	/// One finalized block: plan every lease, start what the plan says, bid, settle.
	async fn tick(
		self: &Arc<Self>,
		client: &Client,
		hash: [u8; 32],
		number: u32,
	) -> Result<(), String> {
		if let Ok(Ok(best)) = tokio::time::timeout(CALL_TIMEOUT, client.best_number()).await {
			self.best.store(best as u32, Ordering::Relaxed);
		}
		self.check_compatibility(client).await;
		let at = client.at_block(hash);
		let duties = tokio::time::timeout(CALL_TIMEOUT, at.duties(&self.account))
			.await
			.map_err(|_| "duties: no answer in time".to_string())?
			.map_err(|e| format!("duties: {e}"))?;
		let entries: BTreeMap<LeaseId, LeaseEntry> = self
			.journal
			.all()
			.map_err(|e| e.to_string())?
			.into_iter()
			.map(|entry| (entry.lease, entry))
			.collect();
		let jobs = self.jobs(entries.values()).await?;

		let mut chain: BTreeMap<LeaseId, (OnChain, Option<DutyRecord>)> = BTreeMap::new();
		for duty in &duties {
			let live = OnChain::Live {
				next: duty.next,
				checkpoint_interval: duty.lease.checkpoint_interval,
			};
			chain.insert(duty.id, (live, Some(duty.clone())));
		}
		// Read once, and only when some journaled lease is off duty.
		let mut next_id: Option<Option<LeaseId>> = None;
		for (id, entry) in &entries {
			if chain.contains_key(id) {
				continue;
			}
			let state = match entry.phase {
				Phase::Done => OnChain::Ended,
				_ => match tokio::time::timeout(CALL_TIMEOUT, at.lease(*id)).await {
					Ok(Ok(record)) => {
						if record.is_none() && next_id.is_none() {
							let read = tokio::time::timeout(CALL_TIMEOUT, at.next_lease_id()).await;
							next_id = Some(read.ok().and_then(Result::ok));
						}
						off_duty(record.as_ref().map(|r| &r.status), *id, next_id.flatten())
					}
					_ => OnChain::Unknown,
				},
			};
			chain.insert(*id, (state, None));
		}

		let now = Now {
			block: number,
			unix: crate::unix_now(),
			retention_secs: self.config.worker.retention_days * 24 * 3600,
		};
		let in_flight = self.in_flight.lock().expect("not poisoned").clone();
		for (id, (state, duty)) in chain {
			let entry = entries.get(&id);
			let job = jobs.get(&id).map(|job| job.state);
			if let (Some(entry), Some(found)) = (entry, jobs.get(&id)) {
				if matches!(entry.phase, Phase::Running | Phase::Paused)
					&& matches!(found.state, JobState::Running | JobState::Paused)
				{
					self.supervise(id, found.handle.clone());
				}
			}
			let view = LeaseView {
				id,
				chain: state,
				entry,
				job,
				in_flight: in_flight.contains(&id),
				adopt: self.adopt.contains(&id),
				stale: entry
					.zip(duty.as_ref())
					.is_some_and(|(entry, duty)| !describes(entry, duty)),
			};
			for action in plan(&view, &now) {
				if !self.compatible() && takes_new_work(&action) {
					continue;
				}
				self.dispatch(action, duty.clone());
			}
		}

		let mut phases: HashMap<String, i64> = HashMap::new();
		for entry in entries.values() {
			*phases.entry(format!("{:?}", entry.phase)).or_default() += 1;
		}
		for phase in
			["Preparing", "Prepared", "OrderFault", "Acked", "Running", "Paused", "Exited", "Done"]
		{
			self.metrics
				.leases
				.with_label_values(&[phase])
				.set(phases.get(phase).copied().unwrap_or(0));
		}

		let settle_every = self.config.bidding.settle_every.max(1);
		let beat = number / settle_every;
		if self.last_beat.load(Ordering::Acquire) != beat
			&& !self.beat_busy.swap(true, Ordering::AcqRel)
		{
			self.last_beat.store(beat, Ordering::Release);
			// Not a lease whose result this worker sent: the result closed its stream, perhaps
			// in a block finality has not reached (a settle then is refused, a fee for nothing).
			let streams: Vec<(LeaseId, u64)> = duties
				.iter()
				.filter(|d| matches!(d.lease.status, LeaseStatus::Running))
				.filter(|d| {
					!entries
						.get(&d.id)
						.is_some_and(|e| matches!(e.phase, Phase::Exited | Phase::Done))
				})
				.map(|d| (d.id, d.lease.stream))
				.collect();
			// Every lease that ended may wait for a verdict: one this worker's result ended,
			// and one its provider ended by notice (`terminate` is the account's, not the
			// worker's). Its collateral stays locked until the verdict is settled.
			// A replica's verdict waits for its order's replicas instead (below); a result
			// revealed alone then becomes a plain lease's, to confirm here.
			let finished: Vec<LeaseId> = entries
				.values()
				.filter(|e| e.phase == Phase::Done && !e.verdict_settled && e.replica.is_none())
				.map(|e| e.lease)
				.collect();
			let (me, at) = (self.clone(), at.clone());
			tokio::spawn(async move {
				let _busy = Busy(&me.beat_busy);
				let settles = streams.into_iter().map(|(lease, stream)| me.settle(lease, stream));
				futures::future::join_all(settles).await;
				if !finished.is_empty() {
					me.confirm_verdicts(&at, number, finished).await;
				}
			});
		}
		// Every block, not every beat: a sealed result must be revealed within the window.
		let replicas: Vec<(LeaseId, ReplicaEntry)> = entries
			.values()
			.filter(|e| e.phase == Phase::Done && !e.verdict_settled)
			.filter_map(|e| e.replica.map(|replica| (e.lease, replica)))
			.collect();
		if !replicas.is_empty() && !self.reveal_busy.swap(true, Ordering::AcqRel) {
			let (me, at) = (self.clone(), at.clone());
			tokio::spawn(async move {
				let _busy = Busy(&me.reveal_busy);
				me.reveal_replicas(&at, number, replicas).await;
			});
		}
		Ok(())
	}

	/// A result (or a served notice) counts, is paid its holdback and unlocks its collateral
	/// once its buyer accepts it or its verdict window passes: then anyone may confirm it, and
	/// the worker does, so that its provider's honest results are not left waiting. `at` is
	/// finalized block `number`. A lease whose verdict is recorded (or was never pending) is
	/// marked settled.
	async fn confirm_verdicts(self: &Arc<Self>, at: &Client, number: u32, leases: Vec<LeaseId>) {
		for id in leases {
			let pending = match tokio::time::timeout(CALL_TIMEOUT, at.pending_verdict(id)).await {
				Ok(Ok(pending)) => pending,
				_ => continue,
			};
			// A disputed result is settled by its re-execution, not by a confirmation (which
			// the chain refuses while the dispute is open: a fee for nothing).
			let disputed = match tokio::time::timeout(CALL_TIMEOUT, at.dispute(id)).await {
				Ok(Ok(dispute)) => dispute.is_some_and(|d| d.is_open()),
				_ => continue,
			};
			let settled = match pending {
				Some(_) if disputed => false,
				Some(until) if number > until => {
					let call = runtime::tx().leases().confirm_result(id);
					match self.chain.submit(&call, &self.key, "confirm").await {
						Ok(_) => {
							log::info("commit", Some(id), "result confirmed");
							true
						}
						Err(why) => {
							log::warn("commit", Some(id), format!("confirming: {why}"));
							false
						}
					}
				}
				Some(_) => false,
				// Nothing pending: settled, once the chain shows the lease ended (the result
				// may be in a block not finalized yet).
				None => match tokio::time::timeout(CALL_TIMEOUT, at.lease(id)).await {
					Ok(Ok(record)) => !record.is_some_and(|r| lease_is_live(&r.status)),
					_ => false,
				},
			};
			if settled {
				if let Ok(Some(mut entry)) = self.journal.get(id) {
					entry.verdict_settled = true;
					if let Err(why) = self.journal.put(&entry) {
						log::warn("commit", Some(id), format!("journal: {why}"));
					}
				}
			}
		}
	}

	/// A replica's sealed result is revealed once the reveals of its order open, exactly once
	/// (its transaction journaled like every other); its verdict is settled once the replicas
	/// are decided. After the reveal window the worker asks the chain to decide (anyone may),
	/// so that an honest result is not left waiting on a replica that never reveals. `at` is
	/// finalized block `number`.
	async fn reveal_replicas(
		self: &Arc<Self>,
		at: &Client,
		number: u32,
		leases: Vec<(LeaseId, ReplicaEntry)>,
	) {
		for (id, replica) in leases {
			let group = match tokio::time::timeout(CALL_TIMEOUT, at.replicas(replica.order)).await {
				Ok(Ok(group)) => group,
				_ => continue,
			};
			let sealed = match tokio::time::timeout(CALL_TIMEOUT, at.lease(id)).await {
				Ok(Ok(lease)) => lease.is_some_and(|l| matches!(l.status, LeaseStatus::Sealed)),
				_ => continue,
			};
			let settled = match group {
				// Pruned with its order: nothing is left to do.
				None => true,
				// Decided: nothing is left to do, unless its result was revealed alone: that
				// waits for the buyer's verdict as a plain lease's result does, and the entry
				// becomes a plain lease's, confirmed on the settlement beat once its window
				// passes (`confirm_verdicts`).
				Some(group) if group.decided.is_some() => {
					log::info("commit", Some(id), format!("replicas decided: {:?}", group.decided));
					let alone = matches!(
						group.decided,
						Some((_, ReplicaDecision::Alone { lease, .. })) if lease == id
					);
					if alone {
						if let Ok(Some(mut entry)) = self.journal.get(id) {
							entry.replica = None;
							if let Err(why) = self.journal.put(&entry) {
								log::warn("commit", Some(id), format!("journal: {why}"));
							}
						}
						continue;
					}
					true
				}
				Some(group) if sealed => {
					if (group.reveals_from..=group.reveal_until).contains(&number) {
						if let Err(why) = self.reveal(id, &replica).await {
							log::warn("commit", Some(id), format!("revealing: {why}"));
						}
					}
					false
				}
				Some(group) if number > group.reveal_until => {
					let call = runtime::tx().leases().decide_replicas(replica.order);
					match self.chain.submit(&call, &self.key, "decide").await {
						Ok(_) => log::info("commit", Some(id), "replicas decided"),
						Err(why) => log::warn("commit", Some(id), format!("deciding: {why}")),
					}
					false
				}
				Some(_) => false,
			};
			if settled {
				if let Ok(Some(mut entry)) = self.journal.get(id) {
					entry.verdict_settled = true;
					if let Err(why) = self.journal.put(&entry) {
						log::warn("commit", Some(id), format!("journal: {why}"));
					}
				}
			}
		}
	}

	/// Sends the reveal of replica `id`'s sealed result: the signed final report and the salt.
	async fn reveal(&self, id: LeaseId, replica: &ReplicaEntry) -> Result<(), String> {
		let entry = self.entry(id)?;
		// In a block already, which the finalized block has not reached: nothing to send, unless
		// the best chain lost it (then the same bytes go again).
		if entry.extrinsics.get("reveal").is_some_and(|x| x.included)
			&& !self.sealed_at_best(id).await
		{
			return Ok(());
		}
		let report = entry.reports.get("final").ok_or("no sealed result in the journal")?;
		let signature: [u8; 64] =
			report.signature.clone().try_into().map_err(|_| "a bad signature in the journal")?;
		let commitment = Static(report.commitment);
		let call = runtime::tx().leases().reveal_result(id, commitment, replica.salt, signature);
		match self.chain.send(&self.journal, id, "reveal", &call, &self.key).await {
			Ok(Sent::Included) => log::info("commit", Some(id), "sealed result revealed"),
			Ok(Sent::Refused(why)) => self.alert_once(id, &format!("reveal refused: {why}")),
			Ok(Sent::Rejected { why, .. }) if why.contains("already imported") => {}
			Ok(Sent::Rejected { why, .. }) => return Err(format!("reveal did not go in: {why}")),
			Err(e) => return Err(e.to_string()),
		}
		Ok(())
	}

	fn dispatch(self: &Arc<Self>, action: Action, duty: Option<DutyRecord>) {
		let lease = match &action {
			Action::Alert(lease, why) => return self.alert_once(*lease, why),
			Action::Prepare(l) | Action::Ack(l) | Action::Start(l) | Action::Commit(l) => *l,
			Action::Checkpoint(l, _) | Action::Stop(l, _) => *l,
			Action::Pause(l) | Action::Unpause(l) | Action::Lost(l) => *l,
			Action::Finish(l) | Action::Forget(l) | Action::Adopt(l) | Action::Renew(l) => *l,
		};
		let Some(guard) = self.begin(lease) else { return };
		let me = self.clone();
		tokio::spawn(async move {
			let _guard = guard;
			let name = format!("{action:?}");
			if let Err(why) = me.act(action, duty).await {
				me.metrics.errors.with_label_values(&["duties"]).inc();
				log::error("duties", Some(lease), format!("{name}: {why}"));
			}
		});
	}

	/// Returns once the best block is `ACK_MARGIN` blocks from `by`, an ack deadline.
	async fn ack_deadline_near(&self, by: BlockNumber) {
		while self.best.load(Ordering::Relaxed).saturating_add(ACK_MARGIN) < by {
			tokio::time::sleep(Duration::from_millis(200)).await;
		}
	}

	fn begin(self: &Arc<Self>, lease: LeaseId) -> Option<InFlight<E>> {
		self.in_flight
			.lock()
			.expect("not poisoned")
			.insert(lease)
			.then(|| InFlight { worker: self.clone(), lease })
	}

	async fn act(self: &Arc<Self>, action: Action, duty: Option<DutyRecord>) -> Result<(), String> {
		match action {
			Action::Prepare(id) => {
				let duty = duty.ok_or("no duty to prepare from")?;
				if self.prepare(id, &duty).await? {
					self.ack_and_start(id).await?;
				}
				Ok(())
			}
			Action::Ack(id) => self.ack_and_start(id).await,
			Action::Start(id) => self.start(id).await,
			Action::Commit(id) => self.commit(id).await,
			Action::Checkpoint(id, sequence) => self.checkpoint(id, sequence).await,
			Action::Stop(id, reason) => {
				let mut entry = self.entry(id)?;
				entry.stop_reason = Some(reason);
				self.journal.put(&entry).map_err(|e| e.to_string())?;
				if let Some(handle) = &entry.container {
					log::info("executor", Some(id), format!("stopping the job: {reason:?}"));
					self.executor.stop(handle, self.config.limits.stop_grace_secs).await?;
				}
				self.commit(id).await
			}
			Action::Pause(id) => {
				let mut entry = self.entry(id)?;
				if let Some(handle) = &entry.container {
					self.executor.pause(handle).await?;
				}
				entry.phase = Phase::Paused;
				log::info("executor", Some(id), "suspended on chain: job paused");
				self.journal.put(&entry).map_err(|e| e.to_string())
			}
			Action::Unpause(id) => {
				let mut entry = self.entry(id)?;
				if let Some(handle) = &entry.container {
					self.executor.unpause(handle).await?;
				}
				entry.phase = Phase::Running;
				log::info("executor", Some(id), "resumed on chain: job unpaused");
				self.journal.put(&entry).map_err(|e| e.to_string())
			}
			Action::Lost(id) => self.report_lost(id, "the job vanished").await,
			Action::Finish(id) => self.finish(id).await,
			Action::Forget(id) => self.forget(id).await,
			Action::Adopt(id) => self.adopt(id, duty.ok_or("no duty to adopt from")?).await,
			Action::Renew(id) => {
				let duty = duty.ok_or("no duty to renew from")?;
				self.renew(id, &duty).await?;
				if self.prepare(id, &duty).await? {
					self.ack_and_start(id).await?;
				}
				Ok(())
			}
			Action::Alert(..) => Ok(()),
		}
	}

	fn entry(&self, lease: LeaseId) -> Result<LeaseEntry, String> {
		self.journal
			.get(lease)
			.map_err(|e| e.to_string())?
			.ok_or_else(|| format!("lease {lease} is not in the journal"))
	}

	fn instant(&self) -> Instant {
		Instant { block: self.best.load(Ordering::Relaxed), unix_ms: crate::unix_ms() }
	}

	/// A journal entry for lease `id` as the chain describes it in `duty`.
	fn new_entry(&self, id: LeaseId, duty: &DutyRecord) -> Result<LeaseEntry, String> {
		let spec = duty.spec.clone().ok_or("the order's job spec is gone")?;
		let mut entry = LeaseEntry::new(
			id,
			duty.lease.buyer.0,
			spec,
			duty.lease.devices.0.clone(),
			self.executor.kind(),
		);
		if duty.lease.replicas > 1 {
			entry.replica = Some(ReplicaEntry {
				order: duty.lease.order,
				provider: duty.lease.provider.0,
				salt: random_salt().map_err(|e| format!("no salt for the seal: {e}"))?,
			});
		}
		Ok(entry)
	}

	/// Makes the journal's entry of `id` anew from `duty`: the old one was prepared from a fork
	/// that was dropped, for a lease that the id no longer names. Its files (another order's
	/// inputs) go, and so does any job created for it (whose image, command and variables are
	/// the other order's: started for this lease it would run them under this lease's receipt);
	/// its signed acknowledgement stays, as it names only the id.
	async fn renew(&self, id: LeaseId, duty: &DutyRecord) -> Result<(), String> {
		let old = self.entry(id)?;
		let mut labels = self.labels();
		labels.insert(LEASE_LABEL.into(), id.to_string());
		let mut handles: Vec<String> =
			self.executor.list(&labels).await?.into_iter().map(|job| job.handle).collect();
		handles.extend(old.container.clone());
		handles.sort();
		handles.dedup();
		for handle in handles {
			// Killed first where it runs (Docker's forced removal, the native executor's).
			self.executor.remove(&handle).await?;
		}
		let mut entry = self.new_entry(id, duty)?;
		entry.extrinsics = old.extrinsics.into_iter().filter(|(slot, _)| slot == "ack").collect();
		// Nothing ran (else no renewal): nothing in the folder is the job's.
		match std::fs::remove_dir_all(&self.dirs(id).root) {
			Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.to_string()),
			_ => {}
		}
		self.journal.put(&entry).map_err(|e| e.to_string())?;
		log::alert(
			"duties",
			Some(id),
			format!(
				"the journal's entry was made from a dropped fork (order {} now): prepared again",
				duty.lease.order
			),
		);
		Ok(())
	}

	/// Journals a new lease and gets it ready: the image, the inputs, the disk. Returns whether
	/// it is ready to acknowledge (prepared, or the order's fault found).
	async fn prepare(self: &Arc<Self>, id: LeaseId, duty: &DutyRecord) -> Result<bool, String> {
		let mut entry = match self.journal.get(id).map_err(|e| e.to_string())? {
			Some(entry) => entry,
			None => {
				let entry = self.new_entry(id, duty)?;
				self.journal.put(&entry).map_err(|e| e.to_string())?;
				// Accepted-to-running counts from the block that created the lease (the worker
				// may see it blocks later); from now if that block's time cannot be read.
				let created = match self.chain.client().await {
					Ok(client) => tokio::time::timeout(
						CALL_TIMEOUT,
						client.block_time_ms(duty.lease.created_at as u64),
					)
					.await
					.ok()
					.and_then(Result::ok)
					.flatten(),
					Err(_) => None,
				};
				let created = created.unwrap_or_else(crate::unix_ms);
				self.first_seen.lock().expect("not poisoned").insert(id, created);
				log::info("duties", Some(id), format!("new lease from order {}", duty.lease.order));
				entry
			}
		};
		let dirs = self.dirs(id);
		dirs.create().map_err(|e| format!("cannot create {}: {e}", dirs.root.display()))?;
		if let Err(unknown) = self.gpus.uuids_for(&entry.devices) {
			self.alert_once(
				id,
				&format!(
					"leased GPUs this machine does not see ({}): not acknowledged",
					unknown.iter().map(hex::encode).collect::<Vec<_>>().join(", ")
				),
			);
			return Ok(false);
		}
		let free = stint_probe::free_bytes(&self.config.worker.data_dir)?;
		if free < entry.spec.max_output_bytes {
			self.alert_once(
				id,
				// Said once: the free space itself (which changes) is not part of the message.
				&format!(
					"less disk free than the order may write ({} bytes): not acknowledged",
					entry.spec.max_output_bytes
				),
			);
			return Ok(false);
		}
		// The outputs in a filesystem of the order's size: the kernel holds the job to it. Not
		// made, the walk alone holds it, as on a machine that cannot (said at start).
		let (quota, mounted, limit) =
			(self.quota.clone(), dirs.clone(), entry.spec.max_output_bytes);
		match tokio::task::spawn_blocking(move || quota.mount(&mounted, limit)).await {
			Ok(Ok(_)) => {}
			Ok(Err(why)) => {
				self.alert_once(id, &format!("outputs not held by a filesystem: {why}"))
			}
			Err(why) => self.alert_once(id, &format!("outputs not held by a filesystem: {why}")),
		}
		// Preparation races the ack deadline: what is not ready ACK_MARGIN blocks before it (a
		// registry or an input server that trickles bytes, chosen by the buyer) is the order's
		// fault, acknowledged and reported, not a no-show the provider is slashed for.
		// Only a preparation that began in time races the deadline: one that begins within the
		// margin (a worker restarted late) is the provider's lateness, never the order's fault.
		let by = match duty.next {
			NextDuty::Ack { by }
				if self.best.load(Ordering::Relaxed).saturating_add(ACK_MARGIN) < by =>
			{
				by
			}
			_ => BlockNumber::MAX,
		};
		let resolved = tokio::select! {
			biased;
			resolved = self.executor.resolve(&entry.spec.image) => resolved,
			() = self.ack_deadline_near(by) => Err(PrepareError::Order(
				ReservedExit::ImageUnavailable,
				format!("the image was not ready {ACK_MARGIN} blocks before the ack deadline"),
			)),
		};
		match resolved {
			Ok(image_id) => entry.image_id = Some(image_id),
			Err(PrepareError::Order(code, why)) => {
				log::warn("executor", Some(id), format!("the order's image: {why}"));
				entry.order_fault = Some(code.code());
				entry.phase = Phase::OrderFault;
				self.journal.put(&entry).map_err(|e| e.to_string())?;
				return Ok(true);
			}
			Err(PrepareError::Provider(why)) => {
				self.alert_once(id, &format!("cannot prepare the image: {why}"));
				return Ok(false);
			}
		}
		let inputs: Vec<(String, [u8; 32])> = entry
			.spec
			.inputs
			.iter()
			.map(|input| (String::from_utf8_lossy(&input.uri).into_owned(), input.content_hash))
			.collect();
		let (folder, private) = (dirs.inputs(), self.config.worker.allow_private_inputs);
		// The inputs share the disk with the outputs the order may write.
		let budget = free.saturating_sub(entry.spec.max_output_bytes);
		let stop = Arc::new(AtomicBool::new(false));
		let stopped = stop.clone();
		let fetching = tokio::task::spawn_blocking(move || {
			fetch_inputs(&inputs, &folder, private, budget, &stopped)
		});
		let fetched = tokio::select! {
			biased;
			fetched = fetching => fetched.map_err(|e| e.to_string())?,
			// The fetch thread is told to stop; it ends at its next read.
			() = self.ack_deadline_near(by) => Err(PrepareError::Order(
				ReservedExit::InputUnreachable,
				format!("the inputs were not fetched {ACK_MARGIN} blocks before the ack deadline"),
			)),
		};
		stop.store(true, Ordering::Relaxed);
		match fetched {
			Ok(hashes) => {
				entry.input_hashes = hashes;
				entry.phase = Phase::Prepared;
			}
			Err(PrepareError::Order(code, why)) => {
				log::warn("executor", Some(id), format!("the order's input: {why}"));
				entry.order_fault = Some(code.code());
				entry.phase = Phase::OrderFault;
			}
			Err(PrepareError::Provider(why)) => {
				self.alert_once(id, &format!("cannot store the inputs: {why}: not acknowledged"));
				return Ok(false);
			}
		}
		self.journal.put(&entry).map_err(|e| e.to_string())?;
		Ok(true)
	}

	async fn ack_and_start(self: &Arc<Self>, id: LeaseId) -> Result<(), String> {
		let call = runtime::tx().leases().ack_lease(id);
		let sent = self
			.chain
			.send(&self.journal, id, "ack", &call, &self.key)
			.await
			.map_err(|e| e.to_string())?;
		match sent {
			Sent::Included => {
				let mut entry = self.entry(id)?;
				if matches!(entry.phase, Phase::Preparing | Phase::Prepared) {
					entry.phase = Phase::Acked;
				}
				self.journal.put(&entry).map_err(|e| e.to_string())?;
				log::info("duties", Some(id), "acknowledged");
				match entry.phase {
					Phase::Acked => self.start(id).await,
					Phase::OrderFault => self.commit(id).await,
					_ => Ok(()),
				}
			}
			Sent::Refused(why) => {
				self.alert_once(id, &format!("the acknowledgement was refused: {why}"));
				Ok(())
			}
			Sent::Rejected { why, .. } if why.contains("already imported") => Ok(()),
			Sent::Rejected { why, .. } => Err(format!("the acknowledgement did not go in: {why}")),
		}
	}

	fn job_request(&self, entry: &LeaseEntry) -> Result<JobRequest, String> {
		let gpu_uuids = self.gpus.uuids_for(&entry.devices).map_err(|unknown| {
			format!("{} leased GPU(s) not seen on this machine", unknown.len())
		})?;
		let share = entry.devices.len().max(1) as f64
			/ self.bound_devices.load(Ordering::Relaxed).max(entry.devices.len() as u32) as f64;
		let mut labels = self.labels();
		labels.insert(LEASE_LABEL.into(), entry.lease.to_string());
		Ok(JobRequest {
			lease: entry.lease,
			spec: entry.spec.clone(),
			devices: entry.devices.clone(),
			gpu_uuids,
			dirs: self.dirs(entry.lease),
			nano_cpus: (self.host.cpu_cores as f64 * share * 1e9) as i64,
			memory_bytes: ((self.host.ram_mib << 20) as f64 * share * 0.9) as i64,
			limits: self.config.limits.clone(),
			labels,
		})
	}

	/// Reports the job of `id` lost (the reserved code, the provider's fault), once.
	async fn report_lost(self: &Arc<Self>, id: LeaseId, why: &str) -> Result<(), String> {
		log::alert("executor", Some(id), format!("{why}: reporting it lost"));
		self.report_reserved(id, ReservedExit::ContainerLost, "lost").await
	}

	/// Ends the job of `id` with the reserved `code` (recorded once) and commits it.
	async fn report_reserved(
		self: &Arc<Self>,
		id: LeaseId,
		code: ReservedExit,
		outcome: &str,
	) -> Result<(), String> {
		let mut entry = self.entry(id)?;
		if entry.exit.is_none() {
			entry.exit =
				Some(Exit { code: code.code(), reason: StopReason::Exited, at: self.instant() });
			entry.phase = Phase::Exited;
			self.journal.put(&entry).map_err(|e| e.to_string())?;
			self.metrics.jobs.with_label_values(&[outcome]).inc();
		}
		self.commit(id).await
	}

	/// Starts the job of an acknowledged lease. One that has failed to start for
	/// [`START_GIVE_UP`] (an engine that cannot give it its GPUs, an image pruned since) is
	/// reported lost: a failed result now, not a missed one the bond is slashed for later
	/// while the buyer pays for nothing.
	async fn start(self: &Arc<Self>, id: LeaseId) -> Result<(), String> {
		let why = match self.try_start(id).await {
			Ok(()) => {
				self.start_failing.lock().expect("not poisoned").remove(&id);
				return Ok(());
			}
			// The order's own doing: its failed result now, with the reserved code.
			Err(StartError::Unstartable(why)) => {
				self.start_failing.lock().expect("not poisoned").remove(&id);
				log::warn(
					"executor",
					Some(id),
					format!("the job cannot start, the order's fault: {why}"),
				);
				return self.report_reserved(id, ReservedExit::JobUnstartable, "order_fault").await;
			}
			Err(StartError::Other(why)) => why,
		};
		let since = *self
			.start_failing
			.lock()
			.expect("not poisoned")
			.entry(id)
			.or_insert_with(std::time::Instant::now);
		if since.elapsed() < START_GIVE_UP {
			return Err(format!("the job does not start: {why}"));
		}
		self.start_failing.lock().expect("not poisoned").remove(&id);
		let secs = START_GIVE_UP.as_secs();
		self.report_lost(id, &format!("the job has not started for {secs} s ({why})")).await
	}

	async fn try_start(self: &Arc<Self>, id: LeaseId) -> Result<(), StartError> {
		let mut entry = self.entry(id)?;
		let image_id = match entry.image_id.clone() {
			Some(image_id) => image_id,
			None => self.executor.resolve(&entry.spec.image).await.map_err(|e| e.to_string())?,
		};
		let job = self.job_request(&entry)?;
		let handle = self.executor.start(&job, &image_id).await?;
		entry.image_id = Some(image_id);
		entry.container = Some(handle.clone());
		entry.started.get_or_insert(self.instant());
		entry.phase = Phase::Running;
		self.journal.put(&entry).map_err(|e| e.to_string())?;
		if let Some(created) = self.first_seen.lock().expect("not poisoned").remove(&id) {
			let millis = crate::unix_ms().saturating_sub(created);
			self.metrics.accepted_to_running.observe(millis as f64 / 1000.0);
		}
		log::info(
			"executor",
			Some(id),
			format!("job started ({})", &handle[..handle.len().min(12)]),
		);
		self.supervise(id, handle);
		Ok(())
	}

	/// Watches a running job: its outputs against the order's limit, and its exit, which is
	/// committed at once.
	fn supervise(self: &Arc<Self>, id: LeaseId, handle: String) {
		if !self.supervised.lock().expect("not poisoned").insert(id) {
			return;
		}
		let me = self.clone();
		tokio::spawn(async move {
			let limit = me.entry(id).map(|e| e.spec.max_output_bytes).unwrap_or(u64::MAX);
			let outputs = me.dirs(id).outputs();
			// The logs as they are written, for the outputs API while the job runs.
			let (tee, live, cap) =
				(me.clone(), me.dirs(id).live_logs(), me.config.limits.log_bytes);
			let tee_handle = handle.clone();
			let mut follower =
				tokio::spawn(
					async move { tee.executor.follow_logs(&tee_handle, &live, cap).await },
				);
			let wait = me.executor.wait(&handle);
			tokio::pin!(wait);
			let mut watch = tokio::time::interval(Duration::from_secs(1));
			loop {
				tokio::select! {
					_ = &mut wait => break,
					_ = watch.tick() => {
						let used =
							held::job_usage(&*me.executor, &handle, Some(id), &outputs).await;
						if used.over(limit) {
							if let Ok(mut entry) = me.entry(id) {
								entry.stop_reason = Some(StopReason::OutputOverLimit);
								let _ = me.journal.put(&entry);
							}
							log::warn(
								"executor",
								Some(id),
								format!("outputs over the order's limit ({used:?}): killing the job"),
							);
							// No grace: a job past its limit would go on writing through it.
							let _ = me.executor.stop(&handle, 0).await;
						}
					}
				}
			}
			// The follower ends once it has what the job wrote before it stopped; what it
			// followed to the end is kept (else the commit reads the engine's copy).
			match tokio::time::timeout(Duration::from_secs(10), &mut follower).await {
				Ok(Ok(Ok(()))) => {
					me.followed.lock().expect("not poisoned").insert(id);
				}
				Ok(Ok(Err(why))) => log::warn("executor", Some(id), format!("live logs: {why}")),
				Ok(Err(_)) | Err(_) => follower.abort(),
			}
			me.supervised.lock().expect("not poisoned").remove(&id);
			// Committed at once; if another action holds the lease, the next block's plan does it.
			if let Some(guard) = me.begin(id) {
				if let Err(why) = me.commit(id).await {
					log::error("commit", Some(id), why);
				}
				drop(guard);
			}
		});
	}

	/// Puts the job's logs where the receipt counts them: the copy this worker followed from the
	/// job's start to its end, which holds the first `log_bytes` of each stream however much the
	/// job printed; else what the engine still has (after a restart of the worker, say).
	async fn keep_logs(&self, id: LeaseId, handle: &str, dirs: &LeaseDirs) -> Result<(), String> {
		let (live, kept) = (dirs.live_logs(), dirs.logs());
		// A block's plan may see the job's end before its supervisor does: the copy that
		// supervisor follows is waited for (it has what the job wrote before it stopped).
		let waited = std::time::Instant::now();
		while self.supervised.lock().expect("not poisoned").contains(&id)
			&& waited.elapsed() < Duration::from_secs(15)
		{
			tokio::time::sleep(Duration::from_millis(20)).await;
		}
		if self.followed.lock().expect("not poisoned").remove(&id) {
			std::fs::create_dir_all(&kept).map_err(|e| e.to_string())?;
			let moved = ["stdout", "stderr"]
				.iter()
				.all(|name| std::fs::rename(live.join(name), kept.join(name)).is_ok());
			if moved {
				return Ok(());
			}
		}
		self.executor.collect_logs(handle, &kept, self.config.limits.log_bytes).await
	}

	/// Records how the job ended (once), its logs, and the final result: signed once, sent
	/// (again) until the chain has it.
	async fn commit(self: &Arc<Self>, id: LeaseId) -> Result<(), String> {
		let mut entry = self.entry(id)?;
		if entry.phase == Phase::Done {
			return Ok(());
		}
		let dirs = self.dirs(id);
		if entry.exit.is_none() {
			let (code, oom) = match (&entry.order_fault, &entry.container) {
				(Some(code), _) => (*code, false),
				(None, Some(handle)) => match self.executor.state(handle).await? {
					JobState::Exited { code, oom } => (code, oom),
					JobState::Missing => (ReservedExit::ContainerLost.code(), false),
					other => return Err(format!("the job is still {other:?}")),
				},
				(None, None) => (ReservedExit::ContainerLost.code(), false),
			};
			let mut reason = entry.stop_reason.unwrap_or(match oom {
				true => StopReason::OutOfMemory,
				false => StopReason::Exited,
			});
			if let Some(handle) = &entry.container {
				if let Err(why) = self.keep_logs(id, handle, &dirs).await {
					log::warn("executor", Some(id), format!("logs: {why}"));
				}
				// What the job closed to the worker is opened while its container is there, for
				// the manifest to see; and what it wrote after the watcher's last look counts.
				let used =
					folders::counted(&*self.executor, handle, Some(id), &dirs.outputs()).await;
				if reason == StopReason::Exited && used.over(entry.spec.max_output_bytes) {
					reason = StopReason::OutputOverLimit;
				}
			}
			entry.exit = Some(Exit { code, reason, at: self.instant() });
			entry.phase = Phase::Exited;
			self.journal.put(&entry).map_err(|e| e.to_string())?;
			// The API serves the committed logs from now on.
			let _ = std::fs::remove_dir_all(dirs.live_logs());
			let outcome = match (entry.order_fault, code) {
				(Some(_), _) => "order_fault",
				(None, 0) => "succeeded",
				(None, c) if c == ReservedExit::ContainerLost.code() => "lost",
				_ => "failed",
			};
			self.metrics.jobs.with_label_values(&[outcome]).inc();
			if let (Some(started), Some(exit)) = (entry.started, entry.exit) {
				self.metrics
					.job_seconds
					.observe(exit.at.unix_ms.saturating_sub(started.unix_ms) as f64 / 1000.0);
			}
			log::info("executor", Some(id), format!("job stopped: exit {code} ({reason:?})"));
		}
		let exit = entry.exit.expect("recorded above");
		self.report(id, ReportKind::Final, exit.code, exit.reason, exit.at).await
	}

	async fn checkpoint(self: &Arc<Self>, id: LeaseId, sequence: u32) -> Result<(), String> {
		let kind = ReportKind::Checkpoint { sequence };
		self.report(id, kind, 0, StopReason::Exited, self.instant()).await
	}

	/// Builds the receipt of `kind`, signs it once, and sends it.
	async fn report(
		self: &Arc<Self>,
		id: LeaseId,
		kind: ReportKind,
		code: i32,
		reason: StopReason,
		ended: Instant,
	) -> Result<(), String> {
		let entry = self.entry(id)?;
		let slot = crate::journal::slot(&kind);
		let dirs = self.dirs(id);
		let report = match entry.reports.get(&slot) {
			Some(report) => report.clone(),
			None => {
				let receipt = self.receipt(&entry, kind, code, reason, ended)?;
				let commitment = commit::commitment_of(&receipt);
				let (genesis, key) = (self.genesis(), &self.key);
				let report = self
					.journal
					.sign_report_once(id, kind, commitment, receipt.encode(), || {
						commit::sign_report(key, genesis, id, kind, commitment).to_vec()
					})
					.map_err(|e| {
						// Never signed twice: a second commitment for a slot is an error the
						// operator must hear of, not one to retry quietly.
						if let crate::journal::JournalError::ConflictingReport { .. } = e {
							self.alert_once(id, &e.to_string());
						}
						e.to_string()
					})?;
				crash_point(&format!("after-sign-report-{}", slot.split('/').next().unwrap_or("")));
				report
			}
		};
		if kind == ReportKind::Final {
			// The lease's folder is missing on a machine the journal was moved to (`journal
			// import`): the signed receipt is in the journal, and is kept there again.
			std::fs::create_dir_all(&dirs.root).map_err(|e| e.to_string())?;
			std::fs::write(dirs.receipt(), &report.receipt).map_err(|e| e.to_string())?;
		}
		// A report whose extrinsic is already in a block, or is gone (rejected as stale): the
		// lease may have it in a block not finalized yet. Never send a second one then.
		let stored = entry.extrinsics.get(&slot);
		if stored.is_none_or(|x| x.included) && self.settled_at_best(id, &kind).await {
			return Ok(());
		}
		let signature: [u8; 64] =
			report.signature.clone().try_into().map_err(|_| "a bad signature in the journal")?;
		let commitment = Static(report.commitment);
		let sent = match (kind, entry.replica) {
			// A replica commits its result sealed; it reveals it once every replica has.
			(ReportKind::Final, Some(replica)) => {
				let seal = stint_primitives::seal(&commitment.0, &replica.provider, &replica.salt);
				let call = runtime::tx().leases().commit_result(id, seal);
				self.chain.send(&self.journal, id, &slot, &call, &self.key).await
			}
			(ReportKind::Final, None) => {
				let call = runtime::tx().leases().submit_result(id, commitment, signature);
				self.chain.send(&self.journal, id, &slot, &call, &self.key).await
			}
			(ReportKind::Checkpoint { .. }, _) => {
				let call = runtime::tx().leases().checkpoint(id, commitment, signature);
				self.chain.send(&self.journal, id, &slot, &call, &self.key).await
			}
		}
		.map_err(|e| e.to_string())?;
		match sent {
			Sent::Included => {
				log::info("commit", Some(id), format!("{slot} in a block (exit {code})"));
				Ok(())
			}
			Sent::Refused(why) => {
				self.alert_once(id, &format!("{slot} refused by the chain: {why}"));
				Ok(())
			}
			Sent::Rejected { why, .. } if why.contains("already imported") => Ok(()),
			Sent::Rejected { why, .. } => Err(format!("{slot} did not go in: {why}")),
		}
	}

	/// Whether replica `id` is still sealed at the best block (its reveal not in it).
	async fn sealed_at_best(&self, id: LeaseId) -> bool {
		let Ok(client) = self.chain.client().await else { return true };
		let Ok(best) = client.best_hash().await else { return true };
		match client.at_block(best).lease(id).await {
			Ok(Some(lease)) => matches!(lease.status, LeaseStatus::Sealed),
			_ => true,
		}
	}

	/// Whether the best block already has this report (or the lease is no longer live there).
	async fn settled_at_best(&self, id: LeaseId, kind: &ReportKind) -> bool {
		let Ok(client) = self.chain.client().await else { return false };
		let Ok(best) = client.best_hash().await else { return false };
		match client.at_block(best).lease(id).await {
			Ok(Some(lease)) => match kind {
				ReportKind::Final => !lease_is_live(&lease.status),
				ReportKind::Checkpoint { sequence } => {
					lease.checkpoints >= *sequence || !lease_is_live(&lease.status)
				}
			},
			Ok(None) => true,
			Err(_) => false,
		}
	}

	fn receipt(
		&self,
		entry: &LeaseEntry,
		kind: ReportKind,
		exit_code: i32,
		stop_reason: StopReason,
		ended: Instant,
	) -> Result<ExecutionReceipt, String> {
		let dirs = self.dirs(entry.lease);
		let outputs = commit::manifest(&dirs.outputs()).map_err(|e| e.to_string())?;
		if kind == ReportKind::Final {
			// What the result commits to, kept: the outputs API serves it from now on rather
			// than hashing every file again for each request.
			commit::keep_manifest(&dirs, &outputs).map_err(|e| e.to_string())?;
		}
		let logs = commit::logs_manifest(&dirs.logs()).map_err(|e| e.to_string())?;
		let started = entry.started.unwrap_or(ended);
		let seconds = ended.unix_ms.saturating_sub(started.unix_ms) / 1000;
		let gpu_seconds = match self.gpus.passthrough() {
			true => seconds * entry.devices.len() as u64,
			false => 0,
		};
		Ok(build_receipt(
			self.genesis(),
			entry,
			kind,
			ReceiptRun { started, ended, exit_code, stop_reason, gpu_seconds },
			&outputs,
			&logs,
		))
	}

	async fn finish(self: &Arc<Self>, id: LeaseId) -> Result<(), String> {
		self.start_failing.lock().expect("not poisoned").remove(&id);
		let mut entry = self.entry(id)?;
		if let Some(handle) = entry.container.clone() {
			if matches!(self.executor.state(&handle).await?, JobState::Running | JobState::Paused) {
				if entry.stop_reason.is_none() {
					entry.stop_reason = Some(StopReason::StoppedByWorker);
					self.journal.put(&entry).map_err(|e| e.to_string())?;
				}
				self.executor.stop(&handle, self.config.limits.stop_grace_secs).await?;
				log::info("executor", Some(id), "the lease ended on chain: job stopped");
			}
			if entry.exit.is_none() {
				let _ = self
					.executor
					.collect_logs(&handle, &self.dirs(id).logs(), self.config.limits.log_bytes)
					.await;
				if let JobState::Exited { code, .. } = self.executor.state(&handle).await? {
					entry.exit = Some(Exit {
						code,
						reason: entry.stop_reason.unwrap_or(StopReason::StoppedByWorker),
						at: self.instant(),
					});
				}
			}
		}
		entry.phase = Phase::Done;
		entry.ended_at = Some(crate::unix_now());
		self.journal.put(&entry).map_err(|e| e.to_string())?;
		log::info(
			"duties",
			Some(id),
			format!("ended on chain; outputs kept {} day(s)", self.config.worker.retention_days),
		);
		Ok(())
	}

	async fn forget(self: &Arc<Self>, id: LeaseId) -> Result<(), String> {
		let entry = self.entry(id)?;
		// Before the job's container goes: the folders it closed to the worker are opened
		// through it.
		let dirs = self.dirs(id);
		// The outputs' filesystem goes with its image, in the lease's folder.
		self.quota.unmount(&dirs)?;
		let root = dirs.root;
		folders::remove_all(&*self.executor, entry.container.as_deref(), Some(id), &root).await?;
		if let Some(handle) = &entry.container {
			self.executor.remove(handle).await?;
		}
		self.journal.remove(id).map_err(|e| e.to_string())?;
		log::info("duties", Some(id), "retention over: outputs removed");
		Ok(())
	}

	async fn adopt(self: &Arc<Self>, id: LeaseId, duty: DutyRecord) -> Result<(), String> {
		let mut entry = self.new_entry(id, &duty)?;
		entry.adopted = true;
		// The job another journal started carries that journal's instance label: look for it by
		// chain, worker key and lease only.
		let mut labels = self.labels();
		labels.remove(INSTANCE_LABEL);
		labels.insert(LEASE_LABEL.into(), id.to_string());
		let found = self.executor.list(&labels).await?.into_iter().next();
		let ours = self.dirs(id).outputs();
		if let Some(theirs) = found.as_ref().and_then(|job| job.outputs.as_ref()) {
			let same = std::fs::canonicalize(theirs).ok() == std::fs::canonicalize(&ours).ok();
			if !same {
				return Err(format!(
					"not adopted: its job writes its outputs to {}, not under this worker's \
					 data_dir ({}); adopt it with the data_dir that holds them",
					theirs.display(),
					ours.display()
				));
			}
		}
		self.dirs(id).create().map_err(|e| e.to_string())?;
		match found {
			Some(job) => {
				entry.container = Some(job.handle);
				entry.started = Some(self.instant());
				entry.phase = Phase::Running;
			}
			None => entry.phase = Phase::Acked,
		}
		self.journal.put(&entry).map_err(|e| e.to_string())?;
		log::info("duties", Some(id), format!("adopted ({:?})", entry.phase));
		Ok(())
	}

	/// Whether the executor could start a job now. Going down raises an alert (and counts an
	/// executor error) once, coming back is said once: the rounds in between stay quiet.
	async fn executor_ready(&self) -> bool {
		let answer = self.executor.ready().await;
		let mut down = self.executor_down.lock().expect("not poisoned");
		match answer {
			Ok(()) => {
				if down.take().is_some() {
					log::info("executor", None, "the executor answers again: bidding again");
				}
				true
			}
			Err(why) => {
				if down.is_none() {
					*down = Some(std::time::Instant::now());
					self.metrics.errors.with_label_values(&["executor"]).inc();
					log::alert(
						"executor",
						None,
						format!(
							"{why}: no new bids until it answers, standing bids retracted if it \
							 stays silent for {} s (a lease won now could not be acknowledged)",
							self.config.bidding.retract_after_secs
						),
					);
				}
				false
			}
		}
	}

	/// Whether the executor has been silent long enough for standing bids to go: a retraction
	/// late in an order's bid window forfeits the bid's deposit, too much for one slow answer
	/// (an engine busy with a pull).
	fn executor_long_down(&self) -> bool {
		let after = Duration::from_secs(self.config.bidding.retract_after_secs);
		self.executor_down
			.lock()
			.expect("not poisoned")
			.is_some_and(|since| since.elapsed() >= after)
	}

	async fn settle(self: &Arc<Self>, lease: LeaseId, stream: u64) {
		let call = runtime::tx().streams().settle(stream);
		if let Err(why) = self.chain.submit(&call, &self.key, "settle").await {
			log::warn("bidding", Some(lease), format!("settling stream {stream}: {why}"));
		}
	}

	/// Retracts this key's standing bids that no longer fit (the policy, the devices this
	/// machine sees, its scratch space), then bids on the orders the runtime says this key can
	/// serve, as the policy allows (no new bids with bidding disabled). `client` reads at a best
	/// block.
	async fn bid_round(self: &Arc<Self>, client: &Client, block: u32) -> Result<(), String> {
		let rpc = |e: stint_client::Error| e.to_string();
		let duties = client.duties(&self.account).await.map_err(rpc)?;
		let live = duties.len() as u32;
		let Some((provider, devices)) = client.acting_for(&self.account).await.map_err(rpc)? else {
			return Ok(());
		};
		if let Some(devices) = &devices {
			self.bound_devices.store(devices.len().max(1) as u32, Ordering::Relaxed);
		}
		let record = client.provider(&provider).await.map_err(rpc)?.ok_or("no provider record")?;
		let models: HashMap<[u8; 32], String> = record
			.hardware
			.gpus
			.0
			.iter()
			.map(|gpu| (gpu.0.uuid_hash, String::from_utf8_lossy(&gpu.0.model).into_owned()))
			.collect();
		let standing_bids = client.bids_of(&self.account).await.map_err(rpc)?;
		// What the live leases may still write is not free for new work: each may fill its
		// outputs up to its order's limit.
		let writing: Vec<(u64, PathBuf)> = duties
			.iter()
			// A job that has exited writes no more.
			.filter(|duty| {
				self.journal.get(duty.id).ok().flatten().is_none_or(|e| e.exit.is_none())
			})
			.map(|duty| {
				let limit = duty.spec.as_ref().map_or(0, |spec| spec.max_output_bytes);
				(limit, self.dirs(duty.id).outputs())
			})
			.collect();
		let live_reserved: u64 = tokio::task::spawn_blocking(move || {
			writing
				.iter()
				.map(|(limit, outputs)| limit.saturating_sub(commit::usage(outputs).bytes))
				.sum()
		})
		.await
		.map_err(|e| e.to_string())?;
		let scratch_free_bytes =
			stint_probe::free_bytes(&self.config.worker.data_dir)?.saturating_sub(live_reserved);
		let mut bids_reserved = 0u64;
		let executor_ready = self.executor_ready().await;
		if executor_ready {
			self.check_gpu_passthrough().await;
		}
		let incompatible = self.known_incompatible();
		let costs = client.bid_costs().await.map_err(rpc)?;
		let mut displaceable = Vec::new();
		let mut retracted = HashSet::new();
		for (order, bid) in &standing_bids {
			// One order that cannot be read never stops the others; its bid stays.
			let Ok(Some(record)) = client.order(*order).await else { continue };
			// A standing bid is kept whatever its buyer became: retracting it late forfeits.
			let candidate = candidate(
				*order,
				&record,
				bid.devices.0.iter().copied(),
				&models,
				Default::default(),
				block,
				costs.accept_period,
			);
			// It may give way to an order that closes much sooner while withdrawing it is
			// free: before the last quarter of its window.
			let quarter = (record.terms.bid_window / 4).max(1);
			if block < record.bids_close_at.saturating_sub(quarter) {
				displaceable.push(bidding::Displaceable {
					order: *order,
					devices: bid.devices.0.clone(),
					stands_for: candidate.stands_for,
				});
			}
			let why = match executor_ready {
				_ if incompatible => Some(bidding::Skip::RuntimeIncompatible),
				false if self.executor_long_down() => Some(bidding::Skip::ExecutorDown),
				// Silent only a moment: kept (and its bytes held) until it answers or not.
				false => None,
				true => bidding::stale(
					&self.config.bidding,
					&candidate,
					bid.price_per_block,
					// Beside what the bids kept so far may write.
					scratch_free_bytes.saturating_sub(bids_reserved),
					|d| self.offers(d),
				),
			};
			let Some(why) = why else {
				bids_reserved = bids_reserved.saturating_add(candidate.max_output_bytes);
				continue;
			};
			let call = runtime::tx().market().retract_bid(*order);
			let result = self.chain.submit(&call, &self.key, "retract").await;
			let outcome = if result.is_ok() { "retracted" } else { "error" };
			self.metrics.bids.with_label_values(&[outcome]).inc();
			match result {
				Ok(_) => {
					retracted.insert(*order);
					log::info(
						"bidding",
						None,
						format!("order {order}: bid retracted, it no longer fits ({why:?})"),
					);
				}
				Err(e) => log::warn(
					"bidding",
					None,
					format!("order {order}: retracting a bid that no longer fits ({why:?}): {e}"),
				),
			}
		}
		if !self.config.bidding.enabled || !executor_ready || incompatible {
			return Ok(());
		}
		let standing_bids: Vec<_> =
			standing_bids.into_iter().filter(|(order, _)| !retracted.contains(order)).collect();
		let bond = client.bond(&provider).await.map_err(rpc)?;
		let (pending, pending_bytes) = {
			let pending = self.pending_bids.lock().expect("not poisoned");
			(pending.len(), pending.values().map(|(_, bytes)| *bytes).sum::<u64>())
		};
		let standing = bidding::Standing {
			active: matches!(
				record.status,
				runtime::runtime_types::pallet_providers::types::ProviderStatus::Active
			),
			live_leases: live,
			standing_bids: (standing_bids.len() + pending) as u32,
			free_bond: bond.map_or(0, |b| b.active.saturating_sub(b.locked)),
			free_balance: client.free_balance(&provider).await.map_err(rpc)?,
			costs,
			// Beside the live leases, the bids that stand and those on their way.
			scratch_free_bytes: scratch_free_bytes
				.saturating_sub(bids_reserved)
				.saturating_sub(pending_bytes),
		};
		// Up to four pages a round, going on where the last round stopped and starting over
		// once the end of the open orders is reached.
		let mut servable = Vec::new();
		let mut cursor = *self.servable_cursor.lock().expect("not poisoned");
		for _ in 0..SERVABLE_PAGES_PER_ROUND {
			let (page, next) = client
				.servable_orders(&self.account, cursor, SERVABLE_PER_ROUND)
				.await
				.map_err(rpc)?;
			servable.extend(page);
			cursor = next;
			if cursor.is_none() || servable.len() >= SERVABLE_PER_ROUND as usize {
				break;
			}
		}
		*self.servable_cursor.lock().expect("not poisoned") = cursor;
		let mut candidates = Vec::new();
		{
			let mut refused = self.refused.lock().expect("not poisoned");
			refused.retain(|_, until| *until > block);
			let pending = self.pending_bids.lock().expect("not poisoned");
			for (order, offered) in servable {
				if refused.contains_key(&order) || pending.contains_key(&order) {
					continue;
				}
				candidates.push((order, offered));
			}
		}
		let mut described = Vec::new();
		let mut buyers = HashMap::new();
		for (order, offered) in candidates {
			// One order that cannot be read never stops the others.
			let Ok(Some(record)) = client.order(order).await else { continue };
			let buyer = match buyers.get(&record.buyer.0) {
				Some(standing) => *standing,
				None => {
					let Ok(standing) = client.buyer_record(&record.buyer).await else { continue };
					buyers.insert(record.buyer.0, standing);
					standing
				}
			};
			described.push(candidate(
				order,
				&record,
				offered.iter().copied(),
				&models,
				buyer,
				block,
				costs.accept_period,
			));
		}
		let mut busy: bidding::Busy =
			standing_bids.iter().flat_map(|(_, bid)| bid.devices.0.iter().copied()).collect();
		busy.extend(duties.iter().flat_map(|duty| duty.lease.devices.0.iter().copied()));
		busy.extend(
			self.pending_bids.lock().expect("not poisoned").values().flat_map(|(d, _)| d).copied(),
		);
		let mine: Vec<([u8; 32], String)> = devices
			.iter()
			.flatten()
			.map(|d| (*d, models.get(d).cloned().unwrap_or_default()))
			.collect();
		let mut offered: bidding::Busy = busy.clone();
		let described: Vec<bidding::Candidate> = described
			.into_iter()
			.map(|candidate| {
				let candidate = bidding::with_free_devices(candidate, &mine, &offered);
				offered.extend(candidate.devices.iter().map(|(device, _)| *device));
				candidate
			})
			.collect();
		let displaceable: Vec<_> =
			displaceable.into_iter().filter(|held| !retracted.contains(&held.order)).collect();
		let choice = bidding::choose(
			&self.config.bidding,
			&standing,
			&described,
			|d| self.offers(d),
			&busy,
			&displaceable,
		);
		// A bid that gives way is withdrawn before the bid that takes its place is sent (the
		// chain would take both, but the devices are promised to one order at a time).
		for order in &choice.displaced {
			let call = runtime::tx().market().retract_bid(*order);
			match self.chain.submit(&call, &self.key, "retract").await {
				Ok(_) => {
					self.metrics.bids.with_label_values(&["retracted"]).inc();
					log::info(
						"bidding",
						None,
						format!("order {order}: bid retracted for an order that closes sooner"),
					);
				}
				Err(e) => {
					log::warn("bidding", None, format!("order {order}: giving way: {e}"));
					// Its devices stay promised: no bid takes their place this round.
					return Ok(());
				}
			}
		}
		let bids = choice.bids;
		// Each bid is sent on its own: a round does not wait a block for one bid to land before
		// the next order is seen (bid windows can be two blocks). Until it lands, its order is
		// skipped and its devices count as promised.
		for bid in bids {
			self.pending_bids
				.lock()
				.expect("not poisoned")
				.insert(bid.order, (bid.devices.clone(), bid.max_output_bytes));
			let me = self.clone();
			tokio::spawn(async move {
				let call = runtime::tx().market().place_bid(
					bid.order,
					bid.price_per_block,
					bid.devices.clone(),
				);
				match me.chain.submit(&call, &me.key, "bid").await {
					Ok(_) => {
						me.metrics.bids.with_label_values(&["placed"]).inc();
						log::info(
							"bidding",
							None,
							format!(
								"order {}: bid {} per block",
								bid.order,
								stint_client::format_stint(bid.price_per_block)
							),
						);
					}
					Err(why) => {
						me.metrics.bids.with_label_values(&["refused"]).inc();
						me.refused.lock().expect("not poisoned").insert(bid.order, block + 20);
						log::warn("bidding", None, format!("order {}: {why}", bid.order));
					}
				}
				me.pending_bids.lock().expect("not poisoned").remove(&bid.order);
			});
		}
		Ok(())
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

/// How a run went, for its receipt.
#[derive(Clone, Copy, Debug)]
pub struct ReceiptRun {
	pub started: Instant,
	pub ended: Instant,
	pub exit_code: i32,
	pub stop_reason: StopReason,
	pub gpu_seconds: u64,
}

/// The receipt of a run of `entry`'s job.
pub fn build_receipt(
	genesis_hash: [u8; 32],
	entry: &LeaseEntry,
	kind: ReportKind,
	run: ReceiptRun,
	outputs: &commit::Manifest,
	logs: &commit::Manifest,
) -> ExecutionReceipt {
	ExecutionReceipt {
		domain: RECEIPT_DOMAIN,
		genesis_hash,
		lease: entry.lease,
		kind,
		image_digest: entry.image_digest,
		executor: entry.executor,
		devices: entry.devices.clone(),
		started: run.started,
		ended: run.ended,
		exit_code: run.exit_code,
		stop_reason: run.stop_reason,
		gpu_seconds: run.gpu_seconds,
		logs_root: logs.root(),
		output_root: outputs.root(),
		input_hashes: entry.input_hashes.clone(),
		worker_version: crate::WORKER_VERSION.as_bytes().to_vec(),
	}
}

/// Downloads each input to `folder/<index>`, checking its blake2-256; the order's fault (with
/// its reserved code) when one cannot be had as pinned.
pub fn fetch_inputs(
	inputs: &[(String, [u8; 32])],
	folder: &Path,
	allow_private: bool,
	budget: u64,
	stop: &AtomicBool,
) -> Result<Vec<[u8; 32]>, PrepareError> {
	use std::io::{Read, Write};
	let unreachable = |why: String| PrepareError::Order(ReservedExit::InputUnreachable, why);
	// A full or broken disk here is the provider's, not the order's.
	let local =
		|index: usize, e: std::io::Error| PrepareError::Provider(format!("input {index}: {e}"));
	let mut agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(300));
	if !allow_private {
		agent = agent.resolver(public_only);
	}
	let agent = agent.build();
	let mut hashes = Vec::new();
	let mut left = budget;
	for (index, (uri, expected)) in inputs.iter().enumerate() {
		let target = folder.join(index.to_string());
		if target.is_file() {
			// Fetched before a restart: already on the disk the budget was measured on.
			if let Ok((hash, _)) = commit::hash_file(&target) {
				if &hash == expected {
					hashes.push(hash);
					continue;
				}
			}
		}
		if !(uri.starts_with("http://") || uri.starts_with("https://")) {
			return Err(unreachable(format!("input {index}: only http(s) inputs are fetched")));
		}
		let response =
			agent.get(uri).call().map_err(|e| unreachable(format!("input {index}: {e}")))?;
		let mut reader = response.into_reader().take(left.saturating_add(1));
		let mut file = std::fs::File::create(&target).map_err(|e| local(index, e))?;
		let mut state = blake2b_simd::Params::new().hash_length(32).to_state();
		let mut buffer = vec![0u8; 64 * 1024];
		let mut size = 0u64;
		loop {
			if stop.load(Ordering::Relaxed) {
				drop(file);
				let _ = std::fs::remove_file(&target);
				return Err(unreachable(format!("input {index}: abandoned")));
			}
			let n =
				reader.read(&mut buffer).map_err(|e| unreachable(format!("input {index}: {e}")))?;
			if n == 0 {
				break;
			}
			size += n as u64;
			if size > left {
				drop(file);
				let _ = std::fs::remove_file(&target);
				return Err(unreachable(format!(
					"input {index}: the inputs are larger than the free disk leaves beside the \
					 outputs"
				)));
			}
			state.update(&buffer[..n]);
			file.write_all(&buffer[..n]).map_err(|e| local(index, e))?;
		}
		file.sync_all().map_err(|e| local(index, e))?;
		left -= size;
		let hash: [u8; 32] = state.finalize().as_bytes().try_into().expect("32 bytes asked");
		if &hash != expected {
			let _ = std::fs::remove_file(&target);
			return Err(PrepareError::Order(
				ReservedExit::InputHashMismatch,
				format!("input {index}: its content does not hash to the order's content_hash"),
			));
		}
		hashes.push(hash);
	}
	Ok(hashes)
}

/// Resolves an input's `host:port`, refusing it when any address is on the provider's own
/// network. It runs for every connection, each redirect's included, and the connection goes
/// to exactly the addresses it checked: a name that resolves differently the second time
/// gains nothing.
fn public_only(netloc: &str) -> std::io::Result<Vec<std::net::SocketAddr>> {
	use std::net::ToSocketAddrs;
	let addresses: Vec<std::net::SocketAddr> = netloc.to_socket_addrs()?.collect();
	match addresses.iter().find(|address| is_inside(address.ip())) {
		Some(inside) => Err(std::io::Error::new(
			std::io::ErrorKind::PermissionDenied,
			format!("{netloc} is a loopback or private address ({})", inside.ip()),
		)),
		None => Ok(addresses),
	}
}

/// Whether `ip` is loopback, private, shared (carrier NAT), link-local, unspecified or
/// broadcast: the provider's own network, never an input's.
fn is_inside(ip: std::net::IpAddr) -> bool {
	use std::net::IpAddr;
	match ip {
		IpAddr::V4(v4) => {
			let [a, b, ..] = v4.octets();
			v4.is_loopback()
				|| v4.is_private()
				|| v4.is_link_local()
				|| v4.is_unspecified()
				|| v4.is_broadcast()
				|| a == 0 || (a == 100 && (64..128).contains(&b))
		}
		IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
			Some(v4) => is_inside(IpAddr::V4(v4)),
			None => {
				let first = v6.segments()[0];
				v6.is_loopback()
					|| v6.is_unspecified()
					|| (first & 0xfe00) == 0xfc00
					|| (first & 0xffc0) == 0xfe80
			}
		},
	}
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

	fn go() -> AtomicBool {
		AtomicBool::new(false)
	}

	#[test]
	fn inputs_on_the_providers_own_network_are_refused() {
		for inside in [
			"127.0.0.1:9944",
			"localhost:80",
			"10.1.2.3:80",
			"192.168.0.1:8080",
			"[::1]:80",
			"169.254.169.254:80",
			"100.64.0.1:80",
			"0.0.0.0:80",
			"[::ffff:127.0.0.1]:80",
			"[fe80::1]:80",
			"[fd00::1]:80",
		] {
			assert!(public_only(inside).is_err(), "{inside}");
		}
		assert_eq!(public_only("8.8.8.8:53").unwrap().len(), 1);
		let dir = tempfile::tempdir().unwrap();
		let refused = fetch_inputs(
			&[("http://127.0.0.1:1/x".into(), [0; 32])],
			dir.path(),
			false,
			1 << 20,
			&go(),
		);
		assert!(
			matches!(&refused, Err(PrepareError::Order(ReservedExit::InputUnreachable, why))
				if why.contains("private")),
			"{refused:?}"
		);
		let scheme = fetch_inputs(
			&[("file:///etc/passwd".into(), [0; 32])],
			dir.path(),
			true,
			1 << 20,
			&go(),
		);
		assert!(matches!(scheme, Err(PrepareError::Order(ReservedExit::InputUnreachable, _))));
	}

	#[test]
	fn a_redirect_to_the_providers_own_network_is_refused() {
		// A public-looking server (here on loopback, allowed only for the test's first hop)
		// that redirects to loopback: the check runs again on the redirect's connection.
		let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
		let port = server.server_addr().to_ip().unwrap().port();
		std::thread::spawn(move || {
			for request in server.incoming_requests() {
				let to =
					"Location: http://127.0.0.1:9/secret".parse::<tiny_http::Header>().unwrap();
				let _ = request.respond(tiny_http::Response::empty(302).with_header(to));
			}
		});
		let agent = ureq::AgentBuilder::new()
			.resolver(move |netloc: &str| match netloc.ends_with(&format!(":{port}")) {
				true => Ok(vec![std::net::SocketAddr::from(([127, 0, 0, 1], port))]),
				false => public_only(netloc),
			})
			.build();
		let redirected = agent.get(&format!("http://127.0.0.1:{port}/data")).call();
		let why = redirected.err().map(|e| e.to_string()).unwrap_or_default();
		assert!(why.contains("private"), "{why}");
	}

	#[test]
	fn the_inputs_together_fit_in_the_budget() {
		let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
		let port = server.server_addr().to_ip().unwrap().port();
		std::thread::spawn(move || {
			for request in server.incoming_requests() {
				let _ = request.respond(tiny_http::Response::from_string("0123456789"));
			}
		});
		let dir = tempfile::tempdir().unwrap();
		let ten = stint_primitives::blake2_256(b"0123456789");
		let uri = format!("http://127.0.0.1:{port}/data");
		let both = [(uri.clone(), ten), (uri, ten)];
		// Each alone fits in 15 bytes; both do not.
		let over = fetch_inputs(&both, dir.path(), true, 15, &go());
		assert!(matches!(over, Err(PrepareError::Order(ReservedExit::InputUnreachable, _))));
		assert!(!dir.path().join("1").exists(), "the input over the budget is not kept");
		assert_eq!(fetch_inputs(&both, dir.path(), true, 20, &go()), Ok(vec![ten, ten]));
		// A folder the worker cannot write to is the provider's fault.
		let gone = dir.path().join("gone");
		let unwritable = fetch_inputs(&both, &gone, true, 20, &go());
		assert!(matches!(unwritable, Err(PrepareError::Provider(_))), "{unwritable:?}");
	}

	#[test]
	fn inputs_are_checked_against_their_hash() {
		let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
		let port = server.server_addr().to_ip().unwrap().port();
		std::thread::spawn(move || {
			for request in server.incoming_requests() {
				let _ = request.respond(tiny_http::Response::from_string("input bytes"));
			}
		});
		let dir = tempfile::tempdir().unwrap();
		let uri = format!("http://127.0.0.1:{port}/data");
		let good = stint_primitives::blake2_256(b"input bytes");
		assert_eq!(
			fetch_inputs(&[(uri.clone(), good)], dir.path(), true, 1 << 20, &go()),
			Ok(vec![good])
		);
		assert_eq!(std::fs::read(dir.path().join("0")).unwrap(), b"input bytes");
		let other = tempfile::tempdir().unwrap();
		let wrong = fetch_inputs(&[(uri, [1; 32])], other.path(), true, 1 << 20, &go());
		assert!(matches!(wrong, Err(PrepareError::Order(ReservedExit::InputHashMismatch, _))));
		assert!(!other.path().join("0").exists());
	}
}
