//! Reads for the runtime API: open orders, paged, and the orders a provider can serve.

use crate::{
	BidOf, Bidders, Bids, Config, OpenOrders, OrderId, OrderOf, Orders, Pallet, Rejections,
};
use alloc::vec::Vec;
use frame::prelude::*;
use stint_primitives::DeviceId;
use stint_traits::ProviderRegistry;

/// How many open orders `servable_orders` may look at beyond its `limit` (orders the provider
/// cannot serve, say): its work is bounded whatever the number of open orders.
pub const SERVABLE_SCAN_BUDGET: u32 = 256;

/// The most orders one call of `open_orders` or `servable_orders` returns, whatever `limit` it
/// is asked: the runtime API is public (any node answers `state_call`), so a page must be
/// bounded by the runtime, not by the caller.
pub const MAX_PAGE: u32 = 256;

impl<T: Config> Pallet<T> {
	/// Open orders after `start_after` (in the open-order index's order), at most `limit` (and
	/// never more than [`MAX_PAGE`]).
	pub fn open_orders(start_after: Option<OrderId>, limit: u32) -> Vec<(OrderId, OrderOf<T>)> {
		Self::open_after(start_after)
			.filter_map(|id| Orders::<T>::get(id).map(|order| (id, order)))
			.take(limit.min(MAX_PAGE) as usize)
			.collect()
	}

	/// The ids of open orders after `start_after`, lazily: only what is consumed is read.
	fn open_after(start_after: Option<OrderId>) -> impl Iterator<Item = OrderId> {
		match start_after {
			Some(id) => OpenOrders::<T>::iter_keys_from(OpenOrders::<T>::hashed_key_for(id)),
			None => OpenOrders::<T>::iter_keys(),
		}
	}

	/// Open orders still taking bids that `who` can bid on now, each with the first of its
	/// uncommitted devices that meet the requirements, checked exactly as `place_bid` would.
	/// `who` is a provider, or one of its worker keys, which is offered only its own devices.
	/// Orders the provider already bid on or was rejected from, orders of its own (or of a
	/// party tied to it), and orders with `MaxBidsPerOrder` bids, are left out.
	///
	/// Looks at no more than `limit` + [`SERVABLE_SCAN_BUDGET`] open orders after `start_after`,
	/// however many exist, and says where it stopped: the second value is the id to page on
	/// from, or `None` once the whole index was read. A crowd of orders the provider cannot
	/// serve therefore costs it pages, never the orders behind them.
	pub fn servable_orders(
		who: &T::AccountId,
		start_after: Option<OrderId>,
		limit: u32,
	) -> (Vec<(OrderId, Vec<DeviceId>)>, Option<OrderId>) {
		let limit = limit.min(MAX_PAGE);
		let Ok((provider, worker)) = T::Registry::acting_for(who) else {
			return (Vec::new(), None);
		};
		if !T::Registry::is_active(&provider) {
			return (Vec::new(), None);
		}
		let own: Option<Vec<DeviceId>> =
			worker.map(|key| T::Registry::worker_devices(&provider, &key));
		let free: Vec<_> = T::Registry::devices(&provider)
			.into_iter()
			.filter(|device| T::Registry::committed_to(&provider, &device.uuid_hash).is_none())
			.filter(|device| own.as_ref().is_none_or(|own| own.contains(&device.uuid_hash)))
			.collect();
		let standing =
			Bidders::<T>::get(&provider).map(|b| b.bids.into_inner()).unwrap_or_default();
		let now = frame_system::Pallet::<T>::block_number();
		let mut found = Vec::new();
		let mut ids = Self::open_after(start_after);
		let mut last = start_after;
		for _ in 0..limit.saturating_add(SERVABLE_SCAN_BUDGET) {
			if found.len() >= limit as usize {
				break;
			}
			let Some(id) = ids.next() else { return (found, None) };
			last = Some(id);
			let Some(order) = Orders::<T>::get(id) else { continue };
			if now >= order.bids_close_at
				|| T::Registry::tied(&order.buyer, &provider)
				|| order.bid_count >= T::MaxBidsPerOrder::get()
				|| standing.contains(&id)
				|| Rejections::<T>::get(id).contains(&provider)
			{
				continue;
			}
			let requirements = &order.terms.requirements;
			let mut single = requirements.clone();
			single.gpu_count = 1;
			// The devices of one worker (one machine), the first that fits with enough.
			let Some(chosen) =
				Self::choose_devices(&provider, &free, &single, requirements.gpu_count)
			else {
				continue;
			};
			if T::Registry::check_offer(&provider, &chosen, requirements).is_ok() {
				found.push((id, chosen));
			}
		}
		(found, last)
	}

	/// The first `count` of `free` that each meet `single`, all bound to one worker key.
	fn choose_devices(
		provider: &T::AccountId,
		free: &[stint_primitives::GpuDevice],
		single: &stint_primitives::GpuRequirements,
		count: u32,
	) -> Option<Vec<DeviceId>> {
		let fitting: Vec<DeviceId> = free
			.iter()
			.filter(|device| single.admits(core::slice::from_ref(*device)).is_ok())
			.map(|device| device.uuid_hash)
			.collect();
		let mut tried = Vec::new();
		for first in &fitting {
			let Some(key) = T::Registry::worker_for(provider, core::slice::from_ref(first)) else {
				continue;
			};
			if tried.contains(&key) {
				continue;
			}
			tried.push(key);
			let own = T::Registry::worker_devices(provider, &key);
			let chosen: Vec<DeviceId> = fitting
				.iter()
				.filter(|device| own.contains(device))
				.take(count as usize)
				.copied()
				.collect();
			if chosen.len() == count as usize {
				return Some(chosen);
			}
		}
		None
	}

	/// The standing bids of `who` (a provider, or one of its worker keys, which sees only the
	/// bids on its own devices), by order.
	pub fn bids_of(who: &T::AccountId) -> Vec<(OrderId, BidOf<T>)> {
		let Ok((provider, worker)) = T::Registry::acting_for(who) else { return Vec::new() };
		let standing =
			Bidders::<T>::get(&provider).map(|b| b.bids.into_inner()).unwrap_or_default();
		standing
			.into_iter()
			.filter_map(|id| Bids::<T>::get(id, &provider).map(|bid| (id, bid)))
			.filter(|(_, bid)| {
				worker.is_none() || T::Registry::worker_for(&provider, &bid.devices) == worker
			})
			.collect()
	}

	/// The job spec of order `id`, if it is still stored.
	pub fn spec_of(id: OrderId) -> Option<stint_primitives::JobSpec> {
		Orders::<T>::get(id).map(|order| order.spec)
	}
}
