//! Running a lease's job: starting its container, supervising it until it exits, keeping its logs.

use super::*;

/// How long after a job's exit its followed output may still be arriving: the engine feeds the
/// attachment through the same copier as its log file, which for a job that printed a lot in
/// its last moments (200,000 lines, say) can lag its exit by many seconds on a busy machine.
/// Past this the copy is dropped and the engine's capped file is used, which keeps the later
/// part instead of the head.
const LOG_DRAIN: Duration = Duration::from_secs(60);

impl<E: Executor> Worker<E> {
	/// Starts the job of an acknowledged lease. One that has failed to start for
	/// [`START_GIVE_UP`] (an engine that cannot give it its GPUs, an image pruned since) is
	/// reported lost: a failed result now, not a missed one the bond is slashed for later
	/// while the buyer pays for nothing.
	pub(super) async fn start(self: &Arc<Self>, id: LeaseId) -> Result<(), String> {
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

	pub(super) async fn try_start(self: &Arc<Self>, id: LeaseId) -> Result<(), StartError> {
		let mut entry = self.entry(id)?;
		let image_id = match entry.image_id.clone() {
			Some(image_id) => image_id,
			None => self.executor.resolve(&entry.spec.image).await.map_err(|e| e.to_string())?,
		};
		self.note_image_use(&image_id);
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
	pub(super) fn supervise(self: &Arc<Self>, id: LeaseId, handle: String) {
		if !self.supervised.lock().expect("not poisoned").insert(id) {
			return;
		}
		let me = self.clone();
		// Out of the set when the watch ends, however it ends: a job is watched again later.
		let watched = Watched { worker: self.clone(), lease: id };
		spawn_named(&self.metrics, "supervise", async move {
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
			match tokio::time::timeout(LOG_DRAIN, &mut follower).await {
				Ok(Ok(Ok(()))) => {
					me.followed.lock().expect("not poisoned").insert(id);
				}
				Ok(Ok(Err(why))) => log::warn("executor", Some(id), format!("live logs: {why}")),
				Ok(Err(_)) | Err(_) => follower.abort(),
			}
			drop(watched);
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
	pub(super) async fn keep_logs(
		&self,
		id: LeaseId,
		handle: &str,
		dirs: &LeaseDirs,
	) -> Result<(), String> {
		let (live, kept) = (dirs.live_logs(), dirs.logs());
		// A block's plan may see the job's end before its supervisor does: the copy that
		// supervisor follows is waited for (it has what the job wrote before it stopped).
		let waited = std::time::Instant::now();
		while self.supervised.lock().expect("not poisoned").contains(&id)
			&& waited.elapsed() < LOG_DRAIN + Duration::from_secs(5)
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
}

/// A job being watched ([`Worker::supervise`]): taken out of the watched set when dropped.
struct Watched<E: Executor> {
	worker: Arc<Worker<E>>,
	lease: LeaseId,
}

impl<E: Executor> Drop for Watched<E> {
	fn drop(&mut self) {
		self.worker.supervised.lock().expect("not poisoned").remove(&self.lease);
	}
}
