//! The market tried as an attacker would, on the real runtime with every Stint pallet: each test
//! is named after an attack, and shows the attacker gains nothing and the victim loses nothing.
//! After every step all pallets' `try_state` holds and money is conserved (`Books`).

use super::lifecycle::{
	accept, alice, bid, bob, eve, ferdie, free, gpu, lease_of, locked, net, order, run_to, status,
	storage, submit, terms, AccountId, Books, COLLATERAL,
};
use crate::{
	genesis_config_presets::tests::build, Balances, Bonds, Leases, Market, Providers, Runtime,
	RuntimeOrigin, Streams, STINT,
};
use frame_support::{
	assert_noop, assert_ok,
	traits::{fungible::Mutate, Get},
};
use pallet_leases::{LeaseStatus, TerminationReason};
use pallet_providers::{HardwareSpec, ProviderInfo};
use polkadot_sdk::sp_runtime::bounded_vec;
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring as Keyring, *,
};
use stint_primitives::Outcome;
use stint_traits::refused;

fn dave() -> AccountId {
	Keyring::Dave.to_account_id()
}

/// A buyer in league with the sybils.
fn partner() -> AccountId {
	Keyring::Two.to_account_id()
}

fn bid_deposit() -> crate::Balance {
	<Runtime as pallet_market::Config>::BidDeposit::get()
}

fn market_error(e: pallet_market::Error<Runtime>) -> sp_runtime::DispatchError {
	e.into()
}

/// Registers `who` as a provider of one H100 whose worker key is `worker`, with the least bond.
pub(super) fn register(who: &Keyring, worker: &Keyring) -> stint_primitives::DeviceId {
	let device = register_only(who, worker);
	assert_ok!(Bonds::bond(RuntimeOrigin::signed(who.to_account_id()), 100 * STINT));
	device
}

/// Registers `who` as a provider of one H100 whose worker key is `worker`.
fn register_only(who: &Keyring, worker: &Keyring) -> stint_primitives::DeviceId {
	register_as(who.to_account_id(), &worker.pair())
}

/// One H100 whose UUID hash is `device`.
fn h100(device: stint_primitives::DeviceId) -> HardwareSpec {
	HardwareSpec {
		gpus: bounded_vec![super::h100_device(device)],
		cpu_cores: 8,
		ram_mib: 65_536,
		disk_gib: 100,
	}
}

/// Registers `account` as a provider of one H100 whose worker key is `worker`.
pub(super) fn register_as(
	account: AccountId,
	worker: &sp_core::sr25519::Pair,
) -> stint_primitives::DeviceId {
	use codec::Encode;
	let device = stint_primitives::device_id(&format!("GPU-sybil-{account}"));
	let info = ProviderInfo {
		name: b"sybil".to_vec().try_into().unwrap(),
		endpoint: b"http://x".to_vec().try_into().unwrap(),
		region: *b"DE",
	};
	let consent = worker.sign(&stint_primitives::worker_proof_payload(
		&Providers::genesis_hash(),
		&account.encode(),
		Providers::consent_nonce(&account),
	));
	assert_ok!(Providers::register(
		RuntimeOrigin::signed(account),
		info,
		worker.public(),
		h100(device),
		consent
	));
	device
}

#[test]
fn declining_an_unacknowledged_lease_to_void_the_order_costs_a_no_show() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (alice0, eve0) = (free(&alice()), free(&eve()));
		// Eve bids the least possible on an order that asks no notice, wins it, and walks away
		// before acknowledging: the order is gone, the other bids were released.
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		bid(&eve(), id, 1, gpu("eve", 0));
		bid(&ferdie(), id, STINT / 2, gpu("ferdie", 0));
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
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		// Alice accepts at 0.5; in the same block, before her transaction, Eve re-bids at 1.
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(eve()), id));
		bid(&eve(), id, STINT, gpu("eve", 0));
		assert_noop!(
			refused(Market::accept_bid(
				RuntimeOrigin::signed(alice()),
				id,
				eve(),
				STINT / 2,
				bounded_vec![gpu("eve", 0)]
			)),
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
		bid(&eve(), id, STINT, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		let stream = pallet_leases::Leases::<Runtime>::get(lease).unwrap().stream;
		let fully = || pallet_streams::Error::<Runtime>::FullyFunded;
		// Before its end and after it, while the result is still awaited: nothing more is taken.
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(bob()), stream, STINT)),
			fully()
		);
		run_to(13);
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(alice()), stream, STINT)),
			fully()
		);
		run_to(14);
		submit(lease, 0);
		assert_eq!(status(lease), LeaseStatus::Completed);
		assert_eq!(free(&alice()), alice0 - 10 * STINT - storage(id));
		// A tenth waits for Alice's verdict.
		assert_eq!(free(&eve()), eve0 + net(9 * STINT));
		assert_ok!(Leases::accept_result(RuntimeOrigin::signed(alice()), lease));
		assert_eq!(free(&eve()), eve0 + net(10 * STINT));
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
		bid(&eve(), first, STINT / 10, gpu("eve", 0));
		bid(&ferdie(), first, STINT / 2, gpu("ferdie", 0));
		bid(&ferdie(), second, STINT / 10, gpu("ferdie", 1));
		bid(&eve(), second, STINT / 2, gpu("eve", 1));
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
		Balances::set_balance(&partner(), 1_000 * STINT);
		let books = Books::open();
		let alice0 = free(&alice());
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		// Three sybils underbid the honest provider by far...
		for ((who, _), device) in sybils.iter().zip(&devices) {
			bid(&who.to_account_id(), id, 1, *device);
		}
		bid(&ferdie(), id, STINT / 2, gpu("ferdie", 0));
		// ...then make their bids impossible to honour before the window closes: two move
		// their GPU to another lease (each wins an order of a partner's on it)...
		for ((who, _), device) in sybils[..2].iter().zip(&devices) {
			let other = order(&partner(), terms(Some(10), false, 0), 10 * STINT);
			bid(&who.to_account_id(), other, 1, *device);
			assert_ok!(super::lifecycle::accept(&partner(), other, &who.to_account_id()));
		}
		// ...and one swaps the GPU away, which withdraws its bids (early in the window: it
		// keeps its deposit).
		let other = stint_primitives::device_id("GPU-sybil-swapped");
		assert_ok!(Providers::update_hardware(RuntimeOrigin::signed(dave()), h100(other)));
		assert!(!pallet_market::Bids::<Runtime>::contains_key(id, dave()));
		run_to(3);
		// The honest bid won; the bids left standing paid Alice their deposits for the trouble.
		let lease = lease_of(id);
		assert_eq!(pallet_leases::Leases::<Runtime>::get(lease).unwrap().provider, ferdie());
		assert_eq!(free(&alice()), alice0 - 50 * STINT + 2 * bid_deposit() - storage(id));
		// The two keep only the collateral of the leases they took.
		for (who, _) in &sybils[..2] {
			assert_eq!(locked(&who.to_account_id()), COLLATERAL);
		}
		assert_eq!(locked(&dave()), 0);
		books.check(0);
	});
}

fn reputation(who: &AccountId) -> pallet_providers::Reputation {
	pallet_providers::Registry::<Runtime>::get(who).unwrap().reputation
}

#[test]
fn a_stream_of_empty_leases_does_not_pump_a_providers_reputation() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let before = reputation(&eve()).score();
		// Alice and Eve in league: accept, acknowledge, close, in one block, again and again.
		for _ in 0..5 {
			let id = order(&alice(), terms(Some(100), false, 0), 100 * STINT);
			bid(&eve(), id, STINT, gpu("eve", 0));
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
		bid(&eve(), id, STINT / 100, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		run_to(13);
		// Eve ends the lease with a "result" at a tenth of its duration.
		submit(lease, 0);
		assert_eq!(status(lease), LeaseStatus::Completed);
		assert_eq!(reputation(&eve()).score(), before, "nothing counts before the verdict");
		// Alice objects: a failed delivery, counted in full (the lease ended within an hour of
		// its ack), and Eve's whole collateral was at stake: burnt, since when a result comes is
		// the job's doing too and an objection must not earn the buyer money.
		assert_eq!(locked(&eve()), COLLATERAL, "the collateral waits for the verdict");
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(alice()), lease));
		assert_eq!(reputation(&eve()).objected, 1);
		assert!(reputation(&eve()).score() < before);
		assert_eq!(locked(&eve()), 0);
		books.check(COLLATERAL);
	});
}

#[test]
fn deregistering_does_not_reset_a_bad_reputation() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let device = register(&Keyring::Bob, &Keyring::BobStash);
		let books = Books::open();
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		bid(&bob(), id, 1, device);
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
		bid(&eve(), first, STINT / 100, gpu("eve", 0));
		bid(&eve(), second, STINT / 100, gpu("eve", 1));
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
			refused(Bonds::unbond(RuntimeOrigin::signed(eve()), 5 * STINT + 1)),
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
		bid(&eve(), id, STINT, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		run_to(14);
		assert_eq!(status(lease), LeaseStatus::Suspended);
		let stream = pallet_leases::Leases::<Runtime>::get(lease).unwrap().stream;
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(alice()), stream, 1)),
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
			bid(&eve(), *id, STINT, gpu("eve", 0));
		}
		assert_noop!(
			refused(Market::place_bid(
				RuntimeOrigin::signed(eve()),
				orders[most as usize],
				STINT,
				bounded_vec![gpu("eve", 0)]
			)),
			market_error(pallet_market::Error::TooManyStandingBids)
		);
		// Pausing withdraws them all in one call.
		assert_ok!(Providers::pause(RuntimeOrigin::signed(eve())));
		assert_eq!(locked(&eve()), 0);
		books.check(0);
	});
}

/// Sybil number `i`: a fresh account Alice funds, registered with one H100 and the least bond.
fn sybil(i: u32) -> (AccountId, stint_primitives::DeviceId) {
	use sp_core::sr25519::Pair as Sr;
	let account: AccountId = Sr::from_string(&format!("//Sybil{i}"), None).unwrap().public().into();
	let worker = Sr::from_string(&format!("//Sybil{i}//worker"), None).unwrap();
	assert_ok!(crate::Balances::transfer_keep_alive(
		RuntimeOrigin::signed(alice()),
		account.clone().into(),
		1_000 * STINT
	));
	let device = register_as(account.clone(), &worker);
	assert_ok!(Bonds::bond(RuntimeOrigin::signed(account.clone()), 100 * STINT));
	(account, device)
}

/// One GPU, up to 1 STINT per block, open-ended, bids for `window` blocks, auto-accept.
fn open_ended(window: u32) -> pallet_market::TermsOf<Runtime> {
	let mut terms = terms(None, true, 0);
	terms.bid_window = window;
	terms
}

#[test]
fn filling_every_bid_slot_and_leaving_at_the_close_costs_the_sybils_their_deposits() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let slots = <Runtime as pallet_market::Config>::MaxBidsPerOrder::get();
		let sybils: Vec<_> = (0..slots).map(sybil).collect();
		let alice0 = free(&alice());
		let sybils0: Vec<_> = sybils
			.iter()
			.map(|(who, _)| {
				<crate::Balances as frame_support::traits::fungible::Inspect<_>>::total_balance(who)
			})
			.collect();
		// Bids for 8 blocks (1 to 9): the last quarter is blocks 7 and 8.
		let id = order(&alice(), open_ended(8), 100 * STINT);
		for (who, device) in &sybils {
			bid(who, id, 1, *device);
		}
		// Every slot is taken by a bid the honest provider cannot undercut.
		assert_noop!(
			refused(Market::place_bid(
				RuntimeOrigin::signed(ferdie()),
				id,
				STINT / 2,
				bounded_vec![gpu("ferdie", 0)]
			)),
			market_error(pallet_market::Error::TooManyBids)
		);
		// Just before the close, every sybil walks away, hoping to leave Alice with nothing.
		run_to(7);
		for (who, _) in &sybils {
			assert_ok!(Market::retract_bid(RuntimeOrigin::signed(who.clone()), id));
		}
		run_to(10);
		assert!(pallet_market::Orders::<Runtime>::get(id).is_none(), "the order expired");
		// Alice has her escrow and storage deposit back, and every sybil's bid deposit.
		assert_eq!(free(&alice()), alice0 + slots as crate::Balance * bid_deposit());
		for ((who, _), before) in sybils.iter().zip(sybils0) {
			assert_eq!(
				<crate::Balances as frame_support::traits::fungible::Inspect<_>>::total_balance(
					who
				),
				before - bid_deposit()
			);
			assert_eq!(locked(who), 0);
		}
		books.check(0);
	});
}

#[test]
fn a_crowd_of_orders_nobody_can_serve_hides_no_order_from_a_provider() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		// Bob posts 600 refundable orders for eight GPUs, which no provider here has.
		let mut crowd = open_ended(100);
		crowd.requirements.gpu_count = 8;
		let bob0 = free(&bob());
		let mut held = 0;
		for _ in 0..600 {
			let id = order(&bob(), crowd.clone(), 10 * STINT);
			held += storage(id) + 10 * STINT;
		}
		assert_eq!(free(&bob()), bob0 - held, "each of them holds its escrow and storage");
		let wanted = order(&alice(), open_ended(100), 10 * STINT);
		// Each page reads a bounded number of orders; paging on finds Alice's.
		let (mut pages, mut found, mut next) = (0, Vec::new(), None);
		loop {
			let (page, after) = Market::servable_orders(&eve(), next, 10);
			pages += 1;
			found.extend(page);
			next = after;
			if next.is_none() {
				break;
			}
		}
		assert_eq!(found, vec![(wanted, vec![gpu("eve", 0)])]);
		let per_page = 10 + pallet_market::SERVABLE_SCAN_BUDGET as usize;
		assert!(pages >= 601_usize.div_ceil(per_page), "{pages} pages for 601 orders");
		books.check(0);
	});
}

#[test]
fn filling_the_wake_up_queue_never_makes_an_acknowledgement_fail() {
	use stint_traits::PaymentStreams;
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		// Ten blocks of escrow at 1 STINT per block: Eve's stream runs dry at block 3 + 10.
		let id = order(&alice(), open_ended(2), 10 * STINT);
		bid(&eve(), id, STINT, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		// Four blocks' worth of wake-ups at Eve's depletion block, as many leases' streams
		// would (opened here through the pallet's trait, as the leases pallet opens them).
		let per_block: u32 = <Runtime as pallet_streams::Config>::MaxWakeupsPerBlock::get();
		for n in 0..4 * per_block {
			let stream = <Streams as PaymentStreams<_, _, _>>::open(
				&bob(),
				&ferdie(),
				STINT,
				10 * STINT,
				u64::MAX - u64::from(n),
				None,
				Default::default(),
			)
			.unwrap();
			<Streams as PaymentStreams<_, _, _>>::start(stream).unwrap();
		}
		// Before the queue was a timeline, a full queue made the ack fail here, and Eve was
		// later slashed for a no-show she could not avoid.
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		let stream = pallet_leases::Leases::<Runtime>::get(lease).unwrap().stream;
		let wake_at = pallet_streams::Records::<Runtime>::get(stream).unwrap().wake_at.unwrap();
		assert_eq!(wake_at.block, 3 + 10);
		// It wakes after the wake-ups that fell due before it, four blocks late: the lease is
		// suspended.
		run_to(3 + 10 + 3);
		assert_eq!(status(lease), LeaseStatus::Running);
		run_to(3 + 10 + 4);
		assert_eq!(status(lease), LeaseStatus::Suspended);
		books.check(0);
	});
}
#[test]
fn an_early_result_counts_only_once_the_buyer_accepts_or_lets_the_window_pass() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let window = <Runtime as pallet_leases::Config>::VerdictWindow::get();
		let early = |buyer: &AccountId, device: u8| {
			let id = order(buyer, terms(Some(100), true, 0), 100 * STINT);
			bid(&eve(), id, STINT / 100, gpu("eve", device));
			let at = frame_system::Pallet::<Runtime>::block_number();
			run_to(at + 2);
			let lease = lease_of(id);
			assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
			run_to(at + 12);
			submit(lease, 0);
			lease
		};
		let accepted = early(&alice(), 0);
		let unopposed = early(&bob(), 1);
		let completed = || reputation(&eve()).completed;
		let before = completed();
		// Nobody but the buyer accepts, and it counts at once.
		assert_noop!(
			refused(Leases::accept_result(RuntimeOrigin::signed(eve()), accepted)),
			pallet_leases::Error::<Runtime>::NotBuyer
		);
		assert_ok!(Leases::accept_result(RuntimeOrigin::signed(alice()), accepted));
		assert_eq!(completed(), before + 1);
		// Bob stays silent: Eve cannot confirm her own result before the window is over...
		assert_noop!(
			refused(Leases::confirm_result(RuntimeOrigin::signed(eve()), unopposed)),
			pallet_leases::Error::<Runtime>::ObjectionWindowOpen
		);
		// ...and after it anyone can; neither the buyer nor Eve can change it any more.
		// Nothing is due in between: skip the blocks.
		let now = frame_system::Pallet::<Runtime>::block_number();
		frame_system::Pallet::<Runtime>::set_block_number(now + window + 1);
		assert_ok!(Leases::confirm_result(RuntimeOrigin::signed(eve()), unopposed));
		assert_eq!(completed(), before + 2);
		assert!(Leases::object_to_result(RuntimeOrigin::signed(bob()), unopposed).is_err());
		books.check(0);
	});
}

#[test]
fn churning_orders_through_leases_pays_for_every_byte_it_leaves() {
	use codec::Encode;
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let alice0 = free(&alice());
		// Alice and Eve in league: order, bid, accept, acknowledge, close, again and again.
		// Before, each round left an order, a lease and a stream in storage for good, for fees.
		let mut rounds = Vec::new();
		for _ in 0..3 {
			let id = order(&alice(), terms(Some(100), false, 0), 100 * STINT);
			bid(&eve(), id, STINT, gpu("eve", 0));
			assert_ok!(accept(&alice(), id, &eve()));
			let lease = lease_of(id);
			assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
			assert_ok!(Leases::close_lease(RuntimeOrigin::signed(alice()), lease));
			rounds.push((id, lease));
		}
		// What they left is paid for, byte by byte, for as long as it stays.
		let per_byte = <Runtime as pallet_market::Config>::StorageDepositPerByte::get();
		let held: crate::Balance = rounds.iter().map(|(id, _)| storage(*id)).sum();
		for (id, _) in &rounds {
			let bytes = pallet_market::Orders::<Runtime>::get(id).unwrap().encoded_size();
			assert!(storage(*id) > per_byte * bytes as crate::Balance);
		}
		let paid_to_eve: crate::Balance = rounds
			.iter()
			.map(|(_, lease)| pallet_leases::Leases::<Runtime>::get(lease).unwrap().stream)
			.map(|stream| pallet_streams::Records::<Runtime>::get(stream).unwrap().paid)
			.sum();
		assert_eq!(free(&alice()), alice0 - held - paid_to_eve);
		// A week after each lease ended, anyone prunes it all and earns a tenth of the deposit.
		let retention = <Runtime as pallet_market::Config>::Retention::get();
		assert_noop!(
			refused(Market::reap_order(RuntimeOrigin::signed(bob()), rounds[0].0)),
			market_error(pallet_market::Error::RetentionNotOver)
		);
		// Nothing is due in between: skip the blocks.
		frame_system::Pallet::<Runtime>::set_block_number(1 + retention);
		let bob0 = free(&bob());
		for (id, lease) in &rounds {
			assert_ok!(Market::reap_order(RuntimeOrigin::signed(bob()), *id));
			assert!(pallet_market::Orders::<Runtime>::get(id).is_none());
			assert!(pallet_leases::Leases::<Runtime>::get(lease).is_none());
		}
		let reward = <Runtime as pallet_market::Config>::ReapReward::get();
		assert_eq!(free(&bob()), bob0 + reward * held);
		assert_eq!(free(&alice()), alice0 - paid_to_eve - reward * held);
		books.check(0);
	});
}
