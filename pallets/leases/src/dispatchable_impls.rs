//! What each call does.

use crate::{
	lease_impls::Ending, Config, Error, Event, LeaseOf, LeaseStatus, Leases, Pallet,
	PendingVerdicts, TerminationReason, WorkerSignature,
};
use frame::prelude::*;
use stint_primitives::{LeaseId, ReportKind, ResultCommitment, SlashReason};
use stint_traits::{PaymentStreams, ProviderRegistry};

impl<T: Config> Pallet<T> {
	/// What a call this pallet refuses is charged: its checks read the lease and at most three
	/// more items (the worker index, a pending verdict, a dispute) before anything is written.
	/// The calls that check a worker's signature (`submit_result`, `checkpoint`,
	/// `reveal_result`) keep their declared weight: the check is most of their cost.
	pub(crate) fn refused(
		error: DispatchError,
	) -> frame::deps::frame_support::dispatch::DispatchErrorWithPostInfo {
		stint_traits::refusal::<Self>(error, T::DbWeight::get().reads(4))
	}

	pub(crate) fn do_ack_lease(who: &T::AccountId, id: LeaseId) -> DispatchResult {
		let mut lease = Self::lease(id)?;
		Self::ensure_provider_or_its_worker(who, &lease)?;
		ensure!(lease.status == LeaseStatus::AwaitingAck, Error::<T>::NotAwaitingAck);
		let now = Self::now();
		ensure!(now <= lease.ack_by, Error::<T>::AckDeadlinePassed);
		T::Streams::start(lease.stream)?;
		lease.started_at = Some(now);
		lease.ends_at = lease.duration.map(|d| now.saturating_add(d));
		lease.last_report_at = now;
		lease.status = LeaseStatus::Running;
		let ends_at = lease.ends_at;
		Leases::<T>::insert(id, lease);
		Self::deposit_event(Event::Acknowledged { lease: id, ends_at });
		Ok(())
	}

	/// Returns the lease's devices and its stream's depositors, which its weight depends on.
	pub(crate) fn do_submit_result(
		id: LeaseId,
		commitment: ResultCommitment,
		signature: WorkerSignature,
	) -> Result<(u32, u32), DispatchError> {
		let mut lease = Self::running(id)?;
		ensure!(lease.replicas <= 1, Error::<T>::Replicated);
		if let Some(ends_at) = lease.ends_at {
			let deadline = ends_at.saturating_add(lease.result_grace);
			ensure!(Self::now() <= deadline, Error::<T>::ResultTooLate);
		}
		ensure!(!Self::checkpoint_overdue(&lease), Error::<T>::CheckpointOverdue);
		ensure!(commitment.image_digest == lease.image_digest, Error::<T>::WrongImage);
		Self::verify(id, &lease, ReportKind::Final, &commitment, &signature)?;
		// Every result, early or at the end, waits for the buyer's verdict before its holdback
		// and collateral are released and it counts.
		Self::finish(id, &mut lease, Ending::Result { commitment })
	}

	/// A lease's devices and its stream's depositors (at most the bounds).
	pub(crate) fn size_of(lease: &LeaseOf<T>) -> (u32, u32) {
		let depositors = T::Streams::depositors(lease.stream)
			.unwrap_or_else(T::Streams::max_depositors)
			.clamp(1, T::Streams::max_depositors());
		((lease.devices.len() as u32).clamp(1, T::MaxGpusPerLease::get()), depositors)
	}

	pub(crate) fn do_accept_result(who: &T::AccountId, id: LeaseId) -> DispatchResult {
		let lease = Self::lease(id)?;
		ensure!(&lease.buyer == who, Error::<T>::NotBuyer);
		Self::ensure_judgeable(&lease)?;
		let verdict = PendingVerdicts::<T>::get(id).ok_or(Error::<T>::NoPendingVerdict)?;
		Self::ensure_undisputed(id)?;
		Self::settle_verdict(id, &lease, verdict, false)
	}

	pub(crate) fn do_object_to_result(who: &T::AccountId, id: LeaseId) -> DispatchResult {
		let lease = Self::lease(id)?;
		ensure!(&lease.buyer == who, Error::<T>::NotBuyer);
		Self::ensure_judgeable(&lease)?;
		let verdict = PendingVerdicts::<T>::get(id).ok_or(Error::<T>::NoPendingVerdict)?;
		ensure!(Self::now() <= verdict.objections_until, Error::<T>::ObjectionWindowClosed);
		Self::ensure_undisputed(id)?;
		Self::settle_verdict(id, &lease, verdict, true)
	}

	pub(crate) fn do_confirm_result(id: LeaseId) -> DispatchResult {
		let lease = Self::lease(id)?;
		Self::ensure_judgeable(&lease)?;
		let verdict = PendingVerdicts::<T>::get(id).ok_or(Error::<T>::NoPendingVerdict)?;
		ensure!(Self::now() > verdict.objections_until, Error::<T>::ObjectionWindowOpen);
		Self::ensure_undisputed(id)?;
		Self::settle_verdict(id, &lease, verdict, false)
	}

	/// Returns the stream's depositors, which its weight depends on.
	pub(crate) fn do_checkpoint(
		id: LeaseId,
		commitment: ResultCommitment,
		signature: WorkerSignature,
	) -> Result<u32, DispatchError> {
		let mut lease = Self::running(id)?;
		ensure!(lease.duration.is_none(), Error::<T>::NotOpenEnded);
		ensure!(!Self::checkpoint_overdue(&lease), Error::<T>::CheckpointOverdue);
		ensure!(commitment.image_digest == lease.image_digest, Error::<T>::WrongImage);
		let sequence = lease.checkpoints.saturating_add(1);
		Self::verify(id, &lease, ReportKind::Checkpoint { sequence }, &commitment, &signature)?;
		// Paid to this block; this period's holdback waits for its verdict window, and the
		// holdback of earlier periods whose windows passed is paid.
		let now = Self::now();
		T::Streams::mark(lease.stream, now.saturating_add(lease.verdict_window))?;
		T::Streams::release(lease.stream, Some(now))?;
		lease.checkpoints = sequence;
		lease.last_report_at = now;
		lease.result = Some(commitment);
		let (_, depositors) = Self::size_of(&lease);
		Leases::<T>::insert(id, lease);
		Self::deposit_event(Event::Checkpointed { lease: id, sequence, commitment });
		Ok(depositors)
	}

	pub(crate) fn do_give_notice(who: &T::AccountId, id: LeaseId) -> DispatchResult {
		let mut lease = Self::running(id)?;
		Self::ensure_provider_or_its_worker(who, &lease)?;
		ensure!(lease.notice_ends_at.is_none(), Error::<T>::NoticeAlreadyGiven);
		let notice_ends_at = Self::now().saturating_add(lease.termination_notice);
		lease.notice_ends_at = Some(notice_ends_at);
		Leases::<T>::insert(id, lease);
		Self::deposit_event(Event::NoticeGiven { lease: id, notice_ends_at });
		Ok(())
	}

	/// Returns the lease's devices and depositors, as every ending does (what it cost).
	pub(crate) fn do_terminate(
		who: &T::AccountId,
		id: LeaseId,
	) -> Result<(u32, u32), DispatchError> {
		let mut lease = Self::live(id)?;
		ensure!(&lease.provider == who, Error::<T>::NotProvider);
		let (reason, fault) = if lease.status == LeaseStatus::AwaitingAck {
			// Declining a lease it won, before acknowledging it, is a no-show whatever the
			// notice: otherwise a bid at any price would be a free option on the buyer's order,
			// and a provider late with its ack would escape the no-show slash by ending first.
			// Declining early only spares the buyer the wait until the ack deadline.
			(TerminationReason::NoShow, Some((SlashReason::NoShow, None)))
		} else if lease.duration.is_some() {
			// A fixed lease was bought for its duration: it ends by its result (which, early,
			// answers to the buyer's verdict), never by a unilateral exit.
			return Err(Error::<T>::FixedDuration.into());
		} else if Self::checkpoint_overdue(&lease) {
			// Ending first would escape the slash the missed checkpoint earned.
			return Err(Error::<T>::CheckpointOverdue.into());
		} else if lease.termination_notice.is_zero()
			|| lease.notice_ends_at.is_some_and(|at| at <= Self::now())
		{
			(TerminationReason::ProviderNotice, None)
		} else {
			(
				TerminationReason::ProviderWithoutNotice,
				Some((SlashReason::TerminatedWithoutNotice, None)),
			)
		};
		Self::finish(id, &mut lease, Ending::Terminated { reason, fault })
	}

	pub(crate) fn do_close_lease(
		who: &T::AccountId,
		id: LeaseId,
	) -> Result<(u32, u32), DispatchError> {
		let mut lease = Self::live(id)?;
		ensure!(&lease.buyer == who, Error::<T>::NotBuyer);
		ensure!(lease.verifies.is_none(), Error::<T>::VerificationLease);
		let ending = Ending::Terminated { reason: TerminationReason::ClosedByBuyer, fault: None };
		Self::finish(id, &mut lease, ending)
	}

	pub(crate) fn do_report_no_show(
		reporter: &T::AccountId,
		id: LeaseId,
	) -> Result<(u32, u32), DispatchError> {
		let mut lease = Self::lease(id)?;
		ensure!(reporter != &lease.provider, Error::<T>::SelfReport);
		ensure!(lease.status == LeaseStatus::AwaitingAck, Error::<T>::NotAwaitingAck);
		ensure!(Self::now() > lease.ack_by, Error::<T>::AckNotOverdue);
		let fault = Some((SlashReason::NoShow, Some(reporter)));
		Self::finish(
			id,
			&mut lease,
			Ending::Terminated { reason: TerminationReason::NoShow, fault },
		)
	}

	pub(crate) fn do_report_missed_result(
		reporter: &T::AccountId,
		id: LeaseId,
	) -> Result<(u32, u32), DispatchError> {
		let mut lease = Self::running(id)?;
		ensure!(reporter != &lease.provider, Error::<T>::SelfReport);
		let now = Self::now();
		let (reason, slash) = match lease.ends_at {
			Some(ends_at) => {
				let deadline = ends_at.saturating_add(lease.result_grace);
				ensure!(now > deadline, Error::<T>::NotOverdue);
				(TerminationReason::MissedResult, SlashReason::MissedResult)
			}
			None => {
				ensure!(Self::checkpoint_overdue(&lease), Error::<T>::NotOverdue);
				(TerminationReason::MissedCheckpoint, SlashReason::MissedCheckpoint)
			}
		};
		let fault = Some((slash, Some(reporter)));
		Self::finish(id, &mut lease, Ending::Terminated { reason, fault })
	}

	/// `who` is the lease's provider, or the provider's worker key bound to the lease's devices.
	pub(crate) fn ensure_provider_or_its_worker(
		who: &T::AccountId,
		lease: &LeaseOf<T>,
	) -> DispatchResult {
		if who == &lease.provider {
			return Ok(());
		}
		let (provider, key) = T::Registry::acting_for(who).map_err(|_| Error::<T>::NotProvider)?;
		ensure!(provider == lease.provider, Error::<T>::NotProvider);
		ensure!(
			key.is_some() && T::Registry::worker_for(&provider, &lease.devices) == key,
			Error::<T>::NotThisWorker
		);
		Ok(())
	}

	/// An open-ended, running lease whose last report is more than its checkpoint interval
	/// ago. A suspended lease is not paid, so it owes no checkpoint.
	fn checkpoint_overdue(lease: &LeaseOf<T>) -> bool {
		let deadline = lease.last_report_at.saturating_add(lease.checkpoint_interval);
		lease.duration.is_none() && lease.status == LeaseStatus::Running && Self::now() > deadline
	}

	/// A lease that exists.
	pub(crate) fn lease(id: LeaseId) -> Result<LeaseOf<T>, DispatchError> {
		Leases::<T>::get(id).ok_or_else(|| Error::<T>::UnknownLease.into())
	}

	/// A lease that has not ended.
	pub(crate) fn live(id: LeaseId) -> Result<LeaseOf<T>, DispatchError> {
		let lease = Self::lease(id)?;
		ensure!(lease.status.is_live(), Error::<T>::LeaseEnded);
		Ok(lease)
	}

	/// A lease that was acknowledged and has not ended.
	pub(crate) fn running(id: LeaseId) -> Result<LeaseOf<T>, DispatchError> {
		let lease = Self::lease(id)?;
		ensure!(
			matches!(lease.status, LeaseStatus::Running | LeaseStatus::Suspended),
			Error::<T>::NotRunning
		);
		Ok(lease)
	}

	pub(crate) fn now() -> BlockNumberFor<T> {
		frame_system::Pallet::<T>::block_number()
	}
}
