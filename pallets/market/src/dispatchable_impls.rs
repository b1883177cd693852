//! What each call does.

use crate::{
	asset, BalanceOf, Bid, Bids, Config, Error, Event, JobSpec, NextOrderId, Order, OrderId,
	OrderStatus, Orders, Pallet, ProviderBids, StandingBidCount, TermsOf,
};
use frame::prelude::*;
use stint_primitives::{is_pinned_image, DeviceId};
use stint_traits::{ProviderCollateral, ProviderRegistry};

impl<T: Config> Pallet<T> {
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
			created_at: now,
			bids_close_at,
			status: OrderStatus::Open,
			bid_count: 0,
			bids_placed: 0,
			deadline: None,
		};
		Self::schedule(id, &mut order, bids_close_at)?;
		Orders::<T>::insert(id, order);
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
		let gpus = terms.requirements.gpu_count;
		ensure!(gpus > 0, Error::<T>::NoGpus);
		ensure!(gpus <= T::MaxGpusPerOrder::get(), Error::<T>::TooManyGpus);
		ensure!(terms.replicas == 1, Error::<T>::UnsupportedReplicas);
		ensure!(!terms.max_price_per_block.is_zero(), Error::<T>::ZeroPrice);
		ensure!(terms.bid_window >= T::MinBidWindow::get(), Error::<T>::BidWindowTooShort);
		ensure!(terms.bid_window <= T::MaxBidWindow::get(), Error::<T>::BidWindowTooLong);
		ensure!(
			terms.termination_notice <= T::MaxTerminationNotice::get(),
			Error::<T>::NoticeTooLong
		);
		let least = match terms.duration {
			Some(blocks) => {
				ensure!(!blocks.is_zero(), Error::<T>::ZeroDuration);
				Self::cost(terms.max_price_per_block, blocks)
			}
			None => terms.max_price_per_block,
		}
		.max(T::MinOrderDeposit::get());
		ensure!(deposit >= least, Error::<T>::DepositTooLow);
		Ok(())
	}

	/// `price × blocks`, saturating.
	pub(crate) fn cost(price: BalanceOf<T>, blocks: BlockNumberFor<T>) -> BalanceOf<T> {
		let blocks: u128 = blocks.saturated_into();
		price.saturating_mul(blocks.saturated_into())
	}

	pub(crate) fn do_place_bid(
		signer: T::AccountId,
		id: OrderId,
		price_per_block: BalanceOf<T>,
		devices: alloc::vec::Vec<DeviceId>,
	) -> DispatchResult {
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
		ensure!(provider != order.buyer, Error::<T>::BuyerCannotBid);
		ensure!(!price_per_block.is_zero(), Error::<T>::ZeroPrice);
		ensure!(price_per_block <= order.terms.max_price_per_block, Error::<T>::PriceAboveCeiling);
		let devices: BoundedVec<DeviceId, T::MaxGpusPerOrder> =
			devices.try_into().map_err(|_| Error::<T>::TooManyDevices)?;
		ensure!(!Bids::<T>::contains_key(id, &provider), Error::<T>::AlreadyBid);
		ensure!(order.bid_count < T::MaxBidsPerOrder::get(), Error::<T>::TooManyBids);
		ensure!(
			StandingBidCount::<T>::get(&provider) < T::MaxStandingBids::get(),
			Error::<T>::TooManyStandingBids
		);
		T::Registry::check_offer(&provider, &devices, &order.terms.requirements)?;

		let collateral = T::CollateralPerGpu::get().saturating_mul((devices.len() as u32).into());
		let deposit = T::BidDeposit::get();
		asset::hold_bid_deposit::<T>(&provider, deposit)?;
		T::Collateral::lock_collateral(&provider, collateral)?;

		let count = devices.len() as u32;
		Self::index_bid(&provider, id);
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
		Ok(())
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
		Bids::<T>::remove(id, provider);
		Self::unindex_bid(provider, id);
		Self::release_bid(provider, &bid, true)?;
		order.bid_count.saturating_dec();
		Orders::<T>::insert(id, order);
		Self::deposit_event(Event::BidRetracted { order: id, provider: provider.clone() });
		Ok(())
	}

	pub(crate) fn do_cancel_order(who: &T::AccountId, id: OrderId) -> DispatchResult {
		let order = Self::open_order(id)?;
		ensure!(&order.buyer == who, Error::<T>::NotBuyer);
		let refunded = Self::unwind(id, order)?;
		Self::deposit_event(Event::OrderCancelled { order: id, refunded });
		Ok(())
	}

	pub(crate) fn do_accept_bid(
		who: &T::AccountId,
		id: OrderId,
		provider: &T::AccountId,
		price_per_block: BalanceOf<T>,
		devices: &[DeviceId],
	) -> DispatchResult {
		let order = Self::open_order(id)?;
		ensure!(&order.buyer == who, Error::<T>::NotBuyer);
		let bid = Bids::<T>::get(id, provider).ok_or(Error::<T>::UnknownBid)?;
		ensure!(
			bid.price_per_block == price_per_block && bid.devices.as_slice() == devices,
			Error::<T>::BidChanged
		);
		Self::accept(id, order, provider, false).map(|_| ())
	}

	/// Files a new bid of `provider` on `id` in the provider's index.
	pub(crate) fn index_bid(provider: &T::AccountId, id: OrderId) {
		ProviderBids::<T>::insert(provider, id, ());
		StandingBidCount::<T>::mutate(provider, |count| count.saturating_inc());
	}

	/// Takes a bid that is gone out of the provider's index.
	pub(crate) fn unindex_bid(provider: &T::AccountId, id: OrderId) {
		ProviderBids::<T>::remove(provider, id);
		StandingBidCount::<T>::mutate_exists(provider, |count| {
			let left = count.unwrap_or_default().saturating_sub(1);
			*count = (left > 0).then_some(left);
		});
	}

	/// Withdraws every standing bid of `provider`, as if it retracted each.
	pub(crate) fn do_retract_all(provider: &T::AccountId) -> u32 {
		let ids: alloc::vec::Vec<OrderId> = ProviderBids::<T>::iter_key_prefix(provider).collect();
		let mut retracted = 0;
		for id in ids {
			// Each on its own: a bid that cannot be released stays, and try_state says so.
			let done = frame::deps::frame_support::storage::with_storage_layer(|| {
				let Some(bid) = Bids::<T>::take(id, provider) else {
					Self::unindex_bid(provider, id);
					return Ok(());
				};
				Self::unindex_bid(provider, id);
				Self::release_bid(provider, &bid, true)?;
				Orders::<T>::mutate(id, |order| {
					if let Some(order) = order {
						order.bid_count.saturating_dec();
					}
				});
				Self::deposit_event(Event::BidRetracted { order: id, provider: provider.clone() });
				Ok::<_, DispatchError>(())
			});
			match done {
				Ok(()) => retracted += 1,
				Err(error) => frame::log::error!(
					target: "runtime::market",
					"bid of {provider:?} on order {id} not withdrawn: {error:?}"
				),
			}
		}
		retracted
	}

	/// An order that exists and is open.
	pub(crate) fn open_order(id: OrderId) -> Result<crate::OrderOf<T>, DispatchError> {
		let order = Orders::<T>::get(id).ok_or(Error::<T>::UnknownOrder)?;
		ensure!(order.status == OrderStatus::Open, Error::<T>::OrderNotOpen);
		Ok(order)
	}
}
