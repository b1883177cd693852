//! Weights for `pallet-streams`.
//!
//! Placeholders derived from the benchmarks' storage access counts and a conservative compute
//! estimate; generating them on reference hardware is a later step.

#![allow(unused_parens, unused_imports)]

use core::marker::PhantomData;
use frame::weights_prelude::*;

/// Weight functions needed by `pallet-streams`.
pub trait WeightInfo {
	fn settle() -> Weight;
	fn withdraw() -> Weight;
	fn top_up() -> Weight;
	fn close() -> Weight;
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
	fn settle() -> Weight {
		Weight::from_parts(40_000_000 + 25_000_000 * DEPOSITORS, 6_000 + 2_600 * DEPOSITORS)
			.saturating_add(
				T::DbWeight::get().reads_writes(
					1 + PER_DEPOSITOR_RW * DEPOSITORS,
					1 + PER_DEPOSITOR_RW * DEPOSITORS,
				),
			)
	}
	fn withdraw() -> Weight {
		Self::settle()
	}
	/// Settles, holds, and moves the stream between two wake-up buckets.
	fn top_up() -> Weight {
		Self::settle().saturating_add(
			Weight::from_parts(40_000_000, 10_000)
				.saturating_add(T::DbWeight::get().reads_writes(4, 4)),
		)
	}
	/// Settles and refunds every depositor.
	fn close() -> Weight {
		Self::settle().saturating_add(
			Weight::from_parts(20_000_000 * DEPOSITORS, 0)
				.saturating_add(T::DbWeight::get().reads_writes(2 + DEPOSITORS, 2 + DEPOSITORS)),
		)
	}
	fn on_initialize(n: u32) -> Weight {
		Weight::from_parts(5_000_000, 2_000)
			.saturating_add(T::DbWeight::get().reads_writes(1, 1))
			.saturating_add(
				Self::close()
					.saturating_add(Weight::from_parts(10_000_000, 0))
					.saturating_mul(n.into()),
			)
	}
}

/// For tests.
impl WeightInfo for () {
	fn settle() -> Weight {
		Weight::from_parts(240_000_000, 26_800)
	}
	fn withdraw() -> Weight {
		Self::settle()
	}
	fn top_up() -> Weight {
		Weight::from_parts(280_000_000, 36_800)
	}
	fn close() -> Weight {
		Weight::from_parts(400_000_000, 26_800)
	}
	fn on_initialize(n: u32) -> Weight {
		Weight::from_parts(5_000_000 + 410_000_000 * n as u64, 2_000 + 26_800 * n as u64)
	}
}
