//! Weights for `pallet-providers`.
//!
//! Placeholders derived from the benchmarks' storage access counts and a conservative compute
//! estimate; generating them on reference hardware with `frame-omni-bencher` is a later step.

#![allow(unused_parens, unused_imports)]

use core::marker::PhantomData;
use frame::weights_prelude::*;

/// Weight functions needed by `pallet-providers`.
pub trait WeightInfo {
	fn register(g: u32) -> Weight;
	fn update_info() -> Weight;
	fn update_hardware(g: u32) -> Weight;
	fn rotate_worker_key() -> Weight;
	fn bind_worker(d: u32) -> Weight;
	fn unbind_worker() -> Weight;
	fn pause() -> Weight;
	fn resume() -> Weight;
	fn announce_exit() -> Weight;
	fn deregister() -> Weight;
}

/// Weights for a runtime, from the storage each call touches.
pub struct SubstrateWeight<T>(PhantomData<T>);
impl<T: frame_system::Config> WeightInfo for SubstrateWeight<T> {
	/// Reads: Providers, DeviceOwners × g, the account, the holds. Writes: the same.
	fn register(g: u32) -> Weight {
		Weight::from_parts(60_000_000, 6_000)
			.saturating_add(Weight::from_parts(8_000_000, 2_600).saturating_mul(g.into()))
			.saturating_add(T::DbWeight::get().reads(4_u64 + g as u64))
			.saturating_add(T::DbWeight::get().writes(5_u64 + g as u64))
	}
	fn update_info() -> Weight {
		Weight::from_parts(25_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(1, 1))
	}
	/// Old and new devices: up to 2g owner entries.
	fn update_hardware(g: u32) -> Weight {
		Weight::from_parts(60_000_000, 6_000)
			.saturating_add(Weight::from_parts(12_000_000, 5_200).saturating_mul(g.into()))
			.saturating_add(T::DbWeight::get().reads(3_u64 + 2 * g as u64))
			.saturating_add(T::DbWeight::get().writes(3_u64 + 2 * g as u64))
	}
	/// The record and the worker index: one entry out, one in.
	fn rotate_worker_key() -> Weight {
		Weight::from_parts(25_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(3, 3))
	}
	/// The record, the worker index, and whether each of `d` devices is committed.
	fn bind_worker(d: u32) -> Weight {
		Weight::from_parts(30_000_000, 6_000)
			.saturating_add(Weight::from_parts(3_000_000, 2_600).saturating_mul(d.into()))
			.saturating_add(T::DbWeight::get().reads(3_u64 + d as u64))
			.saturating_add(T::DbWeight::get().writes(2_u64))
	}
	/// The record, the worker index, and whether each of its devices (at most `MaxGpus`) is
	/// committed.
	fn unbind_worker() -> Weight {
		Weight::from_parts(30_000_000, 40_000)
			.saturating_add(T::DbWeight::get().reads(18_u64))
			.saturating_add(T::DbWeight::get().writes(2_u64))
	}
	fn pause() -> Weight {
		Weight::from_parts(20_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(1, 1))
	}
	fn resume() -> Weight {
		Weight::from_parts(20_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(1, 1))
	}
	fn announce_exit() -> Weight {
		Weight::from_parts(20_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(1, 1))
	}
	/// Removes the owner entry of every registered GPU (at most `MaxGpus`, 16 by default) and
	/// the index entry of every worker key (at most `MaxWorkers`, 8 by default).
	fn deregister() -> Weight {
		Weight::from_parts(90_000_000, 50_000)
			.saturating_add(T::DbWeight::get().reads(4_u64))
			.saturating_add(T::DbWeight::get().writes(28_u64))
	}
}

/// For tests: the same as [`SubstrateWeight`] on a runtime with unit database weights.
impl WeightInfo for () {
	fn register(g: u32) -> Weight {
		Weight::from_parts(60_000_000 + 8_000_000 * g as u64, 6_000)
	}
	fn update_info() -> Weight {
		Weight::from_parts(25_000_000, 4_000)
	}
	fn update_hardware(g: u32) -> Weight {
		Weight::from_parts(60_000_000 + 12_000_000 * g as u64, 6_000)
	}
	fn rotate_worker_key() -> Weight {
		Weight::from_parts(25_000_000, 4_000)
	}
	fn bind_worker(d: u32) -> Weight {
		Weight::from_parts(30_000_000 + 3_000_000 * d as u64, 6_000)
	}
	fn unbind_worker() -> Weight {
		Weight::from_parts(30_000_000, 40_000)
	}
	fn pause() -> Weight {
		Weight::from_parts(20_000_000, 4_000)
	}
	fn resume() -> Weight {
		Weight::from_parts(20_000_000, 4_000)
	}
	fn announce_exit() -> Weight {
		Weight::from_parts(20_000_000, 4_000)
	}
	fn deregister() -> Weight {
		Weight::from_parts(90_000_000, 50_000)
	}
}
