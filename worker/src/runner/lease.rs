//! A lease's steps up to its job's start: dispatching planned actions (one task at a time per
//! lease), the journal entry, preparing (image, inputs, disk), acknowledging, and the reserved
//! reports for a lease that cannot run.

use super::*;

/// The leases' actions under way, and what is said about them.
#[derive(Default)]
pub(super) struct Tasks {
	/// Leases with an action running: one at a time per lease.
	pub(super) in_flight: Mutex<HashSet<LeaseId>>,
	/// Alerts said, per lease and message: each once.
	pub(super) alerted: Mutex<HashSet<(LeaseId, String)>>,
	/// When each new lease's block was authored, Unix ms (for accepted-to-running).
	pub(super) first_seen: Mutex<HashMap<LeaseId, u64>>,
}

impl<E: Executor> Worker<E> {
	pub(super) fn dispatch(self: &Arc<Self>, action: Action, duty: Option<DutyRecord>) {
		let lease = match &action {
			Action::Alert(lease, why) => return self.alert_once(*lease, why),
			Action::Prepare(l) | Action::Ack(l) | Action::Start(l) | Action::Commit(l) => *l,
			Action::Checkpoint(l, _) | Action::Stop(l, _) => *l,
			Action::Pause(l) | Action::Unpause(l) | Action::Lost(l) => *l,
			Action::Finish(l) | Action::Forget(l) | Action::Adopt(l) | Action::Renew(l) => *l,
		};
		let Some(guard) = self.begin(lease) else { return };
		let me = self.clone();
		spawn_named(&self.metrics, "lease-action", async move {
			let _guard = guard;
			let name = format!("{action:?}");
			if let Err(error) = me.act(action, duty).await {
				me.after_step(lease, &name, error).await;
			}
		});
	}

	/// Returns once the best block is `ACK_MARGIN` blocks from `by`, an ack deadline.
	pub(super) async fn ack_deadline_near(&self, by: BlockNumber) {
		while self.following.best.load(Ordering::Relaxed).saturating_add(ACK_MARGIN) < by {
			tokio::time::sleep(Duration::from_millis(200)).await;
		}
	}

	pub(super) fn begin(self: &Arc<Self>, lease: LeaseId) -> Option<InFlight<E>> {
		self.tasks
			.in_flight
			.lock()
			.expect("not poisoned")
			.insert(lease)
			.then(|| InFlight { worker: self.clone(), lease })
	}

	pub(super) async fn act(
		self: &Arc<Self>,
		action: Action,
		duty: Option<DutyRecord>,
	) -> Result<(), StepError> {
		match action {
			Action::Prepare(id) => {
				let duty = duty.ok_or_else(|| missing("no duty to prepare from"))?;
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
				self.journal.put(&entry)?;
				if let Some(handle) = &entry.container {
					log::info("executor", Some(id), format!("stopping the job: {reason:?}"));
					let grace = self.config.limits.stop_grace_secs;
					self.executor.stop(handle, grace).await.map_err(StepError::executor)?;
				}
				self.commit(id).await
			}
			Action::Pause(id) => {
				let mut entry = self.entry(id)?;
				if let Some(handle) = &entry.container {
					self.executor.pause(handle).await.map_err(StepError::executor)?;
				}
				entry.phase = Phase::Paused;
				log::info("executor", Some(id), "suspended on chain: job paused");
				Ok(self.journal.put(&entry)?)
			}
			Action::Unpause(id) => {
				let mut entry = self.entry(id)?;
				if let Some(handle) = &entry.container {
					self.executor.unpause(handle).await.map_err(StepError::executor)?;
				}
				entry.phase = Phase::Running;
				log::info("executor", Some(id), "resumed on chain: job unpaused");
				Ok(self.journal.put(&entry)?)
			}
			Action::Lost(_) => Err(StepError::Lost("the job vanished".into())),
			Action::Finish(id) => self.finish(id).await,
			Action::Forget(id) => self.forget(id).await,
			Action::Adopt(id) => {
				self.adopt(id, duty.ok_or_else(|| missing("no duty to adopt from"))?).await
			}
			Action::Renew(id) => {
				let duty = duty.ok_or_else(|| missing("no duty to renew from"))?;
				self.renew(id, &duty).await?;
				if self.prepare(id, &duty).await? {
					self.ack_and_start(id).await?;
				}
				Ok(())
			}
			Action::Alert(..) => Ok(()),
		}
	}

	pub(super) fn entry(&self, lease: LeaseId) -> Result<LeaseEntry, StepError> {
		self.journal
			.get(lease)?
			.ok_or_else(|| StepError::Plan(format!("lease {lease} is not in the journal")))
	}

	pub(super) fn instant(&self) -> Instant {
		Instant { block: self.following.best.load(Ordering::Relaxed), unix_ms: crate::unix_ms() }
	}

	/// A journal entry for lease `id` as the chain describes it in `duty`.
	pub(super) fn new_entry(
		&self,
		id: LeaseId,
		duty: &DutyRecord,
	) -> Result<LeaseEntry, StepError> {
		let spec = duty.spec.clone().ok_or_else(|| missing("the order's job spec is gone"))?;
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
				salt: random_salt()
					.map_err(|e| StepError::Local(format!("no salt for the seal: {e}")))?,
			});
		}
		Ok(entry)
	}

	/// Makes the journal's entry of `id` anew from `duty`: the old one was prepared from a fork
	/// that was dropped, for a lease that the id no longer names. Its files (another order's
	/// inputs) go, and so does any job created for it (whose image, command and variables are
	/// the other order's: started for this lease it would run them under this lease's receipt);
	/// its signed acknowledgement stays, as it names only the id.
	pub(super) async fn renew(&self, id: LeaseId, duty: &DutyRecord) -> Result<(), StepError> {
		let old = self.entry(id)?;
		let mut labels = self.labels();
		labels.insert(LEASE_LABEL.into(), id.to_string());
		let found = self.executor.list(&labels).await.map_err(StepError::executor)?;
		let mut handles: Vec<String> = found.into_iter().map(|job| job.handle).collect();
		handles.extend(old.container.clone());
		handles.sort();
		handles.dedup();
		for handle in handles {
			// Killed first where it runs (Docker's forced removal, the native executor's).
			self.executor.remove(&handle).await.map_err(StepError::executor)?;
		}
		let mut entry = self.new_entry(id, duty)?;
		entry.extrinsics = old.extrinsics.into_iter().filter(|(slot, _)| slot == "ack").collect();
		// Nothing ran (else no renewal): nothing in the folder is the job's.
		match std::fs::remove_dir_all(&self.dirs(id).root) {
			Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(StepError::local(e)),
			_ => {}
		}
		self.journal.put(&entry)?;
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
	pub(super) async fn prepare(
		self: &Arc<Self>,
		id: LeaseId,
		duty: &DutyRecord,
	) -> Result<bool, StepError> {
		let mut entry = match self.journal.get(id)? {
			Some(entry) => entry,
			None => {
				let entry = self.new_entry(id, duty)?;
				self.journal.put(&entry)?;
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
				self.tasks.first_seen.lock().expect("not poisoned").insert(id, created);
				log::info("duties", Some(id), format!("new lease from order {}", duty.lease.order));
				entry
			}
		};
		let dirs = self.dirs(id);
		dirs.create()
			.map_err(|e| StepError::Local(format!("cannot create {}: {e}", dirs.root.display())))?;
		// What the machine lacks is waited for until the ack deadline is near, then given up.
		let deadline_near = matches!(duty.next, NextDuty::Ack { by }
			if self.following.best.load(Ordering::Relaxed).saturating_add(ACK_MARGIN) >= by);
		if let Err(unknown) = self.gpus.uuids_for(&entry.devices) {
			let why = format!(
				"leased GPUs this machine does not see ({})",
				unknown.iter().map(hex::encode).collect::<Vec<_>>().join(", ")
			);
			let shortage = Shortage::Gpus(entry.devices.clone());
			return self.short(&mut entry, shortage, &why, deadline_near);
		}
		let free =
			stint_probe::free_bytes(&self.config.worker.data_dir).map_err(StepError::Local)?;
		if free < entry.spec.max_output_bytes {
			// Said once: the free space itself (which changes) is not part of the message.
			let why = format!(
				"less disk free than the order may write ({} bytes)",
				entry.spec.max_output_bytes
			);
			let shortage = Shortage::Disk(entry.spec.max_output_bytes);
			return self.short(&mut entry, shortage, &why, deadline_near);
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
				if self.following.best.load(Ordering::Relaxed).saturating_add(ACK_MARGIN) < by =>
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
			Ok(image_id) => {
				self.note_image_use(&image_id);
				entry.image_id = Some(image_id);
			}
			Err(PrepareError::Order(code, why)) => {
				log::warn("executor", Some(id), format!("the order's image: {why}"));
				entry.order_fault = Some(code.code());
				entry.phase = Phase::OrderFault;
				self.journal.put(&entry)?;
				return Ok(true);
			}
			Err(PrepareError::Provider(why)) => {
				let why = format!("cannot prepare the image: {why}");
				return self.short(&mut entry, Shortage::Executor, &why, deadline_near);
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
			fetched = fetching => fetched.map_err(StepError::local)?,
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
				let why = format!("cannot store the inputs: {why}");
				let shortage = Shortage::Disk(entry.spec.max_output_bytes);
				return self.short(&mut entry, shortage, &why, deadline_near);
			}
		}
		self.journal.put(&entry)?;
		Ok(true)
	}

	/// The machine lacks what lease `entry` needs (`why`). Until `ACK_MARGIN` blocks before its
	/// ack deadline the lease waits, unacknowledged (said once): the resource may come back.
	/// Then it is given up rather than left to a no-show: acknowledged and ended at once with
	/// [`ReservedExit::HostShort`], the provider's fault, and no new bid is placed until the
	/// resource is back. Returns whether to acknowledge.
	fn short(
		&self,
		entry: &mut LeaseEntry,
		shortage: Shortage,
		why: &str,
		deadline_near: bool,
	) -> Result<bool, StepError> {
		if !deadline_near {
			self.alert_once(entry.lease, &format!("{why}: not acknowledged"));
			return Ok(false);
		}
		let code = ReservedExit::HostShort.code();
		self.alert_once(
			entry.lease,
			&format!(
				"{why}, and the ack deadline is near: acknowledged and ended as the provider's \
				 fault ({code}); no new bids until {} is back",
				shortage.what()
			),
		);
		*self.bidding.shortage.lock().expect("not poisoned") = Some(shortage);
		entry.order_fault = Some(code);
		entry.phase = Phase::OrderFault;
		self.journal.put(entry)?;
		Ok(true)
	}

	pub(super) async fn ack_and_start(self: &Arc<Self>, id: LeaseId) -> Result<(), StepError> {
		let call = runtime::tx().leases().ack_lease(id);
		let sent = self.chain.send(&self.journal, id, "ack", &call, &self.key).await?;
		match sent {
			Sent::Included => {
				let mut entry = self.entry(id)?;
				if matches!(entry.phase, Phase::Preparing | Phase::Prepared) {
					entry.phase = Phase::Acked;
				}
				self.journal.put(&entry)?;
				log::info("duties", Some(id), "acknowledged");
				match entry.phase {
					Phase::Acked => self.start(id).await,
					Phase::OrderFault => self.commit(id).await,
					_ => Ok(()),
				}
			}
			Sent::Refused(why) => Err(StepError::Refused(format!("the acknowledgement: {why}"))),
			Sent::Rejected { why, .. } if why.contains("already imported") => Ok(()),
			Sent::Rejected { why, .. } => {
				Err(StepError::Chain(format!("the acknowledgement did not go in: {why}")))
			}
		}
	}

	pub(super) fn job_request(&self, entry: &LeaseEntry) -> Result<JobRequest, StepError> {
		let gpu_uuids = self.gpus.uuids_for(&entry.devices).map_err(|unknown| {
			StepError::Executor(format!(
				"{} leased GPU(s) not seen on this machine, or not passable to jobs",
				unknown.len()
			))
		})?;
		let share = entry.devices.len().max(1) as f64
			/ self.following.bound_devices.load(Ordering::Relaxed).max(entry.devices.len() as u32)
				as f64;
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

	/// Ends the job of `id` with the reserved `code` (recorded once) and commits it.
	pub(super) async fn report_reserved(
		self: &Arc<Self>,
		id: LeaseId,
		code: ReservedExit,
		outcome: &str,
	) -> Result<(), StepError> {
		let mut entry = self.entry(id)?;
		if entry.exit.is_none() {
			entry.exit =
				Some(Exit { code: code.code(), reason: StopReason::Exited, at: self.instant() });
			entry.phase = Phase::Exited;
			self.journal.put(&entry)?;
			self.metrics.jobs.with_label_values(&[outcome]).inc();
		}
		self.commit(id).await
	}
}
