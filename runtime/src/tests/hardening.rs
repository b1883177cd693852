//! The market read again as an attacker would (issue 37), on the real runtime with every Stint
//! pallet: bait orders, jammed orders, a stolen worker key, self-dealing through a worker key.
//! Each test tells what the attack gained before the fix and what it costs now, in figures.
//! After every step all pallets' `try_state` holds and money is conserved (`Books`).

use super::{
	attacks::register_as,
	lifecycle::{
		accept, alice, bid, bob, eve, ferdie, free, gpu, lease_of, order, run_to, storage, terms,
		worth, AccountId, Books,
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
use polkadot_sdk::sp_runtime::bounded_vec;
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring as Keyring, *,
};
use stint_primitives::{DeviceId, MILLI_STINT};
use stint_traits::refused;

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
		devices: bounded_vec![gpu("eve", 0)],
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
				name: b"sybil".to_vec().try_into().unwrap(),
				endpoint: b"http://x".to_vec().try_into().unwrap(),
				region: *b"US",
			};
			assert_ok!(Providers::update_info(origin(who), info));
		}
		// Before: nobody could bid (no price beats 1 unit), and at the close every deposit came
		// back. Now a dead bid is anyone's to drop, whatever its price, at its sybil's cost.
		let eve_bids = || {
			Market::place_bid(origin(&eve()), id, STINT / 2, bounded_vec![gpu("eve", 0)])
				.map(|_| ())
		};
		assert_noop!(refused(eve_bids()), market_error(pallet_market::Error::TooManyBids));
		assert_noop!(
			refused(Market::drop_dead_bid(origin(&ferdie()), id, eve())),
			market_error(pallet_market::Error::UnknownBid)
		);
		assert_ok!(Market::drop_dead_bid(origin(&eve()), id, sybils[0].0.clone()));
		assert_ok!(eve_bids());
		// A bid that can still be honoured is not anyone's to drop.
		assert_noop!(
			refused(Market::drop_dead_bid(origin(&ferdie()), id, eve())),
			market_error(pallet_market::Error::BidStillHonourable)
		);
		books.check(0);
		// At the close the rest are dropped: the buyer chooses among live bids only.
		run_to(41);
		let order = pallet_market::Orders::<Runtime>::get(id).unwrap();
		assert_eq!(order.bid_count, 1);
		assert_ok!(accept(&alice(), id, &eve()));
		let _ = lease_of(id);
		// The jam cost the sybils every deposit (out of their bonds), paid to Alice: 32 STINT.
		// Alice paid 50 STINT of escrow for Eve's lease (0.5 STINT × 100 blocks) and the
		// order's storage deposit.
		for (who, ..) in &sybils {
			assert_eq!(worth(who), 1_000 * STINT - deposit());
			assert_eq!(free(who), 1_000 * STINT - 100 * STINT - sybil_registration(who));
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
			(free(&alice()), free(&bob()), free(&eve()), worth(&ferdie()));
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
		// Ferdie: his bait deposit forfeited (from his bond); 5 STINT of escrow for Bob's lease
		// is Bob's.
		assert_eq!(worth(&ferdie()), ferdie0 - deposit());
		assert!(free(&bob()) < bob0);
		books.check(0);

		// Left to expire instead: the same, at the end of the buyer's time to accept.
		let bait = order(&alice(), terms(Some(100), false, 0), 100 * STINT);
		bid(&eve(), bait, STINT / 2, gpu("eve", 1));
		let eve1 = free(&eve());
		let close = pallet_market::Orders::<Runtime>::get(bait).unwrap().bids_close_at;
		run_to(close + <Runtime as pallet_market::Config>::AcceptPeriod::get());
		assert!(pallet_market::Orders::<Runtime>::get(bait).is_none());
		assert_eq!(free(&eve()), eve1 + compensation());
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
			refused(Market::reject_bid(origin(&bob()), id, eve())),
			market_error(pallet_market::Error::NotBuyer)
		);
		assert_ok!(Market::reject_bid(origin(&alice()), id, eve()));
		assert_eq!(free(&eve()), eve0 + compensation());
		// Eve may not bid on it again, and her worker is not offered it.
		assert_noop!(
			refused(Market::place_bid(origin(&eve()), id, STINT / 4, bounded_vec![gpu("eve", 0)])),
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
		let (dave0, eve0) = (free(&dave), worth(&eve()));
		let ids: Vec<u64> =
			(0..4).map(|_| order(&dave, terms(Some(10), false, 0), 10 * STINT)).collect();
		for id in &ids {
			assert_ok!(Market::place_bid(
				origin(&eve_worker()),
				*id,
				STINT,
				bounded_vec![gpu("eve", 0)]
			));
		}
		run_to(2);
		for id in &ids {
			assert_ok!(Market::retract_bid(origin(&eve_worker()), *id));
		}
		// Before: Dave collected Eve's four deposits, 4 STINT every two blocks. Now they are
		// burnt: Eve loses what she lost before, Dave gains nothing.
		assert_eq!(worth(&eve()), eve0 - 4 * deposit());
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
fn a_stolen_worker_key_burns_no_more_than_its_cap_an_era() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		// Mallory holds Eve's worker key: she bids and retracts late on one order, over and
		// over, in its last block of bidding. Each late retraction burns Eve's deposit.
		let dave = Keyring::Dave.to_account_id();
		let books = Books::open();
		let eve0 = worth(&eve());
		let per_bid = <Runtime as pallet_market::Config>::CollateralPerGpu::get() + deposit();
		let gpus = <Providers as stint_traits::ProviderRegistry<AccountId>>::devices(&eve()).len();
		let cap = <Runtime as pallet_market::Config>::WorkerCommitPerGpu::get() * gpus as u128;
		let id = order(&dave, terms(Some(10), false, 0), 10 * STINT);
		run_to(2);
		let mut burnt = 0;
		loop {
			let placed =
				Market::place_bid(origin(&eve_worker()), id, STINT, bounded_vec![gpu("eve", 0)]);
			if let Err(refusal) = placed {
				assert_eq!(
					refusal.error,
					market_error(pallet_market::Error::WorkerCommitCapReached)
				);
				break;
			}
			assert_ok!(Market::retract_bid(origin(&eve_worker()), id));
			burnt += deposit();
		}
		// Before: nothing stopped the loop but Eve's free balance and the block's weight. Now
		// the key stops at its cap: `cap / (collateral + deposit)` bids an era.
		assert_eq!(burnt, deposit() * (cap / per_bid));
		assert_eq!(worth(&eve()), eve0 - burnt);
		let cycle = {
			use pallet_market::WeightInfo as _;
			type W = <Runtime as pallet_market::Config>::WeightInfo;
			W::place_bid(1, 0).saturating_add(W::retract_bid()).ref_time()
		};
		let normal = crate::configs::RuntimeBlockWeights::get()
			.get(frame_support::dispatch::DispatchClass::Normal)
			.max_total
			.unwrap_or_default()
			.ref_time();
		println!(
			"stolen key: before, up to {} STINT burnt a block ({} bid-and-retract cycles fit); \
			 now {} GPUs, cap {} STINT an era, {} bids, {} STINT burnt at most an era",
			normal / cycle,
			normal / cycle,
			gpus,
			cap / STINT,
			cap / per_bid,
			burnt / STINT
		);
		books.check(burnt);
		// Eve herself may still bid, and her worker again next era.
		bid(&eve(), id, STINT, gpu("eve", 0));
		let era = <Runtime as pallet_market::Config>::WorkerEra::get();
		run_to(era);
		let next = order(&dave, terms(Some(10), false, 0), 10 * STINT);
		assert_ok!(Market::place_bid(
			origin(&eve_worker()),
			next,
			STINT,
			bounded_vec![gpu("eve", 0)]
		));
		books.check(burnt);
	});
}

#[test]
fn bait_orders_cannot_use_up_an_honest_workers_cap() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		// Dave posts orders Eve's worker bids on, and cancels each once it has: more of them
		// in an hour than the key's cap has room for.
		let dave = Keyring::Dave.to_account_id();
		let books = Books::open();
		let per_bid = <Runtime as pallet_market::Config>::CollateralPerGpu::get() + deposit();
		let gpus = <Providers as stint_traits::ProviderRegistry<AccountId>>::devices(&eve()).len();
		let cap = <Runtime as pallet_market::Config>::WorkerCommitPerGpu::get() * gpus as u128;
		let baits = cap / per_bid + 10;
		let committed =
			|| pallet_market::Bidders::<Runtime>::get(eve()).map(|b| b.by_workers).unwrap_or(0);
		run_to(2);
		let (eve0, dave0) = (free(&eve()), free(&dave));
		for _ in 0..baits {
			let bait = order(&dave, terms(Some(10), false, 0), 10 * STINT);
			assert_ok!(Market::place_bid(
				origin(&eve_worker()),
				bait,
				STINT,
				bounded_vec![gpu("eve", 0)]
			));
			assert_eq!(committed(), per_bid);
			assert_ok!(Market::cancel_order(origin(&dave), bait));
			assert_eq!(committed(), 0);
		}
		// Before: each cancelled bid stayed counted for the rest of the era, and the key was
		// refused (`WorkerCommitCapReached`) after `cap / per_bid` baits. Now a bid released
		// without being won or forfeited gives its part back: the key still bids.
		let honest = order(&alice(), terms(Some(10), true, 0), 10 * STINT);
		assert_ok!(Market::place_bid(
			origin(&eve_worker()),
			honest,
			STINT,
			bounded_vec![gpu("eve", 0)]
		));
		// Each bait paid Eve for her bid's time; Dave paid that and his fees.
		assert_eq!(free(&eve()), eve0 + baits * compensation());
		assert_eq!(free(&dave), dave0 - baits * compensation());
		println!(
			"bait orders against a worker's cap: before, {} baits an hour stopped a {}-GPU \
			 provider's worker; now {} baits leave it bidding, each costing the baiter {} \
			 milli-STINT paid to the provider",
			cap / per_bid,
			gpus,
			baits,
			compensation() / MILLI_STINT,
		);
		books.check(0);
	});
}

#[test]
fn a_provider_cannot_bid_on_its_worker_keys_orders_nor_the_key_on_its_providers() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		// Eve's worker key's account buys: Eve cannot sell to it (reputation for nothing).
		let id = order(&eve_worker(), terms(Some(10), false, 0), 10 * STINT);
		assert_noop!(
			refused(Market::place_bid(origin(&eve()), id, STINT, bounded_vec![gpu("eve", 0)])),
			market_error(pallet_market::Error::BuyerCannotBid)
		);
		assert!(Market::servable_orders(&eve(), None, 10).0.iter().all(|(o, _)| *o != id));
		// Eve buys: her worker key cannot bid on her order for her.
		let id = order(&eve(), terms(Some(10), false, 0), 10 * STINT);
		assert_noop!(
			refused(Market::place_bid(
				origin(&eve_worker()),
				id,
				STINT,
				bounded_vec![gpu("eve", 0)]
			)),
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
		// Registering used the provider's first consent.
		assert_eq!(Providers::consent_nonce(&account), 1);
		let consent = |genesis: [u8; 32], nonce: u32| {
			worker.sign(&stint_primitives::worker_proof_payload(&genesis, &account.encode(), nonce))
		};
		let bind =
			|proof| Providers::bind_worker(origin(&account), key, bounded_vec![device], proof);
		let bad_proof = || pallet_providers::Error::<Runtime>::BadWorkerKeyProof;
		// Unbound, the key cannot be bound again with the consent its provider kept (v1 let
		// it, for as long as the provider held the signature), nor with one for another chain.
		assert_ok!(Providers::unbind_worker(origin(&account), key));
		assert_noop!(refused(bind(consent(genesis, 0))), bad_proof());
		assert_noop!(refused(bind(consent([0xEE; 32], 1))), bad_proof());
		// Its next consent binds it, once.
		assert_ok!(bind(consent(genesis, 1)));
		assert_eq!(Providers::consent_nonce(&account), 2);
		assert_ok!(Providers::unbind_worker(origin(&account), key));
		assert_noop!(refused(bind(consent(genesis, 1))), bad_proof());
		books.check(0);
	});
}

/// Hole 6. The deadline hook handles `MaxDeadlinesPerBlock` orders a block. Before, a bucket
/// held two orders, what found no room went to an overflow queue drained one a block, and an
/// entry drained before its block went back to the tail: two cheap orders a block kept every
/// bucket in reach full, and an honest order's close slipped by as many blocks as the overflow
/// held. Now the queue is a timeline handled in the order deadlines fall due, and anyone may
/// close an order the hook has not reached yet, for free: a worker with a bid on it does.
#[test]
fn a_flood_of_orders_cannot_make_an_honest_order_close_late() {
	use codec::Encode;
	use sp_runtime::traits::Dispatchable;
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let per_block: u32 = <Runtime as pallet_market::Config>::MaxDeadlinesPerBlock::get();
		let flood = 4 * per_block;
		let least = <Runtime as pallet_market::Config>::MinOrderDeposit::get();
		let cheapest = terms(None, true, 0);
		let bob0 = free(&bob());
		let mut crowd = Vec::new();
		let mut honest = None;
		let mut hook_late_by = 0;
		// For 30 blocks Bob posts four times what the hook handles a block, each order with the
		// shortest window and the least escrow; at block 10 Alice posts hers and Eve bids.
		for block in 1..=30u32 {
			run_to(block);
			if let Some(id) = honest.filter(|_| block == 12) {
				// Alice's window closed at the start of this block, but the hook is far behind.
				let slot = pallet_market::Orders::<Runtime>::get(id).unwrap().deadline.unwrap();
				assert_eq!(slot.block, 12);
				let ahead = crowd
					.iter()
					.filter_map(|id| pallet_market::Orders::<Runtime>::get(id)?.deadline)
					.filter(|other| *other <= slot)
					.count() as u32;
				hook_late_by = ahead.div_ceil(per_block);
				assert!(hook_late_by >= 25, "the hook alone closes it {hook_late_by} blocks late");
				// Eve's worker sees its bid on an order past its close and closes it, free.
				let call = RuntimeCall::Market(pallet_market::Call::close_order { order: id });
				let closed = call.dispatch(origin(&eve_worker())).expect("closed");
				assert_eq!(closed.pays_fee, frame_support::dispatch::Pays::No);
				assert_eq!(
					pallet_leases::Leases::<Runtime>::get(lease_of(id)).unwrap().provider,
					eve()
				);
			}
			crowd.extend((0..flood).map(|_| order(&bob(), cheapest.clone(), least)));
			if block == 10 {
				let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
				bid(&eve(), id, STINT / 2, gpu("eve", 0));
				honest = Some(id);
			}
		}
		// The flood gained Bob nothing: his own orders are what waits. The hook works through
		// them in the order they fell due, and every unit of his escrow comes back.
		let backlog =
			crowd.iter().filter(|id| pallet_market::Orders::<Runtime>::contains_key(id)).count()
				as u32;
		run_to(30 + backlog.div_ceil(per_block));
		assert!(crowd.iter().all(|id| !pallet_market::Orders::<Runtime>::contains_key(id)));
		assert_eq!(free(&bob()), bob0);
		let create = RuntimeCall::Market(pallet_market::Call::create_order {
			spec: super::lifecycle::spec(),
			terms: cheapest,
			deposit: least,
		});
		let len = create.encoded_size() as u32 + 110;
		let fee = TransactionPayment::compute_fee(len, &create.get_dispatch_info(), 0);
		println!(
			"flood.orders_per_block = {flood}; flood.fees_per_block = {} mSTINT; \
			 flood.escrow_held = {} STINT; hook.late_at_close = {hook_late_by} blocks; \
			 honest.late = 0 blocks (closed by close_order, free); hook.caught_up_after = {} blocks",
			u128::from(flood) * fee / MILLI_STINT,
			u128::from(backlog) * least / STINT,
			backlog.div_ceil(per_block),
		);
		books.check(0);
	});
}

/// Hole 9. Before, a provider that left wrote its history rows (`PastReputation`, and one per
/// GPU in `DeviceHistory`) for free, forever, and an order's 0.1 STINT base stood for its lease
/// and stream (about 1.5 KB). Now every record a user causes is paid by a deposit sized from its
/// encoded length, returned when the record goes: an order's covers its lease, the lease's
/// dispute and stream; a provider that leaves keeps its history row's deposit held.
#[test]
fn every_record_a_user_causes_is_paid_for_by_its_size() {
	use codec::{Encode, MaxEncodedLen};
	use frame_support::traits::fungible::InspectHold;
	use stint_traits::LeaseFactory;
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let (account, _, _) = sybil(0);
		let books = Books::open();
		let per_byte = <Runtime as pallet_market::Config>::StorageDepositPerByte::get();
		let base = <Runtime as pallet_market::Config>::StorageDepositBase::get();
		// An order's deposit: its key and record, and the most its lease keeps until reaped.
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		let record = pallet_market::Orders::<Runtime>::get(id).unwrap();
		let leases = <crate::Leases as LeaseFactory<_, _, _>>::record_bytes(1);
		let bytes = 16 + 8 + record.encoded_size() as u32 + leases;
		assert_eq!(storage(id), base + per_byte * crate::Balance::from(bytes));
		// What it keeps once leased, acknowledged and run, measured: within what it paid for.
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(crate::Leases::ack_lease(origin(&eve()), lease));
		run_to(13);
		super::lifecycle::submit(lease, 0);
		let kept = |key: usize, len: usize| (16 + key + len) as u32;
		let lease_record = pallet_leases::Leases::<Runtime>::get(lease).unwrap();
		let stream = pallet_streams::Records::<Runtime>::get(lease_record.stream).unwrap();
		let stored = kept(8, pallet_market::Orders::<Runtime>::get(id).unwrap().encoded_size())
			+ kept(8, lease_record.encoded_size())
			+ kept(8, stream.encoded_size());
		assert!(stored <= bytes, "{stored} bytes kept, {bytes} paid for");
		println!(
			"storage.order_deposit = {} mSTINT for {bytes} bytes (order {} B, its lease, \
			 dispute and stream at most {leases} B; {stored} B kept after a run)",
			storage(id) / MILLI_STINT,
			record.encoded_size(),
		);
		// A provider that leaves keeps its history row (its score and the worker-key consents
		// it used), and the row's deposit: its key and its value, byte by byte.
		let history_bytes = 16
			+ AccountId::max_encoded_len()
			+ pallet_providers::History::<crate::Balance>::max_encoded_len();
		let history_deposit =
			<Runtime as pallet_providers::Config>::DepositPerByte::get() * history_bytes as u128;
		assert_eq!(Providers::history_deposit(), history_deposit);
		let free0 = free(&account);
		let held0 = Balances::balance_on_hold(
			&pallet_providers::HoldReason::ProviderDeposit.into(),
			&account,
		);
		assert_ok!(Providers::announce_exit(origin(&account)));
		let notice = <Runtime as pallet_providers::Config>::ExitNotice::get();
		run_to(frame_system::Pallet::<Runtime>::block_number() + notice);
		assert_ok!(Providers::deregister(origin(&account)));
		let history = pallet_providers::Histories::<Runtime>::get(&account).expect("kept");
		assert_eq!(history.deposit, history_deposit);
		assert_eq!(free(&account), free0 + held0 - history_deposit);
		println!(
			"storage.history_deposit = {} µSTINT for {history_bytes} bytes",
			history_deposit / (MILLI_STINT / 1_000)
		);
		books.check(0);
	});
}

/// Hole 10. A refused call paid its declared worst case: on a dev chain a refused `terminate`
/// cost 0.176 STINT, a refused `report_no_show` 0.57, against 0.011 for a transfer. Now a
/// refusal by a pallet's own checks, which run before anything is written, is charged what the
/// checks read.
#[test]
fn a_refused_call_costs_about_what_its_checks_read() {
	use codec::Encode;
	use frame_support::dispatch::PostDispatchInfo;
	use sp_runtime::traits::Dispatchable;
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(crate::Leases::ack_lease(origin(&eve()), lease));
		let charged = |name: &str, call: RuntimeCall, who: &AccountId| {
			let len = call.encoded_size() as u32 + 110;
			let info = call.get_dispatch_info();
			let declared = TransactionPayment::compute_fee(len, &info, 0);
			let post: PostDispatchInfo = match call.dispatch(origin(who)) {
				Ok(_) => panic!("{name}: a refusal was expected"),
				Err(refusal) => refusal.post_info,
			};
			(declared, TransactionPayment::compute_actual_fee(len, &info, &post, 0))
		};
		let transfer = RuntimeCall::Balances(pallet_balances::Call::transfer_keep_alive {
			dest: bob().into(),
			value: STINT,
		});
		let transfer = TransactionPayment::compute_fee(
			transfer.encoded_size() as u32 + 110,
			&transfer.get_dispatch_info(),
			0,
		);
		use pallet_leases::Call as L;
		use pallet_market::Call as M;
		let refusals = [
			// A fixed lease ends by its result, never by `terminate`.
			("leases.terminate", RuntimeCall::Leases(L::terminate { lease }), eve()),
			// It was acknowledged in time.
			("leases.report_no_show", RuntimeCall::Leases(L::report_no_show { lease }), bob()),
			("leases.ack_lease", RuntimeCall::Leases(L::ack_lease { lease }), bob()),
			("leases.close_lease", RuntimeCall::Leases(L::close_lease { lease }), bob()),
			("market.cancel_order", RuntimeCall::Market(M::cancel_order { order: id }), alice()),
			(
				"market.place_bid",
				RuntimeCall::Market(M::place_bid {
					order: id,
					price_per_block: STINT,
					devices: bounded_vec![gpu("ferdie", 0)],
				}),
				ferdie(),
			),
			(
				"streams.settle",
				RuntimeCall::Streams(pallet_streams::Call::settle { stream: 999 }),
				bob(),
			),
			("providers.pause", RuntimeCall::Providers(pallet_providers::Call::pause {}), bob()),
		];
		for (name, call, who) in refusals {
			let (declared, fee) = charged(name, call, &who);
			println!(
				"fee.refused.{name} = {} µSTINT (declared {} µSTINT; a transfer {} µSTINT)",
				fee / (MILLI_STINT / 1_000),
				declared / (MILLI_STINT / 1_000),
				transfer / (MILLI_STINT / 1_000),
			);
			assert!(fee <= 2 * transfer, "{name}: {fee} against a transfer's {transfer}");
		}
		books.check(0);
	});
}

/// The fee `call` costs its sender at its declared weight (an upper bound; 110 bytes of
/// signature and extensions).
fn fee_of(call: RuntimeCall) -> crate::Balance {
	use codec::Encode;
	let len = call.encoded_size() as u32 + 110;
	TransactionPayment::compute_fee(len, &call.get_dispatch_info(), 0)
}

/// `buyer` pays `provider` (whose worker key is `worker`) for an hour-long lease of 1.2 STINT
/// on `device`, which runs to its end and is accepted: a full good outcome before the take.
/// Returns the fees its calls cost, both sides together.
fn self_dealt_lease(
	buyer: &AccountId,
	provider: &AccountId,
	worker: &sp_core::sr25519::Pair,
	device: DeviceId,
) -> crate::Balance {
	use stint_primitives::{Report, ReportKind};
	let hour = crate::HOURS;
	let price = STINT / 500;
	let mut fees = 0;
	let mut t = terms(Some(hour), true, 0);
	t.max_price_per_block = price;
	let id = order(buyer, t, 10 * STINT);
	let create = pallet_market::Orders::<Runtime>::get(id).unwrap();
	fees += fee_of(RuntimeCall::Market(pallet_market::Call::create_order {
		spec: create.spec,
		terms: create.terms,
		deposit: 10 * STINT,
	}));
	bid(provider, id, price, device);
	fees += bid_fee();
	run_to(System::block_number() + 2);
	let lease = lease_of(id);
	assert_ok!(pallet_leases::Pallet::<Runtime>::ack_lease(origin(provider), lease));
	fees += fee_of(RuntimeCall::Leases(pallet_leases::Call::ack_lease { lease }));
	run_to(System::block_number() + hour);
	let c = super::lifecycle::result(0);
	let report = Report::new(crate::Leases::genesis_hash(), lease, ReportKind::Final, c);
	let signature = worker.sign(&report.signing_bytes());
	let call = pallet_leases::Call::submit_result { lease, commitment: c, signature };
	fees += fee_of(RuntimeCall::Leases(call.clone()));
	assert_ok!(frame_support::traits::UnfilteredDispatchable::dispatch_bypass_filter(
		call,
		origin(provider)
	));
	assert_ok!(crate::Leases::accept_result(origin(buyer), lease));
	fees += fee_of(RuntimeCall::Leases(pallet_leases::Call::accept_result { lease }));
	fees
}

type System = frame_system::Pallet<Runtime>;

#[test]
fn farming_reputation_costs_the_take_and_one_buyer_cannot_carry_a_score() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		// Mallory runs a sybil provider and pays it from her own buyer accounts.
		let (provider, worker, device) = sybil(1);
		let buyers: Vec<AccountId> = (0..16u8).map(|i| AccountId::from([0xB0 ^ i; 32])).collect();
		for buyer in &buyers {
			Balances::set_balance(buyer, 100 * STINT);
		}
		let books = Books::open();
		let mallory = || free(&provider) + buyers.iter().map(free).sum::<crate::Balance>();
		let score = || {
			<Providers as stint_traits::ProviderRegistry<AccountId>>::reputation(&provider).unwrap()
		};
		let start = mallory();
		let first = pallet_market::NextOrderId::<Runtime>::get();
		// One buyer: ten full leases. Before, each counted in full: 11/12, 91.7 %.
		for _ in 0..10 {
			self_dealt_lease(&buyers[0], &provider, &worker, device);
		}
		let one_buyer = score();
		assert!(one_buyer < sp_runtime::Permill::from_percent(76), "{one_buyer:?}");
		let burnt_one = start - mallory();
		// Each lease paid 1.2 STINT; 2 % of it was burnt (the storage deposits come back at
		// reaping: the difference here is the take alone).
		let storage_held: crate::Balance = (first..first + 10).map(storage).sum();
		assert_eq!(burnt_one - storage_held, 10 * (2 * 1_200 * STINT / 1_000 / 100));
		books.check(0);
		// Sybil buyers, two leases each, until 95 %.
		let (mut leases, mut fees) = (0u32, 0);
		let before = mallory();
		'farm: for buyer in &buyers[1..] {
			for _ in 0..2 {
				fees += self_dealt_lease(buyer, &provider, &worker, device);
				leases += 1;
				if score() >= sp_runtime::Permill::from_percent(95) {
					break 'farm;
				}
			}
		}
		assert!(score() >= sp_runtime::Permill::from_percent(95), "{:?}", score());
		let next = pallet_market::NextOrderId::<Runtime>::get();
		let held: crate::Balance = (next - u64::from(leases)..next).map(storage).sum();
		let take = before - mallory() - held;
		println!(
			"farming: one buyer's ten leases reach {one_buyer:?}; 95 % took {leases} leases from \
			 {} buyers: {} mSTINT burnt in takes, {} mSTINT in fees",
			leases.div_ceil(2),
			take / MILLI_STINT,
			fees / MILLI_STINT,
		);
		assert_eq!(take, u128::from(leases) * 24 * MILLI_STINT);
		books.check(0);
	});
}

#[test]
fn no_parameter_root_sets_can_break_the_market() {
	use crate::configs::{dynamic_params::leases, dynamic_params::streams, RuntimeParameters};
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let set = |value: RuntimeParameters| {
			assert_ok!(pallet_parameters::Pallet::<Runtime>::set_parameter(
				RuntimeOrigin::root(),
				value
			));
		};
		set(RuntimeParameters::Streams(streams::Parameters::GracePeriod(
			streams::GracePeriod,
			Some(0),
		)));
		set(RuntimeParameters::Leases(leases::Parameters::AckDeadline(
			leases::AckDeadline,
			Some(1),
		)));
		set(RuntimeParameters::Leases(leases::Parameters::VerdictWindow(
			leases::VerdictWindow,
			Some(30 * crate::DAYS),
		)));
		set(RuntimeParameters::Leases(leases::Parameters::DisputeBond(
			leases::DisputeBond,
			Some(0),
		)));
		// Each is taken as its nearest bound.
		assert_eq!(<Runtime as pallet_streams::Config>::GracePeriod::get(), 5);
		assert_eq!(<Runtime as pallet_leases::Config>::AckDeadline::get(), 5);
		let retention = <Runtime as pallet_market::Config>::Retention::get();
		assert_eq!(<Runtime as pallet_leases::Config>::VerdictWindow::get(), retention);
		assert_eq!(<Runtime as pallet_leases::Config>::DisputeBond::get(), 100 * MILLI_STINT);
	});
}
