//! Streams: settlement, depletion at the exact block, grace, top-up, close, pro rata refunds,
//! the protocol take, bounded hook work. Every test ends with `try_state` and a check that not a
//! unit was created or lost.

use crate::{mock::*, *};
use frame::{
	deps::frame_support::{dispatch::GetDispatchInfo, traits::UnfilteredDispatchable},
	testing_prelude::*,
};
use stint_traits::buckets::Slot;
use stint_traits::refused;
use stint_traits::PaymentStreams;

/// Opens a stream from BUYER to PROVIDER at block 1 and starts it.
fn open(rate: Balance, deposit: Balance) -> StreamId {
	let id = <Streams as PaymentStreams<_, _, _>>::open(
		&BUYER,
		&PROVIDER,
		rate,
		deposit,
		42,
		None,
		Permill::zero(),
	)
	.unwrap();
	<Streams as PaymentStreams<_, _, _>>::start(id).unwrap();
	id
}

#[test]
fn a_pending_stream_charges_nothing_until_started() {
	ExtBuilder::build_and_execute(|| {
		let id = <Streams as PaymentStreams<_, _, _>>::open(
			&BUYER,
			&PROVIDER,
			10,
			100,
			42,
			None,
			Permill::zero(),
		)
		.unwrap();
		assert_eq!(stream(id).status, StreamStatus::Pending);
		assert_eq!(escrow(BUYER), 100);
		run_to_block(30);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::owed(id), Some(0));
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(3), id, 50));
		assert_eq!(stream(id).status, StreamStatus::Pending);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::start(id), Ok(45));
		assert_noop!(
			refused(<Streams as PaymentStreams<_, _, _>>::start(id)),
			Error::<Test>::AlreadyStarted
		);
		run_to_block(35);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::owed(id), Some(50));
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::remaining(id), Some(150));
	});
}

#[test]
fn closing_a_pending_stream_refunds_everything() {
	ExtBuilder::build_and_execute(|| {
		let id = <Streams as PaymentStreams<_, _, _>>::open(
			&BUYER,
			&PROVIDER,
			10,
			100,
			42,
			None,
			Permill::zero(),
		)
		.unwrap();
		run_to_block(10);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::close(id), Ok((0, 100)));
		assert_eq!(free(BUYER), ENDOWMENT);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::remaining(id), None);
	});
}

#[test]
fn open_holds_the_escrow_and_knows_its_depletion_block() {
	ExtBuilder::build_and_execute(|| {
		let id = open(10, 1_000);
		assert_eq!(escrow(BUYER), 1_000);
		assert_eq!(free(BUYER), ENDOWMENT - 1_000);
		let s = stream(id);
		assert_eq!(s.status, StreamStatus::Active { depletes_at: 101 });
		assert_eq!((s.wake_at, s.held(), s.deposited), (Some(Slot::first(101)), 1_000, 1_000));
		assert!(Wakeups::<Test>::get((101, 0)).contains(&id));
		assert_eq!(Streams::depletes_at(id), Some(101));
		assert!(System::events().iter().any(|r| r.event
			== RuntimeEvent::Streams(Event::Opened {
				stream: id,
				payer: BUYER,
				payee: PROVIDER,
				rate: 10,
				deposit: 1_000,
			})));
		assert_eq!(last_event(), Event::Started { stream: id, depletes_at: 101 });
		// A deposit that is not a multiple of the rate runs out in the block that pays the rest.
		let odd = open(3, 10);
		assert_eq!(Streams::depletes_at(odd), Some(5));
	});
}

#[test]
fn a_capped_stream_never_pays_more_than_its_cap_nor_takes_more_escrow() {
	ExtBuilder::build_and_execute(|| {
		// 150 held, but at most 100 may ever be paid (a fixed lease: 10 blocks at 10).
		let id = <Streams as PaymentStreams<_, _, _>>::open(
			&BUYER,
			&PROVIDER,
			10,
			150,
			42,
			Some(100),
			Permill::zero(),
		)
		.unwrap();
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::start(id), Ok(11));
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(3), id, 50)),
			Error::<Test>::FullyFunded
		);
		run_to_block(11);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::owed(id), Some(0));
		assert_eq!(stream(id).paid, 100);
		// Nothing more is charged, however long it stays open; the rest goes back.
		run_to_block(11 + GRACE + 1);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::remaining(id), None);
		assert_eq!(stream(id).paid, 100);
		assert_eq!(free(BUYER), ENDOWMENT - 100);
	});
}

#[test]
fn open_refuses_bad_input() {
	ExtBuilder::build_and_execute(|| {
		let open = |rate, deposit| {
			<Streams as PaymentStreams<_, _, _>>::open(
				&BUYER,
				&PROVIDER,
				rate,
				deposit,
				0,
				None,
				Permill::zero(),
			)
		};
		assert_noop!(refused(open(0, 100)), Error::<Test>::ZeroRate);
		assert_noop!(refused(open(1, 0)), Error::<Test>::ZeroAmount);
		assert_noop!(refused(open(1, ENDOWMENT + 1)), Error::<Test>::InsufficientBalance);
	});
}

#[test]
fn settle_pays_rate_times_elapsed_blocks_to_the_payee() {
	ExtBuilder::build_and_execute(|| {
		let id = open(10, 1_000);
		run_to_block(8);
		assert_eq!(Streams::owed(id), Some(70));
		// Anyone may settle.
		assert_ok!(Streams::settle(RuntimeOrigin::signed(5), id));
		assert_eq!(free(PROVIDER), ENDOWMENT + 70);
		assert_eq!(escrow(BUYER), 930);
		assert_eq!(
			last_event(),
			Event::Settled { stream: id, to_payee: 70, burnt: 0, withheld: 0, held: 930 }
		);
		assert_eq!(Streams::owed(id), Some(0));
		// Settling twice in a block pays nothing more.
		assert_ok!(Streams::settle(RuntimeOrigin::signed(5), id));
		assert_eq!(free(PROVIDER), ENDOWMENT + 70);
		assert_noop!(
			refused(Streams::settle(RuntimeOrigin::signed(5), 9)),
			Error::<Test>::UnknownStream
		);
	});
}

#[test]
fn only_the_payee_withdraws() {
	ExtBuilder::build_and_execute(|| {
		let id = open(10, 1_000);
		run_to_block(3);
		assert_noop!(
			refused(Streams::withdraw(RuntimeOrigin::signed(BUYER), id)),
			Error::<Test>::NotPayee
		);
		assert_ok!(Streams::withdraw(RuntimeOrigin::signed(PROVIDER), id));
		assert_eq!(free(PROVIDER), ENDOWMENT + 20);
	});
}

#[test]
fn depletion_suspends_at_the_exact_block_without_a_transaction() {
	ExtBuilder::build_and_execute(|| {
		let id = open(10, 95);
		// 95 at 10 a block runs out in block 11 (1 + ⌈95 / 10⌉).
		run_to_block(10);
		assert_eq!(stream(id).status, StreamStatus::Active { depletes_at: 11 });
		run_to_block(11);
		assert_eq!(stream(id).status, StreamStatus::Suspended { grace_ends: 11 + GRACE });
		assert_eq!(free(PROVIDER), ENDOWMENT + 95, "the hook paid everything");
		assert_eq!(escrow(BUYER), 0);
		assert_eq!(told(), vec![Told::Suspended(42, id)]);
		System::assert_has_event(Event::Suspended { stream: id, grace_ends: 11 + GRACE }.into());
		// No charge accrues while suspended.
		run_to_block(13);
		assert_eq!(Streams::owed(id), Some(0));
		assert_ok!(Streams::settle(RuntimeOrigin::signed(5), id));
		assert_eq!(free(PROVIDER), ENDOWMENT + 95);
	});
}

#[test]
fn a_top_up_during_grace_resumes_from_that_block() {
	ExtBuilder::build_and_execute(|| {
		let id = open(10, 50);
		run_to_block(6);
		assert!(matches!(stream(id).status, StreamStatus::Suspended { .. }));
		run_to_block(8);
		// Too little to pay for a grace period: it would only hold the payee hostage.
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(3), id, 10 * GRACE - 1)),
			Error::<Test>::TopUpTooSmall
		);
		// A third party tops up: the stream resumes at block 8, not charging blocks 6 to 8,
		// and the top-up pays for telling the observer.
		let charged = Streams::top_up(RuntimeOrigin::signed(3), id, 100).unwrap();
		let resume = <<Test as Config>::Observer as stint_traits::StreamObserver>::resume_weight();
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::top_up(2) + resume));
		assert_eq!(stream(id).status, StreamStatus::Active { depletes_at: 18 });
		assert_eq!(told(), vec![Told::Suspended(42, id), Told::Resumed(42, id)]);
		assert_eq!(last_event(), Event::Resumed { stream: id, depletes_at: 18 });
		run_to_block(12);
		assert_eq!(Streams::owed(id), Some(40));
		// The old grace-end wake-up is gone: nothing closes the stream at block 11.
		assert!(Wakeups::<Test>::get((6 + GRACE, 0)).is_empty());
		run_to_block(18);
		assert_eq!(free(PROVIDER), ENDOWMENT + 150);
		assert!(matches!(stream(id).status, StreamStatus::Suspended { .. }));
	});
}

#[test]
fn grace_ends_and_the_stream_closes_by_itself() {
	ExtBuilder::build_and_execute(|| {
		let id = open(10, 50);
		run_to_block(6 + GRACE);
		assert_eq!(stream(id).status, StreamStatus::Closed);
		assert_eq!(
			told(),
			vec![Told::Suspended(42, id), Told::Closed(42, id, CloseReason::Depleted)]
		);
		System::assert_has_event(
			Event::Closed { stream: id, reason: CloseReason::Depleted, paid: 50, refunded: 0 }
				.into(),
		);
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(BUYER), id, 10)),
			Error::<Test>::StreamClosed
		);
		assert_noop!(
			refused(Streams::settle(RuntimeOrigin::signed(BUYER), id)),
			Error::<Test>::StreamClosed
		);
		assert!(Wakeups::<Test>::iter().next().is_none(), "no wake-up left behind");
	});
}

#[test]
fn the_owner_closes_without_being_told() {
	ExtBuilder::build_and_execute(|| {
		let id = open(10, 1_000);
		run_to_block(4);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::close(id), Ok((30, 970)));
		assert!(told().is_empty());
		assert_eq!(stream(id).status, StreamStatus::Closed);
	});
}

#[test]
fn depositors_pay_and_are_refunded_pro_rata() {
	ExtBuilder::build_and_execute(|| {
		let id = open(7, 1_000);
		// Weighed as if it resumed a full stream; it resumed nothing and has two depositors.
		let call = crate::Call::<Test>::top_up { stream: id, amount: 500 };
		let resume = <<Test as Config>::Observer as stint_traits::StreamObserver>::resume_weight();
		let max = <<Test as Config>::MaxDepositors as Get<u32>>::get();
		assert_eq!(call.get_dispatch_info().call_weight, <() as WeightInfo>::top_up(max) + resume);
		let charged = call.dispatch_bypass_filter(RuntimeOrigin::signed(3)).unwrap();
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::top_up(2)));
		run_to_block(31);
		// 30 blocks × 7 = 210, drawn 2:1 from the buyer (1000) and the third party (500).
		// Charged for the two depositors it has, not for a full stream.
		let charged = Streams::settle(RuntimeOrigin::signed(4), id).unwrap();
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::settle(2)));
		let max = <<Test as Config>::MaxDepositors as Get<u32>>::get();
		assert!(<() as WeightInfo>::settle(2).all_lt(<() as WeightInfo>::settle(max)));
		let s = stream(id);
		assert_eq!(s.depositors[0].remaining, 860);
		assert_eq!(s.depositors[1].remaining, 430);
		// 1290 left: refunded 2:1 as well.
		assert_ok!(<Streams as PaymentStreams<_, _, _>>::close(id));
		assert_eq!(free(BUYER), ENDOWMENT - 140);
		assert_eq!(free(3), ENDOWMENT - 70);
		assert_eq!(free(PROVIDER), ENDOWMENT + 210);
	});
}

#[test]
fn rounding_dust_is_drawn_not_lost() {
	ExtBuilder::build_and_execute(|| {
		let id = open(1, 1);
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(3), id, 1));
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(4), id, 1));
		run_to_block(2);
		// One unit owed by three depositors holding one each: someone pays it, exactly once.
		assert_ok!(Streams::settle(RuntimeOrigin::signed(5), id));
		assert_eq!(free(PROVIDER), ENDOWMENT + 1);
		assert_eq!(stream(id).held(), 2);
	});
}

#[test]
fn top_up_refuses_bad_input() {
	ExtBuilder::build_and_execute(|| {
		let id = open(10, 1_000);
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(3), id, 0)),
			Error::<Test>::ZeroAmount
		);
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(3), 7, 10)),
			Error::<Test>::UnknownStream
		);
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(3), id, ENDOWMENT + 1)),
			Error::<Test>::InsufficientBalance
		);
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(3), id, 10));
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(4), id, 10));
		// The same depositor again adds to its entry.
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(3), id, 10));
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(5), id, 10)),
			Error::<Test>::TooManyDepositors
		);
	});
}

#[test]
fn the_protocol_take_is_burnt() {
	ExtBuilder::build_and_execute(|| {
		TakeRate::set(Permill::from_percent(10));
		let id = open(100, 10_000);
		let issuance = Balances::total_issuance();
		run_to_block(11);
		assert_ok!(Streams::settle(RuntimeOrigin::signed(5), id));
		assert_eq!(free(PROVIDER), ENDOWMENT + 900);
		assert_eq!(Balances::total_issuance(), issuance - 100);
		assert_eq!(
			last_event(),
			Event::Settled { stream: id, to_payee: 900, burnt: 100, withheld: 0, held: 9_000 }
		);
		TakeRate::set(Permill::zero());
	});
}

#[test]
fn a_busy_block_leaves_a_wake_up_to_the_next() {
	ExtBuilder::build_and_execute(|| {
		// Three streams deplete at block 11; the hook wakes two a block in the mock.
		let ids: Vec<_> = (0..3).map(|_| open(10, 100)).collect();
		assert_eq!(Wakeups::<Test>::get((11, 0)).to_vec(), ids);
		run_to_block(11);
		assert!(matches!(stream(ids[1]).status, StreamStatus::Suspended { .. }));
		assert!(matches!(stream(ids[2]).status, StreamStatus::Active { .. }));
		// Late by a block, but it never charges more than its escrow.
		assert_eq!(Streams::owed(ids[2]), Some(100));
		run_to_block(12);
		assert!(matches!(stream(ids[2]).status, StreamStatus::Suspended { .. }));
		assert_eq!(free(PROVIDER), ENDOWMENT + 300);
	});
}

#[test]
fn the_hook_only_looks_at_its_own_bucket() {
	ExtBuilder::build_and_execute(|| {
		let _ = open(10, 100);
		let _ = open(10, 100);
		let _ = open(10, 1_000);
		System::set_block_number(10);
		assert_eq!(Streams::on_initialize(10), <() as WeightInfo>::on_initialize(0));
		System::set_block_number(11);
		assert_eq!(Streams::on_initialize(11), <() as WeightInfo>::on_initialize(2));
		run_to_block(200);
	});
}

#[test]
fn a_busy_block_leaves_wake_ups_to_the_next_in_the_order_they_fell_due() {
	ExtBuilder::build_and_execute(|| {
		// Five streams run dry at block 11; the hook wakes two a block in the mock.
		let dry: Vec<_> = (0..5).map(|_| open(10, 100)).collect();
		let later = open(10, 110);
		let suspended = |ids: &[StreamId]| {
			ids.iter()
				.filter(|id| matches!(stream(**id).status, StreamStatus::Suspended { .. }))
				.count()
		};
		run_to_block(11);
		assert_eq!(suspended(&dry), 2);
		run_to_block(12);
		// The one due at 12 waits behind the three left from 11.
		assert_eq!((suspended(&dry), suspended(&[later])), (4, 0));
		// The last one from 11 and the one from 12, a block late.
		run_to_block(13);
		assert_eq!((suspended(&dry), suspended(&[later])), (5, 1));
		// Nothing is lost: every stream closes when its grace ends, and the money adds up.
		run_to_block(200);
		assert!(dry.iter().chain([&later]).all(|id| stream(*id).status == StreamStatus::Closed));
		assert_eq!(free(PROVIDER), ENDOWMENT + 100 * 5 + 110);
	});
}

#[test]
fn a_block_with_more_wake_ups_than_a_page_opens_another() {
	ExtBuilder::build_and_execute(|| {
		let ids: Vec<_> =
			(0..stint_traits::buckets::PAGE_SIZE + 1).map(|_| open(10, 1_000)).collect();
		assert_eq!(stream(ids[0]).wake_at, Some(Slot::first(101)));
		assert_eq!(stream(*ids.last().unwrap()).wake_at, Some(Slot { block: 101, page: 1 }));
		assert_eq!(WakeupPages::<Test>::get(101), 2);
	});
}

#[test]
fn try_state_catches_money_that_does_not_add_up() {
	ExtBuilder::build().execute_with(|| {
		let id = open(10, 1_000);
		Records::<Test>::mutate(id, |s| s.as_mut().unwrap().paid = 1);
		assert!(Streams::do_try_state().is_err());
	});
}

#[test]
fn only_a_closed_stream_is_pruned() {
	ExtBuilder::build_and_execute(|| {
		let id = open(10, 1_000);
		let reap = |id| <Streams as PaymentStreams<_, _, _>>::reap(id);
		assert_noop!(refused(reap(id)), Error::<Test>::StreamOpen);
		assert_noop!(refused(reap(id + 1)), Error::<Test>::UnknownStream);
		run_to_block(11);
		assert_ok!(<Streams as PaymentStreams<_, _, _>>::close(id));
		assert_ok!(reap(id));
		assert!(Records::<Test>::get(id).is_none());
	});
}

/// Puts the protocol take back to zero when a test that set it ends.
struct Reset;
impl Drop for Reset {
	fn drop(&mut self) {
		TakeRate::set(Permill::zero());
	}
}

fn open_with_holdback(rate: Balance, deposit: Balance, holdback: u32) -> StreamId {
	let id = <Streams as PaymentStreams<_, _, _>>::open(
		&BUYER,
		&PROVIDER,
		rate,
		deposit,
		42,
		None,
		Permill::from_percent(holdback),
	)
	.unwrap();
	assert_ok!(<Streams as PaymentStreams<_, _, _>>::start(id));
	id
}

fn holdback_of(who: u64) -> Balance {
	<Balances as frame::traits::fungible::InspectHold<_>>::balance_on_hold(
		&HoldReason::Holdback.into(),
		&who,
	)
}

#[test]
fn a_holdback_is_withheld_on_the_payee_and_released_when_due() {
	ExtBuilder::build_and_execute(|| {
		TakeRate::set(Permill::from_percent(10));
		let _reset = Reset;
		let id = open_with_holdback(10, 1_000, 10);
		let provider0 = free(PROVIDER);
		let issuance = Balances::total_issuance();
		// Ten blocks: 100 charged; 10 withheld on the payee, 90 paid (9 of it the take).
		run_to_block(11);
		assert_ok!(<Streams as PaymentStreams<_, _, _>>::mark(id, 20));
		assert_eq!(holdback_of(PROVIDER), 10);
		assert_eq!(free(PROVIDER), provider0 + 81);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::paid(id), Some(100));
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::withheld(id), Some(10));
		// Ten more, marked for later; the first part is not due before block 20.
		run_to_block(21);
		assert_ok!(<Streams as PaymentStreams<_, _, _>>::mark(id, 30));
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::release(id, Some(19)), Ok(0));
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::release(id, Some(20)), Ok(10));
		assert_eq!(holdback_of(PROVIDER), 10);
		// Released: the take (1) burnt, the rest (9) to the payee.
		assert_eq!(free(PROVIDER), provider0 + 81 + 81 + 9);
		assert_eq!(Balances::total_issuance(), issuance - (9 + 9 + 1));
		// Closing leaves the holdback withheld: the stream cannot be pruned until it is settled.
		assert_ok!(<Streams as PaymentStreams<_, _, _>>::close(id));
		assert_noop!(
			refused(<Streams as PaymentStreams<_, _, _>>::reap(id)),
			Error::<Test>::HoldbackPending
		);
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::release(id, None), Ok(10));
		assert_eq!(holdback_of(PROVIDER), 0);
		assert_ok!(<Streams as PaymentStreams<_, _, _>>::reap(id));
	});
}

#[test]
fn a_forfeited_holdback_returns_to_the_payer_and_nothing_is_lost() {
	ExtBuilder::build_and_execute(|| {
		let buyer0 = free(BUYER);
		let id = open_with_holdback(10, 1_000, 25);
		run_to_block(5);
		assert_ok!(<Streams as PaymentStreams<_, _, _>>::mark(id, 100));
		run_to_block(9);
		// 80 charged: 20 withheld (5 of it marked, 15 not), 60 paid.
		assert_ok!(<Streams as PaymentStreams<_, _, _>>::close(id));
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::withheld(id), Some(20));
		assert_eq!(<Streams as PaymentStreams<_, _, _>>::forfeit(id), Ok(20));
		assert_eq!(holdback_of(PROVIDER), 0);
		assert_eq!(free(BUYER), buyer0 - 60);
		let stream = stream(id);
		assert_eq!((stream.paid, stream.withheld, stream.refunded), (60, 0, 940));
	});
}

#[test]
fn marks_beyond_the_bound_join_the_latest_never_releasing_earlier() {
	ExtBuilder::build_and_execute(|| {
		let id = open_with_holdback(10, 100_000, 10);
		for i in 0..(MAX_TRANCHES + 3) {
			run_to_block(2 + i as u64);
			assert_ok!(<Streams as PaymentStreams<_, _, _>>::mark(id, 100 + i as u64));
		}
		let stream = stream(id);
		assert_eq!(stream.tranches.len() as u32, MAX_TRANCHES);
		assert_eq!(stream.tranches.last().unwrap().0, 100 + (MAX_TRANCHES + 2) as u64);
		assert_eq!(stream.unmarked(), 0);
	});
}
