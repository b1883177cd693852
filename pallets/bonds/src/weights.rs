//! Weights for `pallet-bonds`.
//!
//! Placeholders derived from the benchmarks' storage access counts and a conservative compute
//! estimate; generating them on reference hardware is a later step.

#![allow(unused_parens, unused_imports)]

use core::marker::PhantomData;
use frame::weights_prelude::*;

/// Weight functions needed by `pallet-bonds`.
pub trait WeightInfo {
	fn bond() -> Weight;
	fn bond_more() -> Weight;
	fn unbond() -> Weight;
	fn rebond() -> Weight;
	fn withdraw_unbonded() -> Weight;
	fn force_slash() -> Weight;
}

/// Weights for a runtime, from the storage each call touches.
pub struct SubstrateWeight<T>(PhantomData<T>);
impl<T: frame_system::Config> WeightInfo for SubstrateWeight<T> {
	/// Reads and writes the ledger, the account and its holds.
	fn bond() -> Weight {
		Weight::from_parts(45_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(3, 3))
	}
	fn bond_more() -> Weight {
		Weight::from_parts(45_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(3, 3))
	}
	fn unbond() -> Weight {
		Weight::from_parts(30_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(1, 1))
	}
	/// Walks every unlocking chunk at worst.
	fn rebond() -> Weight {
		Weight::from_parts(35_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(1, 1))
	}
	fn withdraw_unbonded() -> Weight {
		Weight::from_parts(50_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(3, 3))
	}
	/// Slash from active and every chunk, then pay the buyer and the handler.
	fn force_slash() -> Weight {
		Weight::from_parts(90_000_000, 8_000).saturating_add(T::DbWeight::get().reads_writes(5, 5))
	}
}

/// For tests.
impl WeightInfo for () {
	fn bond() -> Weight {
		Weight::from_parts(45_000_000, 4_000)
	}
	fn bond_more() -> Weight {
		Weight::from_parts(45_000_000, 4_000)
	}
	fn unbond() -> Weight {
		Weight::from_parts(30_000_000, 4_000)
	}
	fn rebond() -> Weight {
		Weight::from_parts(35_000_000, 4_000)
	}
	fn withdraw_unbonded() -> Weight {
		Weight::from_parts(50_000_000, 4_000)
	}
	fn force_slash() -> Weight {
		Weight::from_parts(90_000_000, 8_000)
	}
}
