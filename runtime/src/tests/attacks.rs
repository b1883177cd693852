//! The market tried as an attacker would, on the real runtime with every Stint pallet: each test
//! is named after an attack, and shows the attacker gains nothing and the victim loses nothing.
//! After every step all pallets' `try_state` holds and money is conserved (`Books`).

use super::lifecycle::{
	accept, alice, bob, eve, ferdie, free, gpu, lease_of, locked, order, result, run_to, signed,
	status, storage, terms, AccountId, Books, COLLATERAL,
};
use crate::{
	genesis_config_presets::tests::build, Bonds, Leases, Market, Providers, Runtime, RuntimeOrigin,
	Streams, STINT,
};
use frame_support::{assert_noop, assert_ok, traits::Get};
use pallet_leases::{LeaseStatus, TerminationReason};
use pallet_providers::{HardwareSpec, ProviderInfo};
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring as Keyring, *,
};
use stint_primitives::{
	ComputeCapability, GpuDevice, GpuInterface, GpuVendor, Outcome, ReportKind,
};

fn bid_deposit() -> crate::Balance {
	<Runtime as pallet_market::Config>::BidDeposit::get()
}

fn market_error(e: pallet_market::Error<Runtime>) -> sp_runtime::DispatchError {
	e.into()
}

/// Registers `who` as a provider of one H100 whose worker key is `worker`, with the least bond.
fn register(who: &Keyring, worker: &Keyring) -> stint_primitives::DeviceId {
	let device = register_only(who, worker);
	assert_ok!(Bonds::bond(RuntimeOrigin::signed(who.to_account_id()), 100 * STINT));
	device
}

/// Registers `who` as a provider of one H100 whose worker key is `worker`.
fn register_only(who: &Keyring, worker: &Keyring) -> stint_primitives::DeviceId {
	use codec::Encode;
	let account = who.to_account_id();
	let device = stint_primitives::device_id(&format!("GPU-sybil-{account}"));
	let hardware = HardwareSpec {
		gpus: vec![GpuDevice {
			vendor: GpuVendor::Nvidia,
			model: b"NVIDIA H100 80GB HBM3".to_vec().try_into().unwrap(),
			vram_mib: 81_559,
			compute_capability: ComputeCapability { major: 9, minor: 0 },
			cuda_driver_version: 13_000,
			interface: GpuInterface::Sxm,
			uuid_hash: device,
		}],
		cpu_cores: 8,
		ram_mib: 65_536,
		disk_gib: 100,
	};
	let info =
		ProviderInfo { name: b"sybil".to_vec(), endpoint: b"http://x".to_vec(), region: *b"DE" };
	let consent = worker.pair().sign(&stint_primitives::worker_proof_payload(&account.encode()));
	assert_ok!(Providers::register(
		RuntimeOrigin::signed(account),
		info,
		worker.public(),
		hardware,
		consent
	));
	device
}

fn place(provider: &AccountId, order: u64, price: crate::Balance, device: [u8; 32]) {
	assert_ok!(Market::place_bid(
		RuntimeOrigin::signed(provider.clone()),
		order,
		price,
		vec![device]
	));
}

#[test]
fn declining_an_unacknowledged_lease_to_void_the_order_costs_a_no_show() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (alice0, eve0) = (free(&alice()), free(&eve()));
		// Eve bids the least possible on an order that asks no notice, wins it, and walks away
		// before acknowledging: the order is gone, the other bids were released.
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		place(&eve(), id, 1, gpu("eve", 0));
		place(&ferdie(), id, STINT / 2, gpu("ferdie", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(eve()), lease));
		assert_eq!(status(lease), LeaseStatus::Terminated { reason: TerminationReason::NoShow });
		// It cost Eve her collateral, as a no-show does: half to Alice, the rest burnt.
		assert_eq!(locked(&eve()), 0);
		assert_eq!(free(&alice()), alice0 + COLLATERAL / 2 - storage(id));
		assert_eq!(free(&eve()), eve0);
		let bond = pallet_bonds::Ledgers::<Runtime>::get(eve()).unwrap();
		assert_eq!(bond.active, crate::genesis_config_presets::EXAMPLE_PROVIDER_BOND - COLLATERAL);
		let record = pallet_providers::Registry::<Runtime>::get(eve()).unwrap();
		assert_eq!(record.reputation.no_shows, 1, "recorded as {:?}", Outcome::NoShow);
		books.check(COLLATERAL / 2);
	});
}

#[test]
fn re_bidding_at_the_ceiling_under_the_buyers_accept_is_refused() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let id = order(&alice(), terms(Some(100), false, 0), 100 * STINT);
		place(&eve(), id, STINT / 2, gpu("eve", 0));
		// Alice accepts at 0.5; in the same block, before her transaction, Eve re-bids at 1.
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(eve()), id));
		place(&eve(), id, STINT, gpu("eve", 0));
		assert_noop!(
			Market::accept_bid(
				RuntimeOrigin::signed(alice()),
				id,
				eve(),
				STINT / 2,
				vec![gpu("eve", 0)]
			),
			market_error(pallet_market::Error::BidChanged)
		);
		books.check(0);
	});
}

#[test]
fn top_ups_never_make_a_fixed_lease_cost_more_than_price_times_duration() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (alice0, bob0, eve0) = (free(&alice()), free(&bob()), free(&eve()));
		let id = order(&alice(), terms(Some(10), true, 0), 10 * STINT);
		place(&eve(), id, STINT, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		let stream = pallet_leases::Leases::<Runtime>::get(lease).unwrap().stream;
		let fully = || pallet_streams::Error::<Runtime>::FullyFunded;
		// Before its end and after it, while the result is still awaited: nothing more is taken.
		assert_noop!(Streams::top_up(RuntimeOrigin::signed(bob()), stream, STINT), fully());
		run_to(13);
		assert_noop!(Streams::top_up(RuntimeOrigin::signed(alice()), stream, STINT), fully());
		run_to(14);
		let c = result(0);
		assert_ok!(Leases::submit_result(
			RuntimeOrigin::signed(bob()),
			lease,
			c,
			signed(lease, ReportKind::Final, &c)
		));
		assert_eq!(status(lease), LeaseStatus::Completed);
		assert_eq!(free(&alice()), alice0 - 10 * STINT - storage(id));
		assert_eq!(free(&eve()), eve0 + 10 * STINT);
		assert_eq!(free(&bob()), bob0);
		books.check(0);
	});
}

#[test]
fn a_paused_or_leaving_providers_bids_cannot_win_a_lease() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let first = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		let second = order(&bob(), terms(Some(100), true, 0), 100 * STINT);
		place(&eve(), first, STINT / 10, gpu("eve", 0));
		place(&ferdie(), first, STINT / 2, gpu("ferdie", 0));
		place(&ferdie(), second, STINT / 10, gpu("ferdie", 1));
		place(&eve(), second, STINT / 2, gpu("eve", 1));
		// Eve pauses and Ferdie announces its exit: their standing bids go at once.
		assert_ok!(Providers::pause(RuntimeOrigin::signed(eve())));
		assert!(!pallet_market::Bids::<Runtime>::contains_key(first, eve()));
		assert!(!pallet_market::Bids::<Runtime>::contains_key(second, eve()));
		assert_eq!(locked(&eve()), 0);
		assert_ok!(Providers::announce_exit(RuntimeOrigin::signed(ferdie())));
		assert_eq!(locked(&ferdie()), 0);
		books.check(0);
		run_to(3);
		// Nobody left to serve them: both orders expired, their escrow refunded.
		assert!(pallet_market::Orders::<Runtime>::get(first).is_none());
		assert!(pallet_market::Orders::<Runtime>::get(second).is_none());
		assert!(Leases::leases_of(&eve()).is_empty() && Leases::leases_of(&ferdie()).is_empty());
		books.check(0);
	});
}

#[test]
fn sybil_bids_that_cannot_be_honoured_do_not_use_up_the_auto_accept() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let sybils = [
			(Keyring::Bob, Keyring::BobStash),
			(Keyring::Charlie, Keyring::CharlieStash),
			(Keyring::Dave, Keyring::DaveStash),
		];
		let devices: Vec<_> = sybils.iter().map(|(who, worker)| register(who, worker)).collect();
		let books = Books::open();
		let alice0 = free(&alice());
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		// Three sybils underbid the honest provider by far...
		for ((who, _), device) in sybils.iter().zip(&devices) {
			place(&who.to_account_id(), id, 1, *device);
		}
		place(&ferdie(), id, STINT / 2, gpu("ferdie", 0));
		// ...then make their bids impossible to honour before the window closes.
		for (who, worker) in &sybils {
			assert_ok!(Providers::unbind_worker(
				RuntimeOrigin::signed(who.to_account_id()),
				worker.public()
			));
		}
		run_to(3);
		// The honest bid won; the sybils' deposits paid Alice for the trouble.
		let lease = lease_of(id);
		assert_eq!(pallet_leases::Leases::<Runtime>::get(lease).unwrap().provider, ferdie());
		assert_eq!(free(&alice()), alice0 - 50 * STINT + 3 * bid_deposit() - storage(id));
		for (who, _) in &sybils {
			assert_eq!(locked(&who.to_account_id()), 0);
		}
		books.check(0);
	});
}

fn reputation(who: &AccountId) -> pallet_providers::Reputation {
	pallet_providers::Registry::<Runtime>::get(who).unwrap().reputation
}

fn submit(lease: u64, exit_code: i32) {
	let c = result(exit_code);
	assert_ok!(Leases::submit_result(
		RuntimeOrigin::signed(bob()),
		lease,
		c,
		signed(lease, ReportKind::Final, &c)
	));
}

#[test]
fn a_stream_of_empty_leases_does_not_pump_a_providers_reputation() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let before = reputation(&eve()).score();
		// Alice and Eve in league: accept, acknowledge, close, in one block, again and again.
		for _ in 0..5 {
			let id = order(&alice(), terms(Some(100), false, 0), 100 * STINT);
			place(&eve(), id, STINT, gpu("eve", 0));
			assert_ok!(accept(&alice(), id, &eve()));
			let lease = lease_of(id);
			assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
			assert_ok!(Leases::close_lease(RuntimeOrigin::signed(alice()), lease));
		}
		// Counted, but worth nothing: today's code gave 50 % -> 78 % for these five.
		assert_eq!((reputation(&eve()).completed, reputation(&eve()).score()), (5, before));
		books.check(0);
	});
}

#[test]
fn an_early_result_is_not_a_free_exit_for_reputation() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let before = reputation(&eve()).score();
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		place(&eve(), id, STINT / 100, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		run_to(13);
		// Eve ends the lease with a "result" at a tenth of its duration.
		submit(lease, 0);
		assert_eq!(status(lease), LeaseStatus::Completed);
		assert_eq!(reputation(&eve()).score(), before, "nothing counts before the verdict");
		// Alice objects: a failed delivery, weighted by the little that was delivered.
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(alice()), lease));
		assert_eq!(reputation(&eve()).objected, 1);
		assert!(reputation(&eve()).score() < before);
		assert_eq!(locked(&eve()), 0, "no slash without proof");
		books.check(0);
	});
}

#[test]
fn deregistering_does_not_reset_a_bad_reputation() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let device = register(&Keyring::Bob, &Keyring::BobStash);
		let books = Books::open();
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		place(&bob(), id, 1, device);
		run_to(3);
		// Bob never acknowledges: a no-show.
		let lease = lease_of(id);
		run_to(3 + 101);
		assert_ok!(Leases::report_no_show(RuntimeOrigin::signed(ferdie()), lease));
		let bad = reputation(&bob());
		assert!(bad.score() < sp_runtime::Permill::from_percent(50));
		assert_ok!(Providers::announce_exit(RuntimeOrigin::signed(bob())));
		run_to(3 + 101 + <Runtime as pallet_providers::Config>::ExitNotice::get());
		assert_ok!(Providers::deregister(RuntimeOrigin::signed(bob())));
		// Today's code gave Bob a clean 50 % on registering again.
		assert_eq!(register_only(&Keyring::Bob, &Keyring::BobStash), device);
		assert_eq!(reputation(&bob()), bad);
		// A no-show burns what neither Alice (half) nor the reporter (a tenth) got.
		books.check(COLLATERAL * 2 / 5);
	});
}

#[test]
fn a_slash_below_the_collateral_of_live_leases_frees_none_of_it() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let first = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		let second = order(&bob(), terms(Some(100), true, 0), 100 * STINT);
		place(&eve(), first, STINT / 100, gpu("eve", 0));
		place(&eve(), second, STINT / 100, gpu("eve", 1));
		run_to(3);
		let (one, two) = (lease_of(first), lease_of(second));
		for lease in [one, two] {
			assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		}
		// Governance slashes all but 15 STINT of Eve's bond, below the 20 her leases claim.
		let ledger = || pallet_bonds::Ledgers::<Runtime>::get(eve()).unwrap();
		let cut = ledger().active - 15 * STINT;
		assert_ok!(Bonds::force_slash(RuntimeOrigin::root(), eve(), cut, None));
		books.check(cut);
		// The first lease ends. Today's code had cut the lock to 15 at the slash and this
		// left 5 locked and 10 free: Eve could unbond what backs the second lease.
		assert_ok!(Leases::close_lease(RuntimeOrigin::signed(alice()), one));
		assert_eq!((ledger().active, ledger().locked), (15 * STINT, COLLATERAL));
		assert_noop!(
			Bonds::unbond(RuntimeOrigin::signed(eve()), 5 * STINT + 1),
			pallet_bonds::Error::<Runtime>::CollateralLocked
		);
		books.check(cut);
	});
}

#[test]
fn a_one_unit_top_up_cannot_hold_a_suspended_lease_hostage() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		// Ten blocks of escrow at 1 STINT per block, open-ended.
		let id = order(&alice(), terms(None, true, 0), 10 * STINT);
		place(&eve(), id, STINT, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		run_to(14);
		assert_eq!(status(lease), LeaseStatus::Suspended);
		let stream = pallet_leases::Leases::<Runtime>::get(lease).unwrap().stream;
		assert_noop!(
			Streams::top_up(RuntimeOrigin::signed(alice()), stream, 1),
			pallet_streams::Error::<Runtime>::TopUpTooSmall
		);
		// A top-up that pays for the grace period resumes it.
		let grace: crate::Balance =
			pallet_streams::Records::<Runtime>::get(stream).unwrap().grace_period.into();
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(alice()), stream, grace * STINT));
		assert_eq!(status(lease), LeaseStatus::Running);
		books.check(0);
	});
}

#[test]
fn a_provider_cannot_stand_more_bids_than_it_can_withdraw_at_once() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let most = <Runtime as pallet_market::Config>::MaxStandingBids::get();
		let orders: Vec<_> =
			(0..=most).map(|_| order(&alice(), terms(Some(100), true, 0), 100 * STINT)).collect();
		for id in &orders[..most as usize] {
			place(&eve(), *id, STINT, gpu("eve", 0));
		}
		assert_noop!(
			Market::place_bid(
				RuntimeOrigin::signed(eve()),
				orders[most as usize],
				STINT,
				vec![gpu("eve", 0)]
			),
			market_error(pallet_market::Error::TooManyStandingBids)
		);
		// Pausing withdraws them all in one call.
		assert_ok!(Providers::pause(RuntimeOrigin::signed(eve())));
		assert_eq!(locked(&eve()), 0);
		books.check(0);
	});
}
