//! The worker's life: serving the metrics and the outputs API, connecting (and reconnecting)
//! to a node, the runtime compatibility check, and the per-block ticks (finalized and best) that
//! plan every lease's next action.

use super::*;

/// Following the chain: what the worker last read of it and its passes' state.
pub(super) struct Following {
	pub(super) genesis: Mutex<[u8; 32]>,
	/// The best block's number, as last seen.
	pub(super) best: AtomicU32,
	/// The runtime's spec version last checked, and whether the calls this worker uses still
	/// match it: after an upgrade that changed them it takes no new work.
	pub(super) compatibility: Mutex<(u32, bool)>,
	/// The devices bound to this worker key, as the chain said last.
	pub(super) bound_devices: AtomicU32,
	/// A best block's forward steps are being planned.
	pub(super) planning_best: SingleFlight,
	/// The failure that stops finalized blocks' duties, and best blocks' planning, said once.
	pub(super) tick_failing: log::Repeats,
	pub(super) best_failing: log::Repeats,
}

impl Default for Following {
	fn default() -> Self {
		Self {
			genesis: Mutex::new([0; 32]),
			best: AtomicU32::new(0),
			compatibility: Mutex::new((0, false)),
			bound_devices: AtomicU32::new(1),
			planning_best: SingleFlight::default(),
			tick_failing: log::Repeats::default(),
			best_failing: log::Repeats::default(),
		}
	}
}

impl<E: Executor> Worker<E> {
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
							if self.following.tick_failing.clear() {
								log::info("duties", None, format!("block {number}: duties done"));
							}
							None
						}
						Ok(Err(why)) => {
							self.metrics.errors.with_label_values(&["duties"]).inc();
							if self.following.tick_failing.fresh(&why) {
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
	pub(super) fn compatible(&self) -> bool {
		self.following.compatibility.lock().expect("not poisoned").1
	}

	/// Checked, and found not to match (not merely unchecked yet, as at start-up).
	pub(super) fn known_incompatible(&self) -> bool {
		let (spec, compatible) = *self.following.compatibility.lock().expect("not poisoned");
		spec != 0 && !compatible
	}

	/// Checks, whenever the runtime's spec version changes, that the calls and runtime APIs this
	/// worker uses still match it. After an upgrade that changed them the worker takes no new
	/// work (no bids, no new leases) and says so loudly; running leases go on.
	///
	/// Until the first check succeeds the runtime counts as not matching: no bid goes out before
	/// the worker knows its calls are the chain's.
	pub(super) async fn check_compatibility(&self, client: &Client) {
		let (spec, incompatible) =
			match tokio::time::timeout(CALL_TIMEOUT, client.worker_compatibility()).await {
				Ok(Ok(checked)) => checked,
				failed => {
					if self.following.compatibility.lock().expect("not poisoned").0 == 0 {
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
		let mut known = self.following.compatibility.lock().expect("not poisoned");
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
	pub(super) async fn on_best(self: &Arc<Self>, client: &Client, best_seen: &mut u64) {
		let Ok(Ok((hash, number))) =
			tokio::time::timeout(Duration::from_secs(5), client.best_head()).await
		else {
			return;
		};
		if number <= *best_seen {
			return;
		}
		*best_seen = number;
		self.following.best.store(number as u32, Ordering::Relaxed);
		let at = client.at_block(hash);
		if let Some(flight) = self.following.planning_best.try_begin() {
			let (me, at) = (self.clone(), at.clone());
			spawn_named(&self.metrics, "plan-best", async move {
				let _flight = flight;
				match me.plan_best(&at).await {
					Ok(()) => {
						me.following.best_failing.clear();
					}
					Err(why) if me.following.best_failing.fresh(&why) => {
						log::warn("duties", None, format!("best block {number}: {why}"));
					}
					Err(_) => {}
				}
			});
		}
		// With bidding disabled, or after an upgrade the worker does not match, the round
		// still retracts this key's standing bids: one that won would be a lease it does not
		// take, and a no-show is slashed. Until the runtime is checked, nothing is done.
		if !self.compatible() && !self.known_incompatible() {
			return;
		}
		let Some(flight) = self.bidding.round.try_begin() else { return };
		let me = self.clone();
		spawn_named(&self.metrics, "bid-round", async move {
			let _flight = flight;
			if let Err(why) = me.bid_round(&at, number as u32).await {
				me.metrics.errors.with_label_values(&["bidding"]).inc();
				log::warn("bidding", None, why);
			}
		});
	}

	/// The forward steps of [`plan`] on a best block (`at` reads there).
	pub(super) async fn plan_best(self: &Arc<Self>, at: &Client) -> Result<(), String> {
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
			block: self.following.best.load(Ordering::Relaxed),
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
			let in_flight = self.tasks.in_flight.lock().expect("not poisoned").contains(&duty.id);
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

	pub(super) async fn connect(self: &Arc<Self>) -> Result<Client, RunError> {
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
		*self.following.genesis.lock().expect("not poisoned") = genesis;
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
				self.following.bound_devices.store(count.max(1) as u32, Ordering::Relaxed);
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
	pub(super) async fn tick(
		self: &Arc<Self>,
		client: &Client,
		hash: [u8; 32],
		number: u32,
	) -> Result<(), String> {
		if let Ok(Ok(best)) = tokio::time::timeout(CALL_TIMEOUT, client.best_number()).await {
			self.following.best.store(best as u32, Ordering::Relaxed);
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
		let in_flight = self.tasks.in_flight.lock().expect("not poisoned").clone();
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
		let flight = (self.settling.last_beat.load(Ordering::Acquire) != beat)
			.then(|| self.settling.busy.try_begin())
			.flatten();
		if let Some(flight) = flight {
			self.settling.last_beat.store(beat, Ordering::Release);
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
			spawn_named(&self.metrics, "settlement-beat", async move {
				let _flight = flight;
				let settles = streams.into_iter().map(|(lease, stream)| me.settle(lease, stream));
				futures::future::join_all(settles).await;
				me.prune_images().await;
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
		let flight = (!replicas.is_empty()).then(|| self.verdicts.reveals.try_begin()).flatten();
		if let Some(flight) = flight {
			let (me, at) = (self.clone(), at.clone());
			spawn_named(&self.metrics, "reveals", async move {
				let _flight = flight;
				me.reveal_replicas(&at, number, replicas).await;
			});
		}
		Ok(())
	}
}
