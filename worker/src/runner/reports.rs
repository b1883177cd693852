//! Committing results: the final report or a checkpoint, signed once and sent exactly once, the
//! receipt it rests on, and the end of a lease (finish, forget, adopt).

use super::*;

impl<E: Executor> Worker<E> {
	/// Records how the job ended (once), its logs, and the final result: signed once, sent
	/// (again) until the chain has it.
	pub(super) async fn commit(self: &Arc<Self>, id: LeaseId) -> Result<(), StepError> {
		let mut entry = self.entry(id)?;
		if entry.phase == Phase::Done {
			return Ok(());
		}
		let dirs = self.dirs(id);
		if entry.exit.is_none() {
			let (code, oom) = match (&entry.order_fault, &entry.container) {
				(Some(code), _) => (*code, false),
				(None, Some(handle)) => {
					match self.executor.state(handle).await.map_err(StepError::executor)? {
						JobState::Exited { code, oom } => (code, oom),
						JobState::Missing => (ReservedExit::ContainerLost.code(), false),
						other => {
							return Err(StepError::Executor(format!("the job is still {other:?}")))
						}
					}
				}
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
			self.journal.put(&entry)?;
			// The API serves the committed logs from now on.
			let _ = std::fs::remove_dir_all(dirs.live_logs());
			let outcome = match (entry.order_fault, code) {
				(Some(code), _) if code == ReservedExit::HostShort.code() => "host_short",
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

	pub(super) async fn checkpoint(
		self: &Arc<Self>,
		id: LeaseId,
		sequence: u32,
	) -> Result<(), StepError> {
		let kind = ReportKind::Checkpoint { sequence };
		self.report(id, kind, 0, StopReason::Exited, self.instant()).await
	}

	/// Builds the receipt of `kind`, signs it once, and sends it.
	pub(super) async fn report(
		self: &Arc<Self>,
		id: LeaseId,
		kind: ReportKind,
		code: i32,
		reason: StopReason,
		ended: Instant,
	) -> Result<(), StepError> {
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
						StepError::from(e)
					})?;
				crash_point(&format!("after-sign-report-{}", slot.split('/').next().unwrap_or("")));
				report
			}
		};
		if kind == ReportKind::Final {
			// The lease's folder is missing on a machine the journal was moved to (`journal
			// import`): the signed receipt is in the journal, and is kept there again.
			std::fs::create_dir_all(&dirs.root).map_err(StepError::local)?;
			std::fs::write(dirs.receipt(), &report.receipt).map_err(StepError::local)?;
		}
		// A report whose extrinsic is already in a block, or is gone (rejected as stale): the
		// lease may have it in a block not finalized yet. Never send a second one then.
		let stored = entry.extrinsics.get(&slot);
		if stored.is_none_or(|x| x.included) && self.settled_at_best(id, &kind).await {
			return Ok(());
		}
		let signature: [u8; 64] = report
			.signature
			.clone()
			.try_into()
			.map_err(|_| StepError::local("a bad signature in the journal"))?;
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
		}?;
		match sent {
			Sent::Included => {
				log::info("commit", Some(id), format!("{slot} in a block (exit {code})"));
				Ok(())
			}
			Sent::Refused(why) => Err(StepError::Refused(format!("{slot}: {why}"))),
			Sent::Rejected { why, .. } if why.contains("already imported") => Ok(()),
			Sent::Rejected { why, .. } => {
				Err(StepError::Chain(format!("{slot} did not go in: {why}")))
			}
		}
	}

	/// Whether replica `id` is still sealed at the best block (its reveal not in it).
	pub(super) async fn sealed_at_best(&self, id: LeaseId) -> bool {
		let Ok(client) = self.chain.client().await else { return true };
		let Ok(best) = client.best_hash().await else { return true };
		match client.at_block(best).lease(id).await {
			Ok(Some(lease)) => matches!(lease.status, LeaseStatus::Sealed),
			_ => true,
		}
	}

	/// Whether the best block already has this report (or the lease is no longer live there).
	pub(super) async fn settled_at_best(&self, id: LeaseId, kind: &ReportKind) -> bool {
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

	pub(super) fn receipt(
		&self,
		entry: &LeaseEntry,
		kind: ReportKind,
		exit_code: i32,
		stop_reason: StopReason,
		ended: Instant,
	) -> Result<ExecutionReceipt, StepError> {
		let dirs = self.dirs(entry.lease);
		let outputs = commit::manifest(&dirs.outputs()).map_err(StepError::local)?;
		if kind == ReportKind::Final {
			// What the result commits to, kept: the outputs API serves it from now on rather
			// than hashing every file again for each request.
			commit::keep_manifest(&dirs, &outputs).map_err(StepError::local)?;
		}
		let logs = commit::logs_manifest(&dirs.logs()).map_err(StepError::local)?;
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

	pub(super) async fn finish(self: &Arc<Self>, id: LeaseId) -> Result<(), StepError> {
		self.jobs.start_failing.lock().expect("not poisoned").remove(&id);
		let mut entry = self.entry(id)?;
		if let Some(handle) = entry.container.clone() {
			let state = self.executor.state(&handle).await.map_err(StepError::executor)?;
			if matches!(state, JobState::Running | JobState::Paused) {
				if entry.stop_reason.is_none() {
					entry.stop_reason = Some(StopReason::StoppedByWorker);
					self.journal.put(&entry)?;
				}
				let grace = self.config.limits.stop_grace_secs;
				self.executor.stop(&handle, grace).await.map_err(StepError::executor)?;
				log::info("executor", Some(id), "the lease ended on chain: job stopped");
			}
			if entry.exit.is_none() {
				let _ = self
					.executor
					.collect_logs(&handle, &self.dirs(id).logs(), self.config.limits.log_bytes)
					.await;
				let state = self.executor.state(&handle).await.map_err(StepError::executor)?;
				if let JobState::Exited { code, .. } = state {
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
		self.journal.put(&entry)?;
		log::info(
			"duties",
			Some(id),
			format!("ended on chain; outputs kept {} day(s)", self.config.worker.retention_days),
		);
		Ok(())
	}

	pub(super) async fn forget(self: &Arc<Self>, id: LeaseId) -> Result<(), StepError> {
		let entry = self.entry(id)?;
		// Before the job's container goes: the folders it closed to the worker are opened
		// through it.
		let dirs = self.dirs(id);
		// The outputs' filesystem goes with its image, in the lease's folder.
		self.quota.unmount(&dirs).map_err(StepError::local)?;
		let root = dirs.root;
		folders::remove_all(&*self.executor, entry.container.as_deref(), Some(id), &root)
			.await
			.map_err(StepError::local)?;
		if let Some(handle) = &entry.container {
			self.executor.remove(handle).await.map_err(StepError::executor)?;
		}
		self.journal.remove(id)?;
		log::info("duties", Some(id), "retention over: outputs removed");
		Ok(())
	}

	pub(super) async fn adopt(
		self: &Arc<Self>,
		id: LeaseId,
		duty: DutyRecord,
	) -> Result<(), StepError> {
		let mut entry = self.new_entry(id, &duty)?;
		entry.adopted = true;
		// The job another journal started carries that journal's instance label: look for it by
		// chain, worker key and lease only.
		let mut labels = self.labels();
		labels.remove(INSTANCE_LABEL);
		labels.insert(LEASE_LABEL.into(), id.to_string());
		let found =
			self.executor.list(&labels).await.map_err(StepError::executor)?.into_iter().next();
		let ours = self.dirs(id).outputs();
		if let Some(theirs) = found.as_ref().and_then(|job| job.outputs.as_ref()) {
			let same = std::fs::canonicalize(theirs).ok() == std::fs::canonicalize(&ours).ok();
			if !same {
				return Err(StepError::Plan(format!(
					"not adopted: its job writes its outputs to {}, not under this worker's \
					 data_dir ({}); adopt it with the data_dir that holds them",
					theirs.display(),
					ours.display()
				)));
			}
		}
		self.dirs(id).create().map_err(StepError::local)?;
		match found {
			Some(job) => {
				entry.container = Some(job.handle);
				entry.started = Some(self.instant());
				entry.phase = Phase::Running;
			}
			None => entry.phase = Phase::Acked,
		}
		self.journal.put(&entry)?;
		log::info("duties", Some(id), format!("adopted ({:?})", entry.phase));
		Ok(())
	}
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
