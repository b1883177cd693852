//! After a result: confirming verdict windows that passed, and revealing replicated orders'
//! sealed results.

use super::*;

/// Replicas' reveals.
#[derive(Default)]
pub(super) struct Verdicts {
	/// A round of reveals is under way.
	pub(super) reveals: SingleFlight,
}

impl<E: Executor> Worker<E> {
	/// A result (or a served notice) counts, is paid its holdback and unlocks its collateral
	/// once its buyer accepts it or its verdict window passes: then anyone may confirm it, and
	/// the worker does, so that its provider's honest results are not left waiting. `at` is
	/// finalized block `number`. A lease whose verdict is recorded (or was never pending) is
	/// marked settled.
	pub(super) async fn confirm_verdicts(
		self: &Arc<Self>,
		at: &Client,
		number: u32,
		leases: Vec<LeaseId>,
	) {
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
	pub(super) async fn reveal_replicas(
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
						if let Err(error) = self.reveal(id, &replica).await {
							self.after_step(id, "Reveal", error).await;
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
	pub(super) async fn reveal(
		&self,
		id: LeaseId,
		replica: &ReplicaEntry,
	) -> Result<(), StepError> {
		let entry = self.entry(id)?;
		// In a block already, which the finalized block has not reached: nothing to send, unless
		// the best chain lost it (then the same bytes go again).
		if entry.extrinsics.get("reveal").is_some_and(|x| x.included)
			&& !self.sealed_at_best(id).await
		{
			return Ok(());
		}
		let report =
			entry.reports.get("final").ok_or_else(|| missing("no sealed result in the journal"))?;
		let signature: [u8; 64] = report
			.signature
			.clone()
			.try_into()
			.map_err(|_| StepError::local("a bad signature in the journal"))?;
		let commitment = Static(report.commitment);
		let call = runtime::tx().leases().reveal_result(id, commitment, replica.salt, signature);
		match self.chain.send(&self.journal, id, "reveal", &call, &self.key).await {
			Ok(Sent::Included) => log::info("commit", Some(id), "sealed result revealed"),
			Ok(Sent::Refused(why)) => return Err(StepError::Refused(format!("reveal: {why}"))),
			Ok(Sent::Rejected { why, .. }) if why.contains("already imported") => {}
			Ok(Sent::Rejected { why, .. }) => {
				return Err(StepError::Chain(format!("reveal did not go in: {why}")))
			}
			Err(e) => return Err(e.into()),
		}
		Ok(())
	}
}
