//! The auction: accepting a bid (by the buyer or at the close of the window), expiry, the
//! bounded block hook, and the market's invariants.

use crate::{
	asset, BalanceOf, BidOf, Bids, Config, DeadlineOverflow, DeadlineOverflowEnds, Deadlines,
	Error, Event, NextOrderId, OpenOrders, OrderId, OrderOf, OrderStatus, Orders, Pallet,
	ProviderBids, StandingBidCount, WeightInfo, MAX_AUTO_ACCEPT_ATTEMPTS,
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

/// The market's deadline queue: [`Deadlines`] with its overflow.
pub struct DeadlineQueue<T>(core::marker::PhantomData<T>);

impl<T: Config> buckets::Queue for DeadlineQueue<T> {
	type Block = BlockNumberFor<T>;
	type Id = OrderId;
	type Bound = T::MaxDeadlinesPerBlock;
	type Buckets = Deadlines<T>;
	type Overflow = DeadlineOverflow<T>;
	type Ends = DeadlineOverflowEnds<T>;
}

impl<T: Config> Pallet<T> {
	/// Handles every order whose deadline falls in `now`: the close of its bid window (auto-accept
	/// or expiry when nobody bid) or the end of its buyer's time to accept (expiry); and a share
	/// of the overflow, each order handled if due and scheduled again if not.
	pub(crate) fn process_deadlines(now: BlockNumberFor<T>) -> Weight {
		let (due, read) = buckets::take_due::<DeadlineQueue<T>>(now);
		for (id, slot) in due {
			// Each order on its own: one that cannot be processed does not stop the others.
			if let Err(error) = with_storage_layer(|| Self::on_deadline(id, slot, now)) {
				frame::log::error!(target: "runtime::market", "order {id} at {now:?}: {error:?}");
				Self::requeue(id, slot);
			}
		}
		T::WeightInfo::on_initialize(read)
	}

	/// Puts an order whose deadline failed back in the queue (the next block's bucket, or the
	/// overflow), so it is not forgotten.
	fn requeue(id: OrderId, slot: Slot<BlockNumberFor<T>>) {
		let Some(mut order) = Orders::<T>::get(id) else { return };
		if order.status != OrderStatus::Open || order.deadline != Some(slot) {
			return;
		}
		order.deadline = None;
		let next = frame_system::Pallet::<T>::block_number().saturating_add(One::one());
		Self::schedule(id, &mut order, next);
		Orders::<T>::insert(id, order);
	}

	fn on_deadline(
		id: OrderId,
		slot: Slot<BlockNumberFor<T>>,
		now: BlockNumberFor<T>,
	) -> DispatchResult {
		let Some(mut order) = Orders::<T>::get(id) else { return Ok(()) };
		if order.deadline != Some(slot) || order.status != OrderStatus::Open {
			// Moved or ended since it was queued here.
			return Ok(());
		}
		order.deadline = None;
		if now < order.bids_close_at {
			// Drained from the overflow before its window closed: wait for the close.
			let close = order.bids_close_at;
			Self::schedule(id, &mut order, close);
			Orders::<T>::insert(id, order);
			return Ok(());
		}
		let accept_until = order.bids_close_at.saturating_add(T::AcceptPeriod::get());
		if order.bid_count == 0 || now >= accept_until {
			let refunded = Self::unwind(id, order)?;
			Self::deposit_event(Event::OrderExpired { order: id, refunded });
			return Ok(());
		}
		if !order.terms.auto_accept {
			// The buyer chooses: it has until `accept_until`.
			Self::schedule(id, &mut order, accept_until);
			Orders::<T>::insert(id, order);
			return Ok(());
		}
		// Bids their providers can no longer honour go first, cheaply and at their providers'
		// cost: they must not use up the attempts and leave the honest bids untried.
		let dropped = Self::drop_dead_bids(id, &mut order)?;
		if order.bid_count == 0 {
			let refunded = Self::unwind(id, order)?;
			Self::deposit_event(Event::OrderExpired { order: id, refunded });
			return Ok(());
		}
		if dropped > 0 {
			Orders::<T>::insert(id, &order);
		}
		// The best few bids only: each failed attempt costs as much as an acceptance.
		for provider in Self::ranking(id).into_iter().take(MAX_AUTO_ACCEPT_ATTEMPTS as usize) {
			let attempt = with_storage_layer(|| Self::accept(id, order.clone(), &provider, true));
			match attempt {
				Ok(_) => return Ok(()),
				// Its devices went to another lease since it bid, say: try the next best.
				Err(error) => frame::log::debug!(
					target: "runtime::market",
					"order {id}: bid of {provider:?} not accepted: {error:?}"
				),
			}
		}
		let refunded = Self::unwind(id, order)?;
		Self::deposit_event(Event::OrderExpired { order: id, refunded });
		Ok(())
	}

	/// Drops every bid on `id` that its provider can no longer honour as it stands (the
	/// provider paused or left, its devices are committed elsewhere or no longer its own or no
	/// longer fit, its worker binding changed): the collateral is released, the deposit goes to
	/// the buyer. Returns how many. Does not store `order`.
	fn drop_dead_bids(id: OrderId, order: &mut OrderOf<T>) -> Result<u32, DispatchError> {
		let dead: Vec<(T::AccountId, BidOf<T>)> = Bids::<T>::iter_prefix(id)
			.filter(|(provider, bid)| {
				T::Registry::check_offer(provider, &bid.devices, &order.terms.requirements).is_err()
			})
			.collect();
		for (provider, bid) in &dead {
			let forfeited = Self::remove_bid(id, order, provider, bid, true)?;
			Self::deposit_event(Event::BidDropped {
				order: id,
				provider: provider.clone(),
				forfeited,
			});
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

	/// Turns `winner`'s bid on `order` into a lease: releases every other bid, moves the escrow
	/// the lease needs into its stream and refunds the rest.
	pub(crate) fn accept(
		id: OrderId,
		mut order: OrderOf<T>,
		winner: &T::AccountId,
		automatic: bool,
	) -> Result<LeaseId, DispatchError> {
		let bid = Bids::<T>::get(id, winner).ok_or(Error::<T>::UnknownBid)?;
		// As the bid stands now: the provider is still active, its devices still its own, free,
		// bound to one worker and fit for the order.
		T::Registry::check_offer(winner, &bid.devices, &order.terms.requirements)?;
		asset::release_escrow::<T>(&order.buyer, order.deposit)?;
		let escrow = match order.terms.duration {
			Some(blocks) => Self::cost(bid.price_per_block, blocks),
			None => order.deposit,
		};
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
		})?;
		for (provider, other) in Bids::<T>::drain_prefix(id) {
			Self::unindex_bid(&provider, id);
			// The winner's collateral stays locked: the lease takes it over.
			Self::release_bid(&provider, &other, &provider != winner)?;
		}
		let refunded = order.deposit.saturating_sub(escrow);
		Self::unschedule(id, &mut order);
		OpenOrders::<T>::remove(id);
		order.status = OrderStatus::Leased { lease };
		order.deposit = Zero::zero();
		order.bid_count = 0;
		Orders::<T>::insert(id, order);
		Self::deposit_event(Event::BidAccepted {
			order: id,
			provider: winner.clone(),
			lease,
			price_per_block: bid.price_per_block,
			escrow,
			refunded,
			automatic,
		});
		Ok(lease)
	}

	/// Releases every bid and the escrow of an open order, and removes it. Returns the escrow.
	pub(crate) fn unwind(
		id: OrderId,
		mut order: OrderOf<T>,
	) -> Result<BalanceOf<T>, DispatchError> {
		for (provider, bid) in Bids::<T>::drain_prefix(id) {
			Self::unindex_bid(&provider, id);
			Self::release_bid(&provider, &bid, true)?;
		}
		asset::release_escrow::<T>(&order.buyer, order.deposit)?;
		asset::release_storage_deposit::<T>(&order.buyer, order.storage_deposit)?;
		Self::unschedule(id, &mut order);
		OpenOrders::<T>::remove(id);
		Orders::<T>::remove(id);
		Ok(order.deposit)
	}

	/// Returns a bid's deposit, and its collateral if `unlock`.
	pub(crate) fn release_bid(
		provider: &T::AccountId,
		bid: &BidOf<T>,
		unlock: bool,
	) -> DispatchResult {
		asset::release_bid_deposit::<T>(provider, bid.deposit)?;
		if unlock {
			T::Collateral::unlock_collateral(provider, bid.collateral);
		}
		Ok(())
	}

	/// Queues `id` for the deadline `at`: in the bucket of `at` or a later one with room, else in
	/// the overflow. Never fails: a full queue must not refuse a user's call.
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

	/// The market's invariants: every open order's escrow is held on its buyer, every bid's
	/// deposit on its provider, the bid counts are right, and every open order waits in its
	/// deadline bucket.
	pub fn do_try_state() -> Result<(), TryRuntimeError> {
		let now = frame_system::Pallet::<T>::block_number();
		let mut escrow: BTreeMap<T::AccountId, BalanceOf<T>> = BTreeMap::new();
		let mut deposits: BTreeMap<T::AccountId, BalanceOf<T>> = BTreeMap::new();
		let mut storage: BTreeMap<T::AccountId, BalanceOf<T>> = BTreeMap::new();
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
					ProviderBids::<T>::contains_key(&provider, id),
					"a bid is missing from its provider's index"
				);
				ensure!(
					bid.price_per_block <= order.terms.max_price_per_block,
					"a bid is above its order's ceiling"
				);
				let entry = deposits.entry(provider).or_default();
				*entry = entry.saturating_add(bid.deposit);
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
		for (who, amount) in deposits {
			ensure!(
				asset::bid_deposits_held::<T>(&who) == amount,
				"a provider's bid deposit hold is wrong"
			);
		}
		let mut standing: BTreeMap<T::AccountId, u32> = BTreeMap::new();
		for (provider, id, ()) in ProviderBids::<T>::iter() {
			ensure!(Bids::<T>::contains_key(id, &provider), "the bid index names a missing bid");
			*standing.entry(provider).or_default() += 1;
		}
		for (provider, count) in StandingBidCount::<T>::iter() {
			ensure!(
				standing.remove(&provider) == Some(count),
				"a provider's standing bid count is wrong"
			);
			ensure!(count <= T::MaxStandingBids::get(), "a provider has too many standing bids");
		}
		ensure!(standing.is_empty(), "a provider's standing bids are not counted");
		ensure!(OpenOrders::<T>::iter_keys().count() == open, "the open-order index is wrong");
		for (id, slot) in buckets::all::<DeadlineQueue<T>>(now)? {
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
		Self::do_retract_all(provider)
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
