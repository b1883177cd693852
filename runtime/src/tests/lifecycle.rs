//! The market's whole life on the real runtime, with every Stint pallet: order → bids → accept
//! (automatic and by hand) → ack → stream → result, and every other way a lease ends. After every
//! step: all pallets' `try_state` holds, and money is conserved (the issuance only falls by what
//! slashes burn, and every unit is in some account).

use crate::{
	genesis_config_presets::tests::build, Balances, Bonds, Leases, Market, Providers, Runtime,
	RuntimeOrigin, Streams, System, STINT,
};
use frame_support::{
	assert_noop, assert_ok,
	traits::Get,
	traits::{fungible::Inspect, Hooks},
};
use pallet_leases::{LeaseStatus, TerminationReason};
use pallet_market::{OrderStatus, OrderTerms, TermsOf};
use polkadot_sdk::sp_runtime::bounded_vec;
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring as Keyring, *,
};
use stint_primitives::{
	Balance, ComputeCapability, DeviceId, GpuRequirements, JobSpec, LeaseId, Report, ReportKind,
	ResultCommitment,
};
use stint_traits::refused;

pub(super) type AccountId = crate::AccountId;

const DIGEST_HEX: &str = "5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592";

pub(super) fn alice() -> AccountId {
	Keyring::Alice.to_account_id()
}
pub(super) fn bob() -> AccountId {
	Keyring::Bob.to_account_id()
}
pub(super) fn eve() -> AccountId {
	Keyring::Eve.to_account_id()
}
pub(super) fn ferdie() -> AccountId {
	Keyring::Ferdie.to_account_id()
}

/// The `i`-th GPU of an example provider (`eve` or `ferdie`), as the dev preset registers it.
pub(super) fn gpu(provider: &str, i: u8) -> DeviceId {
	stint_primitives::device_id(&format!("GPU-{provider}-{i}"))
}

pub(super) fn digest() -> [u8; 32] {
	stint_primitives::image_digest(format!("x@sha256:{DIGEST_HEX}").as_bytes()).unwrap()
}

pub(super) fn spec() -> JobSpec {
	JobSpec {
		image: format!("ghcr.io/acme/train@sha256:{DIGEST_HEX}").into_bytes().try_into().unwrap(),
		command: Default::default(),
		env: Default::default(),
		inputs: Default::default(),
		max_output_bytes: 1 << 30,
	}
}

/// One GPU with at least 80 GB, up to 1 STINT per block for `duration`, bids for 2 blocks.
/// An open-ended order asks at least the chain's least notice.
pub(super) fn terms(duration: Option<u32>, auto_accept: bool, notice: u32) -> TermsOf<Runtime> {
	let least = <Runtime as pallet_market::Config>::MinTerminationNotice::get();
	let notice = if duration.is_none() { notice.max(least) } else { notice };
	OrderTerms {
		requirements: GpuRequirements {
			gpu_count: 1,
			min_vram_mib: 80_000,
			min_compute_capability: ComputeCapability { major: 9, minor: 0 },
			models: Default::default(),
			min_cuda_driver_version: 12_000,
			region: None,
			min_reputation: Default::default(),
		},
		max_price_per_block: STINT,
		duration,
		bid_window: 2,
		auto_accept,
		replicas: 1,
		termination_notice: notice,
		holdback: <Runtime as pallet_market::Config>::MinHoldback::get(),
		verdict_window: 0,
		deterministic: false,
	}
}

/// The chain's books: what it started with, and what slashes burnt since.
pub(super) struct Books {
	issuance: Balance,
}

impl Books {
	pub(super) fn open() -> Self {
		System::set_block_number(1);
		Self { issuance: Balances::total_issuance() }
	}

	/// Every pallet's invariants hold; the issuance fell by exactly `burnt` so far; every unit
	/// of it is in some account.
	pub(super) fn check(&self, burnt: Balance) {
		Providers::do_try_state().expect("registry invariants");
		Bonds::do_try_state().expect("bond invariants");
		Market::do_try_state().expect("market invariants");
		Leases::do_try_state().expect("lease invariants");
		Streams::do_try_state().expect("stream invariants");
		// Across pallets: each provider's locked bond is exactly what its standing bids
		// (collateral and deposit) and live leases claim (a slash never shrinks it below that).
		for (provider, ledger) in pallet_bonds::Ledgers::<Runtime>::iter() {
			let in_bids: Balance = pallet_market::Bids::<Runtime>::iter()
				.filter(|(_, who, _)| *who == provider)
				.map(|(_, _, bid)| bid.collateral + bid.deposit)
				.sum();
			let in_leases: Balance =
				Leases::leases_of(&provider).into_iter().map(|(_, lease)| lease.collateral).sum();
			// Ended leases whose results wait for their buyers' verdicts keep theirs.
			let in_verdicts: Balance = pallet_leases::PendingVerdicts::<Runtime>::iter()
				.filter_map(|(id, verdict)| {
					let lease = pallet_leases::Leases::<Runtime>::get(id)?;
					(lease.provider == provider).then_some(verdict.collateral)
				})
				.sum();
			let in_leases = in_leases + in_verdicts;
			assert_eq!(ledger.locked, in_bids + in_leases, "locked collateral of {provider}");
		}
		// The protocol's take on every payment is burnt too.
		let takes: Balance = frame_system::Pallet::<Runtime>::events()
			.into_iter()
			.map(|record| match record.event {
				crate::RuntimeEvent::Streams(pallet_streams::Event::Settled { burnt, .. })
				| crate::RuntimeEvent::Streams(pallet_streams::Event::Released { burnt, .. }) => burnt,
				_ => 0,
			})
			.sum();
		assert_eq!(Balances::total_issuance(), self.issuance - burnt - takes, "issuance");
		let everywhere: Balance = frame_system::Account::<Runtime>::iter()
			.map(|(_, info)| info.data.free + info.data.reserved)
			.sum();
		assert_eq!(everywhere, Balances::total_issuance(), "every unit is in some account");
	}
}

/// What a provider receives of a payment of `amount`: the protocol's take is burnt.
pub(super) fn net(amount: Balance) -> Balance {
	let take = <Runtime as pallet_streams::Config>::TakeRate::get();
	amount - take.mul_floor(amount)
}

pub(super) fn run_to(n: u32) {
	while System::block_number() < n {
		let next = System::block_number() + 1;
		System::set_block_number(next);
		Market::on_initialize(next);
		Streams::on_initialize(next);
		Leases::on_initialize(next);
	}
}

/// The storage deposit order `id` holds on its buyer.
pub(super) fn storage(id: u64) -> Balance {
	pallet_market::Orders::<Runtime>::get(id).map(|o| o.storage_deposit).unwrap_or_default()
}

pub(super) fn free(who: &AccountId) -> Balance {
	Balances::balance(who)
}

pub(super) fn order(buyer: &AccountId, terms: TermsOf<Runtime>, deposit: Balance) -> u64 {
	let id = pallet_market::NextOrderId::<Runtime>::get();
	assert_ok!(Market::create_order(RuntimeOrigin::signed(buyer.clone()), spec(), terms, deposit));
	id
}

pub(super) fn bid(provider: &AccountId, order: u64, price: Balance, device: DeviceId) {
	assert_ok!(Market::place_bid(
		RuntimeOrigin::signed(provider.clone()),
		order,
		price,
		bounded_vec![device]
	));
}

/// The buyer accepts `provider`'s bid on `order` as it stands.
pub(super) fn accept(
	buyer: &AccountId,
	order: u64,
	provider: &AccountId,
) -> frame_support::dispatch::DispatchResultWithPostInfo {
	let bid = pallet_market::Bids::<Runtime>::get(order, provider).expect("the bid");
	Market::accept_bid(
		RuntimeOrigin::signed(buyer.clone()),
		order,
		provider.clone(),
		bid.price_per_block,
		bid.devices,
	)
}

pub(super) fn lease_of(order: u64) -> LeaseId {
	match pallet_market::Orders::<Runtime>::get(order).unwrap().status {
		OrderStatus::Leased { lease } => lease,
		other => panic!("order {order} is {other:?}"),
	}
}

pub(super) fn status(lease: LeaseId) -> LeaseStatus {
	pallet_leases::Leases::<Runtime>::get(lease).unwrap().status
}

pub(super) fn result(exit_code: i32) -> ResultCommitment {
	ResultCommitment {
		output_root: [1; 32],
		receipt_hash: [2; 32],
		exit_code,
		gpu_seconds: 3_600,
		image_digest: digest(),
	}
}

/// Eve's worker (`//Eve//stash`) signs the report of `kind` for `lease` on this chain.
pub(super) fn signed(
	lease: LeaseId,
	kind: ReportKind,
	c: &ResultCommitment,
) -> sp_core::sr25519::Signature {
	let report = Report::new(Leases::genesis_hash(), lease, kind, *c);
	Keyring::EveStash.pair().sign(&report.signing_bytes())
}

/// Bob sends the final result with `exit_code` that Eve's worker signed for `lease`.
pub(super) fn submit(lease: LeaseId, exit_code: i32) {
	let c = result(exit_code);
	assert_ok!(Leases::submit_result(
		RuntimeOrigin::signed(bob()),
		lease,
		c,
		signed(lease, ReportKind::Final, &c)
	));
}

/// All `who` owns: free, held (deposits, escrow) and bonded. A bid's deposit leaves it only
/// when forfeited (from the bond).
pub(super) fn worth(who: &AccountId) -> Balance {
	<Balances as frame_support::traits::fungible::Inspect<_>>::total_balance(who)
}

pub(super) fn locked(who: &AccountId) -> Balance {
	pallet_bonds::Ledgers::<Runtime>::get(who).map(|l| l.locked).unwrap_or_default()
}

pub(super) const COLLATERAL: Balance = 10 * STINT;

#[test]
fn order_bids_auto_accept_ack_stream_result() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (alice0, eve0) = (free(&alice()), free(&eve()));

		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		books.check(0);
		// The registry answers what Eve and Ferdie can serve: one fitting GPU each.
		assert_eq!(Market::servable_orders(&eve(), None, 10).0, vec![(id, vec![gpu("eve", 0)])]);
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		bid(&ferdie(), id, STINT * 6 / 10, gpu("ferdie", 0));
		// Each bid locks its collateral and its deposit in the bond.
		let deposit = <Runtime as pallet_market::Config>::BidDeposit::get();
		assert_eq!(
			(locked(&eve()), locked(&ferdie())),
			(COLLATERAL + deposit, COLLATERAL + deposit)
		);
		books.check(0);

		run_to(3);
		let lease = lease_of(id);
		assert_eq!(status(lease), LeaseStatus::AwaitingAck);
		// Ferdie lost: everything released. Eve's GPU is committed, its collateral locked.
		assert_eq!((locked(&eve()), locked(&ferdie())), (COLLATERAL, 0));
		assert_eq!(
			<Providers as stint_traits::ProviderRegistry<_>>::committed_to(&eve(), &gpu("eve", 0)),
			Some(lease)
		);
		assert_eq!(Leases::leases_of(&eve()).len(), 1);
		// The escrow for 100 blocks at 0.5 went into the stream; the other 50 came back.
		// (Her order's storage deposit stays held until the order is pruned.)
		assert_eq!(free(&alice()), alice0 - 50 * STINT - storage(id));
		books.check(0);

		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		run_to(53);
		let stream = pallet_leases::Leases::<Runtime>::get(lease).unwrap().stream;
		assert_eq!(
			<Streams as stint_traits::PaymentStreams<_, _, _>>::owed(stream),
			Some(25 * STINT)
		);
		books.check(0);

		// Anyone (here Bob) sends the result Eve's worker signed: Eve is paid less the holdback
		// (a tenth), which waits with her collateral for Alice's verdict.
		submit(lease, 0);
		assert_eq!(status(lease), LeaseStatus::Completed);
		assert_eq!(free(&eve()), eve0 + net(25 * STINT - 25 * STINT / 10));
		assert_eq!(free(&alice()), alice0 - 25 * STINT - storage(id));
		assert_eq!(locked(&eve()), COLLATERAL);
		books.check(0);
		assert_ok!(Leases::accept_result(RuntimeOrigin::signed(alice()), lease));
		assert_eq!(free(&eve()), eve0 + net(25 * STINT));
		assert_eq!(locked(&eve()), 0);
		assert!(Leases::leases_of(&eve()).is_empty());
		assert_eq!(
			<Providers as stint_traits::ProviderRegistry<_>>::committed_to(&eve(), &gpu("eve", 0)),
			None
		);
		books.check(0);

		// The order, its lease and its stream stay a week for Alice to fetch the results; then
		// anyone (Bob) may prune them, for a tenth of the storage deposit.
		let deposit = storage(id);
		let retention = <Runtime as pallet_market::Config>::Retention::get();
		let reap = || Market::reap_order(RuntimeOrigin::signed(bob()), id);
		assert_noop!(refused(reap()), pallet_market::Error::<Runtime>::RetentionNotOver);
		// Nothing is due in between: skip the blocks.
		System::set_block_number(53 + retention);
		let bob0 = free(&bob());
		assert_ok!(reap());
		assert!(pallet_leases::Leases::<Runtime>::get(lease).is_none());
		assert!(pallet_streams::Records::<Runtime>::get(stream).is_none());
		assert_eq!(free(&bob()), bob0 + deposit / 10);
		assert_eq!(free(&alice()), alice0 - 25 * STINT - deposit / 10);
		books.check(0);
	});
}

#[test]
fn manual_accept_then_the_buyer_closes_early() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (alice0, ferdie0) = (free(&alice()), free(&ferdie()));
		let id = order(&alice(), terms(None, false, 0), 100 * STINT);
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		bid(&ferdie(), id, STINT, gpu("ferdie", 1));
		run_to(3);
		assert_eq!(pallet_market::Orders::<Runtime>::get(id).unwrap().status, OrderStatus::Open);
		assert_ok!(accept(&alice(), id, &ferdie()));
		let lease = lease_of(id);
		books.check(0);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(ferdie()), lease));
		run_to(13);
		assert_ok!(Leases::close_lease(RuntimeOrigin::signed(alice()), lease));
		assert_eq!(
			status(lease),
			LeaseStatus::Terminated { reason: TerminationReason::ClosedByBuyer }
		);
		assert_eq!(
			(free(&alice()), free(&ferdie())),
			(alice0 - 10 * STINT - storage(id), ferdie0 + net(10 * STINT))
		);
		books.check(0);
	});
}

#[test]
fn depletion_grace_top_up_resume_then_termination_for_funds() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let eve0 = free(&eve());
		// Open-ended at 1 STINT per block with 10 STINT: runs out 10 blocks after the ack.
		let id = order(&alice(), terms(None, true, 0), 10 * STINT);
		bid(&eve(), id, STINT, gpu("eve", 1));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		let stream = pallet_leases::Leases::<Runtime>::get(lease).unwrap().stream;
		run_to(13);
		assert_eq!(status(lease), LeaseStatus::Suspended);
		books.check(0);
		// Bob tops it up during grace, for at least a grace period's worth: it resumes.
		let grace = <Runtime as pallet_streams::Config>::GracePeriod::get();
		assert_noop!(
			refused(Streams::top_up(RuntimeOrigin::signed(bob()), stream, STINT)),
			pallet_streams::Error::<Runtime>::TopUpTooSmall
		);
		assert_ok!(Streams::top_up(RuntimeOrigin::signed(bob()), stream, grace as u128 * STINT));
		assert_eq!(status(lease), LeaseStatus::Running);
		books.check(0);
		run_to(13 + grace);
		assert_eq!(status(lease), LeaseStatus::Suspended);
		run_to(13 + 2 * grace);
		assert_eq!(
			status(lease),
			LeaseStatus::Terminated { reason: TerminationReason::InsufficientFunds }
		);
		assert_eq!(free(&eve()), eve0 + net((10 + grace as u128) * STINT));
		assert_eq!(locked(&eve()), 0);
		books.check(0);
	});
}

#[test]
fn a_no_show_is_slashed_and_the_buyer_made_whole() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let (alice0, bob0) = (free(&alice()), free(&bob()));
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		bid(&eve(), id, STINT, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		let deadline = <Runtime as pallet_leases::Config>::AckDeadline::get();
		assert_noop!(
			refused(Leases::report_no_show(RuntimeOrigin::signed(bob()), lease)),
			pallet_leases::Error::<Runtime>::AckNotOverdue
		);
		run_to(3 + deadline + 1);
		assert_ok!(Leases::report_no_show(RuntimeOrigin::signed(bob()), lease));
		// Alice gets all her escrow back and half the collateral; Bob a tenth; the rest burns.
		assert_eq!(free(&alice()), alice0 + COLLATERAL / 2 - storage(id));
		assert_eq!(free(&bob()), bob0 + COLLATERAL / 10);
		assert_eq!(status(lease), LeaseStatus::Terminated { reason: TerminationReason::NoShow });
		books.check(COLLATERAL * 4 / 10);
	});
}

#[test]
fn a_missed_result_is_slashed() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let id = order(&alice(), terms(Some(10), true, 0), 10 * STINT);
		bid(&eve(), id, STINT, gpu("eve", 0));
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		let grace = <Runtime as pallet_leases::Config>::ResultGrace::get();
		run_to(13 + grace + 1);
		// The job ran its ten blocks and was paid; its result never came.
		assert_ok!(Leases::report_missed_result(RuntimeOrigin::signed(bob()), lease));
		assert_eq!(
			status(lease),
			LeaseStatus::Terminated { reason: TerminationReason::MissedResult }
		);
		books.check(COLLATERAL * 4 / 10);
	});
}

#[test]
fn a_provider_terminates_with_notice_or_is_slashed() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		// Both ask the chain's least notice (ten minutes: 100 blocks).
		let first = order(&alice(), terms(None, true, 5), 200 * STINT);
		let second = order(&bob(), terms(None, true, 5), 200 * STINT);
		bid(&eve(), first, STINT, gpu("eve", 0));
		bid(&eve(), second, STINT, gpu("eve", 1));
		run_to(3);
		let (a, b) = (lease_of(first), lease_of(second));
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), a));
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), b));
		assert_ok!(Leases::give_notice(RuntimeOrigin::signed(eve()), a));
		run_to(103);
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(eve()), a));
		assert_eq!(
			status(a),
			LeaseStatus::Terminated { reason: TerminationReason::ProviderNotice }
		);
		// Served notice: no slash, but within the hour after its ack, so Alice's verdict may
		// still take all its collateral; she accepts.
		books.check(0);
		assert_eq!(locked(&eve()), 2 * COLLATERAL);
		assert_ok!(Leases::accept_result(RuntimeOrigin::signed(alice()), a));
		assert_ok!(Leases::terminate(RuntimeOrigin::signed(eve()), b));
		assert_eq!(
			status(b),
			LeaseStatus::Terminated { reason: TerminationReason::ProviderWithoutNotice }
		);
		assert_eq!(locked(&eve()), 0);
		// No reporter: the buyer's half goes to Bob, the other half burns.
		books.check(COLLATERAL / 2);
	});
}

#[test]
fn a_signature_for_another_lease_or_chain_is_refused() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let first = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		let second = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		bid(&eve(), first, STINT, gpu("eve", 0));
		bid(&eve(), second, STINT, gpu("eve", 1));
		run_to(3);
		let (a, b) = (lease_of(first), lease_of(second));
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), a));
		let c = result(0);
		assert_noop!(
			refused(Leases::submit_result(
				RuntimeOrigin::signed(bob()),
				a,
				c,
				signed(b, ReportKind::Final, &c)
			)),
			pallet_leases::Error::<Runtime>::BadSignature
		);
		let other_chain = Report::new([0; 32], a, ReportKind::Final, c);
		let sig = Keyring::EveStash.pair().sign(&other_chain.signing_bytes());
		assert_noop!(
			refused(Leases::submit_result(RuntimeOrigin::signed(bob()), a, c, sig)),
			pallet_leases::Error::<Runtime>::BadSignature
		);
		// Eve's account key is not her worker key.
		let sig = Keyring::Eve
			.pair()
			.sign(&Report::new(Leases::genesis_hash(), a, ReportKind::Final, c).signing_bytes());
		assert_noop!(
			refused(Leases::submit_result(RuntimeOrigin::signed(bob()), a, c, sig)),
			pallet_leases::Error::<Runtime>::BadSignature
		);
		submit(a, 0);
		assert_noop!(
			refused(Leases::submit_result(
				RuntimeOrigin::signed(bob()),
				a,
				c,
				signed(a, ReportKind::Final, &c)
			)),
			pallet_leases::Error::<Runtime>::NotRunning
		);
		books.check(0);
	});
}

#[test]
fn open_orders_page_and_leased_orders_leave_the_list() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let ids: Vec<u64> =
			(0..3).map(|_| order(&alice(), terms(Some(100), true, 0), 100 * STINT)).collect();
		let first = Market::open_orders(None, 2);
		assert_eq!(first.len(), 2);
		let rest = Market::open_orders(Some(first[1].0), 2);
		assert_eq!(rest.len(), 1);
		let mut seen: Vec<u64> = first.iter().chain(rest.iter()).map(|(id, _)| *id).collect();
		seen.sort();
		assert_eq!(seen, ids);
		bid(&eve(), ids[0], STINT, gpu("eve", 0));
		// Their bid windows close at block 3, whose bucket takes two deadlines: the third spills
		// into block 4's.
		run_to(4);
		// One became a lease; the two without bids expired.
		assert!(Market::open_orders(None, 10).is_empty());
		assert_eq!(status(lease_of(ids[0])), LeaseStatus::AwaitingAck);
		// Eve's committed GPU is no longer offered; her other one is.
		let later = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		assert_eq!(Market::servable_orders(&eve(), None, 10).0, vec![(later, vec![gpu("eve", 1)])]);
		books.check(0);
	});
}
