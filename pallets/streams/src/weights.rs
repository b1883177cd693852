//! Weights for `pallet-streams`.
//!
//! Placeholders derived from the benchmarks' storage access counts and a conservative compute
//! estimate; generating them on reference hardware is a later step.

#![allow(unused_parens, unused_imports)]

use core::marker::PhantomData;
use frame::weights_prelude::*;

/// Weight functions needed by `pallet-streams`.
pub trait WeightInfo {
	/// With `d` depositors.
	fn settle(d: u32) -> Weight;
	/// With `d` depositors.
	fn withdraw(d: u32) -> Weight;
	/// With `d` depositors.
	fn top_up(d: u32) -> Weight;
	/// With `d` depositors.
	fn close(d: u32) -> Weight;
	/// The block hook with `n` streams due.
	fn on_initialize(n: u32) -> Weight;
}

/// Per depositor: its account, and the payee's or the treasury's.
const PER_DEPOSITOR_RW: u64 = 3;
/// The default `MaxDepositors`, which the placeholders assume.
const DEPOSITORS: u64 = 8;

/// Weights for a runtime, from the storage each call touches.
pub struct SubstrateWeight<T>(PhantomData<T>);
impl<T: frame_system::Config> WeightInfo for SubstrateWeight<T> {
	fn settle(d: u32) -> Weight {
		let d = d as u64;
		Weight::from_parts(40_000_000 + 25_000_000 * d, 6_000 + 2_600 * d).saturating_add(
			T::DbWeight::get().reads_writes(1 + PER_DEPOSITOR_RW * d, 1 + PER_DEPOSITOR_RW * d),
		)
	}
	fn withdraw(d: u32) -> Weight {
		Self::settle(d)
	}
	/// Settles, holds, and moves the stream between two wake-up buckets.
	fn top_up(d: u32) -> Weight {
		Self::settle(d).saturating_add(
			Weight::from_parts(40_000_000, 10_000)
				.saturating_add(T::DbWeight::get().reads_writes(4, 4)),
		)
	}
	/// Settles and refunds every depositor.
	fn close(d: u32) -> Weight {
		Self::settle(d).saturating_add(
			Weight::from_parts(20_000_000 * d as u64, 0)
				.saturating_add(T::DbWeight::get().reads_writes(2 + d as u64, 2 + d as u64)),
		)
	}
	fn on_initialize(n: u32) -> Weight {
		Weight::from_parts(5_000_000, 2_000)
			.saturating_add(T::DbWeight::get().reads_writes(1, 1))
			.saturating_add(
				Self::close(DEPOSITORS as u32)
					.saturating_add(Weight::from_parts(10_000_000, 0))
					.saturating_mul(n.into()),
			)
	}
}

/// For tests.
impl WeightInfo for () {
	fn settle(d: u32) -> Weight {
		Weight::from_parts(40_000_000 + 25_000_000 * d as u64, 6_000 + 2_600 * d as u64)
	}
	fn withdraw(d: u32) -> Weight {
		Self::settle(d)
	}
	fn top_up(d: u32) -> Weight {
		Self::settle(d).saturating_add(Weight::from_parts(40_000_000, 10_000))
	}
	fn close(d: u32) -> Weight {
		Self::settle(d).saturating_add(Weight::from_parts(20_000_000 * d as u64, 0))
	}
	fn on_initialize(n: u32) -> Weight {
		Weight::from_parts(5_000_000 + 410_000_000 * n as u64, 2_000 + 26_800 * n as u64)
	}
}
