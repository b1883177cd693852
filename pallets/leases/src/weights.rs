//! Weights for `pallet-leases`.
//!
//! Placeholders derived from the benchmarks' storage access counts and a conservative compute
//! estimate (an sr25519 verification is about 60 µs); generating them on reference hardware is a
//! later step.

#![allow(unused_parens, unused_imports)]

use core::marker::PhantomData;
use frame::weights_prelude::*;

/// Weight functions needed by `pallet-leases`.
pub trait WeightInfo {
	fn ack_lease() -> Weight;
	fn submit_result() -> Weight;
	fn checkpoint() -> Weight;
	fn give_notice() -> Weight;
	fn terminate() -> Weight;
	fn close_lease() -> Weight;
	fn report_no_show() -> Weight;
	fn report_missed_result() -> Weight;
	fn accept_result() -> Weight;
	fn object_to_result() -> Weight;
	fn confirm_result() -> Weight;
}

/// Closing a stream with its largest number of depositors, and releasing up to 8 devices.
const CLOSE: (u64, u64) = (400_000_000, 30_000);
const CLOSE_RW: u64 = 30;
/// An sr25519 verification.
const VERIFY: u64 = 80_000_000;

/// Weights for a runtime, from the storage each call touches.
pub struct SubstrateWeight<T>(PhantomData<T>);
impl<T: frame_system::Config> WeightInfo for SubstrateWeight<T> {
	fn ack_lease() -> Weight {
		Weight::from_parts(60_000_000, 8_000).saturating_add(T::DbWeight::get().reads_writes(4, 4))
	}
	fn submit_result() -> Weight {
		Weight::from_parts(CLOSE.0 + VERIFY, CLOSE.1)
			.saturating_add(T::DbWeight::get().reads_writes(CLOSE_RW + 3, CLOSE_RW + 3))
	}
	fn checkpoint() -> Weight {
		Weight::from_parts(CLOSE.0 / 2 + VERIFY, CLOSE.1)
			.saturating_add(T::DbWeight::get().reads_writes(CLOSE_RW / 2 + 2, CLOSE_RW / 2 + 2))
	}
	fn give_notice() -> Weight {
		Weight::from_parts(30_000_000, 4_000).saturating_add(T::DbWeight::get().reads_writes(1, 1))
	}
	/// Closes the stream and slashes: the worst case.
	fn terminate() -> Weight {
		Self::report_no_show()
	}
	fn close_lease() -> Weight {
		Weight::from_parts(CLOSE.0, CLOSE.1)
			.saturating_add(T::DbWeight::get().reads_writes(CLOSE_RW + 3, CLOSE_RW + 3))
	}
	/// Closes the stream and slashes, paying the buyer, the reporter and the slash handler.
	fn report_no_show() -> Weight {
		Self::close_lease().saturating_add(
			Weight::from_parts(150_000_000, 15_000)
				.saturating_add(T::DbWeight::get().reads_writes(8, 8)),
		)
	}
	fn report_missed_result() -> Weight {
		Self::report_no_show()
	}
	/// Reads the lease and the verdict, records the outcome in the registry.
	fn accept_result() -> Weight {
		Weight::from_parts(30_000_000, 6_000).saturating_add(T::DbWeight::get().reads_writes(3, 2))
	}
	fn object_to_result() -> Weight {
		Self::accept_result()
	}
	fn confirm_result() -> Weight {
		Self::accept_result()
	}
}

/// For tests.
impl WeightInfo for () {
	fn ack_lease() -> Weight {
		Weight::from_parts(60_000_000, 8_000)
	}
	fn submit_result() -> Weight {
		Weight::from_parts(480_000_000, 30_000)
	}
	fn checkpoint() -> Weight {
		Weight::from_parts(280_000_000, 30_000)
	}
	fn give_notice() -> Weight {
		Weight::from_parts(30_000_000, 4_000)
	}
	fn terminate() -> Weight {
		Weight::from_parts(550_000_000, 45_000)
	}
	fn close_lease() -> Weight {
		Weight::from_parts(400_000_000, 30_000)
	}
	fn report_no_show() -> Weight {
		Weight::from_parts(550_000_000, 45_000)
	}
	fn report_missed_result() -> Weight {
		Weight::from_parts(550_000_000, 45_000)
	}
	fn accept_result() -> Weight {
		Weight::from_parts(30_000_000, 6_000)
	}
	fn object_to_result() -> Weight {
		Weight::from_parts(30_000_000, 6_000)
	}
	fn confirm_result() -> Weight {
		Weight::from_parts(30_000_000, 6_000)
	}
}
