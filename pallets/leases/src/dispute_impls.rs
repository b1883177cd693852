//! Disputes: the buyer's bond, the verifier's draw, the verification lease, and the decision
//! its result makes.
//!
//! A verifier is drawn `DrawDelay` blocks after the dispute (or after a draw that found none,
//! or a verifier that did not deliver), seeded by the hash of the block before the draw's:
//! nobody knows it when the dispute is opened. Its limit: the author of that block could try
//! several blocks and keep the one whose hash draws a verifier it likes; an author is one
//! validator in a slot, and what it can choose from is the eligible providers, none of them
//! the disputed provider, its worker keys or the buyer.

use crate::{
	BuyerRecords, Config, Dispute, DisputeOf, DisputeStatus, Disputes, DrawCursor, DrawPages,
	Draws, Error, Event, LeaseOf, LeaseStatus, Leases, NextLeaseId, Pallet, PendingVerdicts,
	WeightInfo, MAX_DISPUTE_DRAWS,
};
use frame::{deps::frame_support::storage::with_storage_layer, prelude::*};
use stint_primitives::{fault_of, Fault, LeaseId, Outcome, ResultCommitment, SlashReason};
use stint_traits::{
	buckets, NewLease, OrderRequirements, PaymentStreams, ProviderCollateral, ProviderRegistry,
	ReputationRecorder,
};

/// The draw queue: [`Draws`], its page counts and its cursor.
pub struct DrawQueue<T>(core::marker::PhantomData<T>);

impl<T: Config> buckets::Queue for DrawQueue<T> {
	type Block = BlockNumberFor<T>;
	type Id = LeaseId;
	type PerBlock = T::MaxDrawsPerBlock;
	type Pages = Draws<T>;
	type PageCounts = DrawPages<T>;
	type Cursor = DrawCursor<T>;
}

impl<T: Config> Pallet<T> {
	/// What a dispute of `lease` bonds: the lease's price for twice the blocks it ran (the
	/// verifier's time, with room for slower GPUs), at least `DisputeBond`.
	pub fn dispute_bond(lease: &LeaseOf<T>) -> T::Balance {
		let blocks: u128 = Self::verification_blocks(lease).saturated_into();
		lease.price_per_block.saturating_mul(blocks.saturated_into()).max(T::DisputeBond::get())
	}

	/// The duration of a verification lease of `lease`: twice the blocks it ran, at least one.
	fn verification_blocks(lease: &LeaseOf<T>) -> BlockNumberFor<T> {
		let ran = match (lease.started_at, lease.ended_at) {
			(Some(start), Some(end)) => end.saturating_sub(start),
			_ => Zero::zero(),
		};
		ran.saturating_mul(2u32.into()).max(One::one())
	}

	pub(crate) fn do_dispute(who: &T::AccountId, id: LeaseId) -> DispatchResult {
		let lease = Self::lease(id)?;
		ensure!(&lease.buyer == who, Error::<T>::NotBuyer);
		ensure!(!Disputes::<T>::contains_key(id), Error::<T>::AlreadyDisputed);
		let verdict = PendingVerdicts::<T>::get(id).ok_or(Error::<T>::NoPendingVerdict)?;
		let now = Self::now();
		ensure!(now <= verdict.objections_until, Error::<T>::ObjectionWindowClosed);
		ensure!(lease.deterministic, Error::<T>::NotDeterministic);
		Self::ensure_judgeable(&lease)?;
		ensure!(lease.result.is_some(), Error::<T>::NoResultToDispute);
		ensure!(verdict.ended_by == crate::EndedBy::Result, Error::<T>::NoResultToDispute);
		let bond = Self::dispute_bond(&lease);
		let stream = Self::hold_bond(&lease, id, bond)?;
		let mut dispute = Dispute {
			bond,
			stream,
			opened_at: now,
			draws: 0,
			status: DisputeStatus::Drawing { at: now },
			slot: None,
			verifiers: Default::default(),
		};
		let draw_at = Self::schedule_draw(id, &mut dispute);
		Disputes::<T>::insert(id, dispute);
		BuyerRecords::<T>::mutate(who, |record| record.disputes.saturating_inc());
		Self::deposit_event(Event::Disputed { lease: id, bond, draw_at });
		Ok(())
	}

	/// Holds `bond` of the buyer's balance in a pending stream that will pay the verifier of
	/// `id` at the lease's price, for the verification lease's duration at most.
	fn hold_bond(
		lease: &LeaseOf<T>,
		id: LeaseId,
		bond: T::Balance,
	) -> Result<stint_traits::StreamId, DispatchError> {
		let blocks: u128 = Self::verification_blocks(lease).saturated_into();
		let cap = lease.price_per_block.saturating_mul(blocks.saturated_into()).min(bond);
		T::Streams::open(
			&lease.buyer,
			&lease.buyer,
			lease.price_per_block,
			bond,
			id,
			Some(cap),
			Permill::zero(),
		)
		.map_err(|_| Error::<T>::BondUnavailable.into())
	}

	/// Queues the dispute's next draw `DrawDelay` blocks from now. Returns its block.
	fn schedule_draw(id: LeaseId, dispute: &mut DisputeOf<T>) -> BlockNumberFor<T> {
		let now = Self::now();
		let at = now.saturating_add(T::DrawDelay::get().max(One::one()));
		dispute.status = DisputeStatus::Drawing { at };
		dispute.slot =
			Some(buckets::schedule::<DrawQueue<T>>(id, at, now.saturating_add(One::one())));
		at
	}

	/// The block hook: draws the verifier of every dispute due now (and of a share of the
	/// overflow), each on its own storage layer so that one failing voids only itself.
	pub(crate) fn draw_due(now: BlockNumberFor<T>) -> Weight {
		let (due, read) = buckets::take_due::<DrawQueue<T>>(now);
		let taken = due.len() as u32;
		let mut draws = 0u32;
		for (id, slot) in due {
			let Some(mut dispute) = Disputes::<T>::get(id) else { continue };
			if dispute.slot != Some(slot) {
				continue;
			}
			dispute.slot = None;
			// The queue hands nothing over before its block.
			if !matches!(dispute.status, DisputeStatus::Drawing { .. }) {
				continue;
			}
			draws.saturating_inc();
			if let Err(error) = with_storage_layer(|| Self::draw(id, dispute)) {
				frame::log::error!(target: "runtime::leases", "dispute of {id}: {error:?}");
				if let Some(dispute) = Disputes::<T>::get(id) {
					let _ = with_storage_layer(|| Self::void(id, dispute));
				}
			}
		}
		T::WeightInfo::on_initialize(taken)
			.saturating_add(T::DbWeight::get().reads_writes(read.into(), read.into()))
			.saturating_add(Self::draw_weight().saturating_mul(draws.into()))
	}

	/// What one draw may cost, at most: reading `MaxDrawScan` providers (each record and its
	/// worker index, the devices' commitments: four reads), then what a dispute costs (a
	/// stream redirected, a lease stored, a queue entry) twice over for the collateral and
	/// the devices committed.
	pub fn draw_weight() -> Weight {
		let scan = u64::from(T::MaxDrawScan::get());
		T::DbWeight::get()
			.reads_writes(scan.saturating_mul(4), 4)
			.saturating_add(Weight::from_parts(scan.saturating_mul(25_000_000), scan * 9_000))
			.saturating_add(T::WeightInfo::dispute().saturating_mul(2))
	}

	/// Draws the verifier of the dispute of `id` from the parent block's hash and starts its
	/// verification lease; with none to be found, tries again later, or voids the dispute
	/// after its last draw.
	fn draw(id: LeaseId, mut dispute: DisputeOf<T>) -> DispatchResult {
		let lease = Self::lease(id)?;
		dispute.draws.saturating_inc();
		let seed = frame::hashing::blake2_256(
			&(frame_system::Pallet::<T>::parent_hash(), id, dispute.draws).encode(),
		);
		let requirements = T::Orders::requirements(lease.order);
		// Neither party, nor a verifier that already failed this dispute.
		let mut exclude = alloc::vec![lease.provider.clone(), lease.buyer.clone()];
		// Nor the providers of the order's other replicas (a result revealed alone).
		exclude.extend(Self::other_replicas(&lease));
		for earlier in &dispute.verifiers {
			if let Some(verification) = Leases::<T>::get(earlier) {
				exclude.push(verification.provider);
			}
		}
		let collateral = lease.collateral;
		let accept = |who: &T::AccountId| T::Collateral::free_bond(who) >= collateral;
		let drawn = requirements.and_then(|requirements| {
			T::Registry::draw(&requirements, seed, &exclude, T::MaxDrawScan::get(), &accept)
		});
		let Some((verifier, devices)) = drawn else {
			if dispute.draws >= MAX_DISPUTE_DRAWS {
				return Self::void(id, dispute);
			}
			let draw_at = Self::schedule_draw(id, &mut dispute);
			Disputes::<T>::insert(id, dispute);
			Self::deposit_event(Event::Redraw { lease: id, draw_at });
			return Ok(());
		};
		let verification = NextLeaseId::<T>::get();
		T::Collateral::lock_collateral(&verifier, collateral)?;
		T::Registry::commit_devices(&verifier, &devices, verification)?;
		T::Streams::redirect(dispute.stream, &verifier, verification)?;
		let devices = devices.try_into().map_err(|_| Error::<T>::TooManyDevices)?;
		dispute
			.verifiers
			.try_push(verification)
			.map_err(|_| DispatchError::Other("more verifiers than draws"))?;
		dispute.status = DisputeStatus::Verifying { lease: verification };
		let stream = dispute.stream;
		Disputes::<T>::insert(id, dispute);
		// The same job on the verifier's devices at the same price, for twice the time the
		// disputed lease ran; paid from the bond, judged by its outputs, not by a verdict.
		let duration = Self::verification_blocks(&lease);
		let verifying = NewLease {
			order: lease.order,
			buyer: lease.buyer,
			provider: verifier.clone(),
			devices: Default::default(),
			price_per_block: lease.price_per_block,
			escrow: Zero::zero(),
			duration: Some(duration),
			collateral,
			termination_notice: Zero::zero(),
			image_digest: lease.image_digest,
			holdback: Permill::zero(),
			verdict_window: lease.verdict_window,
			deterministic: true,
			replicas: 1,
		};
		Self::store_new(verification, verifying, devices, stream, Some(id));
		Self::deposit_event(Event::VerifierDrawn { lease: id, verification, verifier });
		Ok(())
	}

	/// The verifier of the dispute of `id` did not deliver (it was slashed as any provider
	/// would be), or could not run the job (its image or inputs could not be had): the bond's
	/// escrow came back to the buyer; it is held again and another verifier drawn, or the
	/// dispute is void after its last draw or if the buyer can no longer hold the bond.
	pub(crate) fn verifier_failed(id: LeaseId) -> DispatchResult {
		let Some(mut dispute) = Disputes::<T>::get(id) else { return Ok(()) };
		if !dispute.is_open() {
			return Ok(());
		}
		let lease = Self::lease(id)?;
		if dispute.draws >= MAX_DISPUTE_DRAWS {
			return Self::void(id, dispute);
		}
		match Self::hold_bond(&lease, id, dispute.bond) {
			Ok(stream) => dispute.stream = stream,
			Err(_) => return Self::void(id, dispute),
		}
		let draw_at = Self::schedule_draw(id, &mut dispute);
		Disputes::<T>::insert(id, dispute);
		Self::deposit_event(Event::Redraw { lease: id, draw_at });
		Ok(())
	}

	/// No verifier delivered: the bond still held is refunded and the result stands, as if
	/// nobody had disputed it (the verdict is settled now).
	fn void(id: LeaseId, mut dispute: DisputeOf<T>) -> DispatchResult {
		if let Some(slot) = dispute.slot.take() {
			buckets::unschedule::<DrawQueue<T>>(&id, slot);
		}
		if T::Streams::remaining(dispute.stream).is_some() {
			T::Streams::close(dispute.stream)?;
		}
		dispute.status = DisputeStatus::Void;
		Disputes::<T>::insert(id, dispute);
		let lease = Self::lease(id)?;
		if let Some(verdict) = PendingVerdicts::<T>::get(id) {
			Self::settle_verdict(id, &lease, verdict, false)?;
		}
		Self::deposit_event(Event::DisputeVoid { lease: id });
		Ok(())
	}

	/// A verification lease `vid` of disputed lease `original` ended by its result: the
	/// verifier is paid for its time and its collateral unlocked, and its outputs (root and
	/// exit code) decide the dispute. A result that blames the order (its image or inputs
	/// could not be had) decides nothing: another verifier is drawn. Returns the lease's
	/// devices and depositors (what it cost).
	pub(crate) fn finish_verification(
		vid: LeaseId,
		verifying: &mut LeaseOf<T>,
		original: LeaseId,
		commitment: ResultCommitment,
	) -> Result<(u32, u32), DispatchError> {
		let size = Self::size_of(verifying);
		let lease = Self::lease(original)?;
		let claimed = lease.result.ok_or(Error::<T>::NoResultToDispute)?;
		let inconclusive = fault_of(commitment.exit_code) == Some(Fault::Order);
		let upheld = !inconclusive
			&& claimed.output_root == commitment.output_root
			&& claimed.exit_code == commitment.exit_code;
		// The bond's remainder goes to the provider whose result stood, else back to the buyer.
		let mut remainder = Zero::zero();
		if T::Streams::remaining(verifying.stream).is_some() {
			remainder = if upheld {
				T::Streams::close_to(verifying.stream, &lease.provider)?.1
			} else {
				T::Streams::close(verifying.stream)?.1
			};
		}
		let delivered = Self::delivered(verifying);
		let status =
			if commitment.succeeded() { LeaseStatus::Completed } else { LeaseStatus::Failed };
		verifying.result = Some(commitment);
		Self::end(vid, verifying, status);
		T::Collateral::unlock_collateral(&verifying.provider, verifying.collateral);
		// A verifier that ran the job served a lease, whatever its outputs say.
		T::Reputation::record(&verifying.provider, &verifying.buyer, Outcome::Completed, delivered);
		Leases::<T>::insert(vid, &*verifying);
		Self::deposit_event(Event::ResultSubmitted { lease: vid, commitment, status });
		if inconclusive {
			Self::verifier_failed(original)?;
		} else {
			Self::decide(original, &lease, vid, upheld, remainder)?;
		}
		Ok(size)
	}

	/// Decides the dispute of `id`. Upheld: the verdict settles as accepted (the holdback
	/// paid, the collateral unlocked, the outcome counted) and the buyer's record counts a
	/// lost dispute. Overturned: the holdback returns to the buyer; the provider's bond
	/// restitutes what the lease and the verifier were paid, and its collateral is slashed
	/// (the buyer's share to it); a false result counts in full against its reputation.
	fn decide(
		id: LeaseId,
		lease: &LeaseOf<T>,
		verification: LeaseId,
		upheld: bool,
		remainder: T::Balance,
	) -> DispatchResult {
		let mut dispute = Disputes::<T>::get(id).ok_or(Error::<T>::NoPendingVerdict)?;
		let verdict = PendingVerdicts::<T>::get(id).ok_or(Error::<T>::NoPendingVerdict)?;
		dispute.status = if upheld { DisputeStatus::Upheld } else { DisputeStatus::Overturned };
		let stream = dispute.stream;
		Disputes::<T>::insert(id, dispute);
		if upheld {
			BuyerRecords::<T>::mutate(&lease.buyer, |r| r.disputes_lost.saturating_inc());
			Self::settle_verdict(id, lease, verdict, false)?;
			Self::deposit_event(Event::DisputeDecided {
				lease: id,
				verification,
				upheld,
				to_provider: remainder,
				restituted: Zero::zero(),
				slashed: Zero::zero(),
			});
			return Ok(());
		}
		// A dispute the buyer won proves the provider wrong: it is no objection of the kind
		// providers read the record for (spite), and must not make honest buyers look like it.
		BuyerRecords::<T>::mutate(&lease.buyer, |record| record.verdicts.saturating_inc());
		let (restituted, slashed) =
			Self::convict(id, lease, &verdict, Some(stream), SlashReason::FalseResult)?;
		Self::deposit_event(Event::DisputeDecided {
			lease: id,
			verification,
			upheld,
			to_provider: Zero::zero(),
			restituted,
			slashed,
		});
		Ok(())
	}

	/// Refuses to settle `id`'s verdict any other way while a dispute of it is open.
	pub(crate) fn ensure_undisputed(id: LeaseId) -> DispatchResult {
		ensure!(
			!Disputes::<T>::get(id).is_some_and(|dispute| dispute.is_open()),
			Error::<T>::DisputeOpen
		);
		Ok(())
	}

	/// Prunes the decided dispute of `id`, its verification leases and the streams of both.
	pub(crate) fn reap_dispute(id: LeaseId) -> DispatchResult {
		let Some(dispute) = Disputes::<T>::take(id) else { return Ok(()) };
		ensure!(!dispute.is_open(), Error::<T>::DisputeOpen);
		let mut streams = alloc::vec![dispute.stream];
		for verification in &dispute.verifiers {
			if let Some(lease) = Leases::<T>::take(verification) {
				streams.push(lease.stream);
				Self::deposit_event(Event::Reaped { lease: *verification });
			}
		}
		streams.sort();
		streams.dedup();
		for stream in streams {
			T::Streams::reap(stream)?;
		}
		Ok(())
	}

	/// The dispute invariants: an open dispute waits on a pending verdict and either in the
	/// draw queue or on a live verification lease of its own; every verification lease names
	/// a dispute that lists it.
	pub(crate) fn dispute_try_state() -> Result<(), frame::deps::sp_runtime::TryRuntimeError> {
		for (id, dispute) in Disputes::<T>::iter() {
			ensure!(Leases::<T>::contains_key(id), "a dispute of an unknown lease");
			ensure!(dispute.draws <= MAX_DISPUTE_DRAWS, "a dispute drew too often");
			match dispute.status {
				DisputeStatus::Drawing { .. } => {
					ensure!(PendingVerdicts::<T>::contains_key(id), "a dispute without a verdict");
					let slot = dispute.slot.ok_or("a drawing dispute is not queued")?;
					ensure!(
						buckets::holds::<DrawQueue<T>>(&id, slot),
						"a dispute is not where its slot says"
					);
					ensure!(
						T::Streams::remaining(dispute.stream) == Some(dispute.bond),
						"a drawing dispute does not hold its bond"
					);
				}
				DisputeStatus::Verifying { lease } => {
					ensure!(PendingVerdicts::<T>::contains_key(id), "a dispute without a verdict");
					ensure!(dispute.slot.is_none(), "a verifying dispute is queued");
					let verifying = Leases::<T>::get(lease).ok_or("an unknown verifier")?;
					ensure!(verifying.status.is_live(), "a verifying dispute's lease ended");
					ensure!(verifying.stream == dispute.stream, "a verifier paid from elsewhere");
				}
				_ => {
					ensure!(dispute.slot.is_none(), "a decided dispute is queued");
					ensure!(
						T::Streams::remaining(dispute.stream).is_none(),
						"a decided dispute still holds its bond"
					);
				}
			}
			for verification in &dispute.verifiers {
				let lease = Leases::<T>::get(verification).ok_or("a verifier lease is missing")?;
				ensure!(lease.verifies == Some(id), "a verifier lease verifies another");
			}
		}
		for (id, lease) in Leases::<T>::iter() {
			if let Some(original) = lease.verifies {
				let dispute = Disputes::<T>::get(original).ok_or("a verifier without dispute")?;
				ensure!(dispute.verifiers.contains(&id), "a dispute does not list its verifier");
			}
		}
		for (id, slot) in buckets::all::<DrawQueue<T>>()? {
			let dispute = Disputes::<T>::get(id).ok_or("a draw of an unknown dispute")?;
			ensure!(dispute.slot == Some(slot), "a draw queued elsewhere than its dispute says");
		}
		Ok(())
	}
}

impl<T: Config> Pallet<T> {
	/// Takes a verdict out of the pending ones without settling it: the decision of a dispute
	/// does. The collateral it held is unlocked (a slash may follow).
	pub(crate) fn clear_verdict(
		id: LeaseId,
		lease: &LeaseOf<T>,
		verdict: &crate::PendingVerdictOf<T>,
	) {
		PendingVerdicts::<T>::remove(id);
		crate::VerdictsOwed::<T>::mutate_exists(&lease.provider, |n| {
			*n = n.map(|n| n.saturating_sub(1)).filter(|n| *n > 0)
		});
		T::Collateral::unlock_collateral(&lease.provider, verdict.collateral);
	}

	/// A verification lease of `original` ended by its verifier's fault (a no-show, a missed
	/// result): draw another verifier, or void the dispute if that cannot be done.
	pub(crate) fn after_verifier_fault(original: LeaseId) {
		if let Err(error) = with_storage_layer(|| Self::verifier_failed(original)) {
			frame::log::error!(target: "runtime::leases", "dispute of {original}: {error:?}");
			if let Some(dispute) = Disputes::<T>::get(original) {
				let _ = with_storage_layer(|| Self::void(original, dispute));
			}
		}
	}
}
