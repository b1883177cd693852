//! Leases: acknowledgement and no-shows, signed results and checkpoints (and every way a
//! signature can be wrong), deadlines, the buyer's close, the provider's notice, depletion and
//! grace. Every test ends with the leases' and the streams' `try_state`, a check that every
//! locked collateral belongs to a live lease, and a check that not a unit was created or lost.

use crate::mock::Leases;
use crate::{mock::*, *};
use frame::{
	deps::frame_support::{dispatch::GetDispatchInfo, traits::UnfilteredDispatchable},
	testing_prelude::*,
	traits::Get,
};
use stint_primitives::{NextDuty, Outcome, ReportKind, SlashReason};
use stint_traits::refused;
use stint_traits::ProviderCollateral;
use stint_traits::{LeaseFactory, NewLease};

const FINAL: ReportKind = ReportKind::Final;

fn ack(id: LeaseId) {
	assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(PROVIDER), id));
}

fn submit(id: LeaseId, c: ResultCommitment) -> DispatchResultWithPostInfo {
	Leases::submit_result(RuntimeOrigin::signed(STRANGER), id, c, sign(id, FINAL, &c))
}

#[test]
fn a_new_lease_commits_its_devices_and_charges_nothing_before_the_ack() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		let l = lease(id);
		assert_eq!(
			(l.status, l.ack_by, l.started_at),
			(LeaseStatus::AwaitingAck, 1 + ACK_DEADLINE, None)
		);
		assert_eq!(committed(dev(PROVIDER, 0)), Some(id));
		assert!(LiveLeases::<Test>::contains_key(PROVIDER, id));
		assert_eq!(stream_escrow(BUYER), 1_000);
		assert!(matches!(last_event(), Event::Created { lease: 0, provider: PROVIDER, .. }));
		run_to_block(4);
		assert_eq!(<Streams as stint_traits::PaymentStreams<_, _, _>>::owed(l.stream), Some(0));
	});
}

#[test]
fn a_lease_refuses_devices_that_are_busy_or_too_many() {
	ExtBuilder::build_and_execute(|| {
		new_lease(10, 1_000, Some(100), 0);
		let mut again = NewLease {
			order: 8,
			buyer: BUYER,
			provider: PROVIDER,
			devices: vec![dev(PROVIDER, 0)],
			price_per_block: 10,
			escrow: 1_000,
			duration: Some(100),
			collateral: 0,
			termination_notice: 0,
			image_digest: DIGEST,
			holdback: Default::default(),
			verdict_window: 0,
			deterministic: false,
			replicas: 1,
		};
		assert_noop!(
			refused(<Leases as LeaseFactory<_, _, _>>::create_lease(again.clone())),
			DispatchError::Other("DeviceCommitted")
		);
		again.devices = (0..5).map(|i| dev(PROVIDER, i)).collect();
		assert_noop!(
			refused(<Leases as LeaseFactory<_, _, _>>::create_lease(again)),
			Error::<Test>::TooManyDevices
		);
	});
}

#[test]
fn the_worker_key_of_the_leases_machine_acks_and_gives_notice_and_no_other_key_does() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, None, 5);
		// OTHER_WORKER is PROVIDER's key for another machine; STRANGER acts for nobody.
		assert_noop!(
			refused(Leases::ack_lease(RuntimeOrigin::signed(OTHER_WORKER), id)),
			Error::<Test>::NotThisWorker
		);
		assert_noop!(
			refused(Leases::ack_lease(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::NotProvider
		);
		assert_noop!(
			refused(Leases::ack_lease(RuntimeOrigin::signed(OTHER_PROVIDER), id)),
			Error::<Test>::NotProvider
		);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(WORKER), id));
		assert_eq!(lease(id).status, LeaseStatus::Running);
		assert_noop!(
			refused(Leases::give_notice(RuntimeOrigin::signed(OTHER_WORKER), id)),
			Error::<Test>::NotThisWorker
		);
		assert_ok!(Leases::give_notice(RuntimeOrigin::signed(WORKER), id));
		// Ending the lease stays with the provider's account.
		assert_noop!(
			refused(Leases::terminate(RuntimeOrigin::signed(WORKER), id)),
			Error::<Test>::NotProvider
		);
		assert_eq!(
			Leases::next_duty(&lease(id)),
			NextDuty::Checkpoint { sequence: 1, by: 1 + CHECKPOINT_INTERVAL }
		);
		assert_eq!(Leases::duties_of(&WORKER).len(), 1);
		assert!(Leases::duties_of(&OTHER_WORKER).is_empty());
		assert!(Leases::duties_of(&STRANGER).is_empty());
	});
}

#[test]
fn the_ack_starts_payment() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		run_to_block(3);
		assert_noop!(
			refused(Leases::ack_lease(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::NotProvider
		);
		assert_noop!(
			refused(Leases::ack_lease(RuntimeOrigin::signed(PROVIDER), 9)),
			Error::<Test>::UnknownLease
		);
		ack(id);
		assert_eq!((lease(id).status, lease(id).ends_at), (LeaseStatus::Running, Some(103)));
		assert_eq!(last_event(), Event::Acknowledged { lease: id, ends_at: Some(103) });
		assert_noop!(
			refused(Leases::ack_lease(RuntimeOrigin::signed(PROVIDER), id)),
			Error::<Test>::NotAwaitingAck
		);
		run_to_block(13);
		assert_eq!(
			<Streams as stint_traits::PaymentStreams<_, _, _>>::owed(lease(id).stream),
			Some(100)
		);
	});
}

#[test]
fn a_late_ack_is_refused_and_anyone_reports_the_no_show() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		run_to_block(1 + ACK_DEADLINE);
		assert_noop!(
			refused(Leases::report_no_show(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::AckNotOverdue
		);
		run_to_block(2 + ACK_DEADLINE);
		assert_noop!(
			refused(Leases::ack_lease(RuntimeOrigin::signed(PROVIDER), id)),
			Error::<Test>::AckDeadlinePassed
		);
		assert_ok!(Leases::report_no_show(RuntimeOrigin::signed(STRANGER), id));
		// Slashed with the buyer compensated and the reporter rewarded; the buyer paid nothing.
		assert_eq!(
			slashes(),
			vec![(PROVIDER, COLLATERAL, Some(BUYER), Some(STRANGER), SlashReason::NoShow)]
		);
		assert_eq!((free(BUYER), stream_escrow(BUYER)), (ENDOWMENT, 0));
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::NoShow)]);
		assert_eq!(lease(id).status, LeaseStatus::Terminated { reason: TerminationReason::NoShow });
		assert_eq!((committed(dev(PROVIDER, 0)), locked(PROVIDER)), (None, 0));
		assert_eq!(
			last_event(),
			Event::Terminated { lease: id, reason: TerminationReason::NoShow, slashed: COLLATERAL }
		);
		assert_noop!(
			refused(Leases::report_no_show(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::NotAwaitingAck
		);
	});
}

#[test]
fn a_signed_result_pays_to_its_block_and_refunds_the_rest() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		run_to_block(41);
		assert_ok!(submit(id, commitment(0)));
		assert_eq!(free(PROVIDER), ENDOWMENT + 400);
		assert_eq!((free(BUYER), stream_escrow(BUYER)), (ENDOWMENT - 400, 0));
		let l = lease(id);
		assert_eq!(
			(l.status, l.result, l.ended_at),
			(LeaseStatus::Completed, Some(commitment(0)), Some(41))
		);
		// Before the lease's end: the outcome waits for the buyer's verdict, the collateral
		// with it.
		assert!(outcomes().is_empty());
		assert_eq!((committed(dev(PROVIDER, 0)), locked(PROVIDER)), (None, COLLATERAL));
		assert!(!LiveLeases::<Test>::contains_key(PROVIDER, id));
		assert!(System::events().iter().any(|r| r.event
			== RuntimeEvent::Leases(Event::ResultSubmitted {
				lease: id,
				commitment: commitment(0),
				status: LeaseStatus::Completed
			})));
		assert_eq!(
			last_event(),
			Event::VerdictPending {
				lease: id,
				outcome: Outcome::Completed,
				objections_until: 41 + OBJECTION_WINDOW,
				holdback: 0,
				// 60 of its 100 blocks undelivered: 60 % of the collateral, if the buyer objects.
				at_stake: COLLATERAL * 6 / 10,
			}
		);
		// Once is enough.
		assert_noop!(refused(submit(id, commitment(0))), Error::<Test>::NotRunning);
	});
}

#[test]
fn a_non_zero_exit_code_is_a_failure() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		run_to_block(101);
		assert_ok!(submit(id, commitment(137)));
		assert_eq!(lease(id).status, LeaseStatus::Failed);
		// On time: nothing at stake, but it still waits for the buyer's verdict.
		assert!(outcomes().is_empty());
		run_to_block(102 + OBJECTION_WINDOW);
		assert_ok!(Leases::confirm_result(RuntimeOrigin::signed(STRANGER), id));
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Failed)]);
	});
}

#[test]
fn a_result_must_carry_the_right_signature() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		let other = {
			FakeBonds::lock_collateral(&PROVIDER, COLLATERAL).unwrap();
			<Leases as LeaseFactory<_, _, _>>::create_lease(NewLease {
				order: 8,
				buyer: BUYER,
				provider: PROVIDER,
				devices: vec![dev(PROVIDER, 1)],
				price_per_block: 10,
				escrow: 1_000,
				duration: Some(100),
				collateral: COLLATERAL,
				termination_notice: 0,
				image_digest: DIGEST,
				holdback: Default::default(),
				verdict_window: 0,
				deterministic: false,
				replicas: 1,
			})
			.unwrap()
		};
		let c = commitment(0);
		let send =
			|signature| Leases::submit_result(RuntimeOrigin::signed(STRANGER), id, c, signature);
		// Not acknowledged yet.
		assert_noop!(refused(send(sign(id, FINAL, &c))), Error::<Test>::NotRunning);
		ack(id);
		let genesis = Leases::genesis_hash();
		assert_noop!(
			refused(send(sign_for(&worker(OTHER_PROVIDER), genesis, id, FINAL, &c))),
			Error::<Test>::BadSignature
		);
		assert_noop!(refused(send(sign(other, FINAL, &c))), Error::<Test>::BadSignature);
		assert_noop!(
			refused(send(sign_for(&worker(PROVIDER), [9; 32], id, FINAL, &c))),
			Error::<Test>::BadSignature
		);
		assert_noop!(
			refused(send(sign(id, ReportKind::Checkpoint { sequence: 1 }, &c))),
			Error::<Test>::BadSignature
		);
		let mut tampered = c;
		tampered.exit_code = 1;
		assert_noop!(
			refused(Leases::submit_result(
				RuntimeOrigin::signed(STRANGER),
				id,
				tampered,
				sign(id, FINAL, &c)
			)),
			Error::<Test>::BadSignature
		);
		let mut other_image = c;
		other_image.image_digest = [0; 32];
		assert_noop!(
			refused(Leases::submit_result(
				RuntimeOrigin::signed(STRANGER),
				id,
				other_image,
				sign(id, FINAL, &other_image)
			)),
			Error::<Test>::WrongImage
		);
		assert_noop!(
			refused(Leases::submit_result(RuntimeOrigin::none(), id, c, sign(id, FINAL, &c))),
			DispatchError::BadOrigin
		);
		assert_ok!(send(sign(id, FINAL, &c)));
		assert_ok!(Leases::close_lease(RuntimeOrigin::signed(BUYER), other));
	});
}

#[test]
fn a_fixed_lease_is_paid_in_full_at_its_end_and_still_owes_its_result() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		// The stream runs out at 101, closes after its grace; the lease waits for its result.
		run_to_block(101 + GRACE);
		assert_eq!(lease(id).status, LeaseStatus::Running);
		assert_eq!(free(PROVIDER), ENDOWMENT + 1_000);
		assert_ok!(submit(id, commitment(0)));
		assert_eq!(lease(id).status, LeaseStatus::Completed);
		assert_eq!(free(BUYER), ENDOWMENT - 1_000);
	});
}

#[test]
fn a_missing_result_is_slashed_after_the_grace() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		run_to_block(101 + RESULT_GRACE);
		assert_noop!(
			refused(Leases::report_missed_result(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::NotOverdue
		);
		run_to_block(102 + RESULT_GRACE);
		assert_noop!(refused(submit(id, commitment(0))), Error::<Test>::ResultTooLate);
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(STRANGER), id));
		assert_eq!(
			slashes(),
			vec![(PROVIDER, COLLATERAL, Some(BUYER), Some(STRANGER), SlashReason::MissedResult)]
		);
		assert_eq!(
			lease(id).status,
			LeaseStatus::Terminated { reason: TerminationReason::MissedResult }
		);
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Slashed)]);
	});
}

#[test]
fn checkpoints_keep_an_open_ended_lease_alive_and_cannot_be_replayed() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 10_000, None, 0);
		ack(id);
		let c = commitment(0);
		let first = sign(id, ReportKind::Checkpoint { sequence: 1 }, &c);
		run_to_block(15);
		assert_ok!(Leases::checkpoint(RuntimeOrigin::signed(STRANGER), id, c, first));
		assert_eq!((lease(id).checkpoints, lease(id).last_report_at), (1, 15));
		// Paid to the checkpoint.
		assert_eq!(free(PROVIDER), ENDOWMENT + 140);
		assert_eq!(last_event(), Event::Checkpointed { lease: id, sequence: 1, commitment: c });
		assert_noop!(
			refused(Leases::checkpoint(RuntimeOrigin::signed(STRANGER), id, c, first)),
			Error::<Test>::BadSignature
		);
		run_to_block(15 + CHECKPOINT_INTERVAL);
		assert_noop!(
			refused(Leases::report_missed_result(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::NotOverdue
		);
		run_to_block(16 + CHECKPOINT_INTERVAL);
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(STRANGER), id));
		assert_eq!(
			lease(id).status,
			LeaseStatus::Terminated { reason: TerminationReason::MissedCheckpoint }
		);
		assert_eq!(slashes()[0].4, SlashReason::MissedCheckpoint);
	});
}

#[test]
fn an_overdue_checkpoint_cannot_be_covered_by_a_late_report_and_is_slashed() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 10_000, None, 0);
		ack(id);
		let c = commitment(0);
		let checkpoint = sign(id, ReportKind::Checkpoint { sequence: 1 }, &c);
		let result = sign(id, FINAL, &c);
		// Acknowledged at block 1: the first checkpoint is due by 1 + the interval.
		run_to_block(2 + CHECKPOINT_INTERVAL);
		assert_noop!(
			refused(Leases::checkpoint(RuntimeOrigin::signed(STRANGER), id, c, checkpoint)),
			Error::<Test>::CheckpointOverdue
		);
		// A result now would end the lease early, its slash escaped: refused too.
		assert_noop!(
			refused(Leases::submit_result(RuntimeOrigin::signed(STRANGER), id, c, result)),
			Error::<Test>::CheckpointOverdue
		);
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(STRANGER), id));
		assert_eq!(slashes()[0].4, SlashReason::MissedCheckpoint);
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Slashed)]);
	});
}

#[test]
fn reports_are_weighed_at_the_worst_and_charged_for_the_depositors_and_devices_they_settle() {
	ExtBuilder::build_and_execute(|| {
		let max_depositors = <<Test as pallet_streams::Config>::MaxDepositors as Get<u32>>::get();
		let max_gpus = <<Test as Config>::MaxGpusPerLease as Get<u32>>::get();
		let id = new_lease(10, 10_000, None, 0);
		ack(id);
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(STRANGER), lease(id).stream, 1_000));
		run_to_block(15);
		let c = commitment(0);
		let signature = sign(id, ReportKind::Checkpoint { sequence: 1 }, &c);
		let call = Call::<Test>::checkpoint { lease: id, commitment: c, signature };
		let declared = call.get_dispatch_info().call_weight;
		assert_eq!(declared, <() as WeightInfo>::checkpoint(max_depositors));
		let charged = call.dispatch_bypass_filter(RuntimeOrigin::signed(STRANGER)).unwrap();
		// The buyer and the stranger.
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::checkpoint(2)));

		let signature = sign(id, FINAL, &c);
		let call = Call::<Test>::submit_result { lease: id, commitment: c, signature };
		let declared = call.get_dispatch_info().call_weight;
		assert_eq!(declared, <() as WeightInfo>::submit_result(max_gpus, max_depositors));
		let charged = call.dispatch_bypass_filter(RuntimeOrigin::signed(STRANGER)).unwrap();
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::submit_result(1, 2)));
		assert_eq!(lease(id).status, LeaseStatus::Completed);
	});
}

#[test]
fn a_fixed_lease_takes_no_checkpoints() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		let c = commitment(0);
		assert_noop!(
			refused(Leases::checkpoint(
				RuntimeOrigin::signed(STRANGER),
				id,
				c,
				sign(id, ReportKind::Checkpoint { sequence: 1 }, &c)
			)),
			Error::<Test>::NotOpenEnded
		);
	});
}

#[test]
fn the_buyer_closes_at_any_time_without_a_slash() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		run_to_block(21);
		assert_noop!(
			refused(Leases::close_lease(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::NotBuyer
		);
		assert_ok!(Leases::close_lease(RuntimeOrigin::signed(BUYER), id));
		assert_eq!((free(PROVIDER), free(BUYER)), (ENDOWMENT + 200, ENDOWMENT - 200));
		assert!(slashes().is_empty());
		// The lease ran: a close by the buyer counts as served.
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Completed)]);
		assert_eq!(
			lease(id).status,
			LeaseStatus::Terminated { reason: TerminationReason::ClosedByBuyer }
		);
		assert_noop!(
			refused(Leases::close_lease(RuntimeOrigin::signed(BUYER), id)),
			Error::<Test>::LeaseEnded
		);
	});
}

#[test]
fn the_provider_ends_a_lease_after_notice_or_is_slashed() {
	ExtBuilder::build_and_execute(|| {
		let noticed = new_lease(10, 10_000, None, 20);
		ack(noticed);
		assert_noop!(
			refused(Leases::give_notice(RuntimeOrigin::signed(STRANGER), noticed)),
			Error::<Test>::NotProvider
		);
		assert_ok!(Leases::give_notice(RuntimeOrigin::signed(PROVIDER), noticed));
		assert_eq!(last_event(), Event::NoticeGiven { lease: noticed, notice_ends_at: 21 });
		assert_noop!(
			refused(Leases::give_notice(RuntimeOrigin::signed(PROVIDER), noticed)),
			Error::<Test>::NoticeAlreadyGiven
		);
		run_to_block(21);
		assert_noop!(
			refused(Leases::terminate(RuntimeOrigin::signed(BUYER), noticed)),
			Error::<Test>::NotProvider
		);
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(PROVIDER), noticed));
		assert_eq!(
			lease(noticed).status,
			LeaseStatus::Terminated { reason: TerminationReason::ProviderNotice }
		);
		assert!(slashes().is_empty());
		assert_eq!(free(PROVIDER), ENDOWMENT + 200);
		// Served notice ends it without a slash, but the buyer's verdict is still owed; past
		// the early-exit blocks nothing is at stake.
		assert!(PendingVerdicts::<Test>::get(noticed).unwrap().at_stake.is_zero());
		assert_ok!(Leases::accept_result(RuntimeOrigin::signed(BUYER), noticed));

		// Notice given but not yet served: slashed, the buyer compensated, no reporter.
		let early = new_lease(10, 10_000, None, 20);
		ack(early);
		assert_ok!(Leases::give_notice(RuntimeOrigin::signed(PROVIDER), early));
		run_to_block(30);
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(PROVIDER), early));
		assert_eq!(
			slashes(),
			vec![(PROVIDER, COLLATERAL, Some(BUYER), None, SlashReason::TerminatedWithoutNotice)]
		);
		assert_eq!(
			lease(early).status,
			LeaseStatus::Terminated { reason: TerminationReason::ProviderWithoutNotice }
		);
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Completed), (PROVIDER, Outcome::Slashed)]);
	});
}

#[test]
fn an_exit_right_after_the_ack_stakes_the_whole_collateral_on_the_buyers_verdict() {
	ExtBuilder::build_and_execute(|| {
		// An order from before the least notice (none asked): the provider acks and leaves in
		// the same block. No slash yet, but all its collateral waits for the buyer.
		let id = new_lease(10, 10_000, None, 0);
		ack(id);
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(PROVIDER), id));
		assert_eq!(
			lease(id).status,
			LeaseStatus::Terminated { reason: TerminationReason::ProviderNotice }
		);
		assert!(slashes().is_empty());
		assert_eq!(locked(PROVIDER), COLLATERAL);
		assert_eq!(PendingVerdicts::<Test>::get(id).unwrap().at_stake, COLLATERAL);
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(BUYER), id));
		// Leaving was the provider's choice alone: the buyer is compensated.
		assert_eq!(
			slashes(),
			vec![(PROVIDER, COLLATERAL, Some(BUYER), None, SlashReason::EndedEarly)]
		);
		assert_eq!(locked(PROVIDER), 0);
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Objected)]);
	});
}

#[test]
fn a_fixed_lease_cannot_be_terminated_nor_an_overdue_one_escape_its_report() {
	ExtBuilder::build_and_execute(|| {
		let fixed = new_lease(10, 1_000, Some(100), 0);
		ack(fixed);
		assert_noop!(
			refused(Leases::terminate(RuntimeOrigin::signed(PROVIDER), fixed)),
			Error::<Test>::FixedDuration
		);
		// Past its result deadline it still cannot: only the report ends it, with its slash.
		run_to_block(102 + RESULT_GRACE);
		assert_noop!(
			refused(Leases::terminate(RuntimeOrigin::signed(PROVIDER), fixed)),
			Error::<Test>::FixedDuration
		);
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(STRANGER), fixed));

		let open = new_lease(10, 10_000, None, 0);
		ack(open);
		run_to_block(System::block_number() + CHECKPOINT_INTERVAL + 1);
		assert_noop!(
			refused(Leases::terminate(RuntimeOrigin::signed(PROVIDER), open)),
			Error::<Test>::CheckpointOverdue
		);
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(STRANGER), open));
		assert_eq!(
			lease(open).status,
			LeaseStatus::Terminated { reason: TerminationReason::MissedCheckpoint }
		);
	});
}

#[test]
fn a_provider_that_declines_a_lease_it_never_acknowledged_is_a_no_show() {
	ExtBuilder::build_and_execute(|| {
		// No notice required, no ack yet: ending it is still a no-show, not a free exit.
		let id = new_lease(10, 1_000, Some(100), 0);
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(PROVIDER), id));
		assert_eq!(lease(id).status, LeaseStatus::Terminated { reason: TerminationReason::NoShow });
		assert_eq!(slashes(), vec![(PROVIDER, COLLATERAL, Some(BUYER), None, SlashReason::NoShow)]);
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::NoShow)]);
		// The buyer has all its escrow back at once.
		assert_eq!(stream_escrow(BUYER), 0);
		assert_eq!((committed(dev(PROVIDER, 0)), locked(PROVIDER)), (None, 0));
		// Nor can it give notice before acknowledging.
		let other = new_lease(10, 1_000, Some(100), 0);
		assert_noop!(
			refused(Leases::give_notice(RuntimeOrigin::signed(PROVIDER), other)),
			Error::<Test>::NotRunning
		);
	});
}

#[test]
fn a_provider_cannot_report_its_own_lease() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		run_to_block(2 + ACK_DEADLINE);
		assert_noop!(
			refused(Leases::report_no_show(RuntimeOrigin::signed(PROVIDER), id)),
			Error::<Test>::SelfReport
		);
		assert_ok!(Leases::close_lease(RuntimeOrigin::signed(BUYER), id));
	});
}

#[test]
fn depletion_suspends_a_top_up_resumes_and_grace_ends_it_without_a_slash() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 100, None, 0);
		ack(id);
		let stream = lease(id).stream;
		run_to_block(11);
		assert_eq!(lease(id).status, LeaseStatus::Suspended);
		assert_eq!(last_event(), Event::Suspended { lease: id });
		// Nothing is owed while suspended, not even a checkpoint.
		run_to_block(11 + GRACE - 1);
		assert_noop!(
			refused(Leases::report_missed_result(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::NotOverdue
		);
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(BUYER), stream, 50));
		assert_eq!((lease(id).status, lease(id).last_report_at), (LeaseStatus::Running, 15));
		assert_eq!(last_event(), Event::Resumed { lease: id });
		// 50 more lasts five blocks; then grace, then the end.
		run_to_block(20);
		assert_eq!(lease(id).status, LeaseStatus::Suspended);
		run_to_block(20 + GRACE);
		assert_eq!(
			lease(id).status,
			LeaseStatus::Terminated { reason: TerminationReason::InsufficientFunds }
		);
		assert!(slashes().is_empty());
		assert_eq!(free(PROVIDER), ENDOWMENT + 150);
		assert_eq!((committed(dev(PROVIDER, 0)), locked(PROVIDER)), (None, 0));
		assert_noop!(refused(submit(id, commitment(0))), Error::<Test>::NotRunning);
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(BUYER), stream, 50)),
			pallet_streams::Error::<Test>::StreamClosed
		);
	});
}

#[test]
fn try_state_catches_a_lease_missing_from_the_live_index() {
	ExtBuilder::build().execute_with(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		LiveLeases::<Test>::remove(PROVIDER, id);
		assert!(Leases::do_try_state().is_err());
	});
}

#[test]
fn an_early_result_counts_once_the_buyer_accepts_or_the_window_passes() {
	ExtBuilder::build_and_execute(|| {
		// One lease at a time on the provider's device: each ends before the next starts.
		let accepted = new_lease(10, 1_000, Some(100), 0);
		ack(accepted);
		run_to_block(31);
		assert_ok!(submit(accepted, commitment(0)));
		let confirmed = new_lease(10, 1_000, Some(100), 0);
		ack(confirmed);
		run_to_block(61);
		assert_ok!(submit(confirmed, commitment(0)));
		assert!(outcomes().is_empty(), "an early result is not a free exit");
		assert_noop!(
			refused(Leases::accept_result(RuntimeOrigin::signed(STRANGER), accepted)),
			Error::<Test>::NotBuyer
		);
		assert_ok!(Leases::accept_result(RuntimeOrigin::signed(BUYER), accepted));
		assert_eq!(weighted_outcomes(), vec![(PROVIDER, Outcome::Completed, Permill::one())]);
		assert_noop!(
			refused(Leases::accept_result(RuntimeOrigin::signed(BUYER), accepted)),
			Error::<Test>::NoPendingVerdict
		);
		// Nobody can settle the other before its window passes; then anyone can.
		assert_noop!(
			refused(Leases::confirm_result(RuntimeOrigin::signed(STRANGER), confirmed)),
			Error::<Test>::ObjectionWindowOpen
		);
		run_to_block(61 + OBJECTION_WINDOW + 1);
		assert_noop!(
			refused(Leases::object_to_result(RuntimeOrigin::signed(BUYER), confirmed)),
			Error::<Test>::ObjectionWindowClosed
		);
		assert_ok!(Leases::confirm_result(RuntimeOrigin::signed(STRANGER), confirmed));
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Completed); 2]);
		assert_eq!(
			last_event(),
			Event::VerdictRecorded {
				lease: confirmed,
				outcome: Outcome::Completed,
				released: 0,
				forfeited: 0,
				slashed: 0
			}
		);
		assert_eq!(locked(PROVIDER), 0, "each verdict unlocked its collateral");
	});
}

#[test]
fn an_objection_to_a_result_at_the_end_records_a_failed_delivery_and_slashes_nothing() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease_with(1, 1_000, Some(10), 0, Permill::from_percent(10));
		ack(id);
		// Ten blocks at 1 per block: half the time and a tenth of the payment of full credit.
		run_to_block(11);
		assert_ok!(submit(id, commitment(0)));
		assert_eq!(holdback_of(PROVIDER), 1);
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(BUYER), id));
		assert_eq!(
			weighted_outcomes(),
			vec![(PROVIDER, Outcome::Objected, Permill::from_percent(10))]
		);
		// Nothing proves the result wrong: no slash, and the holdback is the provider's.
		assert!(slashes().is_empty(), "no slash without proof");
		assert_eq!((holdback_of(PROVIDER), free(PROVIDER)), (0, ENDOWMENT + 10));
	});
}

#[test]
fn an_objection_to_an_early_result_burns_the_undelivered_time_and_earns_the_buyer_nothing() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease_with(10, 1_000, Some(100), 0, Permill::from_percent(10));
		ack(id);
		// 40 of 100 blocks delivered: 400 charged, 40 of it withheld.
		run_to_block(41);
		assert_ok!(submit(id, commitment(1)));
		assert_eq!((free(PROVIDER), holdback_of(PROVIDER)), (ENDOWMENT + 360, 40));
		assert_eq!(locked(PROVIDER), COLLATERAL);
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(BUYER), id));
		// The buyer's job decides when it exits as much as the provider: the slash for the
		// undelivered time is burnt, not paid to the buyer, and the holdback is still paid, so
		// objecting never earns money.
		let at_stake = COLLATERAL * 6 / 10;
		assert_eq!(slashes(), vec![(PROVIDER, at_stake, None, None, SlashReason::EndedEarly)]);
		assert_eq!(weighted_outcomes(), vec![(PROVIDER, Outcome::Objected, Permill::one())]);
		assert_eq!((holdback_of(PROVIDER), free(PROVIDER)), (0, ENDOWMENT + 400));
		assert_eq!(free(BUYER), ENDOWMENT - 400);
		assert_eq!(locked(PROVIDER), 0);
		assert_eq!(
			last_event(),
			Event::VerdictRecorded {
				lease: id,
				outcome: Outcome::Objected,
				released: 40,
				forfeited: 0,
				slashed: at_stake
			}
		);
		assert_eq!(
			BuyerRecords::<Test>::get(BUYER),
			BuyerRecord {
				verdicts: 1,
				objections: 1,
				slashing_objections: 1,
				..Default::default()
			}
		);
		assert_noop!(
			refused(Leases::object_to_result(RuntimeOrigin::signed(BUYER), id)),
			Error::<Test>::NoPendingVerdict
		);
	});
}

#[test]
fn a_result_that_blames_the_order_stakes_nothing() {
	ExtBuilder::build_and_execute(|| {
		// The image could not be had as pinned: an honest worker acks and says so at once. A
		// buyer must not earn a slash with an order nobody can run.
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		let unavailable = stint_primitives::ReservedExit::ImageUnavailable.code();
		assert_ok!(submit(id, commitment(unavailable)));
		assert!(PendingVerdicts::<Test>::get(id).unwrap().at_stake.is_zero());
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(BUYER), id));
		assert!(slashes().is_empty());
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Objected)]);
	});
}

#[test]
fn a_lease_shorter_than_the_early_exit_blocks_stakes_nothing_on_its_result_at_the_end() {
	ExtBuilder::build_and_execute(|| {
		const { assert!(2 < EARLY_EXIT_BLOCKS) };
		let id = new_lease(10, 20, Some(2), 0);
		ack(id);
		run_to_block(3);
		assert_ok!(submit(id, commitment(0)));
		assert!(PendingVerdicts::<Test>::get(id).unwrap().at_stake.is_zero());
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(BUYER), id));
		assert!(slashes().is_empty());
	});
}

#[test]
fn every_result_waits_for_its_verdict_even_at_the_end_or_after_served_notice() {
	ExtBuilder::build_and_execute(|| {
		let fixed = new_lease(10, 1_000, Some(30), 0);
		ack(fixed);
		run_to_block(31);
		assert_ok!(submit(fixed, commitment(0)));
		let open = new_lease(10, 10_000, None, 5);
		ack(open);
		assert_ok!(Leases::give_notice(RuntimeOrigin::signed(PROVIDER), open));
		run_to_block(36);
		assert_ok!(submit(open, commitment(0)));
		// A result at the end is not immune: it waits, with its collateral, but stakes nothing
		// (even a lease shorter than the early-exit blocks delivered in full).
		assert!(outcomes().is_empty());
		assert_eq!(locked(PROVIDER), 2 * COLLATERAL);
		assert!(PendingVerdicts::<Test>::iter().all(|(_, v)| v.at_stake.is_zero()));
		assert_eq!(VerdictsOwed::<Test>::get(PROVIDER), 2);
		run_to_block(37 + OBJECTION_WINDOW);
		assert_ok!(Leases::confirm_result(RuntimeOrigin::signed(STRANGER), fixed));
		assert_ok!(Leases::confirm_result(RuntimeOrigin::signed(STRANGER), open));
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Completed); 2]);
		assert_eq!((locked(PROVIDER), VerdictsOwed::<Test>::get(PROVIDER)), (0, 0));
	});
}

#[test]
fn an_open_ended_lease_holds_back_each_checkpoint_period_until_its_window_passes() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease_with(10, 10_000, None, 5, Permill::from_percent(10));
		ack(id);
		let checkpoint = |sequence| {
			let c = commitment(0);
			Leases::checkpoint(
				RuntimeOrigin::signed(STRANGER),
				id,
				c,
				sign(id, ReportKind::Checkpoint { sequence }, &c),
			)
		};
		assert_eq!((OBJECTION_WINDOW, CHECKPOINT_INTERVAL), (10, 20));
		// Period 1 (blocks 1-11): 100 charged, 10 withheld until block 21.
		run_to_block(11);
		assert_ok!(checkpoint(1));
		assert_eq!((free(PROVIDER), holdback_of(PROVIDER)), (ENDOWMENT + 90, 10));
		// Period 2 (11-20): 9 more withheld, until 30; period 1's window is still open.
		run_to_block(20);
		assert_ok!(checkpoint(2));
		assert_eq!(holdback_of(PROVIDER), 19);
		// Period 3 (20-22): 2 more withheld; period 1's window has passed: its 10 are paid.
		run_to_block(22);
		assert_ok!(checkpoint(3));
		assert_eq!(holdback_of(PROVIDER), 11);
		assert_eq!(free(PROVIDER), ENDOWMENT + 90 + 81 + 18 + 10);
		// A missed checkpoint forfeits what is still withheld to the buyer: periods 2 and 3,
		// and the 21 of the last period's 210 (paid up to the report, as any ending does).
		run_to_block(43);
		let buyer = free(BUYER);
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(STRANGER), id));
		assert_eq!(holdback_of(PROVIDER), 0);
		assert_eq!(free(PROVIDER), ENDOWMENT + 199 + 189);
		// The buyer: the escrow left (10,000 less 420 charged) and the 32 withheld.
		assert_eq!(free(BUYER), buyer + (10_000 - 420) + 32);
	});
}

#[test]
fn a_lease_closed_at_once_earns_no_reputation() {
	ExtBuilder::build_and_execute(|| {
		// Accepted, acknowledged and closed in one block: nothing delivered, nothing earned.
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		assert_ok!(Leases::close_lease(RuntimeOrigin::signed(BUYER), id));
		assert_eq!(weighted_outcomes(), vec![(PROVIDER, Outcome::Completed, Permill::zero())]);
	});
}

#[test]
fn only_an_ended_lease_is_pruned_and_its_pending_verdict_counts_first() {
	ExtBuilder::build_and_execute(|| {
		let reap = |id| <Leases as LeaseFactory<_, _, _>>::reap(id);
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		assert_noop!(refused(reap(id)), Error::<Test>::LeaseLive);
		run_to_block(21);
		assert_ok!(submit(id, commitment(0)));
		assert_eq!(<Leases as LeaseFactory<_, _, _>>::ended_at(id), Some(21));
		assert_noop!(refused(reap(id)), Error::<Test>::ObjectionWindowOpen);
		run_to_block(21 + OBJECTION_WINDOW + 1);
		let stream = lease(id).stream;
		assert_ok!(reap(id));
		// Nobody objected: the result counts as it said, and the records are gone.
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Completed)]);
		assert!(crate::Leases::<Test>::get(id).is_none());
		assert!(pallet_streams::Records::<Test>::get(stream).is_none());
		assert!(PendingVerdicts::<Test>::get(id).is_none());
		assert_eq!(last_event(), Event::Reaped { lease: id });
	});
}

/// Makes `id` a lease of an order that promised deterministic outputs.
fn deterministic(id: LeaseId) {
	crate::Leases::<Test>::mutate(id, |lease| lease.as_mut().unwrap().deterministic = true);
}

#[test]
fn a_dispute_is_the_buyers_within_the_window_once_and_of_a_deterministic_result() {
	ExtBuilder::build_and_execute(|| {
		let id = new_lease(10, 1_000, Some(100), 0);
		ack(id);
		run_to_block(31);
		assert_ok!(submit(id, commitment(0)));
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(BUYER), id)),
			Error::<Test>::NotDeterministic
		);
		deterministic(id);
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::NotBuyer
		);
		// Twice the blocks it ran at its price, at least the chain's least bond.
		let l = lease(id);
		let ran = l.ended_at.unwrap() - l.started_at.unwrap();
		let bond = (10 * 2 * ran).max(DISPUTE_BOND);
		assert_eq!(Leases::dispute_bond(&l), bond);
		let before = free(BUYER);
		assert_ok!(Leases::dispute(RuntimeOrigin::signed(BUYER), id));
		assert_eq!((free(BUYER), stream_escrow(BUYER)), (before - bond, bond));
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(BUYER), id)),
			Error::<Test>::AlreadyDisputed
		);
		assert_noop!(
			refused(Leases::accept_result(RuntimeOrigin::signed(BUYER), id)),
			Error::<Test>::DisputeOpen
		);
		run_to_block(31 + OBJECTION_WINDOW + 1);
		assert_noop!(
			refused(Leases::confirm_result(RuntimeOrigin::signed(STRANGER), id)),
			Error::<Test>::DisputeOpen
		);
		// The stand-in registry has nobody to draw: three draws, then the dispute is void, the
		// bond refunded and the result stands.
		run_to_block(31 + 3 * DRAW_DELAY);
		assert_eq!(crate::Disputes::<Test>::get(id).unwrap().status, DisputeStatus::Void);
		assert_eq!((free(BUYER), stream_escrow(BUYER)), (before, 0));
		assert_eq!(outcomes(), vec![(PROVIDER, Outcome::Completed)]);
		let record = crate::BuyerRecords::<Test>::get(BUYER);
		assert_eq!((record.disputes, record.disputes_lost), (1, 0));
		// Pruned with the lease.
		assert_ok!(<Leases as LeaseFactory<_, _, _>>::reap(id));
		assert!(!crate::Disputes::<Test>::contains_key(id));
	});
}

#[test]
fn a_late_unfunded_or_notice_ended_dispute_is_refused() {
	ExtBuilder::build_and_execute(|| {
		let late = new_lease(10, 1_000, Some(100), 0);
		deterministic(late);
		ack(late);
		run_to_block(11);
		assert_ok!(submit(late, commitment(0)));
		run_to_block(11 + OBJECTION_WINDOW + 1);
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(BUYER), late)),
			Error::<Test>::ObjectionWindowClosed
		);
		assert_ok!(Leases::confirm_result(RuntimeOrigin::signed(STRANGER), late));
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(BUYER), late)),
			Error::<Test>::NoPendingVerdict
		);

		let open = new_lease(10, 1_000, None, 0);
		deterministic(open);
		ack(open);
		run_to_block(40);
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(PROVIDER), open));
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(BUYER), open)),
			Error::<Test>::NoResultToDispute
		);

		let unfunded = new_lease(10, 1_000, Some(100), 0);
		deterministic(unfunded);
		ack(unfunded);
		run_to_block(60);
		assert_ok!(submit(unfunded, commitment(0)));
		let spare = free(BUYER) - 10;
		assert_ok!(Balances::transfer_allow_death(RuntimeOrigin::signed(BUYER), STRANGER, spare));
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(BUYER), unfunded)),
			Error::<Test>::BondUnavailable
		);
	});
}

/// Two replicas of order 9, one on each provider's first device, acknowledged.
fn two_replicas() -> [LeaseId; 2] {
	[PROVIDER, OTHER_PROVIDER].map(|provider| {
		FakeBonds::lock_collateral(&provider, COLLATERAL).unwrap();
		let id = <Leases as LeaseFactory<_, _, _>>::create_lease(NewLease {
			order: 9,
			buyer: BUYER,
			provider,
			devices: vec![dev(provider, 0)],
			price_per_block: 10,
			escrow: 1_000,
			duration: Some(100),
			collateral: COLLATERAL,
			termination_notice: 0,
			image_digest: DIGEST,
			holdback: Permill::from_percent(10),
			verdict_window: 0,
			deterministic: true,
			replicas: 2,
		})
		.unwrap();
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(provider), id));
		id
	})
}

/// Replica `id`'s provider commits the seal of `c` with salt `[id; 32]`.
fn commit_sealed(id: LeaseId, c: &ResultCommitment) -> DispatchResultWithPostInfo {
	let provider = lease(id).provider;
	let seal = stint_primitives::seal(c, &provider.encode(), &[id as u8; 32]);
	Leases::commit_result(RuntimeOrigin::signed(provider), id, seal)
}

/// Anyone reveals replica `id`'s `c`, signed by its provider's worker.
fn reveal(id: LeaseId, c: &ResultCommitment) -> DispatchResultWithPostInfo {
	let signature = sign_for(&worker(lease(id).provider), Leases::genesis_hash(), id, FINAL, c);
	Leases::reveal_result(RuntimeOrigin::signed(STRANGER), id, *c, [id as u8; 32], signature)
}

#[test]
fn replicas_that_agree_are_decided_by_the_last_reveal_and_paid() {
	ExtBuilder::build_and_execute(|| {
		let [a, b] = two_replicas();
		let group = crate::ReplicaGroups::<Test>::get(9).unwrap();
		assert_eq!(group.replicas.iter().map(|r| r.lease).collect::<Vec<_>>(), vec![a, b]);
		run_to_block(21);
		// A replica's result is sealed, never plain.
		assert_noop!(refused(submit(a, commitment(0))), Error::<Test>::Replicated);
		assert_ok!(commit_sealed(a, &commitment(0)));
		assert_eq!(lease(a).status, LeaseStatus::Sealed);
		assert_eq!(committed(dev(PROVIDER, 0)), None, "its devices are free");
		assert_noop!(refused(reveal(a, &commitment(0))), Error::<Test>::RevealsNotOpen);
		assert_ok!(commit_sealed(b, &commitment(0)));
		assert_eq!(crate::ReplicaGroups::<Test>::get(9).unwrap().reveals_from, 21);
		assert_noop!(refused(reveal(a, &commitment(1))), Error::<Test>::SealMismatch);
		assert_ok!(reveal(a, &commitment(0)));
		assert_ok!(reveal(b, &commitment(0)));
		let group = crate::ReplicaGroups::<Test>::get(9).unwrap();
		assert!(matches!(
			group.status,
			ReplicaStatus::Decided { verdict: ReplicaVerdict::Majority { votes: 2, .. }, .. }
		));
		assert!(!PendingVerdicts::<Test>::contains_key(a));
		assert_eq!(locked(PROVIDER), 0);
		// Pruned together, once decided.
		assert_eq!(<Leases as LeaseFactory<_, _, _>>::ended_at(a), Some(21));
		assert_ok!(<Leases as LeaseFactory<_, _, _>>::reap(a));
		assert!(crate::Leases::<Test>::get(b).is_none());
		assert!(crate::ReplicaGroups::<Test>::get(9).is_none());
	});
}
