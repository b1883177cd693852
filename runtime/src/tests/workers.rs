//! A provider's worker key acting for it on the real runtime: bids, acknowledgements, notice and
//! results on the devices it is bound to, and nothing else; the duties API; deadlines that root
//! changes at run time and that apply to the leases created after the change.

use super::lifecycle::{
	accept, alice, bob, eve, ferdie, gpu, order, result, run_to, signed, status, terms, AccountId,
	Books, COLLATERAL,
};
use crate::{
	configs::{dynamic_params, RuntimeParameters},
	genesis_config_presets::tests::build,
	Leases, Market, Parameters, Providers, Runtime, RuntimeOrigin, STINT,
};
use frame_support::{assert_noop, assert_ok, traits::Get};
use pallet_leases::LeaseStatus;
use polkadot_sdk::sp_runtime::bounded_vec;
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring as Keyring, *,
};
use stint_primitives::{NextDuty, Report, ReportKind, WorkerKey};
use stint_traits::refused;

/// Eve's registered worker key, `//Eve//stash`, as the account it signs transactions with.
fn eve_worker() -> AccountId {
	Keyring::EveStash.to_account_id()
}

fn key(pair: &sp_core::sr25519::Pair) -> WorkerKey {
	pair.public()
}

fn as_account(pair: &sp_core::sr25519::Pair) -> AccountId {
	AccountId::from(pair.public().0)
}

/// `pair`'s consent to act for `provider`.
fn consent(pair: &sp_core::sr25519::Pair, provider: &AccountId) -> sp_core::sr25519::Signature {
	use codec::Encode;
	let payload = stint_primitives::worker_proof_payload(
		&Providers::genesis_hash(),
		&provider.encode(),
		Providers::consent_nonce(provider),
	);
	pair.sign(&payload)
}

fn market_error(e: pallet_market::Error<Runtime>) -> sp_runtime::DispatchError {
	e.into()
}

#[test]
fn the_worker_key_bids_acks_and_signs_for_its_provider_who_keeps_the_money() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let eve0 = super::lifecycle::free(&eve());
		let id = order(&alice(), terms(Some(100), false, 0), 100 * STINT);
		// The worker sees what Eve can serve, and bids on Eve's behalf.
		assert_eq!(
			Market::servable_orders(&eve_worker(), None, 10).0,
			vec![(id, vec![gpu("eve", 0)])]
		);
		assert_ok!(Market::place_bid(
			RuntimeOrigin::signed(eve_worker()),
			id,
			STINT / 2,
			bounded_vec![gpu("eve", 0)]
		));
		assert!(pallet_market::Bids::<Runtime>::contains_key(id, eve()));
		let deposit = <Runtime as pallet_market::Config>::BidDeposit::get();
		assert_eq!(super::lifecycle::locked(&eve()), COLLATERAL + deposit);
		// Having bid, the order is no longer servable; the bid is listed for Eve and her worker.
		assert!(Market::servable_orders(&eve(), None, 10).0.is_empty());
		assert_eq!(Market::bids_of(&eve()).len(), 1);
		assert_eq!(Market::bids_of(&eve_worker()).len(), 1);
		books.check(0);

		assert_ok!(accept(&alice(), id, &eve()));
		assert!(Market::bids_of(&eve()).is_empty());
		let lease = super::lifecycle::lease_of(id);
		let duties = Leases::duties_of(&eve_worker());
		assert_eq!(duties.len(), 1);
		let ack_by = duties[0].1.ack_by;
		assert_eq!(duties[0].2, NextDuty::Ack { by: ack_by });

		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve_worker()), lease));
		let ends_at = pallet_leases::Leases::<Runtime>::get(lease).unwrap().ends_at.unwrap();
		assert_eq!(
			Leases::duties_of(&eve())[0].2,
			NextDuty::Result { ends_at, by: ends_at + dynamic_params::leases::ResultGrace::get() }
		);
		run_to(11);
		let c = result(0);
		assert_ok!(Leases::submit_result(
			RuntimeOrigin::signed(eve_worker()),
			lease,
			c,
			signed(lease, ReportKind::Final, &c)
		));
		assert_eq!(status(lease), LeaseStatus::Completed);
		// Ten blocks at 0.5 STINT went to Eve's account, not the worker's: 4.5 now, 0.5 once
		// Alice accepts.
		assert_eq!(
			super::lifecycle::free(&eve()),
			eve0 + super::lifecycle::net(5 * STINT - STINT / 2)
		);
		assert_ok!(Leases::accept_result(RuntimeOrigin::signed(alice()), lease));
		assert_eq!(super::lifecycle::free(&eve()), eve0 + super::lifecycle::net(5 * STINT));
		books.check(0);
	});
}

#[test]
fn strangers_rotated_out_keys_and_the_worker_outside_its_powers_are_refused() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let id = order(&alice(), terms(None, false, 10), 100 * STINT);
		// A stranger's key acts for nobody.
		assert_noop!(
			refused(Market::place_bid(
				RuntimeOrigin::signed(bob()),
				id,
				STINT / 2,
				bounded_vec![gpu("eve", 0)]
			)),
			pallet_providers::Error::<Runtime>::NotProviderOrWorker
		);
		// Eve's worker cannot bid with Ferdie's GPU, nor Ferdie's worker with Eve's.
		assert_noop!(
			refused(Market::place_bid(
				RuntimeOrigin::signed(eve_worker()),
				id,
				STINT / 2,
				bounded_vec![gpu("ferdie", 0)]
			)),
			market_error(pallet_market::Error::NotThisWorker)
		);
		assert_ok!(Market::place_bid(
			RuntimeOrigin::signed(eve_worker()),
			id,
			STINT / 2,
			bounded_vec![gpu("eve", 0)]
		));
		assert_noop!(
			refused(Market::retract_bid(
				RuntimeOrigin::signed(Keyring::FerdieStash.to_account_id()),
				id
			)),
			market_error(pallet_market::Error::UnknownBid)
		);
		assert_ok!(accept(&alice(), id, &eve()));
		let lease = super::lifecycle::lease_of(id);
		assert_noop!(
			refused(Leases::ack_lease(RuntimeOrigin::signed(bob()), lease)),
			pallet_leases::Error::<Runtime>::NotProvider
		);
		assert_noop!(
			refused(Leases::ack_lease(
				RuntimeOrigin::signed(Keyring::FerdieStash.to_account_id()),
				lease
			)),
			pallet_leases::Error::<Runtime>::NotProvider
		);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve_worker()), lease));
		// Terminating stays with the account.
		assert_noop!(
			refused(Leases::terminate(RuntimeOrigin::signed(eve_worker()), lease)),
			pallet_leases::Error::<Runtime>::NotProvider
		);

		// Eve rotates her worker key: the old one can do nothing more, not even sign results.
		let new = sp_core::sr25519::Pair::from_string("//Eve//worker2", None).unwrap();
		assert_ok!(Providers::rotate_worker_key(
			RuntimeOrigin::signed(eve()),
			Keyring::EveStash.public(),
			key(&new),
			consent(&new, &eve())
		));
		assert_noop!(
			refused(Leases::give_notice(RuntimeOrigin::signed(eve_worker()), lease)),
			pallet_leases::Error::<Runtime>::NotProvider
		);
		let c = result(0);
		assert_noop!(
			refused(Leases::checkpoint(
				RuntimeOrigin::signed(bob()),
				lease,
				c,
				signed(lease, ReportKind::Checkpoint { sequence: 1 }, &c)
			)),
			pallet_leases::Error::<Runtime>::BadSignature
		);
		let report =
			Report::new(Leases::genesis_hash(), lease, ReportKind::Checkpoint { sequence: 1 }, c);
		assert_ok!(Leases::checkpoint(
			RuntimeOrigin::signed(bob()),
			lease,
			c,
			new.sign(&report.signing_bytes())
		));
		// The new key gives notice for Eve (its account needs no registration of its own).
		assert_ok!(Leases::give_notice(RuntimeOrigin::signed(as_account(&new)), lease));
		books.check(0);
	});
}

#[test]
fn with_two_machines_each_worker_acts_only_for_its_own_devices() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		// Eve splits her two GPUs into two machines: the second one gets its own worker key.
		let second = sp_core::sr25519::Pair::from_string("//Eve//machine2", None).unwrap();
		assert_ok!(Providers::bind_worker(
			RuntimeOrigin::signed(eve()),
			Keyring::EveStash.public(),
			bounded_vec![gpu("eve", 0)],
			consent(&Keyring::EveStash.pair(), &eve())
		));
		// Ferdie cannot bind Eve's second machine's key: it consented to Eve only.
		assert_noop!(
			refused(Providers::bind_worker(
				RuntimeOrigin::signed(ferdie()),
				key(&second),
				bounded_vec![gpu("ferdie", 1)],
				consent(&second, &eve())
			)),
			pallet_providers::Error::<Runtime>::BadWorkerKeyProof
		);
		assert_ok!(Providers::bind_worker(
			RuntimeOrigin::signed(eve()),
			key(&second),
			bounded_vec![gpu("eve", 1)],
			consent(&second, &eve())
		));
		let id = order(&alice(), terms(Some(50), false, 0), 100 * STINT);
		// Each worker is offered only its own GPU.
		assert_eq!(
			Market::servable_orders(&as_account(&second), None, 10).0,
			vec![(id, vec![gpu("eve", 1)])]
		);
		assert_eq!(
			Market::servable_orders(&eve_worker(), None, 10).0,
			vec![(id, vec![gpu("eve", 0)])]
		);
		assert_noop!(
			refused(Market::place_bid(
				RuntimeOrigin::signed(as_account(&second)),
				id,
				STINT / 2,
				bounded_vec![gpu("eve", 0)]
			)),
			market_error(pallet_market::Error::NotThisWorker)
		);
		// Not even the account may offer GPUs of two machines in one bid.
		let two = order(
			&alice(),
			{
				let mut t = terms(Some(50), false, 0);
				t.requirements.gpu_count = 2;
				t
			},
			200 * STINT,
		);
		assert_noop!(
			refused(Market::place_bid(
				RuntimeOrigin::signed(eve()),
				two,
				STINT / 2,
				bounded_vec![gpu("eve", 0), gpu("eve", 1)]
			)),
			pallet_providers::Error::<Runtime>::DevicesNotOnOneWorker
		);
		assert_ok!(Market::place_bid(
			RuntimeOrigin::signed(as_account(&second)),
			id,
			STINT / 2,
			bounded_vec![gpu("eve", 1)]
		));
		assert_ok!(accept(&alice(), id, &eve()));
		let lease = super::lifecycle::lease_of(id);
		// The first machine's worker neither sees nor acknowledges the second machine's lease.
		assert!(Leases::duties_of(&eve_worker()).is_empty());
		assert_eq!(Leases::duties_of(&as_account(&second)).len(), 1);
		assert_eq!(Leases::duties_of(&eve()).len(), 1);
		assert_noop!(
			refused(Leases::ack_lease(RuntimeOrigin::signed(eve_worker()), lease)),
			pallet_leases::Error::<Runtime>::NotThisWorker
		);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(as_account(&second)), lease));
		// Only the second machine's key signs its result.
		let c = result(0);
		assert_noop!(
			refused(Leases::submit_result(
				RuntimeOrigin::signed(bob()),
				lease,
				c,
				signed(lease, ReportKind::Final, &c)
			)),
			pallet_leases::Error::<Runtime>::BadSignature
		);
		let report = Report::new(Leases::genesis_hash(), lease, ReportKind::Final, c);
		assert_ok!(Leases::submit_result(
			RuntimeOrigin::signed(bob()),
			lease,
			c,
			second.sign(&report.signing_bytes())
		));
		assert_eq!(status(lease), LeaseStatus::Completed);
		books.check(0);
	});
}

#[test]
fn root_changes_deadlines_for_leases_created_after_the_change() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let set = |parameter: RuntimeParameters| {
			Parameters::set_parameter(RuntimeOrigin::root(), parameter)
		};
		let ack_deadline = |blocks: u32| {
			RuntimeParameters::Leases(dynamic_params::leases::Parameters::AckDeadline(
				dynamic_params::leases::AckDeadline,
				Some(blocks),
			))
		};
		// Only root may.
		assert_noop!(
			refused(Parameters::set_parameter(RuntimeOrigin::signed(alice()), ack_deadline(5))),
			sp_runtime::DispatchError::BadOrigin
		);
		assert_eq!(dynamic_params::leases::AckDeadline::get(), 100);

		let before = order(&alice(), terms(None, false, 0), 100 * STINT);
		super::lifecycle::bid(&eve(), before, STINT / 2, gpu("eve", 0));
		assert_ok!(accept(&alice(), before, &eve()));
		let old_lease = super::lifecycle::lease_of(before);

		assert_ok!(set(ack_deadline(5)));
		assert_ok!(set(RuntimeParameters::Leases(
			dynamic_params::leases::Parameters::CheckpointInterval(
				dynamic_params::leases::CheckpointInterval,
				Some(20),
			)
		)));
		assert_ok!(set(RuntimeParameters::Streams(
			dynamic_params::streams::Parameters::GracePeriod(
				dynamic_params::streams::GracePeriod,
				Some(6),
			)
		)));
		let after = order(&alice(), terms(None, false, 0), 100 * STINT);
		super::lifecycle::bid(&ferdie(), after, STINT / 2, gpu("ferdie", 0));
		assert_ok!(accept(&alice(), after, &ferdie()));
		let new_lease = super::lifecycle::lease_of(after);

		let lease = |id| pallet_leases::Leases::<Runtime>::get(id).unwrap();
		assert_eq!(lease(old_lease).ack_by, 1 + 100);
		assert_eq!(lease(new_lease).ack_by, 1 + 5);
		assert_eq!(lease(old_lease).checkpoint_interval, 600);
		assert_eq!(lease(new_lease).checkpoint_interval, 20);
		let stream = |id| pallet_streams::Records::<Runtime>::get(lease(id).stream).unwrap();
		assert_eq!(stream(old_lease).grace_period, 100);
		assert_eq!(stream(new_lease).grace_period, 6);
		assert_eq!(Leases::duties_of(&ferdie())[0].2, NextDuty::Ack { by: 6 });

		// The new lease's acknowledgement is overdue after 5 blocks; the old one's is not.
		run_to(7);
		assert_ok!(Leases::report_no_show(RuntimeOrigin::signed(bob()), new_lease));
		assert_noop!(
			refused(Leases::report_no_show(RuntimeOrigin::signed(bob()), old_lease)),
			pallet_leases::Error::<Runtime>::AckNotOverdue
		);
		// A no-show burns four tenths of its collateral.
		books.check(COLLATERAL * 4 / 10);
	});
}

#[test]
fn an_overdue_checkpoint_is_slashed_and_no_late_report_covers_it() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		assert_ok!(Parameters::set_parameter(
			RuntimeOrigin::root(),
			RuntimeParameters::Leases(dynamic_params::leases::Parameters::CheckpointInterval(
				dynamic_params::leases::CheckpointInterval,
				Some(5),
			))
		));
		let id = order(&alice(), terms(None, true, 0), 100 * STINT);
		super::lifecycle::bid(&eve(), id, STINT, gpu("eve", 0));
		assert_ok!(accept(&alice(), id, &eve()));
		let lease = super::lifecycle::lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve_worker()), lease));
		let acked = frame_system::Pallet::<Runtime>::block_number();
		run_to(acked + 6);
		// The checkpoint is overdue: neither a late checkpoint nor an early result ends it.
		let c = result(0);
		let late = signed(lease, ReportKind::Checkpoint { sequence: 1 }, &c);
		assert_noop!(
			refused(Leases::checkpoint(RuntimeOrigin::signed(eve_worker()), lease, c, late)),
			pallet_leases::Error::<Runtime>::CheckpointOverdue
		);
		let early = signed(lease, ReportKind::Final, &c);
		assert_noop!(
			refused(Leases::submit_result(RuntimeOrigin::signed(eve_worker()), lease, c, early)),
			pallet_leases::Error::<Runtime>::CheckpointOverdue
		);
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(bob()), lease));
		assert_eq!(
			status(lease),
			LeaseStatus::Terminated { reason: pallet_leases::TerminationReason::MissedCheckpoint }
		);
		books.check(COLLATERAL * 4 / 10);
	});
}
