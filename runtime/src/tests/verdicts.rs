//! Pay for work, not for claims (issue 36, steps 1 and 4): every result waits for the buyer's
//! verdict with a holdback of its payment and the lease's collateral, and no provider leaves a
//! lease for free. Each attack of the issue is played as written on the real runtime with every
//! pallet, and shown to cost the attacker more than it gains, in figures. After every step all
//! pallets' `try_state` holds and money is conserved to the unit (`Books`).

use super::lifecycle::{
	alice, bid, bob, eve, free, gpu, lease_of, locked, net, order, result, run_to, signed, status,
	submit, terms, Books, COLLATERAL,
};
use crate::{
	genesis_config_presets::tests::build, Balances, Leases, Market, Providers, Runtime,
	RuntimeCall, RuntimeOrigin, Utility, STINT,
};
use frame_support::{
	assert_noop, assert_ok,
	traits::{fungible::InspectHold, Get},
};
use pallet_leases::{LeaseStatus, TerminationReason};
use polkadot_sdk::{sp_genesis_builder::DEV_RUNTIME_PRESET, *};
use stint_primitives::{Balance, ReportKind, ResultCommitment};
use stint_traits::refused;

fn holdback(who: &super::lifecycle::AccountId) -> Balance {
	Balances::balance_on_hold(&pallet_streams::HoldReason::Holdback.into(), who)
}

fn window() -> u32 {
	<Runtime as pallet_leases::Config>::VerdictWindow::get()
}

fn early_exit_blocks() -> u32 {
	<Runtime as pallet_leases::Config>::EarlyExitBlocks::get()
}

fn reputation(who: &super::lifecycle::AccountId) -> pallet_providers::Reputation {
	pallet_providers::Registry::<Runtime>::get(who).unwrap().reputation
}

fn verdict(lease: u64) -> pallet_leases::PendingVerdictOf<Runtime> {
	pallet_leases::PendingVerdicts::<Runtime>::get(lease).expect("a pending verdict")
}

/// Attack 1, as written: a 10-hour fixed lease, acknowledged, nothing run, a Final with a
/// random output root at `ends_at`. It is no longer immune: the result waits for Alice's
/// verdict like any other, its holdback withheld and Eve's collateral locked, and Alice's
/// objection counts against Eve in full. (Proving the root wrong, and the refund, come with
/// disputes: issue 36, step 2.)
#[test]
fn a_result_at_the_end_is_no_longer_immune() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let hours10 = 6_000;
		let id = order(&alice(), terms(Some(hours10), true, 0), 6_000 * STINT);
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		let eve0 = free(&eve());
		run_to(3 + hours10);
		let random = ResultCommitment { output_root: [0x5a; 32], ..result(0) };
		assert_ok!(Leases::submit_result(
			RuntimeOrigin::signed(eve()),
			lease,
			random,
			signed(lease, ReportKind::Final, &random)
		));
		// Paid 90 % now (2,700 STINT); 300 STINT withheld, the collateral locked, nothing counted.
		assert_eq!(free(&eve()), eve0 + net(2_700 * STINT));
		assert_eq!(holdback(&eve()), 300 * STINT);
		assert_eq!(locked(&eve()), COLLATERAL);
		assert_eq!(reputation(&eve()).completed, 0);
		let v = verdict(lease);
		assert_eq!((v.at_stake, v.objections_until), (0, 3 + hours10 + window()));
		books.check(0);
		// Alice checks the outputs, finds nothing, objects: a failed delivery, counted in full.
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(alice()), lease));
		let after = reputation(&eve());
		assert_eq!((after.completed, after.objected), (0, 1));
		assert_eq!(locked(&eve()), 0);
		books.check(0);
	});
}

/// Attack 2, as written: `batch_all([ack_lease, terminate])`. An open-ended order with no
/// notice can no longer be posted, a fixed lease cannot be terminated, and with the least
/// notice served the exit still waits for Alice's verdict with the whole collateral at stake.
#[test]
fn acknowledging_and_leaving_at_once_costs_the_whole_collateral() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		// No open-ended order without the least notice.
		let mut free_exit = terms(None, true, 0);
		free_exit.termination_notice = 0;
		assert_noop!(
			refused(Market::create_order(
				RuntimeOrigin::signed(alice()),
				super::lifecycle::spec(),
				free_exit,
				100 * STINT
			)),
			pallet_market::Error::<Runtime>::NoticeTooShort
		);
		// A fixed lease, won at one unit a block (nobody can undercut it): ack and terminate in
		// one batch is refused as a whole.
		let fixed = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		bid(&eve(), fixed, 1, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(fixed);
		let calls = vec![
			RuntimeCall::Leases(pallet_leases::Call::ack_lease { lease }),
			RuntimeCall::Leases(pallet_leases::Call::terminate { lease }),
		];
		assert!(Utility::batch_all(RuntimeOrigin::signed(eve()), calls).is_err());
		assert_eq!(status(lease), LeaseStatus::AwaitingAck);

		// The variant: ack, then an early Final with exit code 1 at once.
		let (alice0, eve0) = (free(&alice()), free(&eve()));
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		run_to(4);
		submit(lease, 1);
		assert_eq!(verdict(lease).at_stake, COLLATERAL);
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(alice()), lease));
		// Eve earned one block at one unit and lost her collateral: 10 STINT, burnt (when a
		// result comes is the job's doing too, so an objection to one earns Alice nothing).
		// Alice has the other 99 blocks back.
		assert_eq!(free(&eve()), eve0 + 1);
		assert_eq!(free(&alice()), alice0 + 99);
		assert_eq!(reputation(&eve()).objected, 1);
		books.check(COLLATERAL);

		// An open-ended lease with the least notice: ack, notice, leave when it is served.
		let open = order(&alice(), terms(None, true, 0), 200 * STINT);
		bid(&eve(), open, 1, gpu("eve", 0));
		run_to(6);
		let lease = lease_of(open);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		assert_ok!(Leases::give_notice(RuntimeOrigin::signed(eve()), lease));
		let notice = <Runtime as pallet_market::Config>::MinTerminationNotice::get();
		run_to(6 + notice);
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(eve()), lease));
		assert_eq!(
			status(lease),
			LeaseStatus::Terminated { reason: TerminationReason::ProviderNotice }
		);
		// Within the early-exit hour: everything at stake until Alice decides.
		assert!(notice < early_exit_blocks());
		assert_eq!(verdict(lease).at_stake, COLLATERAL);
		let alice0 = free(&alice());
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(alice()), lease));
		// Leaving was Eve's choice alone: Alice gets half the slash and the holdback (of 100
		// blocks at one unit: 10 units).
		assert_eq!(free(&alice()), alice0 + COLLATERAL / 2 + 10);
		books.check(COLLATERAL + COLLATERAL / 2);
	});
}

/// Attack 3, as written: skip the checkpoints (or the result), then `terminate` one block
/// before anyone reports it. Refused by name; the report that follows slashes as it should.
#[test]
fn terminating_cannot_escape_an_overdue_checkpoint_or_result() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let open = order(&alice(), terms(None, true, 0), 2_000 * STINT);
		bid(&eve(), open, STINT / 2, gpu("eve", 0));
		let fixed = order(&alice(), terms(Some(10), true, 0), 10 * STINT);
		bid(&eve(), fixed, STINT / 2, gpu("eve", 1));
		run_to(3);
		let (open, fixed) = (lease_of(open), lease_of(fixed));
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), open));
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), fixed));
		let interval = <Runtime as pallet_leases::Config>::CheckpointInterval::get();
		let grace = <Runtime as pallet_leases::Config>::ResultGrace::get();
		run_to(4 + interval.max(10 + grace));
		assert_noop!(
			refused(Leases::terminate(RuntimeOrigin::signed(eve()), open)),
			pallet_leases::Error::<Runtime>::CheckpointOverdue
		);
		assert_noop!(
			refused(Leases::terminate(RuntimeOrigin::signed(eve()), fixed)),
			pallet_leases::Error::<Runtime>::FixedDuration
		);
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(bob()), open));
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(bob()), fixed));
		assert_eq!(
			status(open),
			LeaseStatus::Terminated { reason: TerminationReason::MissedCheckpoint }
		);
		// Both slashed in full (half to Alice, a tenth to Bob, the rest burnt), and what the
		// open-ended lease withheld went back to Alice.
		assert_eq!(holdback(&eve()), 0);
		assert_eq!(locked(&eve()), 0);
		books.check(2 * (COLLATERAL - COLLATERAL / 2 - COLLATERAL / 10));
	});
}

/// Attack 4, as written: announce the exit and deregister inside the objection window. The
/// registry refuses while a verdict is pending; the objection still lands.
#[test]
fn leaving_the_registry_cannot_dodge_a_pending_verdict() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let id = order(&alice(), terms(Some(1_000), true, 0), 1_000 * STINT);
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		run_to(13);
		submit(lease, 0);
		assert_ok!(Providers::announce_exit(RuntimeOrigin::signed(eve())));
		let notice = <Runtime as pallet_providers::Config>::ExitNotice::get();
		run_to(14 + notice);
		assert_noop!(
			refused(Providers::deregister(RuntimeOrigin::signed(eve()))),
			pallet_providers::Error::<Runtime>::VerdictsPending
		);
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(alice()), lease));
		assert_eq!(reputation(&eve()).objected, 1);
		// Ten blocks into a 1,000-block lease: all her collateral, burnt.
		books.check(COLLATERAL);
		// Settled: now she may go.
		assert_ok!(Providers::deregister(RuntimeOrigin::signed(eve())));
		books.check(COLLATERAL);
	});
}

/// The honest path: a job that finishes early is paid at once but for the holdback, and Alice
/// fetches its outputs and accepts; a job whose result comes at the lease's end stakes nothing,
/// Alice lets the window pass and anyone (Eve's worker) confirms. The provider's only extra
/// cost is one `confirm_result` when the buyer does nothing.
#[test]
fn an_honest_result_is_paid_in_full_once_accepted_or_confirmed() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let first = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		bid(&eve(), first, STINT / 2, gpu("eve", 0));
		let second = order(&alice(), terms(Some(80), true, 0), 80 * STINT);
		bid(&eve(), second, STINT / 2, gpu("eve", 1));
		run_to(3);
		let (a, b) = (lease_of(first), lease_of(second));
		let eve0 = free(&eve());
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), a));
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), b));
		// Both jobs finish after 80 blocks: 40 STINT each, 4 of it withheld. The first is early
		// (its whole collateral at stake, were Alice to object); the second is on time.
		run_to(83);
		submit(a, 0);
		submit(b, 0);
		assert_eq!((verdict(a).at_stake, verdict(b).at_stake), (COLLATERAL, 0));
		assert_eq!(free(&eve()), eve0 + net(2 * 36 * STINT));
		assert_eq!(holdback(&eve()), 8 * STINT);
		assert_eq!(locked(&eve()), 2 * COLLATERAL);
		books.check(0);
		assert_ok!(Leases::accept_result(RuntimeOrigin::signed(alice()), a));
		assert_eq!(free(&eve()), eve0 + net(76 * STINT));
		run_to(84 + window());
		assert_ok!(Leases::confirm_result(RuntimeOrigin::signed(eve()), b));
		assert_eq!(
			(free(&eve()), holdback(&eve()), locked(&eve())),
			(eve0 + net(80 * STINT), 0, 0)
		);
		assert_eq!(reputation(&eve()).completed, 2);
		books.check(0);
	});
}

/// Eve's worker checkpoints every half hour (300 blocks): each period's holdback waits its
/// two-hour window, so at most four periods (1,200 blocks of payment) are withheld at once,
/// however long the lease runs; each checkpoint pays the periods whose windows passed.
#[test]
fn an_open_ended_lease_never_holds_back_more_than_a_window_of_payment() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let id = order(&alice(), terms(None, true, 0), 2_000 * STINT);
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		let eve0 = free(&eve());
		assert_eq!(window(), 1_200);
		for sequence in 1..=8u32 {
			run_to(3 + 300 * sequence);
			let c = result(0);
			let kind = ReportKind::Checkpoint { sequence };
			assert_ok!(Leases::checkpoint(
				RuntimeOrigin::signed(bob()),
				lease,
				c,
				signed(lease, kind, &c)
			));
			// 150 STINT a period, 15 of it withheld until its window passed.
			let withheld = 15 * STINT * Balance::from(sequence.min(4));
			assert_eq!(holdback(&eve()), withheld, "after checkpoint {sequence}");
			assert_eq!(free(&eve()), eve0 + net(150 * STINT * Balance::from(sequence) - withheld));
			books.check(0);
		}
		// Alice closes it: what ran is owed in full, the holdback is paid.
		assert_ok!(Leases::close_lease(RuntimeOrigin::signed(alice()), lease));
		assert_eq!((holdback(&eve()), free(&eve())), (0, eve0 + net(1_200 * STINT)));
		books.check(0);
	});
}

/// What an honest provider pays for being judged: one `confirm_result` per lease whose buyer
/// neither accepts nor objects (none when the buyer accepts). Printed for the performance notes.
#[test]
fn confirming_a_verdict_costs_less_than_one_block_of_a_typical_lease() {
	use codec::Encode;
	use frame_support::dispatch::GetDispatchInfo;
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let call = RuntimeCall::Leases(pallet_leases::Call::confirm_result { lease: 0 });
		let fee = crate::TransactionPayment::compute_fee(
			call.encoded_size() as u32 + 110,
			&call.get_dispatch_info(),
			0,
		);
		println!("fee.leases.confirm_result = {fee} ({} mSTINT)", fee / crate::MILLI_STINT);
		// One block of a typical lease (docs/performance.md): 0.05 STINT.
		assert!(fee < STINT / 20, "confirm_result costs {fee}");
	});
}

/// What a buyer pays to open a dispute (besides its bond): printed for the performance notes.
#[test]
fn a_dispute_costs_its_buyer_a_fee_of_a_few_blocks_of_a_typical_lease() {
	use codec::Encode;
	use frame_support::dispatch::GetDispatchInfo;
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let call = RuntimeCall::Leases(pallet_leases::Call::dispute { lease: 0 });
		let fee = crate::TransactionPayment::compute_fee(
			call.encoded_size() as u32 + 110,
			&call.get_dispatch_info(),
			0,
		);
		println!("fee.leases.dispute = {fee} ({} mSTINT)", fee / crate::MILLI_STINT);
		assert!(fee < STINT / 10, "dispute costs {fee}");
	});
}
