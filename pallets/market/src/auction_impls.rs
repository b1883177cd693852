//! The auction: accepting a bid (by the buyer or at the close of the window), expiry, the
//! bounded block hook, and the market's invariants.

use crate::{
	asset, BalanceOf, BidOf, Bidders, Bids, Config, DeadlineCursor, DeadlinePages, Deadlines,
	Error, Event, NextOrderId, OpenOrders, OrderId, OrderOf, OrderStatus, Orders, Pallet,
	Rejections, WeightInfo, MAX_AUTO_ACCEPT_ATTEMPTS,
};
use alloc::{collections::BTreeMap, vec::Vec};
use frame::{
	deps::{frame_support::storage::with_storage_layer, sp_runtime::TryRuntimeError},
	prelude::*,
};
use stint_primitives::{image_digest, LeaseId};
use stint_traits::{
	buckets::{self, Slot},
	LeaseFactory, NewLease, ProviderCollateral, ProviderRegistry, StandingBids,
};

/// The market's deadline queue: [`Deadlines`], its page counts and its cursor.
pub struct DeadlineQueue<T>(core::marker::PhantomData<T>);

impl<T: Config> buckets::Queue for DeadlineQueue<T> {
	type Block = BlockNumberFor<T>;
	type Id = OrderId;
	type PerBlock = T::MaxDeadlinesPerBlock;
	type Pages = Deadlines<T>;
	type PageCounts = DeadlinePages<T>;
	type Cursor = DeadlineCursor<T>;
}

impl<T: Config> Pallet<T> {
	/// Handles the orders whose deadline has come, in the order they fell due, as many as a
	/// block's hook may: the close of a bid window (auto-accept, or expiry when nobody bid) or
	/// the end of a buyer's time to accept (expiry). What a busy block leaves waits for the next
	/// one; anyone may close such an order at once with `close_order`.
	pub(crate) fn process_deadlines(now: BlockNumberFor<T>) -> Weight {
		let (due, read) = buckets::take_due::<DeadlineQueue<T>>(now);
		// The hook is weighed for `budget` orders of one lease each. A replicated order's
		// further leases count against that budget, one each (each costs less than an order:
		// see `replica_weight`), so the orders it leaves no room for wait a block; replicated
		// orders go first, and one alone in a block is always taken, whatever its replicas.
		let budget = buckets::max_due_per_block::<DeadlineQueue<T>>();
		let mut due: Vec<(OrderId, Slot<BlockNumberFor<T>>, u32)> = due
			.into_iter()
			.map(|(id, slot)| {
				let replicas = Orders::<T>::get(id).map_or(1, |order| order.terms.replicas.max(1));
				(id, slot, replicas)
			})
			.collect();
		due.sort_by_key(|(_, _, replicas)| core::cmp::Reverse(*replicas));
		let (mut used, mut processed, mut deferred, mut extra) = (0u32, 0u32, 0u32, 0u32);
		for (id, slot, replicas) in due {
			if used > 0 && used.saturating_add(replicas) > budget {
				Self::requeue(id, slot);
				deferred.saturating_inc();
				continue;
			}
			used.saturating_accrue(replicas);
			processed.saturating_inc();
			// Each order on its own: one that cannot be processed does not stop the others.
			match with_storage_layer(|| Self::on_deadline(id, slot, now)) {
				Ok(leases) => extra.saturating_accrue(leases),
				Err(error) => {
					frame::log::error!(target: "runtime::market", "order {id} at {now:?}: {error:?}");
					Self::requeue(id, slot);
				}
			}
		}
		T::WeightInfo::on_initialize(processed)
			.saturating_add(Self::replica_weight(extra))
			.saturating_add(T::DbWeight::get().reads_writes(read.into(), read.into()))
			.saturating_add(T::DbWeight::get().reads_writes(3, 3).saturating_mul(deferred.into()))
	}

	/// What closing one order may cost, at most, and what it cost when it created `leases`
	/// leases beyond the first: as the hook weighs an order.
	pub fn close_weight(leases: Option<u32>) -> Weight {
		let replicas = T::MaxReplicas::get().saturating_sub(1);
		T::WeightInfo::on_initialize(1)
			.saturating_add(Self::replica_weight(leases.unwrap_or(replicas).min(replicas)))
	}

	/// Closes open order `id` whose deadline has come but which the block hook has not reached,
	/// as the hook would. Returns how many leases beyond one it created.
	pub(crate) fn do_close_order(id: OrderId) -> Result<u32, DispatchError> {
		let order = Orders::<T>::get(id).ok_or(Error::<T>::UnknownOrder)?;
		ensure!(order.status == OrderStatus::Open, Error::<T>::OrderNotOpen);
		let now = frame_system::Pallet::<T>::block_number();
		let slot = order.deadline.filter(|slot| slot.block <= now).ok_or(Error::<T>::NotDue)?;
		buckets::unschedule::<DeadlineQueue<T>>(&id, slot);
		Self::on_deadline(id, slot, now)
	}

	/// What `replicas` leases cost beyond the one per order the hook's benchmark creates: each
	/// is weighed as an acceptance of a bid on an order with no other (its bid checked, its
	/// devices committed, its stream opened; the order's own work is counted once already).
	pub fn replica_weight(replicas: u32) -> Weight {
		T::WeightInfo::accept_bid(1).saturating_mul(replicas.into())
	}

	/// Puts an order the hook took but did not handle back in the queue, where the hook goes on
	/// from, so it is neither forgotten nor put behind what falls due later.
	fn requeue(id: OrderId, slot: Slot<BlockNumberFor<T>>) {
		let Some(mut order) = Orders::<T>::get(id) else { return };
		if order.status != OrderStatus::Open || order.deadline != Some(slot) {
			return;
		}
		let now = frame_system::Pallet::<T>::block_number();
		order.deadline = Some(buckets::requeue::<DeadlineQueue<T>>(id, now));
		Orders::<T>::insert(id, order);
	}

	/// Returns how many leases beyond one per acceptance attempt it created (the replicas of a
	/// replicated order), which the benchmark does not weigh.
	fn on_deadline(
		id: OrderId,
		slot: Slot<BlockNumberFor<T>>,
		now: BlockNumberFor<T>,
	) -> Result<u32, DispatchError> {
		let Some(mut order) = Orders::<T>::get(id) else { return Ok(0) };
		if order.deadline != Some(slot) || order.status != OrderStatus::Open {
			// Moved or ended since it was queued here.
			return Ok(0);
		}
		order.deadline = None;
		if now < order.bids_close_at {
			// Never handed over before its block; should it be, it waits for the close.
			let close = order.bids_close_at;
			Self::schedule(id, &mut order, close);
			Orders::<T>::insert(id, order);
			return Ok(0);
		}
		let accept_until = order.bids_close_at.saturating_add(T::AcceptPeriod::get());
		// Bids their providers can no longer honour go first, cheaply and at their providers'
		// cost: they must not use up the attempts and leave the honest bids untried, nor keep a
		// manual order's slots from bidders its buyer could accept, nor be paid for their time
		// when it expires.
		let dropped = Self::drop_dead_bids(id, &mut order)?;
		if order.bid_count == 0 || now >= accept_until {
			let (refunded, compensated) = Self::unwind(id, order)?;
			Self::deposit_event(Event::OrderExpired { order: id, refunded, compensated });
			return Ok(0);
		}
		if !order.terms.auto_accept {
			// The buyer chooses: it has until `accept_until`.
			Self::schedule(id, &mut order, accept_until);
			Orders::<T>::insert(id, order);
			return Ok(0);
		}
		if dropped > 0 {
			Orders::<T>::insert(id, &order);
		}
		// The best bids of `replicas` providers none of which is tied to another (the same
		// party under two accounts would be one replica twice): each failed attempt costs as
		// much as an acceptance, so only the best few are tried.
		let replicas = order.terms.replicas.max(1) as usize;
		let attempts = MAX_AUTO_ACCEPT_ATTEMPTS as usize * replicas;
		let mut chosen: Vec<T::AccountId> = Vec::with_capacity(replicas);
		let mut extra = 0u32;
		for provider in Self::ranking(id).into_iter().take(attempts) {
			if chosen.iter().any(|other| T::Registry::tied(other, &provider)) {
				continue;
			}
			chosen.push(provider);
			if chosen.len() < replicas {
				continue;
			}
			extra.saturating_accrue(replicas as u32 - 1);
			let attempt = with_storage_layer(|| Self::accept(id, order.clone(), &chosen, true));
			match attempt {
				Ok(_) => return Ok(extra),
				// Its devices went to another lease since it bid, say: try the next best.
				Err(error) => {
					frame::log::debug!(
						target: "runtime::market",
						"order {id}: bids of {chosen:?} not accepted: {error:?}"
					);
					// A replicated order gets one attempt (its further leases are weighed
					// apart): the bids left were checked as dead bids were dropped.
					if replicas > 1 {
						break;
					}
					chosen.pop();
				}
			}
		}
		let (refunded, compensated) = Self::unwind(id, order)?;
		Self::deposit_event(Event::OrderExpired { order: id, refunded, compensated });
		Ok(extra)
	}

	/// Drops every bid on `id` that its provider can no longer honour as it stands (the
	/// provider paused or left, its devices are committed elsewhere or no longer its own or no
	/// longer fit, its worker binding changed): the collateral is released, the deposit is
	/// forfeited. Returns how many. Does not store `order`.
	pub(crate) fn drop_dead_bids(
		id: OrderId,
		order: &mut OrderOf<T>,
	) -> Result<u32, DispatchError> {
		let dead: Vec<(T::AccountId, BidOf<T>)> = Bids::<T>::iter_prefix(id)
			.filter(|(provider, bid)| Self::is_dead(provider, bid, order))
			.collect();
		for (provider, bid) in &dead {
			Self::drop_bid(id, order, provider, bid)?;
		}
		Ok(dead.len() as u32)
	}

	/// The providers that bid on `id`, best first: lowest price, then higher reputation, then
	/// the earlier bid.
	pub fn ranking(id: OrderId) -> Vec<T::AccountId> {
		let mut bids: Vec<(T::AccountId, BidOf<T>, Permill)> = Bids::<T>::iter_prefix(id)
			.map(|(who, bid)| {
				let reputation = T::Registry::reputation(&who).unwrap_or_default();
				(who, bid, reputation)
			})
			.collect();
		bids.sort_by(|(_, a, ra), (_, b, rb)| {
			a.price_per_block
				.cmp(&b.price_per_block)
				.then(rb.cmp(ra))
				.then(a.sequence.cmp(&b.sequence))
		});
		bids.into_iter().map(|(who, _, _)| who).collect()
	}

	/// Turns the bids of `winners` on `order` into leases, one per replica, created one after
	/// another (consecutive ids): releases every other bid, moves the escrow each lease needs
	/// into its stream and refunds the rest. Returns the first lease.
	pub(crate) fn accept(
		id: OrderId,
		mut order: OrderOf<T>,
		winners: &[T::AccountId],
		automatic: bool,
	) -> Result<LeaseId, DispatchError> {
		asset::release_escrow::<T>(&order.buyer, order.deposit)?;
		let replicas = winners.len() as u32;
		let mut accepted = Vec::with_capacity(winners.len());
		let mut spent: BalanceOf<T> = Zero::zero();
		for winner in winners {
			let bid = Bids::<T>::get(id, winner).ok_or(Error::<T>::UnknownBid)?;
			// As the bid stands now: the provider is still active, its devices still its own,
			// free, bound to one worker and fit for the order.
			T::Registry::check_offer(winner, &bid.devices, &order.terms.requirements)?;
			let escrow = match order.terms.duration {
				Some(blocks) => Self::cost(bid.price_per_block, blocks),
				None => order.deposit,
			};
			spent = spent.saturating_add(escrow);
			ensure!(spent <= order.deposit, Error::<T>::DepositTooLow);
			let lease = T::Leases::create_lease(NewLease {
				order: id,
				buyer: order.buyer.clone(),
				provider: winner.clone(),
				devices: bid.devices.to_vec(),
				price_per_block: bid.price_per_block,
				escrow,
				duration: order.terms.duration,
				collateral: bid.collateral,
				termination_notice: order.terms.termination_notice,
				image_digest: image_digest(&order.spec.image).unwrap_or_default(),
				holdback: order.terms.holdback,
				verdict_window: order.terms.verdict_window,
				deterministic: order.terms.deterministic,
				replicas,
			})?;
			accepted.push((winner, lease, bid.price_per_block, escrow));
		}
		let first =
			accepted.first().map(|(_, lease, _, _)| *lease).ok_or(Error::<T>::UnknownBid)?;
		for (provider, other) in Bids::<T>::drain_prefix(id) {
			// The winners' collateral stays locked (their leases take it over) and still counts
			// against their worker keys' cap; the others lost and are released.
			let lost = !winners.contains(&provider);
			Self::unindex_bid(&provider, id, lost.then_some(&other));
			Self::release_bid(&provider, &other, lost);
		}
		let mut refunded = order.deposit.saturating_sub(spent);
		Self::unschedule(id, &mut order);
		OpenOrders::<T>::remove(id);
		Rejections::<T>::remove(id);
		order.status = OrderStatus::Leased { lease: first };
		order.deposit = Zero::zero();
		order.bid_count = 0;
		Orders::<T>::insert(id, order);
		for (provider, lease, price_per_block, escrow) in accepted {
			Self::deposit_event(Event::BidAccepted {
				order: id,
				provider: provider.clone(),
				lease,
				price_per_block,
				escrow,
				// The refund is the order's: told once, with its first lease.
				refunded: core::mem::take(&mut refunded),
				automatic,
			});
		}
		Ok(first)
	}

	/// Releases every bid and the escrow of an open order, and removes it: the order was
	/// cancelled or expired unleased. Each bid still standing was left unaccepted by the buyer
	/// (the caller drops dead ones first), so its provider is paid `BidCompensation` from the
	/// escrow. Returns the escrow refunded and what the bidders were paid.
	pub(crate) fn unwind(
		id: OrderId,
		mut order: OrderOf<T>,
	) -> Result<(BalanceOf<T>, BalanceOf<T>), DispatchError> {
		let escrow = order.deposit;
		for (provider, bid) in Bids::<T>::drain_prefix(id) {
			Self::unindex_bid(&provider, id, Some(&bid));
			Self::release_bid(&provider, &bid, true);
			Self::compensate(&mut order, &provider)?;
		}
		asset::release_escrow::<T>(&order.buyer, order.deposit)?;
		asset::release_storage_deposit::<T>(&order.buyer, order.storage_deposit)?;
		Self::unschedule(id, &mut order);
		OpenOrders::<T>::remove(id);
		Rejections::<T>::remove(id);
		Orders::<T>::remove(id);
		Ok((order.deposit, escrow.saturating_sub(order.deposit)))
	}

	/// Unlocks a bid's deposit, and its collateral if `unlock`.
	pub(crate) fn release_bid(provider: &T::AccountId, bid: &BidOf<T>, unlock: bool) {
		let collateral = if unlock { bid.collateral } else { Zero::zero() };
		T::Collateral::unlock_collateral(provider, collateral.saturating_add(bid.deposit));
	}

	/// Queues `id` for the deadline `at` (never before the next block). Never fails: a busy queue
	/// must not refuse a user's call.
	pub(crate) fn schedule(id: OrderId, order: &mut OrderOf<T>, at: BlockNumberFor<T>) {
		let earliest = frame_system::Pallet::<T>::block_number().saturating_add(One::one());
		order.deadline = Some(buckets::schedule::<DeadlineQueue<T>>(id, at, earliest));
	}

	/// Takes `id` out of the deadline queue.
	pub(crate) fn unschedule(id: OrderId, order: &mut OrderOf<T>) {
		if let Some(slot) = order.deadline.take() {
			buckets::unschedule::<DeadlineQueue<T>>(&id, slot);
		}
	}

	/// The market's invariants: every open order's escrow is held on its buyer, the bid counts
	/// and each provider's index of its bids are right, its worker keys' commitments count
	/// every bid they have standing this era, and every open order waits in its deadline
	/// bucket. (A bid's deposit and collateral are locked in its provider's bond: the bonds
	/// pallet checks its ledgers, the runtime's tests that the locks add up.)
	pub fn do_try_state() -> Result<(), TryRuntimeError> {
		let mut escrow: BTreeMap<T::AccountId, BalanceOf<T>> = BTreeMap::new();
		let mut storage: BTreeMap<T::AccountId, BalanceOf<T>> = BTreeMap::new();
		// What each provider's worker keys have standing in bids placed this era.
		let mut this_era: BTreeMap<T::AccountId, BalanceOf<T>> = BTreeMap::new();
		let era = Self::era(frame_system::Pallet::<T>::block_number());
		let mut open = 0usize;
		for (id, order) in Orders::<T>::iter() {
			let entry = storage.entry(order.buyer.clone()).or_default();
			*entry = entry.saturating_add(order.storage_deposit);
			ensure!(id < NextOrderId::<T>::get(), "an order id is not below NextOrderId");
			let bids: Vec<_> = Bids::<T>::iter_prefix(id).collect();
			ensure!(bids.len() as u32 == order.bid_count, "an order's bid count is wrong");
			match order.status {
				OrderStatus::Open => {
					let slot = order.deadline.ok_or("an open order has no deadline")?;
					ensure!(
						buckets::holds::<DeadlineQueue<T>>(&id, slot),
						"an order is not where its deadline says"
					);
					ensure!(OpenOrders::<T>::contains_key(id), "an open order is not indexed");
					open += 1;
					let entry = escrow.entry(order.buyer.clone()).or_default();
					*entry = entry.saturating_add(order.deposit);
				}
				OrderStatus::Leased { .. } => {
					ensure!(
						!OpenOrders::<T>::contains_key(id),
						"a leased order is indexed as open"
					);
					ensure!(bids.is_empty(), "a leased order still has bids");
					ensure!(order.deposit.is_zero(), "a leased order still holds escrow");
					ensure!(order.deadline.is_none(), "a leased order has a deadline");
				}
			}
			for (provider, bid) in bids {
				ensure!(
					Bidders::<T>::get(&provider).is_some_and(|b| b.bids.contains(&id)),
					"a bid is missing from its provider's index"
				);
				if bid.by_worker && Self::era(bid.placed_at) == era {
					let entry = this_era.entry(provider.clone()).or_default();
					*entry = entry.saturating_add(bid.collateral.saturating_add(bid.deposit));
				}
				ensure!(
					bid.price_per_block <= order.terms.max_price_per_block,
					"a bid is above its order's ceiling"
				);
			}
		}
		for (who, amount) in storage {
			ensure!(
				asset::storage_deposits_held::<T>(&who) == amount,
				"a buyer's storage deposit hold differs from its orders"
			);
		}
		for (who, amount) in escrow {
			ensure!(asset::escrow_held::<T>(&who) == amount, "a buyer's escrow hold is wrong");
		}
		let mut indexed = 0usize;
		for (provider, bidder) in Bidders::<T>::iter() {
			let mut ids = bidder.bids.to_vec();
			ids.sort();
			ids.dedup();
			ensure!(ids.len() == bidder.bids.len(), "a provider's bid index repeats an order");
			for id in &ids {
				ensure!(
					Bids::<T>::contains_key(id, &provider),
					"the bid index names a missing bid"
				);
			}
			indexed += ids.len();
			ensure!(
				!ids.is_empty() || !bidder.by_workers.is_zero(),
				"a bidder's record outlived its bids and commitments"
			);
			let committed = bidder.committed_in(&era);
			ensure!(
				committed <= Self::worker_cap(&provider),
				"a provider's worker keys committed more than their cap"
			);
			ensure!(
				this_era.remove(&provider).unwrap_or_default() <= committed,
				"a provider's worker keys have more standing this era than they committed"
			);
		}
		ensure!(this_era.is_empty(), "worker bids standing this era are not counted");
		ensure!(indexed == Bids::<T>::iter().count(), "a provider's standing bids are not counted");
		ensure!(OpenOrders::<T>::iter_keys().count() == open, "the open-order index is wrong");
		for (id, _) in Rejections::<T>::iter() {
			ensure!(OpenOrders::<T>::contains_key(id), "an order that is not open has rejections");
		}
		for (id, slot) in buckets::all::<DeadlineQueue<T>>()? {
			let order = Orders::<T>::get(id).ok_or("the deadline queue names an unknown order")?;
			ensure!(
				order.deadline == Some(slot),
				"the deadline queue names an order scheduled elsewhere"
			);
		}
		Ok(())
	}
}

impl<T: Config> StandingBids<T::AccountId> for Pallet<T> {
	fn retract_all(provider: &T::AccountId) -> u32 {
		Self::do_retract_all(provider, None)
	}

	fn retract_on(provider: &T::AccountId, devices: &[stint_primitives::DeviceId]) -> u32 {
		Self::do_retract_all(provider, Some(devices))
	}

	fn retract_weight(bids: u32) -> Weight {
		T::WeightInfo::retract_bid().saturating_mul(bids.min(T::MaxStandingBids::get()).into())
	}

	fn retract_all_weight() -> Weight {
		Self::retract_weight(T::MaxStandingBids::get())
	}
}

impl<T: Config> stint_traits::OrderRequirements for Pallet<T> {
	fn requirements(order: OrderId) -> Option<stint_primitives::GpuRequirements> {
		Orders::<T>::get(order).map(|order| order.terms.requirements)
	}
}
