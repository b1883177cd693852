//! Benchmarks (v2) of every call, each at its worst case.

use crate::*;
use frame::{
	benchmarking::prelude::*,
	traits::fungible::{Inspect, Mutate},
};

fn funded<T: Config>(name: &'static str, index: u32) -> T::AccountId {
	let who: T::AccountId = account(name, index, 0);
	let amount = T::MinBond::get()
		.saturating_mul(1_000u32.into())
		.saturating_add(T::Currency::minimum_balance());
	T::Currency::set_balance(&who, amount);
	who
}

/// A provider with `100 × MinBond` bonded.
fn bonded<T: Config>() -> T::AccountId {
	let who = funded::<T>("provider", 0);
	Pallet::<T>::do_bond(&who, T::MinBond::get().saturating_mul(100u32.into())).unwrap();
	who
}

/// Fills the unlocking chunks but one, each in its own block.
fn fill_chunks<T: Config>(who: &T::AccountId, chunks: u32) {
	for _ in 0..chunks {
		frame_system::Pallet::<T>::set_block_number(
			frame_system::Pallet::<T>::block_number().saturating_add(1u32.into()),
		);
		Pallet::<T>::do_unbond(who, T::MinBond::get()).unwrap();
	}
}

#[benchmarks]
mod benches {
	use super::*;

	#[benchmark]
	fn bond() {
		let who = funded::<T>("provider", 0);
		#[extrinsic_call]
		_(RawOrigin::Signed(who.clone()), T::MinBond::get());
		assert!(Ledgers::<T>::contains_key(&who));
	}

	#[benchmark]
	fn bond_more() {
		let who = bonded::<T>();
		#[extrinsic_call]
		_(RawOrigin::Signed(who), T::MinBond::get());
	}

	/// With all chunks but one used: the new chunk is appended.
	#[benchmark]
	fn unbond() {
		let who = bonded::<T>();
		fill_chunks::<T>(&who, T::MaxUnlockingChunks::get() - 1);
		frame_system::Pallet::<T>::set_block_number(
			frame_system::Pallet::<T>::block_number().saturating_add(1u32.into()),
		);
		#[extrinsic_call]
		_(RawOrigin::Signed(who.clone()), T::MinBond::get());
		assert_eq!(
			Ledgers::<T>::get(&who).unwrap().unlocking.len() as u32,
			T::MaxUnlockingChunks::get()
		);
	}

	/// Rebonds every chunk.
	#[benchmark]
	fn rebond() {
		let who = bonded::<T>();
		let chunks = T::MaxUnlockingChunks::get();
		fill_chunks::<T>(&who, chunks);
		#[extrinsic_call]
		_(RawOrigin::Signed(who.clone()), T::MinBond::get().saturating_mul(chunks.into()));
		assert!(Ledgers::<T>::get(&who).unwrap().unlocking.is_empty());
	}

	/// Withdraws every chunk.
	#[benchmark]
	fn withdraw_unbonded() {
		let who = bonded::<T>();
		fill_chunks::<T>(&who, T::MaxUnlockingChunks::get());
		frame_system::Pallet::<T>::set_block_number(
			frame_system::Pallet::<T>::block_number().saturating_add(T::UnbondingPeriod::get()),
		);
		#[extrinsic_call]
		_(RawOrigin::Signed(who.clone()));
		assert!(Ledgers::<T>::get(&who).unwrap().unlocking.is_empty());
	}

	/// Slashes the whole bond across every chunk and pays a beneficiary that did not exist.
	#[benchmark]
	fn force_slash() -> Result<(), BenchmarkError> {
		let who = bonded::<T>();
		fill_chunks::<T>(&who, T::MaxUnlockingChunks::get());
		let beneficiary: T::AccountId = account("buyer", 0, 0);
		let origin =
			T::ForceOrigin::try_successful_origin().map_err(|_| BenchmarkError::Weightless)?;
		let everything = Ledgers::<T>::get(&who).unwrap().total();
		#[extrinsic_call]
		_(origin as T::RuntimeOrigin, who.clone(), everything, Some(beneficiary));
		assert!(!Ledgers::<T>::contains_key(&who));
		Ok(())
	}

	impl_benchmark_test_suite!(
		Pallet,
		crate::mock::ExtBuilder::default().build(),
		crate::mock::Test
	);
}
