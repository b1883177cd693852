//! Replicated orders (issue 36, step 3): an order with `replicas = k` is leased to the best bids
//! of k distinct providers; each replica seals its result, reveals it once every replica has
//! ended, and the majority decides who is paid. Played on the real runtime with every pallet;
//! after every step all pallets' `try_state` holds and money is conserved to the unit (`Books`).

use super::attacks::register;
use super::lifecycle::{
	alice, bid, bob, eve, ferdie, free, gpu, locked, net, order, result, run_to, storage, submit,
	terms, AccountId, Books, COLLATERAL,
};
use crate::{
	genesis_config_presets::tests::build, Leases, Market, Runtime, RuntimeOrigin, System, STINT,
};
use codec::Encode;
use frame_support::{assert_noop, assert_ok, traits::Get};
use pallet_leases::{LeaseStatus, ReplicaStatus, ReplicaVerdict};
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring as Keyring, *,
};
use stint_primitives::{seal, Balance, LeaseId, ReportKind, ResultCommitment, SlashReason};
use stint_traits::refused;

type Error = pallet_leases::Error<Runtime>;

/// A tenth of a STINT a block.
const PRICE: Balance = STINT / 10;

fn dave() -> AccountId {
	Keyring::Dave.to_account_id()
}

fn share() -> Balance {
	<Runtime as pallet_bonds::Config>::BuyerShare::get() * COLLATERAL
}

fn bond_of(who: &AccountId) -> Balance {
	pallet_bonds::Ledgers::<Runtime>::get(who).map(|l| l.active).unwrap_or_default()
}

fn group(order: u64) -> pallet_leases::ReplicaGroupOf<Runtime> {
	pallet_leases::ReplicaGroups::<Runtime>::get(order).expect("a replica group")
}

fn lease(id: LeaseId) -> pallet_leases::LeaseOf<Runtime> {
	pallet_leases::Leases::<Runtime>::get(id).expect("the lease")
}

/// The worker key that signs for `provider`'s leases.
fn worker_of(provider: &AccountId) -> Keyring {
	match provider {
		p if *p == eve() => Keyring::EveStash,
		p if *p == ferdie() => Keyring::FerdieStash,
		p if *p == Keyring::Charlie.to_account_id() => Keyring::CharlieStash,
		_ => Keyring::DaveStash,
	}
}

/// `output_root` as a successful result of the order's image.
fn outputs(output_root: [u8; 32]) -> ResultCommitment {
	ResultCommitment { output_root, ..result(0) }
}

/// The salt `provider` seals with.
fn salt_of(provider: &AccountId) -> [u8; 32] {
	sp_io::hashing::blake2_256(&provider.encode())
}

/// What `who`'s bond lost to slashes for `reason`, one amount per slash event.
fn slashes(who: &AccountId, reason: SlashReason) -> Vec<Balance> {
	System::events()
		.into_iter()
		.filter_map(|record| match record.event {
			crate::RuntimeEvent::Bonds(pallet_bonds::Event::Slashed {
				provider,
				reason: why,
				amount,
				..
			}) if provider == *who && why == reason => Some(amount),
			_ => None,
		})
		.collect()
}

/// The replica's provider seals `output_root` and commits it.
fn commit(id: LeaseId, output_root: [u8; 32]) -> [u8; 32] {
	let provider = lease(id).provider;
	let sealed = seal(&outputs(output_root), &provider.encode(), &salt_of(&provider));
	assert_ok!(Leases::commit_result(RuntimeOrigin::signed(provider), id, sealed));
	sealed
}

/// Bob sends the reveal of `output_root` with the provider's salt, signed by its worker.
fn reveal(
	id: LeaseId,
	output_root: [u8; 32],
) -> frame_support::dispatch::DispatchResultWithPostInfo {
	let provider = lease(id).provider;
	let c = outputs(output_root);
	let report = stint_primitives::Report::new(Leases::genesis_hash(), id, ReportKind::Final, c);
	let signature = worker_of(&provider).pair().sign(&report.signing_bytes());
	Leases::reveal_result(RuntimeOrigin::signed(bob()), id, c, salt_of(&provider), signature)
}

/// Alice's deterministic order of 100 blocks in three replicas, won by Eve, Ferdie and Dave at
/// `PRICE` each at block 3. Returns the order and its leases by provider.
fn three_leases() -> (u64, [LeaseId; 3]) {
	register(&Keyring::Dave, &Keyring::DaveStash);
	let mut terms = terms(Some(100), true, 0);
	(terms.deterministic, terms.replicas) = (true, 3);
	// Three replicas at up to 1 STINT a block for 100 blocks.
	let id = order(&alice(), terms, 300 * STINT);
	let dave_gpu =
		pallet_providers::Registry::<Runtime>::get(dave()).unwrap().hardware.gpus[0].uuid_hash;
	bid(&eve(), id, PRICE, gpu("eve", 0));
	bid(&ferdie(), id, PRICE, gpu("ferdie", 0));
	bid(&dave(), id, PRICE, dave_gpu);
	run_to(3);
	let replicas = group(id).replicas;
	assert_eq!(replicas.len(), 3);
	let of = |who: AccountId| {
		replicas.iter().map(|r| r.lease).find(|l| lease(*l).provider == who).expect("a replica")
	};
	let leases = [of(eve()), of(ferdie()), of(dave())];
	assert!(leases.iter().all(|l| lease(*l).replicas == 3));
	(id, leases)
}

/// As [`three_leases`], all three acknowledged at block 3.
fn three_replicas(books: &Books) -> (u64, [LeaseId; 3]) {
	let (id, leases) = three_leases();
	for id in leases {
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(lease(id).provider), id));
	}
	books.check(0);
	(id, leases)
}

/// Three honest replicas agree: each is paid its lease (5 STINT for 50 blocks), the holdback
/// once decided; nobody is slashed. Nobody can settle a replica's verdict another way.
#[test]
fn an_honest_majority_is_paid() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let alice0 = free(&alice());
		let (id, [e, f, d]) = three_replicas(&books);
		// The order's escrow paid each lease's 10 STINT; the rest of the 300 was refunded.
		assert_eq!(free(&alice()), alice0 - 30 * STINT - storage(id));
		let (eve0, ferdie0, dave0) = (free(&eve()), free(&ferdie()), free(&dave()));
		run_to(53);
		// A replica ends by its seal, not by a plain result.
		let c = outputs([1; 32]);
		let signature = super::lifecycle::signed(e, ReportKind::Final, &c);
		assert_noop!(
			refused(Leases::submit_result(RuntimeOrigin::signed(bob()), e, c, signature)),
			Error::Replicated
		);
		commit(e, [1; 32]);
		assert_eq!(lease(e).status, LeaseStatus::Sealed);
		// Eve's payment stopped at her seal: 5 STINT, half a STINT withheld.
		assert_eq!(free(&eve()), eve0 + net(9 * STINT / 2));
		// Nobody reveals before every replica has ended.
		assert_noop!(refused(reveal(e, [1; 32])), Error::RevealsNotOpen);
		commit(f, [1; 32]);
		commit(d, [1; 32]);
		assert_eq!(group(id).reveals_from, 53);
		books.check(0);
		// The buyer's verdict and disputes do not apply: the replicas decide.
		for refusal in [
			Leases::accept_result(RuntimeOrigin::signed(alice()), e),
			Leases::object_to_result(RuntimeOrigin::signed(alice()), e),
			Leases::dispute(RuntimeOrigin::signed(alice()), e),
		] {
			assert_eq!(refused(refusal), Err(Error::Replicated.into()));
		}
		assert_noop!(
			refused(Leases::decide_replicas(RuntimeOrigin::signed(bob()), id)),
			Error::RevealsOpen
		);
		run_to(54);
		assert_ok!(reveal(e, [1; 32]));
		assert_noop!(refused(reveal(e, [1; 32])), Error::NotSealed);
		assert_ok!(reveal(f, [1; 32]));
		assert_eq!(group(id).status, ReplicaStatus::Open);
		assert_ok!(reveal(d, [1; 32]));
		// The last reveal decided: all three agree.
		let ReplicaStatus::Decided { verdict, .. } = group(id).status else { panic!("decided") };
		assert_eq!(
			verdict,
			ReplicaVerdict::Majority { output_root: [1; 32], exit_code: 0, votes: 3 }
		);
		for (who, before) in [(eve(), eve0), (ferdie(), ferdie0), (dave(), dave0)] {
			assert_eq!(free(&who), before + net(5 * STINT));
			assert_eq!(locked(&who), 0);
		}
		assert_eq!(lease(e).status, LeaseStatus::Completed);
		assert_eq!(free(&alice()), alice0 - 15 * STINT - storage(id));
		books.check(0);
		// Decided: the order, its three leases and their streams can be pruned together.
		let retention = <Runtime as pallet_market::Config>::Retention::get();
		run_to(54 + retention);
		assert_ok!(Market::reap_order(RuntimeOrigin::signed(alice()), id));
		assert!(pallet_leases::ReplicaGroups::<Runtime>::get(id).is_none());
		assert!([e, f, d].iter().all(|l| pallet_leases::Leases::<Runtime>::get(l).is_none()));
		books.check(0);
	});
}

/// Dave reveals another output root than Eve and Ferdie: outvoted, his holdback goes back to
/// Alice, his bond restitutes what he was paid and his collateral is slashed, half to Alice.
#[test]
fn an_outvoted_replica_is_slashed_and_the_buyer_compensated() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let alice0 = free(&alice());
		let (id, [e, f, d]) = three_replicas(&books);
		let (dave0, dave_bond) = (free(&dave()), bond_of(&dave()));
		run_to(53);
		commit(e, [1; 32]);
		commit(f, [1; 32]);
		commit(d, [9; 32]);
		assert_ok!(reveal(d, [9; 32]));
		assert_ok!(reveal(e, [1; 32]));
		assert_ok!(reveal(f, [1; 32]));
		let ReplicaStatus::Decided { verdict, .. } = group(id).status else { panic!("decided") };
		assert_eq!(
			verdict,
			ReplicaVerdict::Majority { output_root: [1; 32], exit_code: 0, votes: 2 }
		);
		// Dave kept the 4.5 STINT paid out, but his bond gave them back, and his collateral.
		assert_eq!(free(&dave()), dave0 + net(9 * STINT / 2));
		assert_eq!(bond_of(&dave()), dave_bond - 9 * STINT / 2 - COLLATERAL);
		assert_eq!(locked(&dave()), 0);
		// Alice paid Eve and Ferdie 5 STINT each, Dave nothing, and has half his collateral.
		assert_eq!(free(&alice()), alice0 - 10 * STINT + share() - storage(id));
		let score = pallet_providers::Registry::<Runtime>::get(dave()).unwrap().reputation;
		assert_eq!((score.completed, score.slashed), (0, 1));
		// Restitution, then the collateral.
		assert_eq!(slashes(&dave(), SlashReason::OutvotedResult), vec![9 * STINT / 2, COLLATERAL]);
		books.check(COLLATERAL - share());
	});
}

/// Dave copies Eve's seal instead of running the job. He cannot reveal it (the seal names Eve),
/// so when the reveal window is over he counts as not revealed: slashed as a false result.
#[test]
fn a_copied_seal_cannot_be_revealed_and_is_slashed() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let alice0 = free(&alice());
		let (id, [e, f, d]) = three_replicas(&books);
		let dave_bond = bond_of(&dave());
		run_to(53);
		let eves = commit(e, [1; 32]);
		commit(f, [1; 32]);
		assert_ok!(Leases::commit_result(RuntimeOrigin::signed(dave()), d, eves));
		assert_ok!(reveal(e, [1; 32]));
		assert_ok!(reveal(f, [1; 32]));
		// Eve's result and salt, sent for Dave's lease: they open Eve's seal, not Dave's.
		let c = outputs([1; 32]);
		let report = stint_primitives::Report::new(Leases::genesis_hash(), d, ReportKind::Final, c);
		let signature = Keyring::DaveStash.pair().sign(&report.signing_bytes());
		assert_noop!(
			refused(Leases::reveal_result(
				RuntimeOrigin::signed(dave()),
				d,
				c,
				salt_of(&eve()),
				signature
			)),
			Error::SealMismatch
		);
		// Undecided while Dave may still reveal; anyone decides once the window is over.
		assert_eq!(group(id).status, ReplicaStatus::Open);
		let until = group(id).reveal_until;
		run_to(until);
		assert_noop!(
			refused(Leases::decide_replicas(RuntimeOrigin::signed(bob()), id)),
			Error::RevealsOpen
		);
		run_to(until + 1);
		assert_ok!(Leases::decide_replicas(RuntimeOrigin::signed(bob()), id));
		assert_noop!(
			refused(Leases::decide_replicas(RuntimeOrigin::signed(bob()), id)),
			Error::AlreadyDecided
		);
		assert_eq!(lease(d).status, LeaseStatus::Sealed);
		assert_eq!(bond_of(&dave()), dave_bond - 9 * STINT / 2 - COLLATERAL);
		assert_eq!(free(&alice()), alice0 - 10 * STINT + share() - storage(id));
		assert_eq!(slashes(&dave(), SlashReason::Unrevealed), vec![9 * STINT / 2, COLLATERAL]);
		books.check(COLLATERAL - share());
	});
}

/// Dave seals honestly but reveals too late: slashed as if he had not revealed.
#[test]
fn a_late_reveal_is_refused_and_slashed() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (id, [e, f, d]) = three_replicas(&books);
		run_to(53);
		for l in [e, f, d] {
			commit(l, [1; 32]);
		}
		assert_ok!(reveal(e, [1; 32]));
		assert_ok!(reveal(f, [1; 32]));
		run_to(group(id).reveal_until + 1);
		assert_noop!(refused(reveal(d, [1; 32])), Error::RevealTooLate);
		assert_ok!(Leases::decide_replicas(RuntimeOrigin::signed(bob()), id));
		let score = pallet_providers::Registry::<Runtime>::get(dave()).unwrap().reputation;
		assert_eq!(score.slashed, 1);
		assert_eq!(locked(&dave()), 0);
		books.check(COLLATERAL - share());
	});
}

/// Three replicas, three output roots: no majority. What each was paid goes back to Alice (its
/// holdback, and the rest from its bond), nobody's collateral is slashed, and Alice's record
/// flags the order.
#[test]
fn no_majority_refunds_the_buyer_and_flags_the_order() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let alice0 = free(&alice());
		let (id, [e, f, d]) = three_replicas(&books);
		let bonds = [bond_of(&eve()), bond_of(&ferdie()), bond_of(&dave())];
		run_to(53);
		commit(e, [1; 32]);
		commit(f, [2; 32]);
		commit(d, [3; 32]);
		assert_ok!(reveal(e, [1; 32]));
		assert_ok!(reveal(f, [2; 32]));
		assert_ok!(reveal(d, [3; 32]));
		let ReplicaStatus::Decided { verdict, .. } = group(id).status else { panic!("decided") };
		assert_eq!(verdict, ReplicaVerdict::NoMajority);
		assert_eq!(free(&alice()), alice0 - storage(id));
		for (who, bond) in [eve(), ferdie(), dave()].iter().zip(bonds) {
			assert_eq!(bond_of(who), bond - 9 * STINT / 2);
			assert_eq!(locked(who), 0);
		}
		assert_eq!(pallet_leases::BuyerRecords::<Runtime>::get(alice()).no_majority, 1);
		books.check(0);
	});
}

/// Alice closes two replicas right after their acknowledgement (paying them a block each) and
/// lets the third run: its result alone contradicts nothing and confirms nothing, so it waits
/// for her verdict like any result. Objecting to it still pays Eve her 5 STINT: closing
/// replicas cannot buy the work for free.
#[test]
fn a_buyer_closing_the_other_replicas_still_pays_the_one_that_delivered() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (id, [e, f, d]) = three_replicas(&books);
		let eve0 = free(&eve());
		run_to(4);
		for l in [f, d] {
			assert_ok!(Leases::close_lease(RuntimeOrigin::signed(alice()), l));
		}
		run_to(53);
		commit(e, [1; 32]);
		// Before the decision the buyer's verdict does not apply.
		assert_noop!(
			refused(Leases::accept_result(RuntimeOrigin::signed(alice()), e)),
			Error::Replicated
		);
		// Every replica has ended: the reveals are open, and Eve's decides.
		assert_ok!(reveal(e, [1; 32]));
		let ReplicaStatus::Decided { verdict, .. } = group(id).status else { panic!("decided") };
		assert_eq!(verdict, ReplicaVerdict::Alone { lease: e, output_root: [1; 32], exit_code: 0 });
		// Paid to the commit less the holdback; the verdict window opens now.
		assert_eq!(free(&eve()), eve0 + net(5 * STINT - STINT / 2));
		let pending = pallet_leases::PendingVerdicts::<Runtime>::get(e).expect("pending");
		assert_eq!(pending.objections_until, System::block_number() + lease(e).verdict_window);
		books.check(0);
		assert_ok!(Leases::object_to_result(RuntimeOrigin::signed(alice()), e));
		assert_eq!(free(&eve()), eve0 + net(5 * STINT));
		assert_eq!(locked(&eve()), 0);
		assert_eq!(pallet_leases::BuyerRecords::<Runtime>::get(alice()).no_majority, 0);
		books.check(0);
	});
}

/// The sybil variant: Eve wins one replica of three and her sybils Ferdie and Dave (no worker
/// key ties them to her) the two others; the sybils never show, so Eve's false result is the
/// only one revealed. Once that was paid as it said; now it waits for Alice's verdict, and her
/// dispute is verified by a provider that is none of the order's replicas (Charlie): Eve's
/// bond restitutes her pay and Charlie's, and her collateral is slashed, on top of the two
/// no-show slashes.
#[test]
fn a_false_result_alone_behind_sybil_no_shows_is_disputed_and_convicted() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (id, [e, f, d]) = three_leases();
		register(&Keyring::Charlie, &Keyring::CharlieStash);
		let charlie = Keyring::Charlie.to_account_id();
		let (alice0, eve0, charlie0) = (free(&alice()), free(&eve()), free(&charlie));
		let eve_bond = bond_of(&eve());
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), e));
		run_to(53);
		commit(e, [9; 32]);
		run_to(lease(f).ack_by + 1);
		for no_show in [f, d] {
			assert_ok!(Leases::report_no_show(RuntimeOrigin::signed(bob()), no_show));
		}
		assert_ok!(reveal(e, [9; 32]));
		let ReplicaStatus::Decided { verdict, .. } = group(id).status else { panic!("decided") };
		assert_eq!(verdict, ReplicaVerdict::Alone { lease: e, output_root: [9; 32], exit_code: 0 });
		let reporter = <Runtime as pallet_bonds::Config>::ReporterShare::get() * COLLATERAL;
		let no_shows = 2 * (COLLATERAL - share() - reporter);
		books.check(no_shows);

		// Eve ran 50 blocks: the bond pays a verifier for up to 100 at her price.
		assert_ok!(Leases::dispute(RuntimeOrigin::signed(alice()), e));
		let draw_delay = <Runtime as pallet_leases::Config>::DrawDelay::get();
		let disputed_at = System::block_number();
		run_to(disputed_at + draw_delay);
		let pallet_leases::DisputeStatus::Verifying { lease: check } =
			pallet_leases::Disputes::<Runtime>::get(e).unwrap().status
		else {
			panic!("a verifier drawn")
		};
		// Neither sybil may vouch for Eve: only Charlie could be drawn.
		assert_eq!(lease(check).provider, charlie);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(charlie.clone()), check));
		run_to(disputed_at + draw_delay + 40);
		let c = outputs([1; 32]);
		let report =
			stint_primitives::Report::new(Leases::genesis_hash(), check, ReportKind::Final, c);
		let signature = Keyring::CharlieStash.pair().sign(&report.signing_bytes());
		assert_ok!(Leases::submit_result(RuntimeOrigin::signed(bob()), check, c, signature));

		assert_eq!(
			pallet_leases::Disputes::<Runtime>::get(e).unwrap().status,
			pallet_leases::DisputeStatus::Overturned
		);
		// Charlie was paid 40 blocks from Alice's bond, which Eve's bond restituted.
		assert_eq!(free(&charlie), charlie0 + net(4 * STINT));
		// Eve kept the 4.5 STINT paid out, but her bond gave it back with Charlie's 4 and her
		// collateral; her sybils lost theirs to the no-shows. For a false result that earned 5
		// STINT, the three of them lost 8.5 STINT and three collaterals of 10.
		assert_eq!(free(&eve()), eve0 + net(9 * STINT / 2));
		assert_eq!(bond_of(&eve()), eve_bond - 4 * STINT - 9 * STINT / 2 - COLLATERAL);
		assert_eq!(locked(&eve()), 0);
		// Alice paid nothing for the false result: the three leases' escrow (10 STINT each) came
		// back to her whole, Eve's pay and Charlie's restituted, and she has half of each of the
		// three slashed collaterals besides.
		assert_eq!(free(&alice()), alice0 + 30 * STINT + 3 * share());
		books.check(no_shows + COLLATERAL - share());
	});
}

/// A replica that never acknowledges is a no-show (slashed as one) and one replica fewer to
/// wait for: the two others still make a majority of three.
#[test]
fn a_no_show_replica_does_not_hold_up_the_others() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (id, [e, f, d]) = three_leases();
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), e));
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(ferdie()), f));
		run_to(53);
		commit(e, [1; 32]);
		commit(f, [1; 32]);
		run_to(lease(d).ack_by + 1);
		assert_ok!(Leases::report_no_show(RuntimeOrigin::signed(bob()), d));
		// Every replica has ended: the reveals are open.
		assert_eq!(group(id).reveals_from, System::block_number());
		assert_ok!(reveal(e, [1; 32]));
		assert_ok!(reveal(f, [1; 32]));
		let ReplicaStatus::Decided { verdict, .. } = group(id).status else { panic!("decided") };
		assert_eq!(
			verdict,
			ReplicaVerdict::Majority { output_root: [1; 32], exit_code: 0, votes: 2 }
		);
		let reporter = <Runtime as pallet_bonds::Config>::ReporterShare::get() * COLLATERAL;
		books.check(COLLATERAL - share() - reporter);
	});
}

/// Hostile inputs, each a named error with nothing changed.
#[test]
fn replicas_refuse_hostile_inputs() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		type MarketError = pallet_market::Error<Runtime>;
		let create = |f: fn(&mut pallet_market::TermsOf<Runtime>)| {
			let mut t = terms(Some(100), true, 0);
			(t.deterministic, t.replicas) = (true, 2);
			f(&mut t);
			Market::create_order(
				RuntimeOrigin::signed(alice()),
				super::lifecycle::spec(),
				t,
				1_000 * STINT,
			)
		};
		let max: u32 = <Runtime as pallet_market::Config>::MaxReplicas::get();
		assert_noop!(refused(create(|t| t.replicas = 6)), MarketError::TooManyReplicas);
		assert_eq!(max, 5);
		assert_noop!(refused(create(|t| t.deterministic = false)), MarketError::UnreplicableOrder);
		assert_noop!(refused(create(|t| t.duration = None)), MarketError::UnreplicableOrder);
		assert_noop!(refused(create(|t| t.auto_accept = false)), MarketError::UnreplicableOrder);

		// The buyer cannot pick a replicated order's bids: the chain does, at the close. With
		// fewer bids than replicas, the order expires, everything refunded.
		let picked = pallet_market::NextOrderId::<Runtime>::get();
		assert_ok!(create(|_| ()));
		bid(&eve(), picked, PRICE, gpu("eve", 1));
		assert_noop!(
			refused(super::lifecycle::accept(&alice(), picked, &eve())),
			MarketError::ReplicatedOrder
		);

		let (_, [e, f, d]) = three_replicas(&books);
		// (Its close waited a block: the three replicas of the other order used the block's
		// room for leases.)
		run_to(53);
		assert!(pallet_market::Orders::<Runtime>::get(picked).is_none(), "expired");
		// A stranger, or another replica's provider, cannot commit for Eve's lease.
		let sealed = seal(&outputs([1; 32]), &eve().encode(), &salt_of(&eve()));
		assert_noop!(
			refused(Leases::commit_result(RuntimeOrigin::signed(bob()), e, sealed)),
			Error::NotProvider
		);
		assert_noop!(
			refused(Leases::commit_result(RuntimeOrigin::signed(ferdie()), e, sealed)),
			Error::NotProvider
		);
		// Not sealed yet.
		assert_noop!(refused(reveal(e, [1; 32])), Error::NotSealed);
		for l in [e, f, d] {
			commit(l, [1; 32]);
		}
		// A wrong salt, a result other than the one sealed, a signature of another worker.
		let c = outputs([1; 32]);
		let report = stint_primitives::Report::new(Leases::genesis_hash(), e, ReportKind::Final, c);
		let eves = Keyring::EveStash.pair().sign(&report.signing_bytes());
		assert_noop!(
			refused(Leases::reveal_result(RuntimeOrigin::signed(bob()), e, c, [0; 32], eves)),
			Error::SealMismatch
		);
		assert_noop!(refused(reveal(e, [2; 32])), Error::SealMismatch);
		let ferdies = Keyring::FerdieStash.pair().sign(&report.signing_bytes());
		assert_noop!(
			refused(Leases::reveal_result(
				RuntimeOrigin::signed(bob()),
				e,
				c,
				salt_of(&eve()),
				ferdies
			)),
			Error::BadSignature
		);
		// A plain lease has no replicas.
		let plain = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		bid(&eve(), plain, PRICE, gpu("eve", 1));
		run_to(System::block_number() + 2);
		let plain = super::lifecycle::lease_of(plain);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), plain));
		assert_noop!(
			refused(Leases::commit_result(RuntimeOrigin::signed(eve()), plain, sealed)),
			Error::NotReplicated
		);
		submit(plain, 0);
		assert_noop!(
			refused(Leases::decide_replicas(RuntimeOrigin::signed(bob()), 999)),
			Error::NotReplicated
		);
		books.check(0);
	});
}

/// What an honest replica pays to be judged by its peers, besides its lease's own calls: a
/// commit instead of a result, and a reveal (the last one also decides every replica; the
/// refunded part of its weight is not charged). Printed for the performance notes.
#[test]
fn sealing_and_revealing_cost_an_honest_replica_a_few_blocks_of_a_typical_lease() {
	use frame_support::{dispatch::GetDispatchInfo, weights::Weight};
	use pallet_leases::WeightInfo;
	type Weights = <Runtime as pallet_leases::Config>::WeightInfo;
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let fee = |call: crate::RuntimeCall, charged: Weight| {
			let mut info = call.get_dispatch_info();
			info.call_weight = charged;
			crate::TransactionPayment::compute_fee(call.encoded_size() as u32 + 110, &info, 0)
		};
		let signature = sp_core::sr25519::Signature::from_raw([0; 64]);
		let commit = crate::RuntimeCall::Leases(pallet_leases::Call::commit_result {
			lease: 0,
			seal: [0; 32],
		});
		let reveal = crate::RuntimeCall::Leases(pallet_leases::Call::reveal_result {
			lease: 0,
			commitment: result(0),
			salt: [0; 32],
			signature,
		});
		let decide = crate::RuntimeCall::Leases(pallet_leases::Call::decide_replicas { order: 0 });
		let figures = [
			("commit_result", fee(commit.clone(), Weights::commit_result(1))),
			("reveal_result", fee(reveal.clone(), Weights::reveal_result(0))),
			("reveal_result.deciding_3", fee(reveal, Weights::reveal_result(3))),
			("decide_replicas.3", fee(decide, Weights::decide_replicas(3))),
			("submit_result", {
				let call = crate::RuntimeCall::Leases(pallet_leases::Call::submit_result {
					lease: 0,
					commitment: result(0),
					signature,
				});
				fee(call, Weights::submit_result(1, 1))
			}),
		];
		for (name, fee) in figures {
			println!("fee.leases.{name} = {fee} ({} mSTINT)", fee / crate::MILLI_STINT);
		}
		let [(_, commit), (_, reveal), (_, deciding), (_, decide), (_, submit)] = figures;
		// A commit replaces the plain result, for about as much; a reveal costs under one block
		// of a typical lease (docs/performance.md: 0.05 STINT), and so does deciding each of
		// the replicas (the last reveal, or `decide_replicas`, pays for all of them).
		assert!(commit <= submit + STINT / 100, "commit_result costs {commit}, a result {submit}");
		assert!(reveal < STINT / 20, "a reveal costs {reveal}");
		for fee in [deciding, decide] {
			assert!(fee < 3 * STINT / 20, "deciding three replicas costs {fee}");
		}
		// Each of three honest replicas, on average: its commit instead of a result, its
		// reveal, and a third of the deciding reveal's surplus.
		let extra = commit + reveal - submit + (deciding - reveal) / 3;
		println!("fee.replica.extra_each_of_3 = {extra} ({} mSTINT)", extra / crate::MILLI_STINT);
	});
}
