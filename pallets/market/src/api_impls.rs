//! Reads for the runtime API: open orders, paged, and the orders a provider can serve.

use crate::{Config, OrderId, OrderOf, OrderStatus, Orders, Pallet};
use alloc::vec::Vec;
use frame::prelude::*;
use stint_primitives::DeviceId;
use stint_traits::ProviderRegistry;

impl<T: Config> Pallet<T> {
	/// Open orders after `start_after` (storage order), at most `limit`.
	pub fn open_orders(start_after: Option<OrderId>, limit: u32) -> Vec<(OrderId, OrderOf<T>)> {
		let iter = match start_after {
			Some(id) => Orders::<T>::iter_from(Orders::<T>::hashed_key_for(id)),
			None => Orders::<T>::iter(),
		};
		iter.filter(|(_, order)| order.status == OrderStatus::Open).take(limit as usize).collect()
	}

	/// Open orders still taking bids that `provider` can bid on now, each with the first of its
	/// uncommitted devices that meet the requirements, checked exactly as `place_bid` would.
	pub fn servable_orders(
		provider: &T::AccountId,
		start_after: Option<OrderId>,
		limit: u32,
	) -> Vec<(OrderId, Vec<DeviceId>)> {
		if !T::Registry::is_active(provider) {
			return Vec::new();
		}
		let free: Vec<_> = T::Registry::devices(provider)
			.into_iter()
			.filter(|device| T::Registry::committed_to(&device.uuid_hash).is_none())
			.collect();
		let now = frame_system::Pallet::<T>::block_number();
		Self::open_orders(start_after, u32::MAX)
			.into_iter()
			.filter(|(_, order)| now < order.bids_close_at && order.buyer != *provider)
			.filter_map(|(id, order)| {
				let requirements = &order.terms.requirements;
				let mut single = requirements.clone();
				single.gpu_count = 1;
				let chosen: Vec<DeviceId> = free
					.iter()
					.filter(|device| single.admits(core::slice::from_ref(*device)).is_ok())
					.take(requirements.gpu_count as usize)
					.map(|device| device.uuid_hash)
					.collect();
				T::Registry::check_offer(provider, &chosen, requirements)
					.is_ok()
					.then_some((id, chosen))
			})
			.take(limit as usize)
			.collect()
	}
}
