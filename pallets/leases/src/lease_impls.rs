//! Leases as the market and the streams see them ([`LeaseFactory`], [`StreamObserver`]), the
//! signature check, the end of a lease, and the invariants.

use crate::WeightInfo;
use crate::{
	BuyerRecords, Config, EndedBy, Error, Event, LeaseOf, LeaseStatus, Leases, LiveLeases,
	NextLeaseId, Pallet, PendingVerdict, PendingVerdictOf, PendingVerdicts, TerminationReason,
	VerdictsOwed, WorkerSignature,
};
use frame::{deps::sp_runtime::TryRuntimeError, prelude::*};
use stint_primitives::{
	fault_of, DeviceId, Fault, LeaseId, NextDuty, Outcome, Report, ReportKind, ResultCommitment,
	SlashReason,
};
use stint_traits::{
	CloseReason, LeaseFactory, NewLease, Obligations, PaymentStreams, ProviderCollateral,
	ProviderRegistry, ReputationRecorder, Slashing, StreamId, StreamObserver,
};

/// How a live lease ends: the one argument of [`Pallet::finish`].
pub(crate) enum Ending<'a, AccountId, BlockNumber> {
	/// The provider's signed `Final` result.
	Result { commitment: ResultCommitment },
	/// A replica's sealed result: its verdict waits for the replicas' decision, at the latest
	/// after block `decided_by`.
	Sealed { decided_by: BlockNumber },
	/// Without a result, for `reason`; with the fault to slash for, and who reported it.
	Terminated { reason: TerminationReason, fault: Option<(SlashReason, Option<&'a AccountId>)> },
}

impl<T: Config> LeaseFactory<T::AccountId, T::Balance, BlockNumberFor<T>> for Pallet<T> {
	fn create_lease(
		mut new: NewLease<T::AccountId, T::Balance, BlockNumberFor<T>>,
	) -> Result<LeaseId, DispatchError> {
		let id = NextLeaseId::<T>::get();
		let devices: BoundedVec<_, T::MaxGpusPerLease> =
			core::mem::take(&mut new.devices).try_into().map_err(|_| Error::<T>::TooManyDevices)?;
		T::Registry::commit_devices(&new.provider, &devices, id)?;
		// A fixed-duration lease never costs more than its price times its duration.
		let cap = new.duration.map(|blocks| {
			let blocks: u128 = blocks.saturated_into();
			new.price_per_block.saturating_mul(blocks.saturated_into())
		});
		let stream = T::Streams::open(
			&new.buyer,
			&new.provider,
			new.price_per_block,
			new.escrow,
			id,
			cap,
			new.holdback,
		)?;
		let replicated = new.replicas > 1;
		Self::store_new(id, new, devices, stream, None);
		if replicated {
			let lease = Self::lease(id)?;
			Self::add_replica(id, &lease)?;
		}
		Ok(id)
	}

	fn ended_at(lease: LeaseId) -> Option<BlockNumberFor<T>> {
		let lease = Leases::<T>::get(lease)?;
		if lease.replicas > 1 {
			return Self::replicas_ended_at(&lease);
		}
		lease.ended_at
	}

	fn record_bytes(replicas: u32) -> u32 {
		// Each key: a 16-byte hash and the id. A lease keeps its record, a dispute of its
		// result (while both are kept) and its stream; a replicated order keeps a group.
		let key = 16 + LeaseId::max_encoded_len();
		let lease = key + LeaseOf::<T>::max_encoded_len();
		let dispute = key + crate::DisputeOf::<T>::max_encoded_len();
		let per_lease = (lease + dispute) as u32 + T::Streams::record_bytes();
		let group = match replicas > 1 {
			true => (key + crate::ReplicaGroupOf::<T>::max_encoded_len()) as u32,
			false => 0,
		};
		per_lease.saturating_mul(replicas.max(1)).saturating_add(group)
	}

	fn reap(id: LeaseId) -> DispatchResult {
		let lease = Self::lease(id)?;
		ensure!(!lease.status.is_live(), Error::<T>::LeaseLive);
		if lease.replicas > 1 {
			return Self::reap_replicas(&lease);
		}
		Self::ensure_undisputed(id)?;
		if let Some(verdict) = PendingVerdicts::<T>::get(id) {
			// Nobody objected in time: the result counts as it said.
			ensure!(Self::now() > verdict.objections_until, Error::<T>::ObjectionWindowOpen);
			Self::settle_verdict(id, &lease, verdict, false)?;
		}
		Self::reap_dispute(id)?;
		T::Streams::reap(lease.stream)?;
		Leases::<T>::remove(id);
		Self::deposit_event(Event::Reaped { lease: id });
		Ok(())
	}
}

impl<T: Config> Obligations<T::AccountId> for Pallet<T> {
	fn pending(who: &T::AccountId) -> u32 {
		VerdictsOwed::<T>::get(who)
	}
}

impl<T: Config> StreamObserver for Pallet<T> {
	fn on_suspended(reference: u64, _: StreamId) {
		let Some(mut lease) = Leases::<T>::get(reference) else { return };
		// A fixed-duration lease whose time is up was paid in full: it only awaits its result.
		let past_end = lease.ends_at.is_some_and(|at| at <= Self::now());
		if lease.status == LeaseStatus::Running && !past_end {
			lease.status = LeaseStatus::Suspended;
			Leases::<T>::insert(reference, lease);
			Self::deposit_event(Event::Suspended { lease: reference });
		}
	}

	fn on_resumed(reference: u64, _: StreamId) {
		let Some(mut lease) = Leases::<T>::get(reference) else { return };
		if lease.status == LeaseStatus::Suspended {
			lease.status = LeaseStatus::Running;
			// The checkpoint clock restarts: nothing was owed while suspended.
			lease.last_report_at = Self::now();
			Leases::<T>::insert(reference, lease);
			Self::deposit_event(Event::Resumed { lease: reference });
		}
	}

	fn on_closed(reference: u64, _: StreamId, reason: CloseReason) {
		let Some(mut lease) = Leases::<T>::get(reference) else { return };
		if !lease.status.is_live() {
			return;
		}
		let past_end = lease.ends_at.is_some_and(|at| at <= Self::now());
		let ended = match reason {
			// Paid in full: still owes its result.
			CloseReason::Depleted if past_end => return,
			CloseReason::Depleted => TerminationReason::InsufficientFunds,
			CloseReason::Owner => return,
		};
		let ending = Ending::Terminated { reason: ended, fault: None };
		if let Err(error) = Self::finish(reference, &mut lease, ending) {
			frame::log::error!(target: "runtime::leases", "lease {reference}: {error:?}");
		}
	}

	/// Ending a lease (releasing its devices and collateral) costs less than closing one.
	fn notification_weight() -> Weight {
		<T as Config>::WeightInfo::close_lease(
			T::MaxGpusPerLease::get(),
			T::Streams::max_depositors(),
		)
	}

	fn resume_weight() -> Weight {
		<T as Config>::WeightInfo::on_resumed()
	}
}

impl<T: Config> Pallet<T> {
	/// The runtime's bounds are usable: checked by `integrity_test`.
	pub(crate) fn check_bounds() {
		assert!(T::MaxGpusPerLease::get() > 0, "MaxGpusPerLease must be positive");
		assert!(T::AckDeadline::get() > Zero::zero(), "AckDeadline must be positive");
		assert!(T::CheckpointInterval::get() > Zero::zero(), "CheckpointInterval must be positive");
		assert!(T::MaxVerdictWindow::get() > Zero::zero(), "MaxVerdictWindow must be positive");
		assert!(T::DrawDelay::get() > Zero::zero(), "DrawDelay must be positive");
		assert!(T::MaxDrawsPerBlock::get() > 0, "MaxDrawsPerBlock must be positive");
	}

	/// Stores lease `id` as `new` describes it, on `devices` (committed to it already) and paid
	/// through `stream` (opened already), awaiting its acknowledgement: indexed as its provider's
	/// live lease, the next id taken, `Created` told. A verification lease names the lease it
	/// `verifies`.
	pub(crate) fn store_new(
		id: LeaseId,
		new: NewLease<T::AccountId, T::Balance, BlockNumberFor<T>>,
		devices: BoundedVec<DeviceId, T::MaxGpusPerLease>,
		stream: StreamId,
		verifies: Option<LeaseId>,
	) {
		let verdict_window = new
			.verdict_window
			.max(T::VerdictWindow::get())
			.clamp(One::one(), T::MaxVerdictWindow::get().max(One::one()));
		let now = Self::now();
		let ack_by = now.saturating_add(T::AckDeadline::get().max(One::one()));
		let lease = LeaseOf::<T> {
			order: new.order,
			buyer: new.buyer.clone(),
			provider: new.provider.clone(),
			devices,
			price_per_block: new.price_per_block,
			stream,
			collateral: new.collateral,
			image_digest: new.image_digest,
			created_at: now,
			ack_by,
			started_at: None,
			duration: new.duration,
			ends_at: None,
			termination_notice: new.termination_notice,
			notice_ends_at: None,
			result_grace: T::ResultGrace::get(),
			checkpoint_interval: T::CheckpointInterval::get().max(One::one()),
			verdict_window,
			checkpoints: 0,
			deterministic: new.deterministic,
			verifies,
			replicas: new.replicas.max(1),
			last_report_at: now,
			result: None,
			status: LeaseStatus::AwaitingAck,
			ended_at: None,
		};
		Leases::<T>::insert(id, lease);
		LiveLeases::<T>::insert(&new.provider, id, ());
		NextLeaseId::<T>::put(id.saturating_add(1));
		Self::deposit_event(Event::Created {
			lease: id,
			order: new.order,
			buyer: new.buyer,
			provider: new.provider,
			stream,
			price_per_block: new.price_per_block,
			ack_by,
		});
	}

	/// Checks `signature` is the provider's worker key over the report of `kind` for this lease
	/// on this chain.
	pub(crate) fn verify(
		id: LeaseId,
		lease: &LeaseOf<T>,
		kind: ReportKind,
		commitment: &ResultCommitment,
		signature: &WorkerSignature,
	) -> DispatchResult {
		let key = T::Registry::worker_for(&lease.provider, &lease.devices)
			.ok_or(Error::<T>::NoWorkerKey)?;
		let report = Report::new(Self::genesis_hash(), id, kind, *commitment);
		ensure!(
			frame::deps::sp_io::crypto::sr25519_verify(signature, &report.signing_bytes(), &key),
			Error::<T>::BadSignature
		);
		Ok(())
	}

	/// This chain's genesis hash, as the worker reads it.
	pub fn genesis_hash() -> [u8; 32] {
		stint_traits::genesis_hash::<T>()
	}

	/// Closes the lease's stream, unless it already closed (a fixed lease paid in full, or a
	/// stream that ran out and ended the lease).
	fn close_stream(lease: &LeaseOf<T>) -> DispatchResult {
		if T::Streams::remaining(lease.stream).is_some() {
			T::Streams::close(lease.stream)?;
		}
		Ok(())
	}

	/// How much of a full outcome `lease` counts for its provider's reputation: the lesser of the
	/// share of `FullCreditBlocks` it ran and the share of `FullCreditPayment` it paid. Read
	/// after its stream closed, so that the payment is final.
	pub(crate) fn delivered(lease: &LeaseOf<T>) -> Permill {
		let Some(started_at) = lease.started_at else { return Permill::zero() };
		let ran = Self::now().saturating_sub(started_at);
		let by_time = Permill::from_rational(
			ran.min(T::FullCreditBlocks::get()),
			T::FullCreditBlocks::get().max(One::one()),
		);
		let paid = T::Streams::paid(lease.stream).unwrap_or_default();
		let full = T::FullCreditPayment::get().max(One::one());
		let by_payment = Permill::from_rational(paid.min(full), full);
		by_time.min(by_payment)
	}

	/// Releases a live lease's devices and takes it out of the provider's live index: part of
	/// [`Self::finish`]. Its collateral stays locked (a verdict may need it). Does not store
	/// the lease.
	pub(crate) fn end(id: LeaseId, lease: &mut LeaseOf<T>, status: LeaseStatus) {
		T::Registry::release_devices(&lease.provider, &lease.devices, id);
		LiveLeases::<T>::remove(&lease.provider, id);
		lease.status = status;
		lease.ended_at = Some(Self::now());
	}

	/// What the provider's bond answers for if the buyer objects to the way it ended `lease`
	/// now (by its result with `exit_code`, or by notice with `None`): within
	/// `EarlyExitBlocks` of the acknowledgement, all the lease's collateral, as for a
	/// no-show; later, the share of a fixed lease's duration it did not deliver; nothing for a
	/// result at the end, nor for one that blames the order (its image or inputs could not be
	/// had as pinned: a buyer must not earn a slash with an order nobody can run).
	pub(crate) fn at_stake(lease: &LeaseOf<T>, exit_code: Option<i32>) -> T::Balance {
		let order_fault = exit_code.and_then(fault_of) == Some(Fault::Order);
		let Some(started_at) = lease.started_at else { return Zero::zero() };
		if order_fault {
			return Zero::zero();
		}
		let now = Self::now();
		if lease.ends_at.is_some_and(|ends_at| now >= ends_at) {
			// At (or after) its end: delivered in full, however short the lease.
			return Zero::zero();
		}
		if now.saturating_sub(started_at) < T::EarlyExitBlocks::get() {
			return lease.collateral;
		}
		match (lease.ends_at, lease.duration) {
			(Some(ends_at), Some(duration)) if now < ends_at => {
				Perbill::from_rational(ends_at.saturating_sub(now), duration.max(One::one()))
					.mul_ceil(lease.collateral)
			}
			_ => Zero::zero(),
		}
	}

	/// Opens the verdict window on a lease its provider ended (by result or notice): the
	/// holdback of its last period is scheduled with it, the collateral stays locked, and the
	/// outcome waits.
	fn await_verdict(
		id: LeaseId,
		lease: &LeaseOf<T>,
		outcome: Outcome,
		weight: Permill,
		at_stake: T::Balance,
		ended_by: EndedBy,
		objections_until: BlockNumberFor<T>,
	) -> DispatchResult {
		T::Streams::mark(lease.stream, objections_until)?;
		let holdback = T::Streams::withheld(lease.stream).unwrap_or_default();
		let verdict = PendingVerdict {
			outcome,
			weight,
			objections_until,
			collateral: lease.collateral,
			at_stake,
			ended_by,
		};
		PendingVerdicts::<T>::insert(id, verdict);
		VerdictsOwed::<T>::mutate(&lease.provider, |n| n.saturating_inc());
		Self::deposit_event(Event::VerdictPending {
			lease: id,
			outcome,
			objections_until,
			holdback,
			at_stake,
		});
		Ok(())
	}

	/// Settles the verdict on ended `lease`: its collateral is unlocked; with no objection (or
	/// one to a result at the end, which proves nothing) the holdback is paid to the provider
	/// and the outcome counts; an objection to an early end slashes what was at stake (for a
	/// terminate, the buyer compensated and the holdback returned to it). The buyer's record
	/// counts the verdict.
	pub(crate) fn settle_verdict(
		id: LeaseId,
		lease: &LeaseOf<T>,
		verdict: PendingVerdictOf<T>,
		objected: bool,
	) -> DispatchResult {
		PendingVerdicts::<T>::remove(id);
		VerdictsOwed::<T>::mutate_exists(&lease.provider, |n| {
			*n = n.map(|n| n.saturating_sub(1)).filter(|n| *n > 0)
		});
		T::Collateral::unlock_collateral(&lease.provider, verdict.collateral);
		let (mut released, mut forfeited, mut slashed) = Default::default();
		let slashing = objected && !verdict.at_stake.is_zero();
		BuyerRecords::<T>::mutate(&lease.buyer, |record| {
			record.verdicts.saturating_inc();
			if objected {
				record.objections.saturating_inc();
			}
			if slashing {
				record.slashing_objections.saturating_inc();
			}
		});
		let outcome = if slashing {
			// A terminate was the provider's choice alone: the buyer is compensated. When a
			// result came is the job's doing as much as the provider's (the buyer wrote the
			// job): the slash is burnt and the holdback paid, so objecting never earns money.
			let compensated = verdict.ended_by == EndedBy::Notice;
			slashed = T::Slashing::slash(
				&lease.provider,
				verdict.at_stake,
				compensated.then_some(&lease.buyer),
				None,
				SlashReason::EndedEarly,
			);
			if compensated {
				forfeited = T::Streams::forfeit(lease.stream)?;
			} else {
				released = T::Streams::release(lease.stream, None)?;
			}
			// Leaving early is a fault: it counts in full, however little the lease ran.
			T::Reputation::record(&lease.provider, &lease.buyer, Outcome::Objected, Permill::one());
			Outcome::Objected
		} else {
			released = T::Streams::release(lease.stream, None)?;
			let outcome = if objected { Outcome::Objected } else { verdict.outcome };
			// Weighted as the result would have been: an objection to a lease that delivered
			// little weighs little, so buyers cannot grief cheaply.
			T::Reputation::record(&lease.provider, &lease.buyer, outcome, verdict.weight);
			outcome
		};
		Self::deposit_event(Event::VerdictRecorded {
			lease: id,
			outcome,
			released,
			forfeited,
			slashed,
		});
		Ok(())
	}

	/// The one way a live lease ends, whoever ends it: its stream closes (the provider paid to
	/// this block, the rest of the escrow refunded; already done when the stream ended it) and
	/// its devices are released. A result, or the provider's served notice, then waits for the
	/// buyer's verdict (holdback withheld, collateral locked). Any other end settles at once:
	/// the collateral is unlocked, a fault is slashed (the buyer compensated, the reporter
	/// rewarded) and forfeits the holdback to the buyer, an end without fault (the buyer's
	/// close, a depleted stream) pays the holdback; the outcome is recorded, weighted by what
	/// the lease delivered. Stores the lease. Returns its devices and its stream's
	/// depositors: what it cost.
	pub(crate) fn finish(
		id: LeaseId,
		lease: &mut LeaseOf<T>,
		ending: Ending<'_, T::AccountId, BlockNumberFor<T>>,
	) -> Result<(u32, u32), DispatchError> {
		if let (Some(original), Ending::Result { commitment }) = (lease.verifies, &ending) {
			// A re-execution: its outputs decide the dispute, no verdict waits on them.
			return Self::finish_verification(id, lease, original, *commitment);
		}
		let verifier_fault = matches!(ending, Ending::Terminated { fault: Some(_), .. });
		let size = Self::size_of(lease);
		Self::close_stream(lease)?;
		let delivered = Self::delivered(lease);
		match ending {
			Ending::Result { commitment } => {
				let (status, outcome) = if commitment.succeeded() {
					(LeaseStatus::Completed, Outcome::Completed)
				} else {
					(LeaseStatus::Failed, Outcome::Failed)
				};
				let at_stake = Self::at_stake(lease, Some(commitment.exit_code));
				lease.result = Some(commitment);
				Self::end(id, lease, status);
				Leases::<T>::insert(id, &*lease);
				Self::deposit_event(Event::ResultSubmitted { lease: id, commitment, status });
				let until = Self::now().saturating_add(lease.verdict_window);
				Self::await_verdict(
					id,
					lease,
					outcome,
					delivered,
					at_stake,
					EndedBy::Result,
					until,
				)?;
			}
			Ending::Sealed { decided_by } => {
				// What the result is, nobody knows until it is revealed; the decision settles
				// it, never the buyer, so nothing is at stake on the buyer's word.
				Self::end(id, lease, LeaseStatus::Sealed);
				Leases::<T>::insert(id, &*lease);
				let outcome = Outcome::Completed;
				let (result, zero) = (EndedBy::Result, Zero::zero());
				Self::await_verdict(id, lease, outcome, delivered, zero, result, decided_by)?;
			}
			Ending::Terminated { reason: TerminationReason::ProviderNotice, fault: None } => {
				let at_stake = Self::at_stake(lease, None);
				let reason = TerminationReason::ProviderNotice;
				Self::end(id, lease, LeaseStatus::Terminated { reason });
				Leases::<T>::insert(id, &*lease);
				Self::deposit_event(Event::Terminated { lease: id, reason, slashed: Zero::zero() });
				let until = Self::now().saturating_add(lease.verdict_window);
				Self::await_verdict(
					id,
					lease,
					Outcome::Completed,
					delivered,
					at_stake,
					EndedBy::Notice,
					until,
				)?;
			}
			Ending::Terminated { reason, fault } => {
				Self::end(id, lease, LeaseStatus::Terminated { reason });
				T::Collateral::unlock_collateral(&lease.provider, lease.collateral);
				let slashed = match fault {
					Some((why, reporter)) => {
						let slashed = T::Slashing::slash(
							&lease.provider,
							lease.collateral,
							Some(&lease.buyer),
							reporter,
							why,
						);
						// No result: what was withheld for its periods returns to the buyer.
						T::Streams::forfeit(lease.stream)?;
						let outcome = if why == SlashReason::NoShow {
							Outcome::NoShow
						} else {
							Outcome::Slashed
						};
						// A fault counts in full, however little the lease ran.
						T::Reputation::record(
							&lease.provider,
							&lease.buyer,
							outcome,
							Permill::one(),
						);
						slashed
					}
					None => {
						// Ended by the buyer or by its escrow: what it ran for is owed in full.
						T::Streams::release(lease.stream, None)?;
						// No fault: a lease that ran counts as served, as far as it delivered
						// (one accepted, acknowledged and closed in a block counts nothing).
						if lease.started_at.is_some() {
							T::Reputation::record(
								&lease.provider,
								&lease.buyer,
								Outcome::Completed,
								delivered,
							);
						}
						Zero::zero()
					}
				};
				Leases::<T>::insert(id, &*lease);
				Self::deposit_event(Event::Terminated { lease: id, reason, slashed });
				if lease.replicas > 1 {
					// One replica fewer to wait for.
					Self::replicas_progress(lease.order, false)?;
				}
			}
		}
		if let (Some(original), true) = (lease.verifies, verifier_fault) {
			Self::after_verifier_fault(original);
		}
		Ok(size)
	}

	/// The leases' invariants: the live index holds exactly the live leases, each live lease's
	/// devices are committed to it, and every lease id is below the next.
	pub fn do_try_state() -> Result<(), TryRuntimeError> {
		let next = NextLeaseId::<T>::get();
		for (id, lease) in Leases::<T>::iter() {
			ensure!(id < next, "a lease id is not below NextLeaseId");
			let indexed = LiveLeases::<T>::contains_key(&lease.provider, id);
			ensure!(indexed == lease.status.is_live(), "the live index disagrees with a lease");
			if lease.status.is_live() {
				for device in &lease.devices {
					ensure!(
						T::Registry::committed_to(&lease.provider, device) == Some(id),
						"a live lease's device is not committed to it"
					);
				}
				ensure!(lease.ended_at.is_none(), "a live lease has an end");
			} else {
				ensure!(lease.ended_at.is_some(), "an ended lease has no end");
				ensure!(
					T::Streams::remaining(lease.stream).is_none(),
					"an ended lease's stream is open"
				);
			}
			if lease.status == LeaseStatus::AwaitingAck {
				ensure!(
					T::Streams::owed(lease.stream) == Some(Zero::zero()),
					"an unacknowledged lease is being charged"
				);
			}
		}
		for (provider, id, ()) in LiveLeases::<T>::iter() {
			let lease = Leases::<T>::get(id).ok_or("the live index names an unknown lease")?;
			ensure!(lease.provider == provider, "the live index files a lease under another");
		}
		let mut owed: alloc::collections::BTreeMap<T::AccountId, u32> = Default::default();
		for (id, verdict) in PendingVerdicts::<T>::iter() {
			let lease = Leases::<T>::get(id).ok_or("a verdict waits on an unknown lease")?;
			ensure!(!lease.status.is_live(), "a verdict waits on a live lease");
			ensure!(verdict.collateral == lease.collateral, "a verdict holds other collateral");
			ensure!(verdict.at_stake <= verdict.collateral, "a verdict stakes more than it holds");
			*owed.entry(lease.provider).or_default() += 1;
		}
		for (provider, count) in VerdictsOwed::<T>::iter() {
			ensure!(
				owed.remove(&provider) == Some(count),
				"a provider's count of pending verdicts is wrong"
			);
		}
		ensure!(owed.is_empty(), "a provider's pending verdicts are not counted");
		Self::dispute_try_state()?;
		Self::replica_try_state()?;
		for (id, lease) in Leases::<T>::iter() {
			if !lease.status.is_live() && !PendingVerdicts::<T>::contains_key(id) {
				ensure!(
					T::Streams::withheld(lease.stream).unwrap_or_default().is_zero(),
					"a settled lease's stream still withholds"
				);
			}
		}
		Ok(())
	}
}

impl<T: Config> Pallet<T> {
	/// The live leases of `provider`: what its worker must be running.
	pub fn leases_of(provider: &T::AccountId) -> alloc::vec::Vec<(LeaseId, LeaseOf<T>)> {
		LiveLeases::<T>::iter_key_prefix(provider)
			.filter_map(|id| Leases::<T>::get(id).map(|lease| (id, lease)))
			.collect()
	}

	/// The live leases `who` must serve, each with what is due next and by when. `who` is a
	/// provider (all its live leases) or one of its worker keys (the leases on its devices).
	pub fn duties_of(
		who: &T::AccountId,
	) -> alloc::vec::Vec<(LeaseId, LeaseOf<T>, NextDuty<BlockNumberFor<T>>)> {
		let Ok((provider, worker)) = T::Registry::acting_for(who) else {
			return alloc::vec::Vec::new();
		};
		Self::leases_of(&provider)
			.into_iter()
			.filter(|(_, lease)| {
				worker.is_none() || T::Registry::worker_for(&provider, &lease.devices) == worker
			})
			.map(|(id, lease)| {
				let duty = Self::next_duty(&lease);
				(id, lease, duty)
			})
			.collect()
	}

	/// What is due next on a live lease, from the same deadlines the calls check.
	pub fn next_duty(lease: &LeaseOf<T>) -> NextDuty<BlockNumberFor<T>> {
		match (lease.status, lease.ends_at) {
			(LeaseStatus::AwaitingAck, _) => NextDuty::Ack { by: lease.ack_by },
			(LeaseStatus::Running, Some(ends_at)) | (LeaseStatus::Suspended, Some(ends_at))
				if ends_at <= Self::now() =>
			{
				NextDuty::Result { ends_at, by: ends_at.saturating_add(lease.result_grace) }
			}
			(LeaseStatus::Suspended, _) => NextDuty::Suspended,
			(_, Some(ends_at)) => {
				NextDuty::Result { ends_at, by: ends_at.saturating_add(lease.result_grace) }
			}
			(_, None) => NextDuty::Checkpoint {
				sequence: lease.checkpoints.saturating_add(1),
				by: lease.last_report_at.saturating_add(lease.checkpoint_interval),
			},
		}
	}
}
