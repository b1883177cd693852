//! Weights for `pallet-market`.
//!
//! Placeholders derived from the benchmarks' storage access counts and a conservative compute
//! estimate; generating them on reference hardware is a later step.

#![allow(unused_parens, unused_imports)]

use core::marker::PhantomData;
use frame::weights_prelude::*;

/// Weight functions needed by `pallet-market`.
pub trait WeightInfo {
	fn create_order() -> Weight;
	fn place_bid() -> Weight;
	fn retract_bid() -> Weight;
	/// With `b` bids on the order.
	fn cancel_order(b: u32) -> Weight;
	/// With `b` bids on the order.
	fn accept_bid(b: u32) -> Weight;
	fn reap_order() -> Weight;
	/// The block hook with `n` orders due, each with `MaxBidsPerOrder` bids.
	fn on_initialize(n: u32) -> Weight;
}

/// The default `MaxBidsPerOrder`, which the placeholders assume.
const BIDS: u64 = 32;
/// Per bid released: the bid, the provider's hold and its bond ledger.
const PER_BID_RW: u64 = 3;

/// Weights for a runtime, from the storage each call touches.
pub struct SubstrateWeight<T>(PhantomData<T>);
impl<T: frame_system::Config> WeightInfo for SubstrateWeight<T> {
	/// The order, its id counter, its deadline bucket and the buyer's hold.
	fn create_order() -> Weight {
		Weight::from_parts(60_000_000, 8_000).saturating_add(T::DbWeight::get().reads_writes(4, 4))
	}
	/// The order, the bid, the registry record and its device index, the bond ledger, the hold.
	fn place_bid() -> Weight {
		Weight::from_parts(90_000_000, 12_000)
			.saturating_add(T::DbWeight::get().reads_writes(6 + 8, 4))
	}
	fn retract_bid() -> Weight {
		Weight::from_parts(50_000_000, 8_000).saturating_add(T::DbWeight::get().reads_writes(4, 4))
	}
	/// Releases every bid.
	fn cancel_order(b: u32) -> Weight {
		let b = b as u64;
		Weight::from_parts(40_000_000 + 20_000_000 * b, 8_000 + 3_000 * b)
			.saturating_add(T::DbWeight::get().reads_writes(3 + PER_BID_RW * b, 3 + PER_BID_RW * b))
	}
	/// Releases every bid and creates the lease: its stream, hold and device commitments.
	fn accept_bid(b: u32) -> Weight {
		Self::cancel_order(b).saturating_add(
			Weight::from_parts(120_000_000, 20_000)
				.saturating_add(T::DbWeight::get().reads_writes(12, 12)),
		)
	}
	/// The order, the lease, its verdict, the stream, the registry record, two holds.
	fn reap_order() -> Weight {
		Weight::from_parts(80_000_000, 12_000).saturating_add(T::DbWeight::get().reads_writes(7, 7))
	}
	/// Per order: rank the bids (each provider's reputation) and try the best three.
	fn on_initialize(n: u32) -> Weight {
		Weight::from_parts(5_000_000, 2_000)
			.saturating_add(T::DbWeight::get().reads_writes(1, 1))
			.saturating_add(
				Self::accept_bid(BIDS as u32)
					.saturating_mul(crate::MAX_AUTO_ACCEPT_ATTEMPTS.into())
					.saturating_add(T::DbWeight::get().reads(BIDS))
					.saturating_mul(n.into()),
			)
	}
}

/// For tests.
impl WeightInfo for () {
	fn create_order() -> Weight {
		Weight::from_parts(60_000_000, 8_000)
	}
	fn place_bid() -> Weight {
		Weight::from_parts(90_000_000, 12_000)
	}
	fn retract_bid() -> Weight {
		Weight::from_parts(50_000_000, 8_000)
	}
	fn cancel_order(b: u32) -> Weight {
		Weight::from_parts(40_000_000 + 20_000_000 * b as u64, 8_000 + 3_000 * b as u64)
	}
	fn accept_bid(b: u32) -> Weight {
		Weight::from_parts(160_000_000 + 20_000_000 * b as u64, 28_000 + 3_000 * b as u64)
	}
	fn reap_order() -> Weight {
		Weight::from_parts(80_000_000, 12_000)
	}
	fn on_initialize(n: u32) -> Weight {
		Weight::from_parts(5_000_000 + 800_000_000 * n as u64, 2_000 + 124_000 * n as u64)
	}
}
