//! What each call does.

use crate::{
	asset, BalanceOf, Bid, Bidders, Bids, Config, Error, Event, JobSpec, NextOrderId, OpenOrders,
	Order, OrderId, OrderStatus, Orders, Pallet, Rejections, TermsOf,
};
use frame::prelude::*;
use stint_primitives::{is_job_env_name, is_pinned_image, DeviceId};
use stint_traits::{LeaseFactory, ProviderCollateral, ProviderRegistry};

impl<T: Config> Pallet<T> {
	/// What a call this pallet refuses is charged: its checks read the order and at most five
	/// more items (the bid slot, the provider's record and worker index, the rejections, the
	/// bond) before anything is written.
	pub(crate) fn refused(
		error: DispatchError,
	) -> frame::deps::frame_support::dispatch::DispatchErrorWithPostInfo {
		stint_traits::refusal::<Self>(error, T::DbWeight::get().reads(6))
	}

	pub(crate) fn do_create_order(
		buyer: T::AccountId,
		spec: JobSpec,
		terms: TermsOf<T>,
		deposit: BalanceOf<T>,
	) -> Result<OrderId, DispatchError> {
		Self::check_order(&spec, &terms, deposit)?;
		asset::hold_escrow::<T>(&buyer, deposit)?;

		let id = NextOrderId::<T>::get();
		let now = frame_system::Pallet::<T>::block_number();
		let bids_close_at = now.saturating_add(terms.bid_window);
		let max_price_per_block = terms.max_price_per_block;
		let mut order = Order {
			buyer: buyer.clone(),
			spec,
			terms,
			deposit,
			storage_deposit: Zero::zero(),
			created_at: now,
			bids_close_at,
			status: OrderStatus::Open,
			bid_count: 0,
			bids_placed: 0,
			deadline: None,
		};
		Self::schedule(id, &mut order, bids_close_at);
		// Priced on the order as it is stored (the balance is fixed-width: setting it does not
		// change the size).
		order.storage_deposit = Self::storage_deposit_for(&order);
		asset::hold_storage_deposit::<T>(&order.buyer, order.storage_deposit)?;
		Orders::<T>::insert(id, order);
		OpenOrders::<T>::insert(id, ());
		NextOrderId::<T>::put(id.saturating_add(1));
		Self::deposit_event(Event::OrderCreated {
			order: id,
			buyer,
			deposit,
			max_price_per_block,
			bids_close_at,
		});
		Ok(id)
	}

	/// Every rule an order must meet, each with its own error.
	fn check_order(spec: &JobSpec, terms: &TermsOf<T>, deposit: BalanceOf<T>) -> DispatchResult {
		ensure!(is_pinned_image(&spec.image), Error::<T>::ImageNotPinned);
		ensure!(spec.env.iter().all(|var| is_job_env_name(&var.key)), Error::<T>::ReservedEnvName);
		// What a process cannot be given (a NUL ends a C string; arguments and environment are
		// text): refused here, not at the container's start as if the provider had failed.
		let passable = |bytes: &[u8]| !bytes.contains(&0) && core::str::from_utf8(bytes).is_ok();
		ensure!(
			spec.command.iter().all(|arg| passable(arg))
				&& spec.env.iter().all(|var| passable(&var.value)),
			Error::<T>::UnpassableText
		);
		let gpus = terms.requirements.gpu_count;
		ensure!(gpus > 0, Error::<T>::NoGpus);
		ensure!(gpus <= T::MaxGpusPerOrder::get(), Error::<T>::TooManyGpus);
		ensure!(
			terms.replicas >= 1 && terms.replicas <= T::MaxReplicas::get(),
			Error::<T>::TooManyReplicas
		);
		ensure!(
			terms.replicas == 1
				|| (terms.deterministic && terms.duration.is_some() && terms.auto_accept),
			Error::<T>::UnreplicableOrder
		);
		ensure!(!terms.max_price_per_block.is_zero(), Error::<T>::ZeroPrice);
		ensure!(terms.bid_window >= T::MinBidWindow::get(), Error::<T>::BidWindowTooShort);
		ensure!(terms.bid_window <= T::MaxBidWindow::get(), Error::<T>::BidWindowTooLong);
		ensure!(
			terms.termination_notice <= T::MaxTerminationNotice::get(),
			Error::<T>::NoticeTooLong
		);
		ensure!(
			terms.duration.is_some() || terms.termination_notice >= T::MinTerminationNotice::get(),
			Error::<T>::NoticeTooShort
		);
		ensure!(terms.holdback >= T::MinHoldback::get(), Error::<T>::HoldbackTooLow);
		ensure!(
			terms.verdict_window <= T::MaxVerdictWindow::get(),
			Error::<T>::VerdictWindowTooLong
		);
		let least = match terms.duration {
			Some(blocks) => {
				ensure!(!blocks.is_zero(), Error::<T>::ZeroDuration);
				// Every replica is paid for the whole duration at most.
				Self::cost(terms.max_price_per_block, blocks).saturating_mul(terms.replicas.into())
			}
			None => terms.max_price_per_block,
		}
		.max(T::MinOrderDeposit::get());
		ensure!(deposit >= least, Error::<T>::DepositTooLow);
		Ok(())
	}

	/// What keeping `order` costs: `StorageDepositBase` per replica, and
	/// `StorageDepositPerByte` for every byte of it (its key and record) and of the most its
	/// leases may keep until they are reaped with it (each lease, its dispute and its stream).
	pub fn storage_deposit_for(order: &crate::OrderOf<T>) -> BalanceOf<T> {
		let key = 16 + crate::OrderId::max_encoded_len() as u32;
		let bytes = key
			.saturating_add(order.encoded_size() as u32)
			.saturating_add(T::Leases::record_bytes(order.terms.replicas));
		let bytes: BalanceOf<T> = bytes.into();
		let replicas: BalanceOf<T> = order.terms.replicas.max(1).into();
		T::StorageDepositBase::get()
			.saturating_mul(replicas)
			.saturating_add(T::StorageDepositPerByte::get().saturating_mul(bytes))
	}

	pub(crate) fn do_reap_order(reaper: &T::AccountId, id: OrderId) -> DispatchResult {
		let order = Orders::<T>::get(id).ok_or(Error::<T>::UnknownOrder)?;
		let OrderStatus::Leased { lease } = order.status else {
			return Err(Error::<T>::NotLeased.into());
		};
		let ended = T::Leases::ended_at(lease).ok_or(Error::<T>::LeaseNotEnded)?;
		let now = frame_system::Pallet::<T>::block_number();
		ensure!(now >= ended.saturating_add(T::Retention::get()), Error::<T>::RetentionNotOver);
		T::Leases::reap(lease)?;
		Orders::<T>::remove(id);
		let reward = if reaper == &order.buyer {
			Zero::zero()
		} else {
			T::ReapReward::get().mul_floor(order.storage_deposit)
		};
		asset::reward_reaper::<T>(&order.buyer, reaper, reward)?;
		asset::release_storage_deposit::<T>(&order.buyer, order.storage_deposit - reward)?;
		Self::deposit_event(Event::OrderReaped {
			order: id,
			lease,
			reaper: reaper.clone(),
			reward,
		});
		Ok(())
	}

	/// `price × blocks`, saturating.
	pub(crate) fn cost(price: BalanceOf<T>, blocks: BlockNumberFor<T>) -> BalanceOf<T> {
		let blocks: u128 = blocks.saturated_into();
		price.saturating_mul(blocks.saturated_into())
	}

	/// Returns whether the bid took the place of a full order's worst one.
	pub(crate) fn do_place_bid(
		signer: T::AccountId,
		id: OrderId,
		price_per_block: BalanceOf<T>,
		devices: BoundedVec<DeviceId, T::MaxGpusPerOrder>,
	) -> Result<bool, DispatchError> {
		let (provider, worker) = T::Registry::acting_for(&signer)?;
		if let Some(key) = worker {
			ensure!(
				T::Registry::worker_for(&provider, &devices) == Some(key),
				Error::<T>::NotThisWorker
			);
		}
		let mut order = Self::open_order(id)?;
		let now = frame_system::Pallet::<T>::block_number();
		ensure!(now < order.bids_close_at, Error::<T>::BiddingClosed);
		// Nor a worker key's account on its provider's order, nor a provider on its worker key's:
		// one party on both sides of a lease earns reputation for nothing.
		ensure!(!T::Registry::tied(&provider, &order.buyer), Error::<T>::BuyerCannotBid);
		ensure!(!Rejections::<T>::get(id).contains(&provider), Error::<T>::BidRejected);
		ensure!(!price_per_block.is_zero(), Error::<T>::ZeroPrice);
		ensure!(price_per_block <= order.terms.max_price_per_block, Error::<T>::PriceAboveCeiling);
		ensure!(!Bids::<T>::contains_key(id, &provider), Error::<T>::AlreadyBid);
		// A full order takes a bid that beats its worst one, which makes room: slots filled
		// at high prices cannot shut cheaper providers out.
		let outbid = if order.bid_count >= T::MaxBidsPerOrder::get() {
			let (worst, bid) = Self::worst_bid(id).ok_or(Error::<T>::TooManyBids)?;
			ensure!(price_per_block < bid.price_per_block, Error::<T>::TooManyBids);
			Some((worst, bid))
		} else {
			None
		};
		let mut bidder = Bidders::<T>::get(&provider).unwrap_or_default();
		ensure!(bidder.standing() < T::MaxStandingBids::get(), Error::<T>::TooManyStandingBids);
		let collateral = T::CollateralPerGpu::get().saturating_mul((devices.len() as u32).into());
		let deposit = T::BidDeposit::get();
		let era = Self::era(now);
		// What a worker key may put at risk of its provider's funds in an era: a stolen key
		// burns no more than this.
		let by_worker = worker.is_some().then(|| collateral.saturating_add(deposit));
		if let Some(commits) = by_worker {
			ensure!(
				bidder.committed_in(&era).saturating_add(commits) <= Self::worker_cap(&provider),
				Error::<T>::WorkerCommitCapReached
			);
		}
		T::Registry::check_offer(&provider, &devices, &order.terms.requirements)?;
		let took_a_place = outbid.is_some();
		if let Some((worst, bid)) = outbid {
			Self::remove_bid(id, &mut order, &worst, &bid, false)?;
			Self::deposit_event(Event::BidOutbid { order: id, provider: worst });
		}

		// The deposit is locked in the bond with the collateral: one write, no hold of its own.
		T::Collateral::lock_collateral(&provider, collateral.saturating_add(deposit))?;

		let count = devices.len() as u32;
		bidder.bids.try_push(id).map_err(|_| Error::<T>::TooManyStandingBids)?;
		if let Some(commits) = by_worker {
			bidder.by_workers = bidder.committed_in(&era).saturating_add(commits);
			bidder.era = era;
		}
		Bidders::<T>::insert(&provider, bidder);
		Bids::<T>::insert(
			id,
			&provider,
			Bid {
				price_per_block,
				devices,
				collateral,
				deposit,
				placed_at: now,
				sequence: order.bids_placed,
				by_worker: worker.is_some(),
			},
		);
		order.bid_count.saturating_inc();
		order.bids_placed.saturating_inc();
		Orders::<T>::insert(id, order);
		Self::deposit_event(Event::BidPlaced {
			order: id,
			provider,
			price_per_block,
			devices: count,
			collateral,
		});
		Ok(took_a_place)
	}

	/// The device count a bid of `offered` devices is weighed at: at least one (a list longer
	/// than an order may ask for does not decode).
	pub(crate) fn gpus_weighed(offered: usize) -> u32 {
		(offered as u32).clamp(1, T::MaxGpusPerOrder::get())
	}

	pub(crate) fn do_retract_bid(signer: &T::AccountId, id: OrderId) -> DispatchResult {
		let (provider, worker) = T::Registry::acting_for(signer)?;
		let provider = &provider;
		let mut order = Self::open_order(id)?;
		let bid = Bids::<T>::get(id, provider).ok_or(Error::<T>::UnknownBid)?;
		if let Some(key) = worker {
			ensure!(
				T::Registry::worker_for(provider, &bid.devices) == Some(key),
				Error::<T>::NotThisWorker
			);
		}
		let late = Self::late(&order);
		let (forfeited, burnt) = Self::remove_bid(id, &mut order, provider, &bid, late)?;
		Orders::<T>::insert(id, order);
		Self::deposit_event(Event::BidRetracted {
			order: id,
			provider: provider.clone(),
			forfeited,
			burnt,
		});
		Ok(())
	}

	/// Whether `order`'s bid window is in its last quarter (at least its last block): a bid
	/// withdrawn now costs its provider its deposit, paid to the buyer (burnt if a worker key
	/// placed it). Else a bidder could fill the order's slots, keep others out, and leave just
	/// before the close, for free.
	pub(crate) fn late(order: &crate::OrderOf<T>) -> bool {
		let quarter = (order.terms.bid_window / 4u32.into()).max(One::one());
		frame_system::Pallet::<T>::block_number() >= order.bids_close_at.saturating_sub(quarter)
	}

	/// The bid on `id` that ranks last: the highest price, then the latest.
	fn worst_bid(id: OrderId) -> Option<(T::AccountId, crate::BidOf<T>)> {
		Bids::<T>::iter_prefix(id).max_by(|(_, a), (_, b)| {
			a.price_per_block.cmp(&b.price_per_block).then(a.sequence.cmp(&b.sequence))
		})
	}

	/// Takes `provider`'s `bid` off `order` (not stored): its collateral is unlocked, its deposit
	/// returned, or forfeited if `forfeit`: paid to the buyer, or burnt if a worker key placed
	/// the bid (whoever holds a provider's worker key must not be able to post orders, bid on
	/// them with the provider's deposits and collect them). Returns what was forfeited and
	/// whether it was burnt. The one way a standing bid goes without being accepted.
	pub(crate) fn remove_bid(
		id: OrderId,
		order: &mut crate::OrderOf<T>,
		provider: &T::AccountId,
		bid: &crate::BidOf<T>,
		forfeit: bool,
	) -> Result<(BalanceOf<T>, bool), DispatchError> {
		Bids::<T>::remove(id, provider);
		Self::unindex_bid(provider, id, (!forfeit).then_some(bid));
		order.bid_count.saturating_dec();
		if !forfeit {
			T::Collateral::unlock_collateral(provider, bid.collateral.saturating_add(bid.deposit));
			return Ok((Zero::zero(), false));
		}
		T::Collateral::unlock_collateral(provider, bid.collateral);
		let to = (!bid.by_worker).then_some(&order.buyer);
		Ok((T::Collateral::forfeit_locked(provider, bid.deposit, to), bid.by_worker))
	}

	/// Returns how many bids the order had, which its weight depends on. Bids that can no
	/// longer be honoured are dropped first (their deposits forfeited), so only live ones are
	/// compensated.
	pub(crate) fn do_cancel_order(who: &T::AccountId, id: OrderId) -> Result<u32, DispatchError> {
		let mut order = Self::open_order(id)?;
		ensure!(&order.buyer == who, Error::<T>::NotBuyer);
		let bids = order.bid_count;
		Self::drop_dead_bids(id, &mut order)?;
		let (refunded, compensated) = Self::unwind(id, order)?;
		Self::deposit_event(Event::OrderCancelled { order: id, refunded, compensated });
		Ok(bids)
	}

	pub(crate) fn do_reject_bid(
		who: &T::AccountId,
		id: OrderId,
		provider: &T::AccountId,
	) -> DispatchResult {
		let mut order = Self::open_order(id)?;
		ensure!(&order.buyer == who, Error::<T>::NotBuyer);
		let bid = Bids::<T>::get(id, provider).ok_or(Error::<T>::UnknownBid)?;
		if Self::is_dead(provider, &bid, &order) {
			Self::drop_bid(id, &mut order, provider, &bid)?;
		} else {
			Rejections::<T>::try_mutate(id, |rejected| rejected.try_push(provider.clone()))
				.map_err(|_| Error::<T>::TooManyRejections)?;
			Self::remove_bid(id, &mut order, provider, &bid, false)?;
			let compensation = Self::compensate(&mut order, provider)?;
			Self::deposit_event(Event::BidRejected {
				order: id,
				provider: provider.clone(),
				compensation,
			});
		}
		Orders::<T>::insert(id, order);
		Ok(())
	}

	pub(crate) fn do_drop_dead_bid(id: OrderId, provider: &T::AccountId) -> DispatchResult {
		let mut order = Self::open_order(id)?;
		let bid = Bids::<T>::get(id, provider).ok_or(Error::<T>::UnknownBid)?;
		ensure!(Self::is_dead(provider, &bid, &order), Error::<T>::BidStillHonourable);
		Self::drop_bid(id, &mut order, provider, &bid)?;
		Orders::<T>::insert(id, order);
		Ok(())
	}

	/// Whether `provider` can no longer honour `bid` on `order` as it stands.
	pub(crate) fn is_dead(
		provider: &T::AccountId,
		bid: &crate::BidOf<T>,
		order: &crate::OrderOf<T>,
	) -> bool {
		T::Registry::check_offer(provider, &bid.devices, &order.terms.requirements).is_err()
	}

	/// Drops a bid its provider can no longer honour (not stored): its deposit is forfeited.
	pub(crate) fn drop_bid(
		id: OrderId,
		order: &mut crate::OrderOf<T>,
		provider: &T::AccountId,
		bid: &crate::BidOf<T>,
	) -> DispatchResult {
		let (forfeited, burnt) = Self::remove_bid(id, order, provider, bid, true)?;
		Self::deposit_event(Event::BidDropped {
			order: id,
			provider: provider.clone(),
			forfeited,
			burnt,
		});
		Ok(())
	}

	/// Pays `provider` `BidCompensation` from `order`'s escrow (no more than is left of it; not
	/// stored). Returns what was paid.
	pub(crate) fn compensate(
		order: &mut crate::OrderOf<T>,
		provider: &T::AccountId,
	) -> Result<BalanceOf<T>, DispatchError> {
		let paid = T::BidCompensation::get().min(order.deposit);
		asset::compensate_bidder::<T>(&order.buyer, provider, paid)?;
		order.deposit = order.deposit.saturating_sub(paid);
		Ok(paid)
	}

	pub(crate) fn do_accept_bid(
		who: &T::AccountId,
		id: OrderId,
		provider: &T::AccountId,
		price_per_block: BalanceOf<T>,
		devices: &[DeviceId],
	) -> Result<u32, DispatchError> {
		let order = Self::open_order(id)?;
		ensure!(&order.buyer == who, Error::<T>::NotBuyer);
		ensure!(order.terms.replicas <= 1, Error::<T>::ReplicatedOrder);
		let bid = Bids::<T>::get(id, provider).ok_or(Error::<T>::UnknownBid)?;
		ensure!(
			bid.price_per_block == price_per_block && bid.devices.as_slice() == devices,
			Error::<T>::BidChanged
		);
		let bids = order.bid_count;
		Self::accept(id, order, core::slice::from_ref(provider), false)?;
		Ok(bids)
	}

	/// The era of block `at`: what [`Config::WorkerCommitPerGpu`] counts in.
	pub(crate) fn era(at: BlockNumberFor<T>) -> BlockNumberFor<T> {
		at / T::WorkerEra::get().max(One::one())
	}

	/// The most `provider`'s worker keys may commit in an era: `WorkerCommitPerGpu` for each
	/// GPU it has registered (at least one).
	pub(crate) fn worker_cap(provider: &T::AccountId) -> BalanceOf<T> {
		let gpus = (T::Registry::devices(provider).len() as u32).max(1);
		T::WorkerCommitPerGpu::get().saturating_mul(gpus.into())
	}

	/// Takes a bid that is gone out of its provider's index. A bid `released` cleanly (not
	/// won, nor forfeited) that a worker key placed this era gives back what it committed: it
	/// put nothing of the provider's at risk. The provider's record goes with its last bid,
	/// unless its worker keys still have something committed this era (the cap must count it).
	pub(crate) fn unindex_bid(
		provider: &T::AccountId,
		id: OrderId,
		released: Option<&crate::BidOf<T>>,
	) {
		let era = Self::era(frame_system::Pallet::<T>::block_number());
		Bidders::<T>::mutate_exists(provider, |bidder| {
			let Some(record) = bidder else { return };
			record.bids.retain(|standing| *standing != id);
			if let Some(bid) = released {
				if bid.by_worker && Self::era(bid.placed_at) == era && record.era == era {
					let committed = bid.collateral.saturating_add(bid.deposit);
					record.by_workers = record.by_workers.saturating_sub(committed);
				}
			}
			if record.bids.is_empty() && record.committed_in(&era).is_zero() {
				*bidder = None;
			}
		});
	}

	/// Withdraws every standing bid of `provider` (only those that name one of `devices`, if
	/// given), as if it retracted each. Returns how many standing bids were looked at (a bid
	/// that could not be released stays, and cost as much to try).
	pub(crate) fn do_retract_all(provider: &T::AccountId, devices: Option<&[DeviceId]>) -> u32 {
		let ids =
			Bidders::<T>::get(provider).map(|bidder| bidder.bids.into_inner()).unwrap_or_default();
		let standing = ids.len() as u32;
		for id in ids {
			// Each on its own: a bid that cannot be released stays, and try_state says so.
			let done = frame::deps::frame_support::storage::with_storage_layer(|| {
				let (Some(bid), Some(mut order)) =
					(Bids::<T>::get(id, provider), Orders::<T>::get(id))
				else {
					Self::unindex_bid(provider, id, None);
					return Ok(());
				};
				// As a retraction: late, it costs the deposit (pausing is no free way out).
				if !devices.is_none_or(|devices| bid.devices.iter().any(|d| devices.contains(d))) {
					return Ok(());
				}
				let late = Self::late(&order);
				let (forfeited, burnt) = Self::remove_bid(id, &mut order, provider, &bid, late)?;
				Orders::<T>::insert(id, order);
				Self::deposit_event(Event::BidRetracted {
					order: id,
					provider: provider.clone(),
					forfeited,
					burnt,
				});
				Ok::<_, DispatchError>(())
			});
			if let Err(error) = done {
				frame::log::error!(
					target: "runtime::market",
					"bid of {provider:?} on order {id} not withdrawn: {error:?}"
				);
			}
		}
		standing
	}

	/// An order that exists and is open.
	pub(crate) fn open_order(id: OrderId) -> Result<crate::OrderOf<T>, DispatchError> {
		let order = Orders::<T>::get(id).ok_or(Error::<T>::UnknownOrder)?;
		ensure!(order.status == OrderStatus::Open, Error::<T>::OrderNotOpen);
		Ok(order)
	}
}
