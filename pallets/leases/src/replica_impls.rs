//! Replicated orders: each replica seals its result (`commit_result`), reveals it once every
//! replica has ended (`reveal_result`), and the majority of the replicas decides who is paid.
//!
//! A seal is `stint_primitives::seal(commitment, provider, salt)`: a replica cannot read
//! another's result before the reveals (the salt hides it), and a seal copied from another
//! replica cannot be revealed by its copier (the seal names the provider). A replica that
//! commits and does not reveal, or reveals what the majority did not, is slashed as a false
//! result would be: its holdback back to the buyer, its bond restituting what it was paid, its
//! collateral slashed (half to the buyer).
//!
//! Its limit, as for any replication: replicas that agree on a false result (one party under
//! several accounts that are not tied by worker keys, or colluding parties) are the majority.

use crate::{
	lease_impls::Ending, BuyerRecords, Config, Error, Event, LeaseOf, LeaseStatus, Leases, Pallet,
	PendingVerdictOf, PendingVerdicts, Replica, ReplicaGroup, ReplicaGroupOf, ReplicaGroups,
	ReplicaStatus, ReplicaVerdict, WorkerSignature,
};
use alloc::vec::Vec;
use frame::{deps::sp_runtime::TryRuntimeError, prelude::*};
use stint_primitives::{LeaseId, Outcome, ReportKind, ResultCommitment, SlashReason};
use stint_traits::{OrderId, PaymentStreams, ReputationRecorder, Slashing, StreamId};

impl<T: Config> Pallet<T> {
	/// Files new lease `id` of a replicated order in its order's group, opening the group with
	/// its first replica: the last block any replica may commit in is fixed then (they are all
	/// created in one block).
	pub(crate) fn add_replica(id: LeaseId, lease: &LeaseOf<T>) -> DispatchResult {
		let reveals_from = lease
			.ack_by
			.saturating_add(lease.duration.unwrap_or_default())
			.saturating_add(lease.result_grace)
			.saturating_add(One::one());
		ReplicaGroups::<T>::try_mutate(lease.order, |group| {
			let group = group.get_or_insert_with(|| ReplicaGroup {
				replicas: Default::default(),
				reveals_from,
				reveal_until: reveals_from.saturating_add(T::RevealWindow::get()),
				status: ReplicaStatus::Open,
			});
			group
				.replicas
				.try_push(Replica { lease: id, seal: None })
				.map_err(|_| DispatchError::Other("more replicas than MAX_REPLICAS"))
		})
	}

	/// The group of replica `lease`.
	fn group_of(lease: &LeaseOf<T>) -> Result<ReplicaGroupOf<T>, DispatchError> {
		ensure!(lease.replicas > 1, Error::<T>::NotReplicated);
		ReplicaGroups::<T>::get(lease.order).ok_or_else(|| Error::<T>::NotReplicated.into())
	}

	/// Returns the lease's devices and its stream's depositors, which its weight depends on.
	pub(crate) fn do_commit_result(
		who: &T::AccountId,
		id: LeaseId,
		seal: [u8; 32],
	) -> Result<(u32, u32), DispatchError> {
		let mut lease = Self::running(id)?;
		Self::ensure_provider_or_its_worker(who, &lease)?;
		let mut group = Self::group_of(&lease)?;
		if let Some(ends_at) = lease.ends_at {
			let deadline = ends_at.saturating_add(lease.result_grace);
			ensure!(Self::now() <= deadline, Error::<T>::ResultTooLate);
		}
		let replica = group
			.replicas
			.iter_mut()
			.find(|replica| replica.lease == id)
			.ok_or(Error::<T>::NotReplicated)?;
		replica.seal = Some(seal);
		// The decision, not the buyer, settles the verdict: it waits for the last reveal.
		let decided_by = group.reveal_until;
		ReplicaGroups::<T>::insert(lease.order, group);
		let size = Self::finish(id, &mut lease, Ending::Sealed { decided_by })?;
		Self::deposit_event(Event::ResultSealed { lease: id, seal });
		Self::replicas_progress(lease.order, false)?;
		Ok(size)
	}

	/// Returns how many replicas it decided (none unless it was the last reveal).
	pub(crate) fn do_reveal_result(
		id: LeaseId,
		commitment: ResultCommitment,
		salt: [u8; 32],
		signature: WorkerSignature,
	) -> Result<u32, DispatchError> {
		let mut lease = Self::lease(id)?;
		let group = Self::group_of(&lease)?;
		ensure!(group.status == ReplicaStatus::Open, Error::<T>::AlreadyDecided);
		ensure!(lease.status == LeaseStatus::Sealed, Error::<T>::NotSealed);
		let now = Self::now();
		ensure!(now >= group.reveals_from, Error::<T>::RevealsNotOpen);
		ensure!(now <= group.reveal_until, Error::<T>::RevealTooLate);
		let seal = group
			.replicas
			.iter()
			.find(|replica| replica.lease == id)
			.and_then(|replica| replica.seal)
			.ok_or(Error::<T>::NotSealed)?;
		ensure!(
			stint_primitives::seal(&commitment, &lease.provider.encode(), &salt) == seal,
			Error::<T>::SealMismatch
		);
		ensure!(commitment.image_digest == lease.image_digest, Error::<T>::WrongImage);
		Self::verify(id, &lease, ReportKind::Final, &commitment, &signature)?;
		let (status, outcome) = if commitment.succeeded() {
			(LeaseStatus::Completed, Outcome::Completed)
		} else {
			(LeaseStatus::Failed, Outcome::Failed)
		};
		lease.status = status;
		lease.result = Some(commitment);
		Leases::<T>::insert(id, &lease);
		PendingVerdicts::<T>::mutate(id, |verdict| {
			if let Some(verdict) = verdict {
				verdict.outcome = outcome;
			}
		});
		Self::deposit_event(Event::ResultSubmitted { lease: id, commitment, status });
		Self::replicas_progress(lease.order, true)
	}

	pub(crate) fn do_decide_replicas(order: OrderId) -> Result<u32, DispatchError> {
		let group = ReplicaGroups::<T>::get(order).ok_or(Error::<T>::NotReplicated)?;
		ensure!(group.status == ReplicaStatus::Open, Error::<T>::AlreadyDecided);
		// Early only when no replica is left to reveal (the last ended without a result).
		let left = group.replicas.iter().any(|replica| {
			Leases::<T>::get(replica.lease)
				.is_none_or(|lease| lease.status.is_live() || lease.status == LeaseStatus::Sealed)
		});
		ensure!(Self::now() > group.reveal_until || !left, Error::<T>::RevealsOpen);
		Self::decide_group(order, group)
	}

	/// After a replica of `order` ended (sealed or not) or revealed: once every replica has
	/// ended the reveals open, and once none is left to reveal the replicas are decided, if
	/// `decide` (a reveal, weighed for it; any other call leaves the decision to
	/// `decide_replicas`). Returns how many replicas it decided.
	pub(crate) fn replicas_progress(order: OrderId, decide: bool) -> Result<u32, DispatchError> {
		let Some(mut group) = ReplicaGroups::<T>::get(order) else { return Ok(0) };
		if group.status != ReplicaStatus::Open {
			return Ok(0);
		}
		let statuses: Vec<LeaseStatus> = group
			.replicas
			.iter()
			.filter_map(|replica| Leases::<T>::get(replica.lease).map(|lease| lease.status))
			.collect();
		if statuses.iter().any(LeaseStatus::is_live) {
			return Ok(0);
		}
		let now = Self::now();
		if now < group.reveals_from {
			// Every replica ended before the last block to commit in: no need to wait for it.
			group.reveals_from = now;
			group.reveal_until = now.saturating_add(T::RevealWindow::get());
			ReplicaGroups::<T>::insert(order, &group);
			let reveal_until = group.reveal_until;
			Self::deposit_event(Event::RevealsOpened { order, reveal_until });
		}
		if !decide || statuses.contains(&LeaseStatus::Sealed) {
			return Ok(0);
		}
		Self::decide_group(order, group)
	}

	/// Decides the replicas of `order` by their revealed results (see `decide_replicas`).
	/// Returns how many replicas it decided.
	fn decide_group(order: OrderId, mut group: ReplicaGroupOf<T>) -> Result<u32, DispatchError> {
		let count = group.replicas.len() as u32;
		let replicas: Vec<(LeaseId, LeaseOf<T>)> = group
			.replicas
			.iter()
			.filter_map(|replica| Leases::<T>::get(replica.lease).map(|l| (replica.lease, l)))
			.collect();
		let revealed = |lease: &LeaseOf<T>| {
			matches!(lease.status, LeaseStatus::Completed | LeaseStatus::Failed)
				.then_some(lease.result)
				.flatten()
				.map(|result| (result.output_root, result.exit_code))
		};
		// More than half of all the replicas, not of those that revealed.
		let mut majority = None;
		for (_, lease) in &replicas {
			let Some(value) = revealed(lease) else { continue };
			let votes =
				replicas.iter().filter(|(_, other)| revealed(other) == Some(value)).count() as u32;
			if votes.saturating_mul(2) > count {
				majority = Some((value, votes));
				break;
			}
		}
		// One result alone, the other replicas having ended without one (closed by the buyer,
		// no-shows, unrevealed): nothing confirms it, and refunding it would let a buyer that
		// closes the other replicas have the work for free. It waits for the buyer's verdict,
		// disputes included, as the result of an order of one replica would: a sybil that
		// leaves its own replica unserved cannot have a false result paid unchecked.
		let lone: Vec<_> = replicas
			.iter()
			.filter_map(|(id, lease)| revealed(lease).map(|value| (*id, value)))
			.collect();
		let alone = match (lone.as_slice(), majority) {
			([(lease, value)], None) => Some((*lease, *value)),
			_ => None,
		};
		let verdict = match (majority, alone) {
			(Some(((output_root, exit_code), votes)), _) => {
				ReplicaVerdict::Majority { output_root, exit_code, votes }
			}
			(None, Some((lease, (output_root, exit_code)))) => {
				ReplicaVerdict::Alone { lease, output_root, exit_code }
			}
			(None, None) => ReplicaVerdict::NoMajority,
		};
		let now = Self::now();
		group.status = ReplicaStatus::Decided { at: now, verdict };
		ReplicaGroups::<T>::insert(order, &group);
		let (mut paid, mut slashed) = (0u32, 0u32);
		let mut buyer = None;
		for (id, lease) in &replicas {
			buyer = Some(lease.buyer.clone());
			// A replica that ended without committing was dealt with as it ended (a no-show,
			// a missed result), or will be when it is reported.
			let Some(mut pending) = PendingVerdicts::<T>::get(id) else { continue };
			match (revealed(lease), majority) {
				(Some(value), Some((agreed, _))) if value == agreed => {
					Self::settle_verdict(*id, lease, pending, false)?;
					paid.saturating_inc();
				}
				(Some(_), None) if alone.is_some() => {
					// The buyer has its verdict window from now, when it learns the result.
					pending.objections_until = now.saturating_add(lease.verdict_window);
					Self::deposit_event(Event::VerdictPending {
						lease: *id,
						outcome: pending.outcome,
						objections_until: pending.objections_until,
						holdback: T::Streams::withheld(lease.stream).unwrap_or_default(),
						at_stake: pending.at_stake,
					});
					PendingVerdicts::<T>::insert(id, pending);
				}
				(Some(_), None) => Self::refund_replica(*id, lease, &pending)?,
				(Some(_), Some(_)) => {
					Self::convict(*id, lease, &pending, None, SlashReason::OutvotedResult)?;
					slashed.saturating_inc();
				}
				_ => {
					Self::convict(*id, lease, &pending, None, SlashReason::Unrevealed)?;
					slashed.saturating_inc();
				}
			}
		}
		if let (ReplicaVerdict::NoMajority, Some(buyer)) = (verdict, buyer) {
			BuyerRecords::<T>::mutate(buyer, |record| record.no_majority.saturating_inc());
		}
		Self::deposit_event(Event::ReplicasDecided { order, verdict, paid, slashed });
		Ok(count)
	}

	/// Whether the buyer's verdict calls (`accept_result`, `object_to_result`, `dispute`,
	/// `confirm_result`) apply to `lease`: to any lease of an order of one replica, and to a
	/// replica only once its replicas were decided (then only a result revealed alone still
	/// waits for a verdict; every other replica's was settled by the decision).
	pub(crate) fn ensure_judgeable(lease: &LeaseOf<T>) -> DispatchResult {
		let decided = lease.replicas <= 1
			|| ReplicaGroups::<T>::get(lease.order)
				.is_some_and(|group| group.status != ReplicaStatus::Open);
		ensure!(decided, Error::<T>::Replicated);
		Ok(())
	}

	/// The providers of the other replicas of `lease`'s order (none for an order of one): never
	/// drawn to verify its result, since a sybil that left its own replica unserved would
	/// otherwise vouch for it.
	pub(crate) fn other_replicas(lease: &LeaseOf<T>) -> Vec<T::AccountId> {
		if lease.replicas <= 1 {
			return Vec::new();
		}
		let Some(group) = ReplicaGroups::<T>::get(lease.order) else { return Vec::new() };
		group
			.replicas
			.iter()
			.filter_map(|replica| Leases::<T>::get(replica.lease))
			.map(|other| other.provider)
			.filter(|provider| *provider != lease.provider)
			.collect()
	}

	/// A replica whose order found no majority: nobody can tell whether its result was true,
	/// so it keeps its collateral, but what the buyer paid it goes back (the holdback, and the
	/// rest from its bond), and its reputation records nothing.
	fn refund_replica(
		id: LeaseId,
		lease: &LeaseOf<T>,
		verdict: &PendingVerdictOf<T>,
	) -> DispatchResult {
		Self::clear_verdict(id, lease, verdict);
		T::Streams::forfeit(lease.stream)?;
		let paid = Self::net_paid(lease.stream, None);
		T::Slashing::restitute(&lease.provider, paid, &lease.buyer, SlashReason::NoMajority);
		Ok(())
	}

	/// What `stream` (and `also`, a dispute's bond) paid out: charged over its life, less what
	/// is still withheld.
	pub(crate) fn net_paid(stream: StreamId, also: Option<StreamId>) -> T::Balance {
		let one = |stream: StreamId| {
			T::Streams::paid(stream)
				.unwrap_or_default()
				.saturating_sub(T::Streams::withheld(stream).unwrap_or_default())
		};
		one(stream).saturating_add(also.map(one).unwrap_or_default())
	}

	/// Convicts the provider of `lease` of a false (or hidden) result: the verdict is cleared,
	/// the holdback returned to the buyer, the provider's bond restitutes what the lease (and
	/// `also`, the verifier's stream of a dispute) paid, and its collateral is slashed, half
	/// to the buyer; a full `Slashed` outcome is recorded. Returns what was returned to the
	/// buyer from the holdback and the bond, and what was slashed besides.
	pub(crate) fn convict(
		id: LeaseId,
		lease: &LeaseOf<T>,
		verdict: &PendingVerdictOf<T>,
		also: Option<StreamId>,
		reason: SlashReason,
	) -> Result<(T::Balance, T::Balance), DispatchError> {
		Self::clear_verdict(id, lease, verdict);
		let forfeited = T::Streams::forfeit(lease.stream)?;
		let owed = Self::net_paid(lease.stream, also);
		let restituted = T::Slashing::restitute(&lease.provider, owed, &lease.buyer, reason);
		let slashed = T::Slashing::slash(
			&lease.provider,
			verdict.collateral,
			Some(&lease.buyer),
			None,
			reason,
		);
		T::Reputation::record(&lease.provider, &lease.buyer, Outcome::Slashed, Permill::one());
		Self::deposit_event(Event::VerdictRecorded {
			lease: id,
			outcome: Outcome::Slashed,
			released: Zero::zero(),
			forfeited,
			slashed,
		});
		Ok((forfeited.saturating_add(restituted), slashed))
	}

	/// The block `lease`'s replicas were decided in, once every one of them has ended: when
	/// its order may be pruned.
	pub(crate) fn replicas_ended_at(lease: &LeaseOf<T>) -> Option<BlockNumberFor<T>> {
		let group = ReplicaGroups::<T>::get(lease.order)?;
		let ReplicaStatus::Decided { at, .. } = group.status else { return None };
		let mut last = at;
		for replica in &group.replicas {
			let ended = Leases::<T>::get(replica.lease).and_then(|lease| lease.ended_at)?;
			last = last.max(ended);
		}
		Some(last)
	}

	/// Prunes the decided replicas of `lease`'s order and their streams. A result revealed
	/// alone whose window passed unjudged counts as it said first, as any result would.
	pub(crate) fn reap_replicas(lease: &LeaseOf<T>) -> DispatchResult {
		let group = ReplicaGroups::<T>::get(lease.order).ok_or(Error::<T>::NotReplicated)?;
		ensure!(group.status != ReplicaStatus::Open, Error::<T>::RevealsOpen);
		let mut leases = Vec::new();
		for replica in &group.replicas {
			let Some(lease) = Leases::<T>::get(replica.lease) else { continue };
			ensure!(!lease.status.is_live(), Error::<T>::LeaseLive);
			Self::ensure_undisputed(replica.lease)?;
			let pending = PendingVerdicts::<T>::get(replica.lease);
			if let Some(verdict) = &pending {
				ensure!(Self::now() > verdict.objections_until, Error::<T>::ObjectionWindowOpen);
			}
			leases.push((replica.lease, lease, pending));
		}
		for (id, lease, pending) in leases {
			if let Some(verdict) = pending {
				Self::settle_verdict(id, &lease, verdict, false)?;
			}
			Self::reap_dispute(id)?;
			Leases::<T>::remove(id);
			T::Streams::reap(lease.stream)?;
			Self::deposit_event(Event::Reaped { lease: id });
		}
		ReplicaGroups::<T>::remove(lease.order);
		Ok(())
	}

	/// The replicas' invariants: every replica of a group is a lease of its order that knows it
	/// is one of that many, a sealed replica committed a seal and waits for the decision, and a
	/// decided group has no verdict left pending.
	pub(crate) fn replica_try_state() -> Result<(), TryRuntimeError> {
		for (order, group) in ReplicaGroups::<T>::iter() {
			let count = group.replicas.len() as u32;
			ensure!(count > 1, "a replica group of one");
			for replica in &group.replicas {
				let lease = Leases::<T>::get(replica.lease).ok_or("a replica is missing")?;
				ensure!(lease.order == order, "a replica of another order");
				ensure!(lease.replicas == count, "a replica counts other replicas");
				if lease.status == LeaseStatus::Sealed {
					ensure!(replica.seal.is_some(), "a sealed replica committed no seal");
				}
				if lease.status.is_live() {
					ensure!(replica.seal.is_none(), "a live replica committed");
				}
				let pending = PendingVerdicts::<T>::contains_key(replica.lease);
				match group.status {
					ReplicaStatus::Open => ensure!(
						pending == replica.seal.is_some(),
						"a committed replica's verdict is not pending"
					),
					// Only a result revealed alone waits, for the buyer's verdict.
					ReplicaStatus::Decided { verdict, .. } => ensure!(
						!pending || verdict_alone(&verdict) == Some(replica.lease),
						"a decided replica's verdict is pending"
					),
				}
			}
		}
		for (id, lease) in Leases::<T>::iter() {
			if lease.replicas > 1 {
				let group =
					ReplicaGroups::<T>::get(lease.order).ok_or("a replica without group")?;
				ensure!(
					group.replicas.iter().any(|replica| replica.lease == id),
					"a group does not list its replica"
				);
			}
		}
		Ok(())
	}
}

/// The replica whose result was revealed alone, if `verdict` says one was.
fn verdict_alone(verdict: &ReplicaVerdict) -> Option<LeaseId> {
	match verdict {
		ReplicaVerdict::Alone { lease, .. } => Some(*lease),
		_ => None,
	}
}
