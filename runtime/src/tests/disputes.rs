//! Disputes (issue 36, step 2): the buyer of a deterministic order disputes a result, a verifier
//! drawn from the block hash re-executes it on a lease paid from the buyer's bond, and its
//! outputs decide. Played on the real runtime with every pallet; after every step all pallets'
//! `try_state` holds and money is conserved to the unit (`Books`).

use super::attacks::register;
use super::lifecycle::{
	alice, bid, bob, eve, ferdie, free, gpu, lease_of, locked, net, order, result, run_to, status,
	submit, terms, AccountId, Books, COLLATERAL,
};
use crate::{
	genesis_config_presets::tests::build, Balances, Leases, Providers, Runtime, RuntimeOrigin,
	System, STINT,
};
use frame_support::{
	assert_noop, assert_ok,
	traits::{fungible::Mutate, tokens::Preservation},
};
use pallet_leases::{DisputeStatus, LeaseStatus};
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring as Keyring, *,
};
use stint_primitives::{Balance, ReportKind, ResultCommitment};
use stint_traits::refused;

type Error = pallet_leases::Error<Runtime>;

/// A tenth of a STINT a block.
const PRICE: Balance = STINT / 10;

fn draw_delay() -> u32 {
	<Runtime as pallet_leases::Config>::DrawDelay::get()
}

fn dispute(lease: u64) -> pallet_leases::DisputeOf<Runtime> {
	pallet_leases::Disputes::<Runtime>::get(lease).expect("a dispute")
}

fn bond_of(who: &AccountId) -> Balance {
	pallet_bonds::Ledgers::<Runtime>::get(who).map(|l| l.active).unwrap_or_default()
}

/// The worker key that signs for `provider`'s leases.
fn worker_of(provider: &AccountId) -> Keyring {
	match provider {
		p if *p == eve() => Keyring::EveStash,
		p if *p == ferdie() => Keyring::FerdieStash,
		_ => Keyring::DaveStash,
	}
}

/// `provider`'s worker signs a Final with `output_root` for `lease`; Bob sends it.
fn deliver(lease: u64, output_root: [u8; 32]) {
	let provider = pallet_leases::Leases::<Runtime>::get(lease).unwrap().provider;
	let c = ResultCommitment { output_root, ..result(0) };
	let report = stint_primitives::Report::new(Leases::genesis_hash(), lease, ReportKind::Final, c);
	let signature = worker_of(&provider).pair().sign(&report.signing_bytes());
	assert_ok!(Leases::submit_result(RuntimeOrigin::signed(bob()), lease, c, signature));
}

/// Alice's deterministic order of 100 blocks, won by Eve at `PRICE`, acknowledged at block 3
/// and ended by Eve's result (output root `[1; 32]`) at block 53: 5 STINT paid, half a STINT of
/// it withheld. Returns the lease.
fn disputable(books: &Books) -> u64 {
	let mut terms = terms(Some(100), true, 0);
	terms.deterministic = true;
	let id = order(&alice(), terms, 100 * STINT);
	bid(&eve(), id, PRICE, gpu("eve", 0));
	run_to(3);
	let lease = lease_of(id);
	assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
	run_to(53);
	submit(lease, 0);
	books.check(0);
	lease
}

/// The verification lease the dispute of `lease` runs now.
fn verification(lease: u64) -> u64 {
	match dispute(lease).status {
		DisputeStatus::Verifying { lease } => lease,
		other => panic!("the dispute of {lease} is {other:?}"),
	}
}

/// A dispute the provider wins: the verifier (Ferdie, the only other provider) re-executes the
/// job and finds the same outputs. Eve gets her holdback and the bond's remainder; the dispute
/// counts against Alice.
#[test]
fn a_dispute_the_provider_wins_pays_it_the_bonds_remainder() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let lease = disputable(&books);
		let (alice0, eve0, ferdie0) = (free(&alice()), free(&eve()), free(&ferdie()));
		// Ran 50 blocks: the bond pays a verifier for up to 100 at the lease's price.
		assert_ok!(Leases::dispute(RuntimeOrigin::signed(alice()), lease));
		assert_eq!(dispute(lease).bond, 100 * PRICE);
		assert_eq!(free(&alice()), alice0 - 10 * STINT);
		// Nobody may settle the verdict around the dispute now.
		assert_noop!(
			refused(Leases::accept_result(RuntimeOrigin::signed(alice()), lease)),
			Error::DisputeOpen
		);
		assert_noop!(
			refused(Leases::object_to_result(RuntimeOrigin::signed(alice()), lease)),
			Error::DisputeOpen
		);
		books.check(0);

		// Drawn at the start of block 57 from its parent's hash.
		run_to(53 + draw_delay());
		let check = verification(lease);
		let verifying = pallet_leases::Leases::<Runtime>::get(check).unwrap();
		assert_eq!(verifying.provider, ferdie());
		assert_eq!((verifying.duration, verifying.verifies), (Some(100), Some(lease)));
		assert_eq!(locked(&ferdie()), COLLATERAL);
		books.check(0);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(ferdie()), check));
		run_to(53 + draw_delay() + 40);
		// The buyer cannot stop the re-execution.
		assert_noop!(
			refused(Leases::close_lease(RuntimeOrigin::signed(alice()), check)),
			Error::VerificationLease
		);
		deliver(check, [1; 32]);

		// Ferdie was paid 40 blocks (4 STINT); Eve the other 6 of the bond and her holdback.
		assert_eq!(free(&ferdie()), ferdie0 + net(4 * STINT));
		assert_eq!(free(&eve()), eve0 + 6 * STINT + net(STINT / 2));
		assert_eq!(free(&alice()), alice0 - 10 * STINT);
		assert_eq!((locked(&eve()), locked(&ferdie())), (0, 0));
		assert_eq!(dispute(lease).status, DisputeStatus::Upheld);
		let record = pallet_leases::BuyerRecords::<Runtime>::get(alice());
		assert_eq!((record.disputes, record.disputes_lost, record.objections), (1, 1, 0));
		let eve_score = pallet_providers::Registry::<Runtime>::get(eve()).unwrap().reputation;
		assert_eq!(eve_score.completed, 1);
		books.check(0);
	});
}

/// A dispute the provider loses: the verifier's outputs differ. Eve's bond restitutes what
/// Alice paid for the lease and for the verifier, and her collateral is slashed, half of it to
/// Alice: the false result cost Eve more than it earned.
#[test]
fn a_dispute_the_provider_loses_refunds_the_buyer_and_slashes_it() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let lease = disputable(&books);
		let (alice0, eve0, ferdie0) = (free(&alice()), free(&eve()), free(&ferdie()));
		let eve_bond = bond_of(&eve());
		assert_ok!(Leases::dispute(RuntimeOrigin::signed(alice()), lease));
		run_to(53 + draw_delay());
		let check = verification(lease);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(ferdie()), check));
		run_to(53 + draw_delay() + 40);
		deliver(check, [9; 32]);

		assert_eq!(dispute(lease).status, DisputeStatus::Overturned);
		// Alice has back the 5 STINT the lease cost, all of her bond (the remainder refunded,
		// Ferdie's 4 STINT restituted from Eve's bond) and half of Eve's collateral.
		let share = <Runtime as pallet_bonds::Config>::BuyerShare::get() * COLLATERAL;
		assert_eq!(free(&alice()), alice0 + 5 * STINT + share);
		assert_eq!(free(&ferdie()), ferdie0 + net(4 * STINT));
		// Eve kept the 4.5 STINT paid out, but her bond gave it back, with Ferdie's pay and
		// her collateral: 18.5 STINT for a result that earned 5.
		assert_eq!(free(&eve()), eve0);
		assert_eq!(bond_of(&eve()), eve_bond - 4 * STINT - 9 * STINT / 2 - COLLATERAL);
		assert_eq!(locked(&eve()), 0);
		let eve_score = pallet_providers::Registry::<Runtime>::get(eve()).unwrap().reputation;
		assert_eq!((eve_score.completed, eve_score.slashed), (0, 1));
		let record = pallet_leases::BuyerRecords::<Runtime>::get(alice());
		// Catching a false result is no objection: providers that avoid objecting buyers do not
		// avoid this one.
		assert_eq!((record.disputes, record.disputes_lost, record.slashing_objections), (1, 0, 0));
		books.check(COLLATERAL - share);
	});
}

/// A verifier that never shows is slashed like any no-show (Alice compensated), and another is
/// drawn; the second delivers and decides.
#[test]
fn a_verifier_that_never_shows_is_slashed_and_another_drawn() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		register(&Keyring::Dave, &Keyring::DaveStash);
		let lease = disputable(&books);
		assert_ok!(Leases::dispute(RuntimeOrigin::signed(alice()), lease));
		run_to(53 + draw_delay());
		let first = verification(lease);
		let no_show = pallet_leases::Leases::<Runtime>::get(first).unwrap();
		assert!(no_show.provider == ferdie() || no_show.provider == Keyring::Dave.to_account_id());
		let alice0 = free(&alice());
		run_to(no_show.ack_by + 1);
		assert_ok!(Leases::report_no_show(RuntimeOrigin::signed(bob()), first));
		assert_eq!(
			status(first),
			LeaseStatus::Terminated { reason: pallet_leases::TerminationReason::NoShow }
		);
		// Alice got her bond back from the closed stream, half the verifier's collateral, and
		// the bond is held again for the next draw.
		let share = <Runtime as pallet_bonds::Config>::BuyerShare::get() * COLLATERAL;
		assert_eq!(free(&alice()), alice0 + share);
		assert!(matches!(dispute(lease).status, DisputeStatus::Drawing { .. }));
		let reporter = <Runtime as pallet_bonds::Config>::ReporterShare::get() * COLLATERAL;
		books.check(COLLATERAL - share - reporter);

		run_to(no_show.ack_by + 1 + draw_delay());
		let second = verification(lease);
		let verifier = pallet_leases::Leases::<Runtime>::get(second).unwrap().provider;
		assert_ne!(verifier, no_show.provider, "a verifier that failed is not drawn again");
		assert_ne!(verifier, eve());
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(verifier), second));
		run_to(no_show.ack_by + 10 + draw_delay());
		deliver(second, [1; 32]);
		assert_eq!(dispute(lease).status, DisputeStatus::Upheld);
		assert_eq!(dispute(lease).verifiers.to_vec(), vec![first, second]);
		books.check(COLLATERAL - share - reporter);
	});
}

/// With no eligible verifier (Ferdie paused, and Dave's worker key is Alice's own account: a
/// verifier the buyer controls is never drawn, nor the provider), each draw finds nobody; after
/// the last the dispute is void, the bond refunded and Eve's result stands.
#[test]
fn a_dispute_nobody_can_verify_is_void_and_refunded() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		register(&Keyring::Dave, &Keyring::Alice);
		assert_ok!(Providers::pause(RuntimeOrigin::signed(ferdie())));
		let lease = disputable(&books);
		let (alice0, eve0) = (free(&alice()), free(&eve()));
		assert_ok!(Leases::dispute(RuntimeOrigin::signed(alice()), lease));
		run_to(53 + 3 * draw_delay());
		assert_eq!(dispute(lease).status, DisputeStatus::Void);
		assert!(dispute(lease).verifiers.is_empty());
		assert_eq!(free(&alice()), alice0);
		assert_eq!(free(&eve()), eve0 + net(STINT / 2), "the result stands: the holdback is paid");
		assert_eq!(locked(&eve()), 0);
		let record = pallet_leases::BuyerRecords::<Runtime>::get(alice());
		assert_eq!((record.disputes, record.disputes_lost), (1, 0));
		// Decided: the order and its lease can be pruned, the dispute with them.
		books.check(0);
	});
}

/// Hostile inputs, each a named error with nothing changed: a stranger, twice, late, without
/// the funds, a non-deterministic order, a lease that ended by notice.
#[test]
fn a_dispute_is_the_buyers_once_in_time_funded_and_of_a_deterministic_result() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let lease = disputable(&books);
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(bob()), lease)),
			Error::NotBuyer
		);
		// Without the funds: Alice moves all but a STINT away, tries, and takes it back.
		let spare = free(&alice()) - STINT;
		assert_ok!(<Balances as Mutate<_>>::transfer(
			&alice(),
			&bob(),
			spare,
			Preservation::Preserve
		));
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(alice()), lease)),
			Error::BondUnavailable
		);
		assert_ok!(<Balances as Mutate<_>>::transfer(
			&bob(),
			&alice(),
			spare,
			Preservation::Preserve
		));
		assert_ok!(Leases::dispute(RuntimeOrigin::signed(alice()), lease));
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(alice()), lease)),
			Error::AlreadyDisputed
		);

		// Not deterministic, or late.
		let plain = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		bid(&eve(), plain, PRICE, gpu("eve", 1));
		run_to(System::block_number() + 2);
		let plain = lease_of(plain);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), plain));
		run_to(System::block_number() + 10);
		submit(plain, 0);
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(alice()), plain)),
			Error::NotDeterministic
		);
		let window =
			pallet_leases::PendingVerdicts::<Runtime>::get(plain).unwrap().objections_until;
		run_to(window + 1);
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(alice()), plain)),
			Error::ObjectionWindowClosed
		);
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(alice()), 999)),
			Error::UnknownLease
		);

		// Ended by the provider's notice: nothing to re-execute.
		let mut open = terms(None, true, 0);
		open.deterministic = true;
		let open = order(&alice(), open, 200 * STINT);
		bid(&eve(), open, 1, gpu("eve", 1));
		run_to(System::block_number() + 2);
		let open = lease_of(open);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), open));
		assert_ok!(Leases::give_notice(RuntimeOrigin::signed(eve()), open));
		let notice = <Runtime as pallet_market::Config>::MinTerminationNotice::get();
		run_to(System::block_number() + notice);
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(eve()), open));
		assert_noop!(
			refused(Leases::dispute(RuntimeOrigin::signed(alice()), open)),
			Error::NoResultToDispute
		);
		books.check(0);
	});
}
