//! The market: orders and their escrow, bids and their collateral, the auction (by hand and at
//! the close of the window), expiry, and every refusal. Every test ends with the market's and the
//! streams' `try_state`, a check that every locked collateral belongs to a bid or a lease, and a
//! check that not a unit was created or lost.

use crate::{mock::*, *};
use codec::{Decode, Encode};
use frame::deps::sp_runtime::bounded_vec;
use frame::{
	deps::frame_support::{dispatch::GetDispatchInfo, traits::UnfilteredDispatchable},
	testing_prelude::*,
	traits::fungible::Mutate,
};
use stint_traits::buckets::Slot;
use stint_traits::refused;

fn create(buyer: u64, terms: TermsOf<Test>, deposit: Balance) -> OrderId {
	let id = NextOrderId::<Test>::get();
	assert_ok!(Market::create_order(RuntimeOrigin::signed(buyer), spec(), terms, deposit));
	id
}

fn bid(provider: u64, order: OrderId, price: Balance) {
	assert_ok!(Market::place_bid(
		RuntimeOrigin::signed(provider),
		order,
		price,
		bounded(vec![dev(provider, 0)])
	));
}

/// The buyer accepts `provider`'s bid on `order` as it stands.
fn accept(buyer: u64, order: OrderId, provider: u64) -> DispatchResultWithPostInfo {
	let (price, devices) = Bids::<Test>::get(order, provider)
		.map(|b| (b.price_per_block, b.devices.to_vec()))
		.unwrap_or((1, vec![dev(provider, 0)]));
	Market::accept_bid(RuntimeOrigin::signed(buyer), order, provider, price, bounded(devices))
}

fn order(id: OrderId) -> OrderOf<Test> {
	Orders::<Test>::get(id).expect("order exists")
}

#[test]
fn create_order_holds_the_escrow_and_schedules_the_window() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_500);
		assert_eq!(escrow(BUYER), 1_500);
		assert_eq!(free(BUYER), ENDOWMENT - 1_500);
		let o = order(id);
		assert_eq!(
			(o.status, o.bids_close_at, o.deadline),
			(OrderStatus::Open, 11, Some(Slot::first(11)))
		);
		assert!(Deadlines::<Test>::get((11, 0)).contains(&id));
		assert_eq!(
			last_event(),
			Event::OrderCreated {
				order: id,
				buyer: BUYER,
				deposit: 1_500,
				max_price_per_block: 10,
				bids_close_at: 11
			}
		);
	});
}

#[test]
fn create_order_refuses_bad_input() {
	ExtBuilder::build_and_execute(|| {
		let refuse = |spec: JobSpec, terms: TermsOf<Test>, deposit: Balance, error: Error<Test>| {
			assert_noop!(
				refused(Market::create_order(RuntimeOrigin::signed(BUYER), spec, terms, deposit)),
				error
			);
		};
		let mut unpinned = spec();
		unpinned.image = b"ghcr.io/acme/train:latest".to_vec().try_into().unwrap();
		refuse(unpinned, terms(), 1_000, Error::ImageNotPinned);
		for key in ["LD_PRELOAD", "NVIDIA_VISIBLE_DEVICES", "STINT_LEASE", "PATH", "A-B", ""] {
			let mut preloads = spec();
			let var = stint_primitives::EnvVar {
				key: key.as_bytes().to_vec().try_into().unwrap(),
				value: b"x".to_vec().try_into().unwrap(),
			};
			preloads.env.try_push(var).unwrap();
			refuse(preloads, terms(), 1_000, Error::ReservedEnvName);
		}
		// No process can be given a NUL or bytes that are not text: refused here, by name.
		for bad in [&b"a\0b"[..], &[0xff, 0xfe][..]] {
			let mut argument = spec();
			argument.command.try_push(bad.to_vec().try_into().unwrap()).unwrap();
			refuse(argument, terms(), 1_000, Error::UnpassableText);
			let mut value = spec();
			let var = stint_primitives::EnvVar {
				key: b"EPOCHS".to_vec().try_into().unwrap(),
				value: bad.to_vec().try_into().unwrap(),
			};
			value.env.try_push(var).unwrap();
			refuse(value, terms(), 1_000, Error::UnpassableText);
		}
		let with = |f: fn(&mut TermsOf<Test>)| {
			let mut t = terms();
			f(&mut t);
			t
		};
		refuse(spec(), with(|t| t.requirements.gpu_count = 0), 1_000, Error::NoGpus);
		refuse(spec(), with(|t| t.requirements.gpu_count = 5), 1_000, Error::TooManyGpus);
		refuse(spec(), with(|t| t.replicas = 0), 1_000, Error::TooManyReplicas);
		refuse(spec(), with(|t| t.replicas = 6), 1_000, Error::TooManyReplicas);
		// Replicas are compared, picked by the chain and end by their results.
		refuse(spec(), with(|t| t.replicas = 2), 1_000, Error::UnreplicableOrder);
		let replicated = |f: fn(&mut TermsOf<Test>)| {
			let mut t = terms();
			(t.replicas, t.deterministic, t.auto_accept) = (2, true, true);
			f(&mut t);
			t
		};
		refuse(spec(), replicated(|t| t.deterministic = false), 2_000, Error::UnreplicableOrder);
		refuse(spec(), replicated(|t| t.auto_accept = false), 2_000, Error::UnreplicableOrder);
		// Two replicas of 100 blocks at up to 10: at least 2000.
		refuse(spec(), replicated(|_| ()), 1_999, Error::DepositTooLow);
		refuse(spec(), with(|t| t.max_price_per_block = 0), 1_000, Error::ZeroPrice);
		refuse(spec(), with(|t| t.duration = Some(0)), 1_000, Error::ZeroDuration);
		refuse(spec(), with(|t| t.bid_window = 1), 1_000, Error::BidWindowTooShort);
		refuse(spec(), with(|t| t.bid_window = 101), 1_000, Error::BidWindowTooLong);
		refuse(spec(), with(|t| t.termination_notice = 51), 1_000, Error::NoticeTooLong);
		// 100 blocks at up to 10: at least 1000.
		refuse(spec(), terms(), 999, Error::DepositTooLow);
		fn open_ended(t: &mut TermsOf<Test>) {
			t.duration = None;
			t.termination_notice = MIN_NOTICE;
		}
		refuse(spec(), with(open_ended), 999, Error::DepositTooLow);
		// An open-ended lease its provider could leave at once would be a free exit.
		refuse(
			spec(),
			with(|t| {
				open_ended(t);
				t.termination_notice = MIN_NOTICE - 1;
			}),
			1_000,
			Error::NoticeTooShort,
		);
		refuse(
			spec(),
			with(|t| t.holdback = Permill::from_percent(9)),
			1_000,
			Error::HoldbackTooLow,
		);
		refuse(spec(), with(|t| t.verdict_window = 101), 1_000, Error::VerdictWindowTooLong);
		refuse(spec(), terms(), ENDOWMENT + 1, Error::InsufficientBalance);
		assert_noop!(
			refused(Market::create_order(RuntimeOrigin::none(), spec(), terms(), 1_000)),
			DispatchError::BadOrigin
		);
	});
}

#[test]
fn place_bid_locks_collateral_and_holds_a_deposit() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		// Weighed by the devices it offers, as if the order were full; a free slot is refunded.
		let call = crate::Call::<Test>::place_bid {
			order: id,
			price_per_block: 8,
			devices: bounded(vec![dev(P1, 0)]),
		};
		assert_eq!(call.get_dispatch_info().call_weight, <() as WeightInfo>::place_bid(1, 1));
		let charged = call.dispatch_bypass_filter(RuntimeOrigin::signed(P1)).unwrap();
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::place_bid(1, 0)));
		// The deposit is locked in the bond with the collateral; nothing is held of the free
		// balance.
		assert_eq!(locked(P1), COLLATERAL_PER_GPU + BID_DEPOSIT);
		assert_eq!((bid_deposits(P1), free(P1)), (BID_DEPOSIT, ENDOWMENT));
		let b = Bids::<Test>::get(id, P1).unwrap();
		assert_eq!((b.price_per_block, b.devices.to_vec(), b.sequence), (8, vec![dev(P1, 0)], 0));
		assert_eq!(order(id).bid_count, 1);
		assert_eq!(
			last_event(),
			Event::BidPlaced {
				order: id,
				provider: P1,
				price_per_block: 8,
				devices: 1,
				collateral: COLLATERAL_PER_GPU
			}
		);
	});
}

#[test]
fn a_worker_key_bids_and_retracts_for_its_provider_on_its_own_devices_only() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		let place = |who: u64, devices: Vec<DeviceId>| {
			Market::place_bid(RuntimeOrigin::signed(who), id, 5, bounded(devices))
		};
		// WORKER is P1's key for its devices 0..4 (one machine) only.
		assert_noop!(refused(place(WORKER, vec![dev(P1, 4)])), Error::<Test>::NotThisWorker);
		assert_noop!(refused(place(WORKER, vec![dev(P2, 0)])), Error::<Test>::NotThisWorker);
		assert_ok!(place(WORKER, vec![dev(P1, 0)]));
		// The bid, its deposit and its collateral are P1's.
		assert!(Bids::<Test>::contains_key(id, P1));
		assert_eq!(locked(P1), COLLATERAL_PER_GPU + BID_DEPOSIT);
		assert_eq!(Market::bids_of(&P1).len(), 1);
		assert_eq!(Market::bids_of(&WORKER).len(), 1);
		assert!(Market::bids_of(&P2).is_empty());
		// P1 cannot bid again through its worker.
		assert_noop!(refused(place(WORKER, vec![dev(P1, 1)])), Error::<Test>::AlreadyBid);
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(WORKER), id));
		assert_eq!(locked(P1), 0);
		assert!(Market::bids_of(&P1).is_empty());
		// A bid on P1's other machine is not this worker's to retract.
		assert_ok!(place(P1, vec![dev(P1, 4)]));
		assert!(Market::bids_of(&WORKER).is_empty());
		assert_noop!(
			refused(Market::retract_bid(RuntimeOrigin::signed(WORKER), id)),
			Error::<Test>::NotThisWorker
		);
	});
}

#[test]
fn place_bid_refuses_bad_bids() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		let place = |who: u64, order: OrderId, price: Balance, devices: Vec<DeviceId>| {
			Market::place_bid(RuntimeOrigin::signed(who), order, price, bounded(devices))
		};
		assert_noop!(refused(place(P1, 7, 5, vec![dev(P1, 0)])), Error::<Test>::UnknownOrder);
		assert_noop!(refused(place(BUYER, id, 5, vec![dev(P1, 0)])), Error::<Test>::BuyerCannotBid);
		assert_noop!(refused(place(P1, id, 0, vec![dev(P1, 0)])), Error::<Test>::ZeroPrice);
		assert_noop!(
			refused(place(P1, id, 11, vec![dev(P1, 0)])),
			Error::<Test>::PriceAboveCeiling
		);
		// More devices than an order may ask for do not even decode.
		let too_many = (3u8, 1u8, id, codec::Compact(5u64), vec![dev(P1, 0); 5]).encode();
		assert!(RuntimeCall::decode(&mut &too_many[..]).is_err());
		let enough = (3u8, 1u8, id, codec::Compact(5u64), vec![dev(P1, 0); 4]).encode();
		assert!(RuntimeCall::decode(&mut &enough[..]).is_ok());
		// What the registry refuses, it names.
		assert_noop!(
			refused(place(PAUSED, id, 5, vec![dev(PAUSED, 0)])),
			DispatchError::Other("ProviderNotActive")
		);
		assert_noop!(
			refused(place(P1, id, 5, vec![dev(P2, 0)])),
			DispatchError::Other("NotYourDevice")
		);
		assert_noop!(
			refused(place(P1, id, 5, vec![dev(P1, 0), dev(P1, 1)])),
			DispatchError::Other("Unfit")
		);
		commit_elsewhere(dev(P1, 1));
		assert_noop!(
			refused(place(P1, id, 5, vec![dev(P1, 1)])),
			DispatchError::Other("DeviceCommitted")
		);

		bid(P1, id, 5);
		assert_noop!(refused(place(P1, id, 4, vec![dev(P1, 0)])), Error::<Test>::AlreadyBid);
		bid(P2, id, 5);
		bid(P3, id, 5);
		assert_noop!(
			refused(place(PAUSED, id, 5, vec![dev(PAUSED, 0)])),
			Error::<Test>::TooManyBids
		);

		let mut manual = terms();
		manual.auto_accept = false;
		let late = create(BUYER, manual, 1_000);
		bid(P2, late, 5);
		run_to_block(11);
		assert_noop!(refused(place(P3, late, 5, vec![dev(P3, 1)])), Error::<Test>::BiddingClosed);
	});
}

#[test]
fn a_bid_needs_free_bond_for_its_collateral_and_deposit() {
	ExtBuilder::build_and_execute(|| {
		let mut two = terms();
		two.requirements.gpu_count = 2;
		let orders: Vec<_> = (0..6).map(|_| create(BUYER, two.clone(), 1_000)).collect();
		// A bond of 1000 backs four two-GPU bids, each locking 200 of collateral and 10 of
		// deposit: the fifth would need 210 of the 160 left.
		for id in &orders[..4] {
			assert_ok!(Market::place_bid(
				RuntimeOrigin::signed(P1),
				*id,
				5,
				bounded_vec![dev(P1, 0), dev(P1, 1)]
			));
		}
		assert_noop!(
			refused(Market::place_bid(
				RuntimeOrigin::signed(P1),
				orders[4],
				5,
				bounded_vec![dev(P1, 0), dev(P1, 1)]
			)),
			DispatchError::Other("InsufficientFreeBond")
		);
		// The free balance plays no part: nothing is held of it.
		Balances::set_balance(&P2, 5);
		assert_ok!(Market::place_bid(
			RuntimeOrigin::signed(P2),
			orders[0],
			5,
			bounded_vec![dev(P2, 0), dev(P2, 1)]
		));
		assert_eq!(free(P2), 5);
		// Put P2's money back for the final count.
		Balances::set_balance(&P2, ENDOWMENT);
	});
}

#[test]
fn retract_bid_releases_collateral_and_deposit() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 8);
		assert_noop!(
			refused(Market::retract_bid(RuntimeOrigin::signed(P2), id)),
			Error::<Test>::UnknownBid
		);
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(P1), id));
		assert_eq!((locked(P1), bid_deposits(P1), free(P1)), (0, 0, ENDOWMENT));
		assert_eq!(order(id).bid_count, 0);
		assert_eq!(
			last_event(),
			Event::BidRetracted { order: id, provider: P1, forfeited: 0, burnt: false }
		);
		// A retracted bid may be placed again.
		bid(P1, id, 7);
	});
}

#[test]
fn cancel_order_returns_everything() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 8);
		bid(P2, id, 9);
		assert_noop!(
			refused(Market::cancel_order(RuntimeOrigin::signed(OTHER_BUYER), id)),
			Error::<Test>::NotBuyer
		);
		// Charged for the two bids it had, not for a full order.
		let charged = Market::cancel_order(RuntimeOrigin::signed(BUYER), id).unwrap();
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::cancel_order(2)));
		assert!(<() as WeightInfo>::cancel_order(2).all_lt(<() as WeightInfo>::cancel_order(32)));
		// Each bidder it let go is paid for its time from the escrow; the rest comes back.
		assert_eq!((escrow(BUYER), free(BUYER)), (0, ENDOWMENT - 2 * BID_COMPENSATION));
		for p in [P1, P2] {
			assert_eq!((locked(p), bid_deposits(p), free(p)), (0, 0, ENDOWMENT + BID_COMPENSATION));
		}
		assert!(Orders::<Test>::get(id).is_none());
		assert!(Deadlines::<Test>::get((11, 0)).is_empty());
		assert_eq!(
			last_event(),
			Event::OrderCancelled {
				order: id,
				refunded: 1_000 - 2 * BID_COMPENSATION,
				compensated: 2 * BID_COMPENSATION
			}
		);
		assert_noop!(
			refused(Market::cancel_order(RuntimeOrigin::signed(BUYER), id)),
			Error::<Test>::UnknownOrder
		);
		// Nothing happens at the old deadline.
		run_to_block(11);
	});
}

#[test]
fn accept_bid_makes_a_lease_and_refunds_what_the_price_does_not_need() {
	ExtBuilder::build_and_execute(|| {
		let mut manual = terms();
		manual.auto_accept = false;
		let id = create(BUYER, manual, 1_500);
		bid(P1, id, 8);
		bid(P2, id, 6);
		assert_noop!(refused(accept(OTHER_BUYER, id, P1)), Error::<Test>::NotBuyer);
		assert_noop!(refused(accept(BUYER, id, P3)), Error::<Test>::UnknownBid);
		// The buyer need not take the cheapest; it pays for the two bids there were.
		let charged = accept(BUYER, id, P1).unwrap();
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::accept_bid(2)));

		// 100 blocks at 8 go into the stream; the other 700 come back.
		assert_eq!((escrow(BUYER), stream_escrow(BUYER)), (0, 800));
		assert_eq!(free(BUYER), ENDOWMENT - 800);
		let lease = &leases()[0];
		assert_eq!((lease.provider, lease.price_per_block, lease.escrow), (P1, 8, 800));
		assert_eq!(
			(lease.collateral, lease.duration, lease.devices.clone()),
			(100, Some(100), vec![dev(P1, 0)])
		);
		// The winner's collateral stays locked for the lease; the loser gets everything back.
		assert_eq!((locked(P1), bid_deposits(P1)), (COLLATERAL_PER_GPU, 0));
		assert_eq!((locked(P2), bid_deposits(P2), free(P2)), (0, 0, ENDOWMENT));
		assert_eq!(order(id).status, OrderStatus::Leased { lease: 0 });
		assert_eq!(
			last_event(),
			Event::BidAccepted {
				order: id,
				provider: P1,
				lease: 0,
				price_per_block: 8,
				escrow: 800,
				refunded: 700,
				automatic: false
			}
		);
		assert_noop!(refused(accept(BUYER, id, P1)), Error::<Test>::OrderNotOpen);
		assert_noop!(
			refused(Market::cancel_order(RuntimeOrigin::signed(BUYER), id)),
			Error::<Test>::OrderNotOpen
		);
		assert_noop!(
			refused(Market::place_bid(RuntimeOrigin::signed(P3), id, 5, bounded_vec![dev(P3, 0)])),
			Error::<Test>::OrderNotOpen
		);
	});
}

#[test]
fn accept_bid_takes_the_bid_only_at_the_price_and_on_the_devices_the_buyer_saw() {
	ExtBuilder::build_and_execute(|| {
		let mut manual = terms();
		manual.auto_accept = false;
		let id = create(BUYER, manual, 1_500);
		bid(P1, id, 5);
		// P1 sees the buyer about to accept at 5, and re-bids at the ceiling in the same block.
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(P1), id));
		bid(P1, id, 10);
		assert_noop!(
			refused(Market::accept_bid(
				RuntimeOrigin::signed(BUYER),
				id,
				P1,
				5,
				bounded_vec![dev(P1, 0)]
			)),
			Error::<Test>::BidChanged
		);
		assert_noop!(
			refused(Market::accept_bid(
				RuntimeOrigin::signed(BUYER),
				id,
				P1,
				10,
				bounded_vec![dev(P1, 1)]
			)),
			Error::<Test>::BidChanged
		);
		assert_eq!(order(id).status, OrderStatus::Open);
		assert_ok!(Market::accept_bid(
			RuntimeOrigin::signed(BUYER),
			id,
			P1,
			10,
			bounded_vec![dev(P1, 0)]
		));
		assert_eq!(leases()[0].price_per_block, 10);
	});
}

#[test]
fn an_open_ended_order_moves_all_its_escrow_into_the_stream() {
	ExtBuilder::build_and_execute(|| {
		let mut open = terms();
		open.duration = None;
		open.termination_notice = MIN_NOTICE;
		let id = create(BUYER, open, 5_000);
		bid(P1, id, 8);
		assert_ok!(accept(BUYER, id, P1));
		assert_eq!((escrow(BUYER), stream_escrow(BUYER)), (0, 5_000));
		assert_eq!(leases()[0].duration, None);
	});
}

#[test]
fn auto_accept_picks_the_lowest_price_at_the_close_of_the_window() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 9);
		bid(P2, id, 7);
		bid(P3, id, 8);
		run_to_block(10);
		assert_eq!(order(id).status, OrderStatus::Open);
		run_to_block(11);
		assert_eq!(order(id).status, OrderStatus::Leased { lease: 0 });
		assert_eq!(leases()[0].provider, P2);
		assert!(matches!(last_event(), Event::BidAccepted { provider: P2, automatic: true, .. }));
		assert_eq!((locked(P1), locked(P2), locked(P3)), (0, COLLATERAL_PER_GPU, 0));
	});
}

#[test]
fn ties_go_to_higher_reputation_then_to_the_earlier_bid() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 7);
		bid(P2, id, 7);
		bid(P3, id, 7);
		set_reputation(P3, Permill::from_percent(90));
		assert_eq!(Market::ranking(id), vec![P3, P1, P2]);
		set_reputation(P3, Permill::from_percent(10));
		assert_eq!(Market::ranking(id), vec![P1, P2, P3]);
		run_to_block(11);
		assert_eq!(leases()[0].provider, P1);
	});
}

#[test]
fn auto_accept_drops_a_bid_whose_devices_went_elsewhere_at_its_providers_cost() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 5);
		bid(P2, id, 6);
		commit_elsewhere(dev(P1, 0));
		run_to_block(11);
		assert_eq!(leases()[0].provider, P2);
		// The dead bid's collateral is released; its deposit went to the buyer it failed.
		assert_eq!((locked(P1), bid_deposits(P1)), (0, 0));
		assert_eq!(forfeits(), vec![(P1, BID_DEPOSIT, Some(BUYER))]);
		assert!(System::events().iter().any(|r| r.event
			== RuntimeEvent::Market(Event::BidDropped {
				order: id,
				provider: P1,
				forfeited: BID_DEPOSIT,
				burnt: false
			})));
		// Paid the 100 blocks at 6 from the escrow, and got the deposit (out of P1's bond).
		assert_eq!(free(BUYER), ENDOWMENT - 600);
		assert_eq!(forfeits(), vec![(P1, BID_DEPOSIT, Some(BUYER))]);
	});
}

#[test]
fn an_order_whose_every_bid_died_expires_and_the_buyer_keeps_their_deposits() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 5);
		bid(P2, id, 6);
		commit_elsewhere(dev(P1, 0));
		commit_elsewhere(dev(P2, 0));
		run_to_block(11);
		assert!(Orders::<Test>::get(id).is_none());
		assert!(leases().is_empty());
		let mut forfeited = forfeits();
		forfeited.sort();
		assert_eq!(forfeited, vec![(P1, BID_DEPOSIT, Some(BUYER)), (P2, BID_DEPOSIT, Some(BUYER))]);
		assert_eq!((locked(P1), locked(P2)), (0, 0));
	});
}

#[test]
fn a_provider_has_at_most_max_standing_bids_and_can_withdraw_them_all_at_once() {
	ExtBuilder::build_and_execute(|| {
		let orders: Vec<_> = (0..7).map(|_| create(BUYER, terms(), 1_000)).collect();
		for id in &orders[..6] {
			bid(P1, *id, 5);
		}
		assert_noop!(
			refused(Market::place_bid(
				RuntimeOrigin::signed(P1),
				orders[6],
				5,
				bounded_vec![dev(P1, 0)]
			)),
			Error::<Test>::TooManyStandingBids
		);
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(P1), orders[0]));
		bid(P1, orders[6], 5);
		assert_eq!(Bidders::<Test>::get(P1).map(|b| b.standing()), Some(6));
		// It paused (say): every bid is withdrawn, everything released.
		let withdrawn = <Market as stint_traits::StandingBids<u64>>::retract_all(&P1);
		assert_eq!(withdrawn, 6);
		assert_eq!((locked(P1), bid_deposits(P1), free(P1)), (0, 0, ENDOWMENT));
		assert!(orders.iter().all(|id| order(*id).bid_count == 0));
		assert_eq!(Bidders::<Test>::get(P1), None);
	});
}

#[test]
fn a_worker_key_commits_at_most_its_cap_of_its_providers_funds_an_era() {
	ExtBuilder::build_and_execute(|| {
		// Each order at the window's last quarter at once: retracting there forfeits.
		let orders: Vec<_> = (0..5).map(|_| create(BUYER, terms(), 1_000)).collect();
		let place = |who, id| {
			Market::place_bid(RuntimeOrigin::signed(who), id, 5, bounded_vec![dev(P1, 0)])
		};
		// A stolen key bids and withdraws late, again and again: each bid commits 110.
		for id in &orders[..3] {
			assert_ok!(place(WORKER, *id));
		}
		let record = Bidders::<Test>::get(P1).unwrap();
		assert_eq!((record.standing(), record.by_workers), (3, WORKER_COMMIT_PER_GPU));
		assert_noop!(refused(place(WORKER, orders[3])), Error::<Test>::WorkerCommitCapReached);
		// Withdrawing late forfeits: the cap still counts what was put at risk.
		run_to_block(9);
		for id in &orders[..3] {
			assert_ok!(Market::retract_bid(RuntimeOrigin::signed(WORKER), *id));
		}
		assert_eq!(bid_deposits(P1), 0);
		assert_eq!(forfeits(), vec![(P1, BID_DEPOSIT, None); 3], "three late forfeits, burnt");
		let record = Bidders::<Test>::get(P1).unwrap();
		assert_eq!((record.standing(), record.by_workers), (0, WORKER_COMMIT_PER_GPU));
		assert_noop!(refused(place(WORKER, orders[3])), Error::<Test>::WorkerCommitCapReached);
		// The provider's own account is not capped.
		assert_ok!(place(P1, orders[3]));
		// Next era, the key may commit as much again.
		run_to_block(WORKER_ERA);
		let fresh = create(BUYER, terms(), 1_000);
		// (Device 0 went to the order P1 won.)
		assert_ok!(Market::place_bid(
			RuntimeOrigin::signed(WORKER),
			fresh,
			5,
			bounded_vec![dev(P1, 1)]
		));
		let record = Bidders::<Test>::get(P1).unwrap();
		assert_eq!((record.era, record.by_workers), (1, 110));
	});
}

#[test]
fn a_worker_bid_released_cleanly_gives_its_commitment_back() {
	ExtBuilder::build_and_execute(|| {
		let manual = TermsOf::<Test> { auto_accept: false, ..terms() };
		let orders: Vec<_> = (0..5).map(|_| create(BUYER, manual.clone(), 1_000)).collect();
		let place =
			|id| Market::place_bid(RuntimeOrigin::signed(WORKER), id, 5, bounded_vec![dev(P1, 0)]);
		let committed = || Bidders::<Test>::get(P1).map(|b| b.by_workers).unwrap_or_default();
		let per_bid = COLLATERAL_PER_GPU + BID_DEPOSIT;
		for id in &orders[..3] {
			assert_ok!(place(*id));
		}
		assert_eq!(committed(), WORKER_COMMIT_PER_GPU);
		assert_noop!(refused(place(orders[3])), Error::<Test>::WorkerCommitCapReached);
		// Withdrawn in time: nothing of the provider's was at risk.
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(WORKER), orders[0]));
		assert_eq!(committed(), WORKER_COMMIT_PER_GPU - per_bid);
		// Its order was cancelled (a bait): the bid is paid for its time and gives back.
		assert_ok!(Market::cancel_order(RuntimeOrigin::signed(BUYER), orders[1]));
		assert_eq!(committed(), WORKER_COMMIT_PER_GPU - 2 * per_bid);
		// It lost the auction to another provider.
		bid(P2, orders[2], 4);
		assert_ok!(accept(BUYER, orders[2], P2));
		assert_eq!(committed(), 0);
		assert_eq!(Bidders::<Test>::get(P1), None, "nothing standing, nothing committed");
		// So the key bids again, and a bid it wins keeps counting: its collateral backs a lease.
		assert_ok!(place(orders[3]));
		assert_ok!(accept(BUYER, orders[3], P1));
		assert_eq!(committed(), per_bid);
		assert_eq!((locked(P1), bid_deposits(P1)), (COLLATERAL_PER_GPU, 0));
		// A late withdrawal forfeits the deposit (burnt): it keeps counting too.
		assert_ok!(Market::place_bid(
			RuntimeOrigin::signed(WORKER),
			orders[4],
			5,
			bounded_vec![dev(P1, 1)]
		));
		run_to_block(9);
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(WORKER), orders[4]));
		assert_eq!(committed(), 2 * per_bid);
	});
}

#[test]
fn an_order_without_bids_expires_at_the_close_of_the_window() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		run_to_block(11);
		assert!(Orders::<Test>::get(id).is_none());
		assert_eq!((escrow(BUYER), free(BUYER)), (0, ENDOWMENT));
		assert_eq!(
			last_event(),
			Event::OrderExpired { order: id, refunded: 1_000, compensated: 0 }
		);
	});
}

#[test]
fn a_manual_order_waits_for_its_buyer_then_expires() {
	ExtBuilder::build_and_execute(|| {
		let mut manual = terms();
		manual.auto_accept = false;
		let first = create(BUYER, manual.clone(), 1_000);
		let second = create(OTHER_BUYER, manual, 1_000);
		bid(P1, first, 5);
		bid(P2, second, 5);
		run_to_block(11);
		// Bidding is over, accepting is not.
		assert_eq!(order(first).deadline, Some(Slot::first(11 + ACCEPT_PERIOD)));
		assert_noop!(
			refused(Market::place_bid(
				RuntimeOrigin::signed(P3),
				first,
				5,
				bounded_vec![dev(P3, 0)]
			)),
			Error::<Test>::BiddingClosed
		);
		assert_ok!(accept(BUYER, first, P1));
		run_to_block(11 + ACCEPT_PERIOD);
		assert!(Orders::<Test>::get(second).is_none());
		// The bid its buyer left standing is paid for its time.
		assert_eq!(
			(free(OTHER_BUYER), locked(P2), free(P2)),
			(ENDOWMENT - BID_COMPENSATION, 0, ENDOWMENT + BID_COMPENSATION)
		);
		assert_eq!(
			last_event(),
			Event::OrderExpired {
				order: second,
				refunded: 1_000 - BID_COMPENSATION,
				compensated: BID_COMPENSATION
			}
		);
	});
}

#[test]
fn a_busy_block_leaves_deadlines_to_the_next_in_the_order_they_fell_due() {
	ExtBuilder::build_and_execute(|| {
		// Five orders close at block 11; the hook handles two a block in the mock.
		let ids: Vec<_> = (0..5).map(|_| create(OTHER_BUYER, terms(), 1_000)).collect();
		let mut longer = terms();
		longer.bid_window += 1;
		let later = create(BUYER, longer, 1_000);
		bid(P1, later, 5);
		let open =
			|ids: &[OrderId]| ids.iter().filter(|id| Orders::<Test>::get(id).is_some()).count();
		run_to_block(11);
		assert_eq!(open(&ids), 3);
		run_to_block(12);
		// The one due at 12 waits behind the three left from 11.
		assert_eq!((open(&ids), order(later).status), (1, OrderStatus::Open));
		run_to_block(13);
		assert_eq!(open(&ids), 0);
		assert!(matches!(order(later).status, OrderStatus::Leased { .. }));
		// Caught up: the next block's hook reads its cursor and an empty block.
		System::set_block_number(14);
		assert_eq!(Market::on_initialize(14), <() as WeightInfo>::on_initialize(0));
		assert_eq!(DeadlineCursor::<Test>::get(), Some(Slot::first(15)));
	});
}

#[test]
fn a_block_with_more_deadlines_than_a_page_opens_another() {
	ExtBuilder::build_and_execute(|| {
		let ids: Vec<_> = (0..stint_traits::buckets::PAGE_SIZE + 1)
			.map(|_| create(OTHER_BUYER, terms(), 1_000))
			.collect();
		assert_eq!(order(ids[0]).deadline, Some(Slot::first(11)));
		assert_eq!(order(*ids.last().unwrap()).deadline, Some(Slot { block: 11, page: 1 }));
		assert_eq!(DeadlinePages::<Test>::get(11), 2);
		// Cancelling one takes it off its page; the last one on a page takes the page too.
		assert_ok!(Market::cancel_order(RuntimeOrigin::signed(OTHER_BUYER), *ids.last().unwrap()));
		assert!(!Deadlines::<Test>::contains_key((11, 1)));
		run_to_block(11 + ids.len() as u64 / 2);
		assert!(ids.iter().all(|id| Orders::<Test>::get(id).is_none()), "each one expired");
	});
}

#[test]
fn deadlines_at_the_last_block_number_are_queued_too() {
	ExtBuilder::build_and_execute(|| {
		System::set_block_number(u64::MAX - 20);
		let mut near_end = terms();
		near_end.bid_window = 100;
		let ids: Vec<_> = (0..3).map(|_| create(BUYER, near_end.clone(), 1_000)).collect();
		assert!(ids.iter().all(|id| order(*id).deadline == Some(Slot::first(u64::MAX))));
		assert_ok!(Market::cancel_order(RuntimeOrigin::signed(BUYER), ids[2]));
		assert_eq!(Deadlines::<Test>::get((u64::MAX, 0)).to_vec(), ids[..2].to_vec());
	});
}

#[test]
fn anyone_closes_an_order_the_hook_has_not_reached_for_free() {
	ExtBuilder::build_and_execute(|| {
		let crowd: Vec<_> = (0..8).map(|_| create(OTHER_BUYER, terms(), 1_000)).collect();
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 5);
		let close = |who| Market::close_order(RuntimeOrigin::signed(who), id);
		// Before its window closes it is not due: refused, at the cost of reading the order.
		let refusal = close(P2).unwrap_err();
		assert_eq!(refusal.error, Error::<Test>::NotDue.into());
		assert_eq!(refusal.post_info.actual_weight, Some(Weight::zero()));
		run_to_block(11);
		// The hook took two of the nine due: this order waits behind the crowd.
		assert_eq!(order(id).status, OrderStatus::Open);
		let closed = close(P2).unwrap();
		assert_eq!(closed.pays_fee, Pays::No);
		assert!(matches!(order(id).status, OrderStatus::Leased { .. }));
		assert_eq!(leases().last().map(|l| l.provider), Some(P1));
		assert_noop!(refused(close(P2)), Error::<Test>::OrderNotOpen);
		// The crowd is handled in its turn, the closed order no more.
		run_to_block(15);
		assert!(crowd.iter().all(|id| Orders::<Test>::get(id).is_none()));
		assert!(matches!(order(id).status, OrderStatus::Leased { .. }));
	});
}

#[test]
fn filling_the_bid_slots_and_leaving_at_the_close_costs_the_deposits() {
	ExtBuilder::build_and_execute(|| {
		// A window of 10 blocks (2 to 11): its last quarter starts at block 9.
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 10);
		bid(P2, id, 10);
		bid(P3, id, 9);
		// The order is full; a bid no cheaper than the worst is refused...
		assert_noop!(
			refused(Market::place_bid(RuntimeOrigin::signed(P4), id, 10, bounded_vec![dev(P4, 0)])),
			Error::<Test>::TooManyBids
		);
		// ...a cheaper one takes the place of the worst (the latest of the dearest), released,
		// and pays for the search that found it.
		let charged =
			Market::place_bid(RuntimeOrigin::signed(P4), id, 8, bounded_vec![dev(P4, 0)]).unwrap();
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::place_bid(1, 1)));
		assert!(!Bids::<Test>::contains_key(id, P2));
		assert_eq!((locked(P2), bid_deposits(P2), free(P2)), (0, 0, ENDOWMENT));
		assert!(System::events()
			.iter()
			.any(|r| r.event == RuntimeEvent::Market(Event::BidOutbid { order: id, provider: P2 })));
		// Early in the window a retraction is free; in its last quarter it pays the buyer.
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(P1), id));
		assert_eq!(free(P1), ENDOWMENT);
		run_to_block(9);
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(P3), id));
		assert_eq!(
			last_event(),
			Event::BidRetracted { order: id, provider: P3, forfeited: BID_DEPOSIT, burnt: false }
		);
		assert_eq!(forfeits(), vec![(P3, BID_DEPOSIT, Some(BUYER))]);
		// Pausing (which withdraws every standing bid) is no way around it.
		<Market as stint_traits::StandingBids<u64>>::retract_all(&P4);
		assert_eq!(forfeits()[1], (P4, BID_DEPOSIT, Some(BUYER)));
	});
}

#[test]
fn an_order_pays_for_its_storage_until_it_is_pruned() {
	ExtBuilder::build_and_execute(|| {
		StorageDepositBase::set(50);
		StorageDepositPerByte::set(2);
		let cancelled = create(BUYER, terms(), 1_000);
		let storage = order(cancelled).storage_deposit;
		// Its key (a 16-byte hash and the id), its record, and what its lease keeps (the mock's
		// leases say 500 bytes).
		let bytes = 16 + 8 + order(cancelled).encoded_size() as u64 + 500;
		assert_eq!(storage, 50 + 2 * bytes);
		assert_eq!(storage_deposits(BUYER), storage);
		assert_eq!(free(BUYER), ENDOWMENT - 1_000 - storage);
		// Cancelled or expired: gone at once, the deposit back.
		assert_ok!(Market::cancel_order(RuntimeOrigin::signed(BUYER), cancelled));
		assert_eq!((storage_deposits(BUYER), free(BUYER)), (0, ENDOWMENT));

		// Leased: it stays while the lease runs and `RETENTION` blocks after its end.
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 5);
		run_to_block(11);
		let OrderStatus::Leased { lease } = order(id).status else { panic!("leased") };
		let reap = |who| Market::reap_order(RuntimeOrigin::signed(who), id);
		assert_noop!(refused(reap(OTHER_BUYER)), Error::<Test>::LeaseNotEnded);
		end_lease(lease);
		run_to_block(11 + RETENTION - 1);
		assert_noop!(refused(reap(OTHER_BUYER)), Error::<Test>::RetentionNotOver);
		run_to_block(11 + RETENTION);
		let (buyer, reaper) = (free(BUYER), free(OTHER_BUYER));
		assert_ok!(reap(OTHER_BUYER));
		// Anyone may prune it, for a tenth of the deposit; the buyer gets the rest back.
		let reward = storage / 10;
		assert_eq!(free(OTHER_BUYER), reaper + reward);
		assert_eq!(free(BUYER), buyer + storage - reward);
		assert_eq!(storage_deposits(BUYER), 0);
		assert!(Orders::<Test>::get(id).is_none() && leases()[lease as usize].reaped);
		assert_eq!(
			last_event(),
			Event::OrderReaped { order: id, lease, reaper: OTHER_BUYER, reward }
		);
		assert_noop!(refused(reap(OTHER_BUYER)), Error::<Test>::UnknownOrder);
		StorageDepositBase::set(0);
		StorageDepositPerByte::set(0);
	});
}

#[test]
fn an_open_order_is_not_pruned() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		assert_noop!(
			refused(Market::reap_order(RuntimeOrigin::signed(OTHER_BUYER), id)),
			Error::<Test>::NotLeased
		);
	});
}

#[test]
fn try_state_catches_escrow_that_does_not_add_up() {
	ExtBuilder::build().execute_with(|| {
		let id = create(BUYER, terms(), 1_000);
		Orders::<Test>::mutate(id, |o| o.as_mut().unwrap().deposit = 999);
		assert!(Market::do_try_state().is_err());
	});
}

#[test]
fn a_late_retraction_of_a_bid_a_worker_key_placed_is_burnt_not_paid_to_the_buyer() {
	ExtBuilder::build().execute_with(|| {
		let issuance = Balances::total_issuance();
		let id = create(BUYER, terms(), 1_000);
		assert_ok!(Market::place_bid(
			RuntimeOrigin::signed(WORKER),
			id,
			5,
			bounded_vec![dev(P1, 0)]
		));
		run_to_block(9);
		assert_ok!(Market::retract_bid(RuntimeOrigin::signed(WORKER), id));
		assert_eq!(
			last_event(),
			Event::BidRetracted { order: id, provider: P1, forfeited: BID_DEPOSIT, burnt: true }
		);
		// Whoever holds the key may be the buyer: the buyer gets nothing, P1's bond loses the
		// deposit, burnt.
		assert_eq!(forfeits(), vec![(P1, BID_DEPOSIT, None)]);
		assert_eq!(free(BUYER), ENDOWMENT - 1_000);
		assert_eq!(Balances::total_issuance(), issuance);
		Market::do_try_state().unwrap();
	});
}

#[test]
fn the_buyer_rejects_a_live_bid_for_a_compensation_and_a_dead_one_for_its_deposit() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 5);
		bid(P2, id, 6);
		assert_noop!(
			refused(Market::reject_bid(RuntimeOrigin::signed(OTHER_BUYER), id, P1)),
			Error::<Test>::NotBuyer
		);
		assert_noop!(
			refused(Market::reject_bid(RuntimeOrigin::signed(BUYER), id, P3)),
			Error::<Test>::UnknownBid
		);
		assert_ok!(Market::reject_bid(RuntimeOrigin::signed(BUYER), id, P1));
		assert_eq!(
			last_event(),
			Event::BidRejected { order: id, provider: P1, compensation: BID_COMPENSATION }
		);
		assert_eq!((free(P1), locked(P1)), (ENDOWMENT + BID_COMPENSATION, 0));
		assert_eq!(order(id).deposit, 1_000 - BID_COMPENSATION);
		assert_noop!(
			refused(Market::place_bid(RuntimeOrigin::signed(P1), id, 4, bounded_vec![dev(P1, 0)])),
			Error::<Test>::BidRejected
		);
		// A dead bid is dropped instead: its deposit is the buyer's, and its provider not barred.
		commit_elsewhere(dev(P2, 0));
		assert_ok!(Market::reject_bid(RuntimeOrigin::signed(BUYER), id, P2));
		assert_eq!(forfeits(), vec![(P2, BID_DEPOSIT, Some(BUYER))]);
		assert_eq!(Rejections::<Test>::get(id).to_vec(), vec![P1]);
		// The order ends: the rejections go with it.
		run_to_block(11);
		assert!(Rejections::<Test>::get(id).is_empty());
	});
}

#[test]
fn anyone_drops_a_dead_bid_and_nobody_a_live_one() {
	ExtBuilder::build_and_execute(|| {
		let id = create(BUYER, terms(), 1_000);
		bid(P1, id, 5);
		bid(P2, id, 6);
		assert_noop!(
			refused(Market::drop_dead_bid(RuntimeOrigin::signed(P3), id, P1)),
			Error::<Test>::BidStillHonourable
		);
		commit_elsewhere(dev(P1, 0));
		assert_ok!(Market::drop_dead_bid(RuntimeOrigin::signed(P3), id, P1));
		assert_eq!(order(id).bid_count, 1);
		assert_eq!(forfeits(), vec![(P1, BID_DEPOSIT, Some(BUYER))]);
	});
}

#[test]
fn a_manual_order_drops_dead_bids_at_the_close_and_a_cancel_pays_only_live_ones() {
	ExtBuilder::build_and_execute(|| {
		let mut manual = terms();
		manual.auto_accept = false;
		let id = create(BUYER, manual.clone(), 1_000);
		bid(P1, id, 5);
		bid(P2, id, 6);
		commit_elsewhere(dev(P1, 0));
		run_to_block(11);
		// The close dropped P1's dead bid: the buyer chooses among live ones.
		assert_eq!(order(id).bid_count, 1);
		assert_eq!(forfeits(), vec![(P1, BID_DEPOSIT, Some(BUYER))]);
		// Another order: cancelled with a dead and a live bid, only the live one is paid.
		let other = create(BUYER, manual, 1_000);
		bid(P3, other, 5);
		bid(P4, other, 6);
		commit_elsewhere(dev(P3, 0));
		assert_ok!(Market::cancel_order(RuntimeOrigin::signed(BUYER), other));
		assert_eq!(forfeits()[1], (P3, BID_DEPOSIT, Some(BUYER)));
		assert_eq!(free(P4), ENDOWMENT + BID_COMPENSATION);
	});
}

#[test]
fn the_order_queries_return_no_more_than_a_page_whatever_they_are_asked() {
	ExtBuilder::build_and_execute(|| {
		for _ in 0..=MAX_PAGE {
			create(BUYER, terms(), 1_000);
		}
		assert_eq!(Market::open_orders(None, u32::MAX).len() as u32, MAX_PAGE);
	});
}
