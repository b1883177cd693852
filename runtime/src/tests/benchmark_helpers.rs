//! The benchmark helpers make, on the real runtime, what the market's and the leases' benchmarks
//! assume: providers registered through the registry (with a worker key from the keystore that
//! consents), bonded, able to bid with all their GPUs, and leases that end; the books hold after.

use super::lifecycle::{accept, alice, lease_of, locked, order, terms, Books};
use crate::{
	configs::bench_helpers::BenchmarkHelpers, genesis_config_presets::tests::build, Leases, Market,
	Runtime, RuntimeOrigin, STINT,
};
use frame_support::{assert_ok, traits::Get};
use pallet_leases::BenchmarkHelper as LeasesHelper;
use pallet_market::BenchmarkHelper as MarketHelper;
use polkadot_sdk::{
	sp_core::crypto::KeyTypeId, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_io, sp_keystore, *,
};
use stint_primitives::{GpuRequirements, Report, ReportKind, ResultCommitment};
use stint_traits::{LeaseFactory, NewLease};

/// The key type the pallets' benchmarks keep worker keys under.
const WORKER: KeyTypeId = KeyTypeId(*b"stwk");

/// The development chain at genesis, with a keystore as `frame-omni-bencher` gives one.
fn chain() -> sp_io::TestExternalities {
	let mut ext = build(DEV_RUNTIME_PRESET);
	ext.register_extension(sp_keystore::KeystoreExt::new(
		sp_keystore::testing::MemoryKeystore::new(),
	));
	ext
}

#[test]
fn the_market_helper_makes_providers_that_bid_with_every_gpu_and_leases_that_end() {
	chain().execute_with(|| {
		let most = <Runtime as pallet_market::Config>::MaxGpusPerOrder::get();
		let (provider, devices) = <BenchmarkHelpers as MarketHelper<_>>::provider(0, most);
		// The helpers fund their accounts (minting, as benchmarks do); from here on, nothing is.
		let books = Books::open();
		assert_eq!(devices.len(), most as usize);
		// An order for that many GPUs with no minimums, as the benchmarks post.
		let mut terms = terms(Some(100), false, 0);
		terms.requirements = GpuRequirements {
			gpu_count: most,
			min_vram_mib: 0,
			min_compute_capability: Default::default(),
			models: Default::default(),
			min_cuda_driver_version: 0,
			region: None,
			min_reputation: Default::default(),
		};
		terms.max_price_per_block = STINT;
		let id = order(&alice(), terms, 100 * STINT);
		assert_ok!(Market::place_bid(
			RuntimeOrigin::signed(provider.clone()),
			id,
			STINT,
			devices.try_into().unwrap()
		));
		assert_ok!(accept(&alice(), id, &provider));
		let lease = lease_of(id);
		<BenchmarkHelpers as MarketHelper<_>>::end_lease(lease);
		assert!(<Leases as LeaseFactory<_, _, _>>::ended_at(lease).is_some());
		books.check(0);
	});
}

#[test]
fn the_leases_helper_makes_providers_whose_keystore_key_signs_their_results() {
	chain().execute_with(|| {
		let key = sp_io::crypto::sr25519_generate(WORKER, None);
		let collateral = 1_000;
		let most = <Runtime as pallet_leases::Config>::MaxGpusPerLease::get();
		let (provider, devices) =
			<BenchmarkHelpers as LeasesHelper<_, _>>::provider(0, most, key, collateral);
		let buyer = <BenchmarkHelpers as LeasesHelper<_, _>>::buyer(0);
		let books = Books::open();
		assert_eq!(locked(&provider), collateral);
		// A lease as the market would create it, acknowledged, and its result signed by the
		// keystore's key, as the benchmarks do.
		let lease = <Leases as LeaseFactory<_, _, _>>::create_lease(NewLease {
			order: 0,
			buyer: buyer.clone(),
			provider: provider.clone(),
			devices,
			price_per_block: 1_000_000,
			escrow: 1_000_000_000,
			duration: Some(10),
			collateral,
			termination_notice: 0,
			image_digest: [7; 32],
			holdback: Default::default(),
			verdict_window: 0,
			deterministic: false,
			replicas: 1,
		})
		.unwrap();
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(provider.clone()), lease));
		let c = ResultCommitment {
			output_root: [1; 32],
			receipt_hash: [2; 32],
			exit_code: 0,
			gpu_seconds: 1,
			image_digest: [7; 32],
		};
		let report = Report::new(Leases::genesis_hash(), lease, ReportKind::Final, c);
		let signature = sp_io::crypto::sr25519_sign(WORKER, &key, &report.signing_bytes()).unwrap();
		assert_ok!(Leases::submit_result(
			RuntimeOrigin::signed(buyer.clone()),
			lease,
			c,
			signature
		));
		// The collateral waits for the buyer's verdict.
		assert_eq!(locked(&provider), collateral);
		books.check(0);
		assert_ok!(Leases::accept_result(RuntimeOrigin::signed(buyer), lease));
		assert_eq!(locked(&provider), 0);
		books.check(0);
	});
}
