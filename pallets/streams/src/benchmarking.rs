//! Benchmarks (v2) of every call and of the block hook, each at its worst case: every stream with
//! `MaxDepositors` depositors, so every settlement draws on all of them.

use crate::*;
use frame::{
	benchmarking::prelude::*,
	traits::fungible::{Inspect, Mutate},
};
use stint_traits::PaymentStreams;

fn funded<T: Config>(name: &'static str, index: u32) -> T::AccountId {
	let who: T::AccountId = account(name, index, 0);
	T::Currency::set_balance(
		&who,
		T::Currency::minimum_balance().saturating_mul(1_000_000u32.into()),
	);
	who
}

/// A stream with every depositor slot used, paying `ED` per block from `1000 × ED` each.
fn full_stream<T: Config>(index: u32) -> StreamId {
	stream_with::<T>(index, T::MaxDepositors::get())
}

/// A stream with `depositors` depositors (the payer first), paying `ED` per block from
/// `1000 × ED` each.
fn stream_with<T: Config>(index: u32, depositors: u32) -> StreamId {
	let ed = T::Currency::minimum_balance();
	let payer = funded::<T>("payer", index);
	let payee = funded::<T>("payee", index);
	let id = Pallet::<T>::open(
		&payer,
		&payee,
		ed,
		ed.saturating_mul(1_000u32.into()),
		0,
		None,
		// A holdback: settling withholds too, the worst case.
		Permill::from_percent(10),
	)
	.unwrap();
	Pallet::<T>::start(id).unwrap();
	for d in 1..depositors {
		let depositor = funded::<T>("depositor", index * 1_000 + d);
		Pallet::<T>::do_top_up(&depositor, id, ed.saturating_mul(1_000u32.into())).unwrap();
	}
	id
}

/// `count` copies of stream `id`'s record under fresh ids: the other streams a busy chain holds,
/// so that the trie the measured call reads is as deep as theirs. Only the scale benchmarks use
/// them; nothing reads the copies.
fn crowd<T: Config>(id: StreamId, count: u32) {
	let record = Records::<T>::get(id).unwrap();
	let first = NextStreamId::<T>::get();
	for i in 0..count {
		Records::<T>::insert(first.saturating_add(i.into()), record.clone());
	}
	NextStreamId::<T>::put(first.saturating_add(count.into()));
}

/// The most other streams the scale benchmarks put in storage.
const CROWD: u32 = 100_000;

/// Suspends stream `id` with its grace ending at `at`, when the hook closes it.
fn grace_ends<T: Config>(id: StreamId, at: BlockNumberFor<T>) {
	let mut stream = Records::<T>::get(id).unwrap();
	Pallet::<T>::unschedule(id, &mut stream);
	stream.status = StreamStatus::Suspended { grace_ends: at };
	Pallet::<T>::schedule(id, &mut stream, at);
	Records::<T>::insert(id, stream);
}

fn advance<T: Config>(blocks: u32) {
	frame_system::Pallet::<T>::set_block_number(
		frame_system::Pallet::<T>::block_number().saturating_add(blocks.into()),
	);
}

#[benchmarks]
mod benches {
	use super::*;

	#[benchmark]
	fn settle(d: Linear<1, { T::MaxDepositors::get() }>) {
		let id = stream_with::<T>(0, d);
		advance::<T>(10);
		let caller: T::AccountId = whitelisted_caller();
		#[extrinsic_call]
		_(RawOrigin::Signed(caller), id);
		assert!(Records::<T>::get(id).unwrap().paid > Zero::zero());
	}

	#[benchmark]
	fn withdraw(d: Linear<1, { T::MaxDepositors::get() }>) {
		let id = stream_with::<T>(0, d);
		advance::<T>(10);
		let payee = Records::<T>::get(id).unwrap().payee;
		#[extrinsic_call]
		_(RawOrigin::Signed(payee), id);
	}

	/// A top-up by the last depositor of a suspended stream: settles, resumes, reschedules.
	#[benchmark]
	fn top_up(d: Linear<1, { T::MaxDepositors::get() }>) {
		let id = stream_with::<T>(0, d);
		let stream = Records::<T>::get(id).unwrap();
		let StreamStatus::Active { depletes_at } = stream.status else { panic!("active") };
		frame_system::Pallet::<T>::set_block_number(depletes_at);
		Pallet::<T>::on_initialize(depletes_at);
		let depositor = stream.depositors.last().unwrap().who.clone();
		// Resuming takes at least a grace period's worth.
		let grace: u32 = stream.grace_period.saturated_into();
		let amount = stream.rate.saturating_mul(grace.saturating_add(10).into());
		#[extrinsic_call]
		_(RawOrigin::Signed(depositor), id, amount);
		assert!(matches!(Records::<T>::get(id).unwrap().status, StreamStatus::Active { .. }));
	}

	/// Its owner closes it: pays to date and refunds every depositor.
	#[benchmark]
	fn close(d: Linear<1, { T::MaxDepositors::get() }>) {
		let id = stream_with::<T>(0, d);
		advance::<T>(10);
		#[block]
		{
			<Pallet<T> as stint_traits::PaymentStreams<_, _, _>>::close(id).unwrap();
		}
		assert_eq!(Records::<T>::get(id).unwrap().status, StreamStatus::Closed);
	}

	/// `n` streams end their grace in the same block: each is closed and refunds every depositor.
	#[benchmark]
	fn on_initialize(n: Linear<0, { T::MaxWakeupsPerBlock::get() }>) {
		let ids: alloc::vec::Vec<_> = (0..n).map(full_stream::<T>).collect();
		let at = frame_system::Pallet::<T>::block_number().saturating_add(1u32.into());
		for id in &ids {
			grace_ends::<T>(*id, at);
		}
		frame_system::Pallet::<T>::set_block_number(at);
		#[block]
		{
			Pallet::<T>::on_initialize(at);
		}
		for id in ids {
			assert_eq!(Records::<T>::get(id).unwrap().status, StreamStatus::Closed);
		}
	}

	// Scale: the same work with `s` other streams in storage. Not weights (the script leaves them
	// out of `weights.rs`): they show that a stream's cost does not grow with the market, and
	// `scripts/bench-weights.sh` reports them in docs/performance.md.

	#[benchmark]
	fn scale_settle(s: Linear<10, CROWD>) {
		let id = full_stream::<T>(0);
		crowd::<T>(id, s);
		advance::<T>(10);
		let caller: T::AccountId = whitelisted_caller();
		#[extrinsic_call]
		settle(RawOrigin::Signed(caller), id);
	}

	#[benchmark]
	fn scale_withdraw(s: Linear<10, CROWD>) {
		let id = full_stream::<T>(0);
		crowd::<T>(id, s);
		advance::<T>(10);
		let payee = Records::<T>::get(id).unwrap().payee;
		#[extrinsic_call]
		withdraw(RawOrigin::Signed(payee), id);
	}

	#[benchmark]
	fn scale_top_up(s: Linear<10, CROWD>) {
		let id = full_stream::<T>(0);
		crowd::<T>(id, s);
		advance::<T>(10);
		let depositor = Records::<T>::get(id).unwrap().depositors.last().unwrap().who.clone();
		#[extrinsic_call]
		top_up(
			RawOrigin::Signed(depositor),
			id,
			T::Currency::minimum_balance().saturating_mul(10u32.into()),
		);
	}

	/// The hook expires one stream whose grace ended.
	#[benchmark]
	fn scale_expire(s: Linear<10, CROWD>) {
		let id = full_stream::<T>(0);
		crowd::<T>(id, s);
		let at = frame_system::Pallet::<T>::block_number().saturating_add(1u32.into());
		grace_ends::<T>(id, at);
		frame_system::Pallet::<T>::set_block_number(at);
		#[block]
		{
			Pallet::<T>::on_initialize(at);
		}
		assert_eq!(Records::<T>::get(id).unwrap().status, StreamStatus::Closed);
	}

	impl_benchmark_test_suite!(Pallet, crate::mock::ExtBuilder::build(), crate::mock::Test);
}
