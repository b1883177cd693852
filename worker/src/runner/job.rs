//! Running a lease's job: starting its container, supervising it until it exits, keeping its logs.

use super::*;

/// The running jobs as the worker watches them.
#[derive(Default)]
pub(super) struct Jobs {
	/// Jobs with a supervisor watching them.
	pub(super) supervised: Mutex<HashSet<LeaseId>>,
	/// Leases whose logs this worker followed from the job's start to its end: that copy is the
	/// one kept, since by the end the engine's own capped file may have lost the streams' heads.
	pub(super) followed: Mutex<HashSet<LeaseId>>,
	/// Acknowledged leases whose job does not start, and since when it has failed to.
	pub(super) start_failing: Mutex<HashMap<LeaseId, std::time::Instant>>,
}

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
	/// while the buyer pays for nothing. One the order's own image and command cannot start
	/// ends at once with its reserved code (the step policy's `End`).
	pub(super) async fn start(self: &Arc<Self>, id: LeaseId) -> Result<(), StepError> {
		let why = match self.try_start(id).await {
			Err(StepError::Executor(why)) => why,
			other => {
				self.jobs.start_failing.lock().expect("not poisoned").remove(&id);
				return other;
			}
		};
		let since = *self
			.jobs
			.start_failing
			.lock()
			.expect("not poisoned")
			.entry(id)
			.or_insert_with(std::time::Instant::now);
		if since.elapsed() < START_GIVE_UP {
			return Err(StepError::Executor(format!("the job does not start: {why}")));
		}
		self.jobs.start_failing.lock().expect("not poisoned").remove(&id);
		let secs = START_GIVE_UP.as_secs();
		Err(StepError::Lost(format!("the job has not started for {secs} s ({why})")))
	}

	pub(super) async fn try_start(self: &Arc<Self>, id: LeaseId) -> Result<(), StepError> {
		let mut entry = self.entry(id)?;
		let image_id = match entry.image_id.clone() {
			Some(image_id) => image_id,
			None => self.executor.resolve(&entry.spec.image).await.map_err(StepError::executor)?,
		};
		self.note_image_use(&image_id);
		let job = self.job_request(&entry)?;
		let handle = self.executor.start(&job, &image_id).await?;
		entry.image_id = Some(image_id);
		entry.container = Some(handle.clone());
		entry.started.get_or_insert(self.instant());
		entry.phase = Phase::Running;
		self.journal.put(&entry)?;
		if let Some(created) = self.tasks.first_seen.lock().expect("not poisoned").remove(&id) {
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
		if !self.jobs.supervised.lock().expect("not poisoned").insert(id) {
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
					me.jobs.followed.lock().expect("not poisoned").insert(id);
				}
				Ok(Ok(Err(why))) => log::warn("executor", Some(id), format!("live logs: {why}")),
				Ok(Err(_)) | Err(_) => follower.abort(),
			}
			drop(watched);
			// Committed at once; if another action holds the lease, the next block's plan does it.
			if let Some(guard) = me.begin(id) {
				if let Err(error) = me.commit(id).await {
					me.after_step(id, "Commit", error).await;
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
	) -> Result<(), StepError> {
		let (live, kept) = (dirs.live_logs(), dirs.logs());
		// A block's plan may see the job's end before its supervisor does: the copy that
		// supervisor follows is waited for (it has what the job wrote before it stopped).
		let waited = std::time::Instant::now();
		while self.jobs.supervised.lock().expect("not poisoned").contains(&id)
			&& waited.elapsed() < LOG_DRAIN + Duration::from_secs(5)
		{
			tokio::time::sleep(Duration::from_millis(20)).await;
		}
		if self.jobs.followed.lock().expect("not poisoned").remove(&id) {
			std::fs::create_dir_all(&kept).map_err(StepError::local)?;
			let moved = ["stdout", "stderr"]
				.iter()
				.all(|name| std::fs::rename(live.join(name), kept.join(name)).is_ok());
			if moved {
				return Ok(());
			}
		}
		let cap = self.config.limits.log_bytes;
		self.executor.collect_logs(handle, &kept, cap).await.map_err(StepError::executor)
	}
}

/// A job being watched ([`Worker::supervise`]): taken out of the watched set when dropped.
struct Watched<E: Executor> {
	worker: Arc<Worker<E>>,
	lease: LeaseId,
}

impl<E: Executor> Drop for Watched<E> {
	fn drop(&mut self) {
		self.worker.jobs.supervised.lock().expect("not poisoned").remove(&self.lease);
	}
}
