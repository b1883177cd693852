//! Benchmarks (v2) of every call and of the block hook, each at its worst case: orders for
//! `MaxGpusPerOrder` GPUs with the largest job spec, and `MaxBidsPerOrder` bids on every order.

use crate::*;
use alloc::vec::Vec;
use frame::{
	benchmarking::prelude::*,
	traits::fungible::{Inspect, Mutate},
};
use stint_primitives::{ComputeCapability, GpuRequirements, Text};

fn funded<T: Config>(name: &'static str, index: u32) -> T::AccountId {
	let who: T::AccountId = account(name, index, 0);
	T::Currency::set_balance(
		&who,
		T::Currency::minimum_balance().saturating_mul((1u32 << 30).into()),
	);
	who
}

fn text<const N: u32>() -> Text<N> {
	alloc::vec![b'a'; N as usize].try_into().unwrap()
}

/// The largest job spec the bounds allow, with a pinned image.
fn largest_spec() -> JobSpec {
	use stint_primitives::*;
	let mut image = alloc::vec![b'a'; (MAX_IMAGE_LEN - 72) as usize];
	image.extend_from_slice(b"@sha256:");
	image.extend_from_slice(&[b'0'; 64]);
	JobSpec {
		image: image.try_into().unwrap(),
		command: alloc::vec![text::<MAX_ARG_LEN>(); MAX_ARGS as usize].try_into().unwrap(),
		env: alloc::vec![EnvVar { key: text(), value: text() }; MAX_ENV as usize]
			.try_into()
			.unwrap(),
		inputs: alloc::vec![Input { uri: text(), content_hash: [7; 32] }; MAX_INPUTS as usize]
			.try_into()
			.unwrap(),
		max_output_bytes: u64::MAX,
	}
}

fn worst_terms<T: Config>(gpus: u32, auto_accept: bool) -> TermsOf<T> {
	OrderTerms {
		requirements: GpuRequirements {
			gpu_count: gpus,
			min_vram_mib: 0,
			min_compute_capability: ComputeCapability::default(),
			models: Default::default(),
			min_cuda_driver_version: 0,
			region: None,
			min_reputation: Permill::zero(),
		},
		max_price_per_block: T::Currency::minimum_balance().saturating_mul(2u32.into()),
		duration: Some(1_000u32.into()),
		bid_window: T::MinBidWindow::get(),
		auto_accept,
		replicas: 1,
		termination_notice: T::MinTerminationNotice::get(),
		holdback: T::MinHoldback::get(),
		verdict_window: T::MaxVerdictWindow::get(),
		deterministic: true,
	}
}

fn order_with_bids<T: Config>(index: u32, bids: u32, auto_accept: bool) -> (T::AccountId, OrderId) {
	order_of::<T>(index, largest_spec(), T::MaxGpusPerOrder::get(), bids, auto_accept)
}

/// An order of a typical size (an image and nothing else), with `bids` bids: what the scale
/// benchmarks copy, so their crowd weighs what a real market's does.
fn typical_order<T: Config>(bids: u32) -> OrderId {
	let mut image = b"ghcr.io/acme/train@sha256:".to_vec();
	image.extend_from_slice(&[b'0'; 64]);
	let spec = JobSpec {
		image: image.try_into().unwrap(),
		command: Default::default(),
		env: Default::default(),
		inputs: Default::default(),
		max_output_bytes: 1 << 30,
	};
	order_of::<T>(0, spec, T::MaxGpusPerOrder::get(), bids, true).1
}

/// An order for `gpus` GPUs with `bids` bids, each offering that many devices.
fn order_of<T: Config>(
	index: u32,
	spec: JobSpec,
	gpus: u32,
	bids: u32,
	auto_accept: bool,
) -> (T::AccountId, OrderId) {
	let buyer = funded::<T>("buyer", index);
	let terms = worst_terms::<T>(gpus, auto_accept);
	let deposit = Pallet::<T>::cost(terms.max_price_per_block, 1_000u32.into())
		.max(T::MinOrderDeposit::get());
	let id = Pallet::<T>::do_create_order(buyer.clone(), spec, terms, deposit).unwrap();
	for b in 0..bids {
		let (provider, devices) = T::BenchmarkHelper::provider(index * 1_000 + b, gpus);
		let price = T::Currency::minimum_balance().saturating_mul(2u32.into());
		Pallet::<T>::do_place_bid(provider, id, price, devices.try_into().unwrap()).unwrap();
	}
	(buyer, id)
}

/// Copies of open order `id`, `count` of them under fresh ids, open and still taking bids: the
/// other orders a busy market holds. Only the scale benchmarks use them.
fn crowd_orders<T: Config>(id: OrderId, count: u32) -> Vec<OrderId> {
	let order = Orders::<T>::get(id).unwrap();
	let first = NextOrderId::<T>::get();
	let ids: Vec<OrderId> = (0..count).map(|i| first.saturating_add(i.into())).collect();
	for other in &ids {
		Orders::<T>::insert(other, order.clone());
		OpenOrders::<T>::insert(other, ());
	}
	NextOrderId::<T>::put(first.saturating_add(count.into()));
	ids
}

/// `count` standing bids, copies of one of order `id`'s, spread over other orders
/// (`MaxBidsPerOrder` each) and as many bidders.
fn crowd_bids<T: Config>(id: OrderId, count: u32) {
	let (_, bid) = Bids::<T>::iter_prefix(id).next().unwrap();
	let per_order = T::MaxBidsPerOrder::get();
	let orders = crowd_orders::<T>(id, count.div_ceil(per_order));
	for i in 0..count {
		let order = orders[(i / per_order) as usize];
		// A bidder stands on at most `MaxStandingBids` orders.
		let batch = (i / per_order) / T::MaxStandingBids::get();
		let bidder: T::AccountId = account("crowd", i % per_order, batch);
		Bids::<T>::insert(order, &bidder, bid.clone());
		Bidders::<T>::mutate(&bidder, |b| {
			b.get_or_insert_with(Default::default).bids.try_push(order).unwrap()
		});
	}
}

/// The most other orders and bids the scale benchmarks put in storage.
const CROWD: u32 = 10_000;
/// The page the order queries' scale benchmarks ask for.
const PAGE: u32 = 10;

#[benchmarks]
mod benches {
	use super::*;

	#[benchmark]
	fn create_order() {
		let buyer = funded::<T>("buyer", 0);
		let terms = worst_terms::<T>(T::MaxGpusPerOrder::get(), true);
		let deposit = Pallet::<T>::cost(terms.max_price_per_block, 1_000u32.into())
			.max(T::MinOrderDeposit::get());
		#[extrinsic_call]
		_(RawOrigin::Signed(buyer), largest_spec(), terms, deposit);
		assert!(Orders::<T>::contains_key(0));
	}

	/// A bid of `g` devices on an order with the largest job spec. With `o = 1` the order is
	/// full and the bid takes the place of the worst one (every bid read to find it); with
	/// `o = 0` it has one free slot left.
	#[benchmark]
	fn place_bid(g: Linear<1, { T::MaxGpusPerOrder::get() }>, o: Linear<0, 1>) {
		let bids = T::MaxBidsPerOrder::get() - 1 + o;
		let (_, id) = order_of::<T>(0, largest_spec(), g, bids, true);
		let (provider, devices) = T::BenchmarkHelper::provider(999, g);
		let devices = devices.try_into().unwrap();
		#[extrinsic_call]
		_(RawOrigin::Signed(provider.clone()), id, T::Currency::minimum_balance(), devices);
		assert!(Bids::<T>::contains_key(id, provider));
		assert_eq!(Orders::<T>::get(id).unwrap().bid_count, T::MaxBidsPerOrder::get());
	}

	/// Late in the window: the deposit goes to the buyer.
	#[benchmark]
	fn retract_bid() {
		let (_, id) = order_with_bids::<T>(0, T::MaxBidsPerOrder::get(), true);
		let (provider, _) = Bids::<T>::iter_prefix(id).next().unwrap();
		let close = Orders::<T>::get(id).unwrap().bids_close_at;
		frame_system::Pallet::<T>::set_block_number(close.saturating_sub(One::one()));
		#[extrinsic_call]
		_(RawOrigin::Signed(provider.clone()), id);
		assert!(!Bids::<T>::contains_key(id, provider));
	}

	/// With `b` bids to release.
	#[benchmark]
	fn cancel_order(b: Linear<0, { T::MaxBidsPerOrder::get() }>) {
		let (buyer, id) = order_with_bids::<T>(0, b, true);
		#[extrinsic_call]
		_(RawOrigin::Signed(buyer), id);
		assert!(!Orders::<T>::contains_key(id));
	}

	/// With `b` bids: the winner's becomes the lease, the others are released.
	#[benchmark]
	fn accept_bid(b: Linear<1, { T::MaxBidsPerOrder::get() }>) {
		let (buyer, id) = order_with_bids::<T>(0, b, false);
		let provider = Pallet::<T>::ranking(id).pop().unwrap();
		let bid = Bids::<T>::get(id, &provider).unwrap();
		#[extrinsic_call]
		_(RawOrigin::Signed(buyer), id, provider, bid.price_per_block, bid.devices.clone());
		assert!(matches!(Orders::<T>::get(id).unwrap().status, OrderStatus::Leased { .. }));
	}

	/// Prunes a leased order with its lease and stream, paying the reaper.
	#[benchmark]
	fn reap_order() {
		let (buyer, id) = order_with_bids::<T>(0, 1, false);
		let provider = Pallet::<T>::ranking(id).pop().unwrap();
		let bid = Bids::<T>::get(id, &provider).unwrap();
		Pallet::<T>::do_accept_bid(&buyer, id, &provider, bid.price_per_block, &bid.devices)
			.unwrap();
		let OrderStatus::Leased { lease } = Orders::<T>::get(id).unwrap().status else {
			panic!("the bid was accepted")
		};
		T::BenchmarkHelper::end_lease(lease);
		let now = frame_system::Pallet::<T>::block_number();
		frame_system::Pallet::<T>::set_block_number(now.saturating_add(T::Retention::get()));
		let reaper: T::AccountId = whitelisted_caller();
		#[extrinsic_call]
		_(RawOrigin::Signed(reaper), id);
		assert!(!Orders::<T>::contains_key(id));
	}

	/// The buyer rejects a bid it could accept, on a full order whose buyer rejected all but
	/// one bid's worth before: the provider is paid from the escrow and barred.
	#[benchmark]
	fn reject_bid() {
		let (buyer, id) = order_with_bids::<T>(0, T::MaxBidsPerOrder::get(), false);
		let (provider, _) = Bids::<T>::iter_prefix(id).next().unwrap();
		let earlier: Vec<T::AccountId> =
			(1..T::MaxBidsPerOrder::get()).map(|i| account("rejected", i, 0)).collect();
		Rejections::<T>::insert(id, BoundedVec::truncate_from(earlier));
		#[extrinsic_call]
		_(RawOrigin::Signed(buyer), id, provider.clone());
		assert!(!Bids::<T>::contains_key(id, &provider));
		assert!(Rejections::<T>::get(id).contains(&provider));
	}

	/// A bid whose devices went to another lease since, on a full order, dropped by a
	/// stranger: its deposit goes to the buyer.
	#[benchmark]
	fn drop_dead_bid() {
		let (_, id) = order_with_bids::<T>(0, T::MaxBidsPerOrder::get(), true);
		let (provider, bid) = Bids::<T>::iter_prefix(id).next().unwrap();
		// The same devices win another order.
		let (other_buyer, other) =
			order_of::<T>(1, largest_spec(), bid.devices.len() as u32, 0, false);
		let price = bid.price_per_block;
		Pallet::<T>::do_place_bid(provider.clone(), other, price, bid.devices.clone()).unwrap();
		Pallet::<T>::do_accept_bid(&other_buyer, other, &provider, price, &bid.devices).unwrap();
		let caller: T::AccountId = whitelisted_caller();
		#[extrinsic_call]
		_(RawOrigin::Signed(caller), id, provider.clone());
		assert!(!Bids::<T>::contains_key(id, &provider));
	}

	/// `n` orders close in the same block, each with `MaxBidsPerOrder` bids to rank and release.
	#[benchmark]
	fn on_initialize(n: Linear<0, { T::MaxDeadlinesPerBlock::get() }>) {
		let ids: Vec<OrderId> =
			(0..n).map(|i| order_with_bids::<T>(i, T::MaxBidsPerOrder::get(), true).1).collect();
		let at = frame_system::Pallet::<T>::block_number().saturating_add(T::MinBidWindow::get());
		assert_eq!(Deadlines::<T>::iter_values().map(|page| page.len() as u32).sum::<u32>(), n);
		frame_system::Pallet::<T>::set_block_number(at);
		#[block]
		{
			Pallet::<T>::process_deadlines(at);
		}
		for id in ids {
			assert!(matches!(Orders::<T>::get(id).unwrap().status, OrderStatus::Leased { .. }));
		}
	}

	// Scale: the same work with `s` other bids or orders in storage. Not weights (the script
	// leaves them out of `weights.rs`): they show that the cost does not grow with the market,
	// and `scripts/bench-weights.sh` reports them in docs/performance.md.

	/// A bid on an order with one bid, `s` bids standing on other orders.
	#[benchmark]
	fn scale_place_bid(s: Linear<10, CROWD>) {
		let id = typical_order::<T>(1);
		crowd_bids::<T>(id, s);
		let (provider, devices) = T::BenchmarkHelper::provider(999, T::MaxGpusPerOrder::get());
		let devices = devices.try_into().unwrap();
		#[extrinsic_call]
		place_bid(RawOrigin::Signed(provider.clone()), id, T::Currency::minimum_balance(), devices);
		assert!(Bids::<T>::contains_key(id, provider));
	}

	/// A page of `PAGE` open orders out of `s`.
	#[benchmark]
	fn scale_open_orders(s: Linear<PAGE, CROWD>) {
		let id = typical_order::<T>(0);
		crowd_orders::<T>(id, s - 1);
		#[block]
		{
			assert_eq!(Pallet::<T>::open_orders(None, PAGE).len() as u32, PAGE);
		}
	}

	/// A page of `PAGE` orders a provider can serve out of `s` open ones it all can.
	#[benchmark]
	fn scale_servable_orders(s: Linear<PAGE, CROWD>) {
		let id = typical_order::<T>(0);
		crowd_orders::<T>(id, s - 1);
		let (provider, _) = T::BenchmarkHelper::provider(999, T::MaxGpusPerOrder::get());
		let served;
		#[block]
		{
			served = Pallet::<T>::servable_orders(&provider, None, PAGE).0.len() as u32;
		}
		// The mock's stand-in registry lists no devices: only a real runtime serves the page.
		assert!(served == PAGE || cfg!(test));
	}

	impl_benchmark_test_suite!(Pallet, crate::mock::ExtBuilder::build(), crate::mock::Test);
}
