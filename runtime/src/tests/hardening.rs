//! The market read again as an attacker would (issue 37), on the real runtime with every Stint
//! pallet: bait orders, jammed orders, a stolen worker key, self-dealing through a worker key.
//! Each test tells what the attack gained before the fix and what it costs now, in figures.
//! After every step all pallets' `try_state` holds and money is conserved (`Books`).

use super::{
	attacks::register_as,
	lifecycle::{
		accept, alice, bid, bob, eve, ferdie, free, gpu, lease_of, order, run_to, storage, terms,
		AccountId, Books,
	},
};
use crate::{
	genesis_config_presets::tests::build, Balances, Bonds, Market, Providers, Runtime, RuntimeCall,
	RuntimeOrigin, TransactionPayment, STINT,
};
use frame_support::{
	assert_noop, assert_ok,
	dispatch::GetDispatchInfo,
	traits::{fungible::Mutate, Get},
};
use pallet_market::{Event as MarketEvent, OrderStatus};
use pallet_providers::ProviderInfo;
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring as Keyring, *,
};
use stint_primitives::{DeviceId, MILLI_STINT};

fn deposit() -> crate::Balance {
	<Runtime as pallet_market::Config>::BidDeposit::get()
}

fn compensation() -> crate::Balance {
	<Runtime as pallet_market::Config>::BidCompensation::get()
}

fn market_error(e: pallet_market::Error<Runtime>) -> sp_runtime::DispatchError {
	e.into()
}

fn origin(who: &AccountId) -> RuntimeOrigin {
	RuntimeOrigin::signed(who.clone())
}

/// Eve's registered worker key, `//Eve//stash`, as the account it signs transactions with.
fn eve_worker() -> AccountId {
	Keyring::EveStash.to_account_id()
}

/// The `i`-th sybil provider: funded, registered with one H100 in Germany and bonded. Returns
/// its account, its worker key and its device. Call before `Books::open` (funding mints).
fn sybil(i: u8) -> (AccountId, sp_core::sr25519::Pair, DeviceId) {
	let account = AccountId::from([0xA0 ^ i; 32]);
	let worker = sp_core::sr25519::Pair::from_seed(&[0x50 ^ i; 32]);
	Balances::set_balance(&account, 1_000 * STINT);
	let device = register_as(account.clone(), &worker);
	assert_ok!(Bonds::bond(origin(&account), 100 * STINT));
	(account, worker, device)
}

/// The events the market deposited so far.
fn market_events() -> Vec<MarketEvent<Runtime>> {
	frame_system::Pallet::<Runtime>::events()
		.into_iter()
		.filter_map(|record| match record.event {
			crate::RuntimeEvent::Market(event) => Some(event),
			_ => None,
		})
		.collect()
}

/// What a one-GPU bid on an order with a free slot costs its sender in fees in the end (its
/// call, a signature and the extensions; the fee after the refund of the search a full order
/// would have needed), as a real chain charges it: the cheapest bid there is.
fn bid_fee() -> crate::Balance {
	use codec::Encode;
	use pallet_market::WeightInfo as _;
	type MarketWeights = <Runtime as pallet_market::Config>::WeightInfo;
	let call = RuntimeCall::Market(pallet_market::Call::place_bid {
		order: 0,
		price_per_block: STINT,
		devices: vec![gpu("eve", 0)],
	});
	let len = call.encoded_size() as u32 + 110;
	let mut info = call.get_dispatch_info();
	info.call_weight = MarketWeights::place_bid(1, 0);
	TransactionPayment::compute_fee(len, &info, 0)
}

#[test]
fn a_jam_of_dead_sybil_bids_is_dropped_by_the_next_bidder_and_pays_the_buyer() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let max: u32 = <Runtime as pallet_market::Config>::MaxBidsPerOrder::get();
		let max = max as u8;
		let sybils: Vec<_> = (0..max).map(sybil).collect();
		let books = Books::open();
		let alice0 = free(&alice());
		// A manual order for a machine in Germany, bids for 40 blocks.
		let mut t = terms(Some(100), false, 0);
		t.bid_window = 40;
		t.requirements.region = Some(*b"DE");
		let id = order(&alice(), t, 100 * STINT);
		// Every slot is taken at the lowest price there is; then each sybil says its machine
		// moved to the United States, so none of the bids can ever win. Nothing is retracted.
		for (who, _, device) in &sybils {
			bid(who, id, 1, *device);
			let info = ProviderInfo {
				name: b"sybil".to_vec(),
				endpoint: b"http://x".to_vec(),
				region: *b"US",
			};
			assert_ok!(Providers::update_info(origin(who), info));
		}
		// Before: nobody could bid (no price beats 1 unit), and at the close every deposit came
		// back. Now a dead bid is anyone's to drop, whatever its price, at its sybil's cost.
		let eve_bids =
			|| Market::place_bid(origin(&eve()), id, STINT / 2, vec![gpu("eve", 0)]).map(|_| ());
		assert_noop!(eve_bids(), market_error(pallet_market::Error::TooManyBids));
		assert_noop!(
			Market::drop_dead_bid(origin(&ferdie()), id, eve()),
			market_error(pallet_market::Error::UnknownBid)
		);
		assert_ok!(Market::drop_dead_bid(origin(&eve()), id, sybils[0].0.clone()));
		assert_ok!(eve_bids());
		// A bid that can still be honoured is not anyone's to drop.
		assert_noop!(
			Market::drop_dead_bid(origin(&ferdie()), id, eve()),
			market_error(pallet_market::Error::BidStillHonourable)
		);
		books.check(0);
		// At the close the rest are dropped: the buyer chooses among live bids only.
		run_to(41);
		let order = pallet_market::Orders::<Runtime>::get(id).unwrap();
		assert_eq!(order.bid_count, 1);
		assert_ok!(accept(&alice(), id, &eve()));
		let _ = lease_of(id);
		// The jam cost the sybils every deposit, paid to Alice: 32 STINT. Alice paid 50 STINT
		// of escrow for Eve's lease (0.5 STINT × 100 blocks) and the order's storage deposit.
		for (who, ..) in &sybils {
			assert_eq!(
				free(who),
				1_000 * STINT - 100 * STINT - sybil_registration(who) - deposit()
			);
		}
		let forfeits = u128::from(max) * deposit();
		assert_eq!(free(&alice()), alice0 - 50 * STINT - storage(id) + forfeits);
		assert_eq!(forfeits, 32 * STINT);
		books.check(0);
	});
}

/// The registration deposit held on a sybil.
fn sybil_registration(who: &AccountId) -> crate::Balance {
	pallet_providers::Registry::<Runtime>::get(who).unwrap().deposit
}

#[test]
fn unbinding_a_worker_withdraws_its_bids_and_late_ones_forfeit() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let (early, early_key, early_device) = sybil(0);
		let (late, late_key, late_device) = sybil(1);
		let books = Books::open();
		let alice0 = free(&alice());
		let mut t = terms(Some(100), false, 0);
		t.bid_window = 40;
		let id = order(&alice(), t, 100 * STINT);
		bid(&early, id, 1, early_device);
		bid(&late, id, 1, late_device);
		// Unbinding early frees the slot at once, for nothing: the jam is gone with it.
		assert_ok!(Providers::unbind_worker(origin(&early), early_key.public()));
		assert!(!pallet_market::Bids::<Runtime>::contains_key(id, &early));
		// Unbinding in the last quarter of the window costs the deposit, as a retraction would.
		run_to(31);
		assert_ok!(Providers::unbind_worker(origin(&late), late_key.public()));
		assert!(!pallet_market::Bids::<Runtime>::contains_key(id, &late));
		assert!(market_events().contains(&MarketEvent::BidRetracted {
			order: id,
			provider: late.clone(),
			forfeited: deposit(),
			burnt: false,
		}));
		assert_eq!(free(&alice()), alice0 - 100 * STINT - storage(id) + deposit());
		assert_eq!(pallet_market::Orders::<Runtime>::get(id).unwrap().bid_count, 0);
		books.check(0);
	});
}

#[test]
fn a_bait_order_pays_every_bidder_it_froze() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		// What the compensation is worth: no more than the cheapest bid's fee (bidding to
		// collect it earns nothing), and not much less.
		let fee = bid_fee();
		assert!(compensation() <= fee, "compensation {} above a bid's fee {fee}", compensation());
		assert!(
			compensation() * 2 > fee,
			"compensation {} far below a bid's fee {fee}",
			compensation()
		);
		let (alice0, bob0, eve0, ferdie0) =
			(free(&alice()), free(&bob()), free(&eve()), free(&ferdie()));
		// A bait: a manual order priced above the asks, bids for a day. Eve bids; Ferdie bids
		// and his device then wins Bob's order, so his bid on the bait can no longer win.
		let mut bait_terms = terms(Some(100), false, 0);
		bait_terms.bid_window = crate::DAYS;
		let bait = order(&alice(), bait_terms, 100 * STINT);
		let other = order(&bob(), terms(Some(10), true, 0), 10 * STINT);
		bid(&eve(), bait, STINT / 2, gpu("eve", 0));
		bid(&ferdie(), bait, STINT / 2, gpu("ferdie", 0));
		bid(&ferdie(), other, STINT / 2, gpu("ferdie", 0));
		run_to(3);
		let _ = lease_of(other);
		books.check(0);
		// The bait is cancelled. Before: every bid came back and the buyer paid nothing for
		// the day of bids it froze. Now Eve's live bid is paid for; Ferdie's dead one is dropped,
		// its deposit to the buyer, and earns nothing.
		assert_ok!(Market::cancel_order(origin(&alice()), bait));
		assert!(market_events().contains(&MarketEvent::OrderCancelled {
			order: bait,
			refunded: 100 * STINT - compensation(),
			compensated: compensation(),
		}));
		assert_eq!(free(&eve()), eve0 + compensation());
		assert_eq!(free(&alice()), alice0 - compensation() + deposit());
		// Ferdie: his bait deposit forfeited; 5 STINT of escrow for Bob's lease is Bob's.
		assert_eq!(free(&ferdie()), ferdie0 - deposit());
		assert!(free(&bob()) < bob0);
		books.check(0);

		// Left to expire instead: the same, at the end of the buyer's time to accept.
		let bait = order(&alice(), terms(Some(100), false, 0), 100 * STINT);
		bid(&eve(), bait, STINT / 2, gpu("eve", 1));
		let eve1 = free(&eve());
		let close = pallet_market::Orders::<Runtime>::get(bait).unwrap().bids_close_at;
		run_to(close + <Runtime as pallet_market::Config>::AcceptPeriod::get());
		assert!(pallet_market::Orders::<Runtime>::get(bait).is_none());
		assert_eq!(free(&eve()), eve1 + deposit() + compensation());
		books.check(0);
		// The figure: a day's bait of four orders with 32 bids each costs its buyer 3.84 STINT.
		assert_eq!(4 * 32 * compensation(), 3_840 * MILLI_STINT);
	});
}

#[test]
fn a_rejected_bid_is_paid_for_and_cannot_come_back() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let eve0 = free(&eve());
		let mut t = terms(Some(100), false, 0);
		t.bid_window = 40;
		let id = order(&alice(), t, 100 * STINT);
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		assert_noop!(
			Market::reject_bid(origin(&bob()), id, eve()),
			market_error(pallet_market::Error::NotBuyer)
		);
		assert_ok!(Market::reject_bid(origin(&alice()), id, eve()));
		assert_eq!(free(&eve()), eve0 + compensation());
		// Eve may not bid on it again, and her worker is not offered it.
		assert_noop!(
			Market::place_bid(origin(&eve()), id, STINT / 4, vec![gpu("eve", 0)]),
			market_error(pallet_market::Error::BidRejected)
		);
		assert!(Market::servable_orders(&eve_worker(), None, 10).0.iter().all(|(o, _)| *o != id));
		// Ferdie still may, and wins.
		bid(&ferdie(), id, STINT / 2, gpu("ferdie", 0));
		assert_ok!(accept(&alice(), id, &ferdie()));
		assert!(matches!(
			pallet_market::Orders::<Runtime>::get(id).unwrap().status,
			OrderStatus::Leased { .. }
		));
		assert_eq!(pallet_market::Rejections::<Runtime>::get(id).len(), 0);
		books.check(0);
	});
}

#[test]
fn a_stolen_worker_key_cannot_pay_its_holders_orders_with_its_providers_deposits() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		// Mallory holds Eve's worker key and buys as Dave: four orders with the shortest
		// window, a bid on each with the key, each retracted late.
		let dave = Keyring::Dave.to_account_id();
		let books = Books::open();
		let (dave0, eve0) = (free(&dave), free(&eve()));
		let ids: Vec<u64> =
			(0..4).map(|_| order(&dave, terms(Some(10), false, 0), 10 * STINT)).collect();
		for id in &ids {
			assert_ok!(Market::place_bid(origin(&eve_worker()), *id, STINT, vec![gpu("eve", 0)]));
		}
		run_to(2);
		for id in &ids {
			assert_ok!(Market::retract_bid(origin(&eve_worker()), *id));
		}
		// Before: Dave collected Eve's four deposits, 4 STINT every two blocks. Now they are
		// burnt: Eve loses what she lost before, Dave gains nothing.
		assert_eq!(free(&eve()), eve0 - 4 * deposit());
		let held: crate::Balance = ids.iter().map(|id| storage(*id) + 10 * STINT).sum();
		assert_eq!(free(&dave), dave0 - held);
		books.check(4 * deposit());
		// A bid Eve signed herself still pays the buyer when she retracts it late.
		let id = order(&dave, terms(Some(10), false, 0), 10 * STINT);
		bid(&eve(), id, STINT, gpu("eve", 0));
		run_to(3);
		assert_ok!(Market::retract_bid(origin(&eve()), id));
		assert!(market_events().contains(&MarketEvent::BidRetracted {
			order: id,
			provider: eve(),
			forfeited: deposit(),
			burnt: false,
		}));
		books.check(4 * deposit());
	});
}

#[test]
fn a_provider_cannot_bid_on_its_worker_keys_orders_nor_the_key_on_its_providers() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		// Eve's worker key's account buys: Eve cannot sell to it (reputation for nothing).
		let id = order(&eve_worker(), terms(Some(10), false, 0), 10 * STINT);
		assert_noop!(
			Market::place_bid(origin(&eve()), id, STINT, vec![gpu("eve", 0)]),
			market_error(pallet_market::Error::BuyerCannotBid)
		);
		assert!(Market::servable_orders(&eve(), None, 10).0.iter().all(|(o, _)| *o != id));
		// Eve buys: her worker key cannot bid on her order for her.
		let id = order(&eve(), terms(Some(10), false, 0), 10 * STINT);
		assert_noop!(
			Market::place_bid(origin(&eve_worker()), id, STINT, vec![gpu("eve", 0)]),
			market_error(pallet_market::Error::BuyerCannotBid)
		);
		// Strangers still can.
		bid(&ferdie(), id, STINT, gpu("ferdie", 0));
		books.check(0);
	});
}

#[test]
fn a_worker_keys_consent_binds_once_and_on_this_chain_only() {
	use codec::Encode;
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let (account, worker, device) = sybil(0);
		let books = Books::open();
		let key = worker.public();
		let genesis = Providers::genesis_hash();
		// Registering used the key's first consent.
		assert_eq!(Providers::worker_key_nonce(&key), 1);
		let consent = |genesis: [u8; 32], nonce: u32| {
			worker.sign(&stint_primitives::worker_proof_payload(&genesis, &account.encode(), nonce))
		};
		let bind = |proof| Providers::bind_worker(origin(&account), key, vec![device], proof);
		let refused = || pallet_providers::Error::<Runtime>::BadWorkerKeyProof;
		// Unbound, the key cannot be bound again with the consent its provider kept (v1 let
		// it, for as long as the provider held the signature), nor with one for another chain.
		assert_ok!(Providers::unbind_worker(origin(&account), key));
		assert_noop!(bind(consent(genesis, 0)), refused());
		assert_noop!(bind(consent([0xEE; 32], 1)), refused());
		// Its next consent binds it, once.
		assert_ok!(bind(consent(genesis, 1)));
		assert_eq!(Providers::worker_key_nonce(&key), 2);
		assert_ok!(Providers::unbind_worker(origin(&account), key));
		assert_noop!(bind(consent(genesis, 1)), refused());
		books.check(0);
	});
}
