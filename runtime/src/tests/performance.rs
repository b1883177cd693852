//! What the runtime's weights mean for users and for blocks: every Stint call's weight against a
//! balance transfer, the block hooks' share of a block at their worst case, and the fees a
//! provider pays. The weights are the ones `scripts/bench-weights.sh` generated.
//!
//! One test holds the line that must never move (the hooks' share); the others are figures.
//! With `STINT_PERF_OUT=<file>`, `weights_and_fees_as_figures` writes them all there as JSON for
//! `scripts/bench-report.py`, which puts them in docs/performance.md and docs/performance.json.

use super::lifecycle::{spec, terms};
use crate::{
	configs::RuntimeBlockWeights, AccountId, Balance, Runtime, RuntimeCall, TransactionPayment,
	MILLI_STINT, STINT,
};
use codec::Encode;
use pallet_providers::{HardwareSpec, ProviderInfo};
use polkadot_sdk::{
	frame_support::{assert_ok, dispatch::GetDispatchInfo, traits::Get, weights::Weight},
	sp_core::{sr25519, Pair},
	sp_genesis_builder::DEV_RUNTIME_PRESET,
	sp_keyring::Sr25519Keyring as Keyring,
	sp_runtime,
	sp_runtime::bounded_vec,
};
use stint_primitives::ResultCommitment;
use stint_traits::buckets::max_due_per_block;

/// The share of a block's weight the block hooks may take together, at their worst case.
const HOOKS_GOAL: f64 = 0.05;
/// What we take a typical lease to pay per block: the price ceiling of examples/hello-job
/// (0.05 STINT a block, 30 STINT an hour at 6-second blocks).
const TYPICAL_PRICE_PER_BLOCK: Balance = 50 * MILLI_STINT;

fn account(i: u8) -> AccountId {
	AccountId::new([i; 32])
}

fn key() -> sr25519::Public {
	sr25519::Public::from_raw([7; 32])
}

fn signature() -> sr25519::Signature {
	sr25519::Signature::from_raw([9; 64])
}

/// A machine with the most GPUs the registry takes: the worst case of the calls that list them.
fn full_machine() -> HardwareSpec {
	let max = <<Runtime as pallet_providers::Config>::MaxGpus as Get<u32>>::get();
	HardwareSpec {
		gpus: (0..max as u8)
			.map(|i| super::h100_device([i; 32]))
			.collect::<Vec<_>>()
			.try_into()
			.unwrap(),
		cpu_cores: 128,
		ram_mib: 2 << 20,
		disk_gib: 30_000,
	}
}

fn commitment() -> ResultCommitment {
	ResultCommitment {
		output_root: [1; 32],
		receipt_hash: [2; 32],
		exit_code: 0,
		gpu_seconds: 1,
		image_digest: [3; 32],
	}
}

/// Every Stint call, with arguments at the worst case of its declared weight, and whether users
/// make it often (goal 2× a transfer) or not (goal 5×).
fn calls() -> Vec<(&'static str, bool, RuntimeCall)> {
	use pallet_bonds::Call as B;
	use pallet_leases::Call as L;
	use pallet_market::Call as M;
	use pallet_providers::Call as P;
	use pallet_streams::Call as S;
	let info = ProviderInfo {
		name: b"figures".to_vec().try_into().unwrap(),
		endpoint: b"https://gpu.example".to_vec().try_into().unwrap(),
		region: *b"DE",
	};
	let all_devices: Vec<_> = full_machine().gpus.iter().map(|gpu| gpu.uuid_hash).collect();
	let p = |call| RuntimeCall::Providers(call);
	let b = |call| RuntimeCall::Bonds(call);
	let m = |call| RuntimeCall::Market(call);
	let l = |call| RuntimeCall::Leases(call);
	let s = |call| RuntimeCall::Streams(call);
	vec![
		(
			"providers.register",
			false,
			p(P::register {
				info: info.clone(),
				worker_key: key(),
				hardware: full_machine(),
				proof: signature(),
			}),
		),
		("providers.update_info", false, p(P::update_info { info })),
		("providers.update_hardware", false, p(P::update_hardware { hardware: full_machine() })),
		(
			"providers.rotate_worker_key",
			false,
			p(P::rotate_worker_key { from: key(), to: key(), proof: signature() }),
		),
		("providers.pause", false, p(P::pause {})),
		("providers.resume", false, p(P::resume {})),
		("providers.announce_exit", false, p(P::announce_exit {})),
		("providers.deregister", false, p(P::deregister {})),
		(
			"providers.bind_worker",
			false,
			p(P::bind_worker {
				worker_key: key(),
				devices: all_devices.clone().try_into().unwrap(),
				proof: signature(),
			}),
		),
		("providers.unbind_worker", false, p(P::unbind_worker { worker_key: key() })),
		("bonds.bond", false, b(B::bond { amount: STINT })),
		("bonds.bond_more", false, b(B::bond_more { amount: STINT })),
		("bonds.unbond", false, b(B::unbond { amount: STINT })),
		("bonds.rebond", false, b(B::rebond { amount: STINT })),
		("bonds.withdraw_unbonded", false, b(B::withdraw_unbonded {})),
		(
			"market.create_order",
			false,
			m(M::create_order { spec: spec(), terms: terms(Some(600), true, 0), deposit: STINT }),
		),
		(
			"market.place_bid",
			true,
			m(M::place_bid {
				order: 0,
				price_per_block: STINT,
				devices: all_devices.clone().try_into().unwrap(),
			}),
		),
		("market.retract_bid", false, m(M::retract_bid { order: 0 })),
		("market.cancel_order", false, m(M::cancel_order { order: 0 })),
		(
			"market.accept_bid",
			false,
			m(M::accept_bid {
				order: 0,
				provider: account(1),
				price_per_block: STINT,
				devices: all_devices.try_into().unwrap(),
			}),
		),
		("market.reap_order", false, m(M::reap_order { order: 0 })),
		("leases.ack_lease", true, l(L::ack_lease { lease: 0 })),
		(
			"leases.submit_result",
			true,
			l(L::submit_result { lease: 0, commitment: commitment(), signature: signature() }),
		),
		(
			"leases.checkpoint",
			true,
			l(L::checkpoint { lease: 0, commitment: commitment(), signature: signature() }),
		),
		("leases.give_notice", false, l(L::give_notice { lease: 0 })),
		("leases.terminate", false, l(L::terminate { lease: 0 })),
		("leases.close_lease", false, l(L::close_lease { lease: 0 })),
		("leases.report_no_show", false, l(L::report_no_show { lease: 0 })),
		("leases.report_missed_result", false, l(L::report_missed_result { lease: 0 })),
		("leases.accept_result", false, l(L::accept_result { lease: 0 })),
		("leases.object_to_result", false, l(L::object_to_result { lease: 0 })),
		("leases.confirm_result", false, l(L::confirm_result { lease: 0 })),
		("streams.settle", true, s(S::settle { stream: 0 })),
		("streams.withdraw", true, s(S::withdraw { stream: 0 })),
		("streams.top_up", true, s(S::top_up { stream: 0, amount: STINT })),
	]
}

/// What the calls users make most are charged in the common case, after their refunds: a bid
/// of one GPU on an order with a free slot, a lease of one GPU paid by its buyer alone, a top-up
/// of a stream that is not suspended.
fn typical_charges() -> Vec<(&'static str, Weight)> {
	use pallet_leases::WeightInfo as _;
	use pallet_market::WeightInfo as _;
	use pallet_streams::WeightInfo as _;
	type M = <Runtime as pallet_market::Config>::WeightInfo;
	type L = <Runtime as pallet_leases::Config>::WeightInfo;
	type S = <Runtime as pallet_streams::Config>::WeightInfo;
	vec![
		("market.place_bid", M::place_bid(1, 0)),
		("leases.ack_lease", L::ack_lease()),
		("leases.submit_result", L::submit_result(1, 1)),
		("leases.checkpoint", L::checkpoint(1)),
		("streams.settle", S::settle(1)),
		("streams.withdraw", S::withdraw(1)),
		("streams.top_up", S::top_up(1)),
	]
}

fn transfer() -> RuntimeCall {
	RuntimeCall::Balances(polkadot_sdk::pallet_balances::Call::transfer_keep_alive {
		dest: account(2).into(),
		value: STINT,
	})
}

/// The fee of `call` signed, as a real chain charges it (an address, a signature and the
/// extensions add about 110 bytes), without tip or congestion.
fn fee(call: &RuntimeCall) -> Balance {
	let len = call.encoded_size() as u32 + 110;
	TransactionPayment::compute_fee(len, &call.get_dispatch_info(), 0)
}

/// The fee of `call` signed, once refunded down to `charged`: what the sender pays in the end.
fn typical_fee(call: &RuntimeCall, charged: Weight) -> Balance {
	use polkadot_sdk::frame_support::dispatch::PostDispatchInfo;
	let len = call.encoded_size() as u32 + 110;
	let post = PostDispatchInfo { actual_weight: Some(charged), pays_fee: Default::default() };
	TransactionPayment::compute_actual_fee(len, &call.get_dispatch_info(), &post, 0)
}

/// The most items each hook is handed in one block: its bucket and its share of the overflow.
fn max_due() -> (u32, u32) {
	(
		max_due_per_block::<pallet_market::DeadlineQueue<Runtime>>(),
		max_due_per_block::<pallet_streams::WakeupQueue<Runtime>>(),
	)
}

/// The weight of the market's and the streams' hooks with `orders` and `streams` due.
fn hooks(orders: u32, streams: u32) -> (Weight, Weight) {
	use pallet_market::WeightInfo as _;
	use pallet_streams::WeightInfo as _;
	type MarketWeights = <Runtime as pallet_market::Config>::WeightInfo;
	type StreamWeights = <Runtime as pallet_streams::Config>::WeightInfo;
	// As the streams' hook reckons it: each stream due may end its lease.
	let streams_hook = StreamWeights::on_initialize(streams).saturating_add(
		<pallet_leases::Pallet<Runtime> as stint_traits::StreamObserver>::notification_weight()
			.saturating_mul(streams.into()),
	);
	// A replicated order's further leases count against the orders a block takes (one each,
	// and one alone is always taken): the worst case is still `orders` orders of one lease, as
	// long as a further lease costs less than an order and one order of the most replicas less
	// than `orders` orders.
	let replicas: u32 = <<Runtime as pallet_market::Config>::MaxReplicas as Get<u32>>::get() - 1;
	let further = |leases: u32| pallet_market::Pallet::<Runtime>::replica_weight(leases);
	let one = MarketWeights::on_initialize(1).saturating_sub(MarketWeights::on_initialize(0));
	assert!(further(1).all_lte(one), "a further replica costs more than an order");
	let replicated = MarketWeights::on_initialize(1).saturating_add(further(replicas));
	let reads =
		<Runtime as polkadot_sdk::frame_system::Config>::DbWeight::get().reads(orders.into());
	let market = MarketWeights::on_initialize(orders).max(replicated).saturating_add(reads);
	(market, streams_hook)
}

fn share(weight: Weight) -> f64 {
	weight.ref_time() as f64 / RuntimeBlockWeights::get().max_block.ref_time() as f64
}

/// The leases' hook at its worst: a full bucket of disputes and a share of the overflow, each
/// drawing a verifier.
fn draws_hook() -> Weight {
	use pallet_leases::WeightInfo as _;
	type LeaseWeights = <Runtime as pallet_leases::Config>::WeightInfo;
	let draws = max_due_per_block::<pallet_leases::DrawQueue<Runtime>>();
	LeaseWeights::on_initialize(draws).saturating_add(
		pallet_leases::Pallet::<Runtime>::draw_weight().saturating_mul(draws.into()),
	)
}

#[test]
fn the_block_hooks_take_at_most_five_percent_of_a_block_at_their_worst() {
	let (orders, streams) = max_due();
	let (market, streams) = hooks(orders, streams);
	let draws = draws_hook();
	let total = share(market.saturating_add(streams).saturating_add(draws));
	assert!(
		total <= HOOKS_GOAL,
		"the hooks take {:.2} % of a block at their worst ({:.2} % market, {:.2} % streams, \
		 {:.2} % dispute draws)",
		total * 100.0,
		share(market) * 100.0,
		share(streams) * 100.0,
		share(draws) * 100.0,
	);
}

#[test]
fn weights_and_fees_as_figures() {
	use serde_json::json;
	crate::genesis_config_presets::tests::build(DEV_RUNTIME_PRESET).execute_with(|| {
		let transfer_weight = transfer().get_dispatch_info().call_weight.ref_time() as f64;
		let mut figures = Vec::new();
		for (name, common, call) in calls() {
			let weight = call.get_dispatch_info().call_weight;
			let ratio = weight.ref_time() as f64 / transfer_weight;
			let goal = if common { 2.0 } else { 5.0 };
			figures.push(json!({
				"name": format!("weight.{name}"),
				"value": ratio,
				"goal": goal,
				"unit": "× transfer_keep_alive",
				"holds": ratio <= goal,
				"ref_time_ps": weight.ref_time(),
				"proof_size": weight.proof_size(),
			}));
		}

		// The same calls as charged in the common case, and what a provider pays for them.
		for (name, weight) in typical_charges() {
			let ratio = weight.ref_time() as f64 / transfer_weight;
			figures.push(json!({
				"name": format!("charged.{name}"),
				"value": ratio,
				"goal": 2.0,
				"unit": "× transfer_keep_alive, typical arguments, after refunds",
				"holds": ratio <= 2.0,
				"ref_time_ps": weight.ref_time(),
			}));
		}

		let (max_orders, max_streams) = max_due();
		let (market, streams) = hooks(max_orders, max_streams);
		let worst = share(market.saturating_add(streams));
		figures.push(json!({
			"name": "hooks.worst_share",
			"value": worst,
			"goal": HOOKS_GOAL,
			"unit": "share of max block weight",
			"holds": worst <= HOOKS_GOAL,
			"orders_due": max_orders,
			"streams_due": max_streams,
		}));
		let curve = |max: u32, pick: &dyn Fn(u32) -> Weight| -> Vec<(u32, f64)> {
			(0..=max).map(|n| (n, share(pick(n)))).collect()
		};
		let hooks_curve = json!({
			"market": curve(max_orders, &|n| hooks(n, 0).0),
			"streams": curve(max_streams, &|n| hooks(0, n).1),
		});

		// Fees: what a provider pays for the calls it makes on every lease, against one block
		// of a typical lease's price; a transfer against what users know.
		for name in ["market.place_bid", "leases.ack_lease", "leases.submit_result"] {
			let (_, _, call) = calls().into_iter().find(|(n, ..)| *n == name).unwrap();
			let fee = fee(&call);
			figures.push(json!({
				"name": format!("fee.{name}"),
				"value": fee as f64 / TYPICAL_PRICE_PER_BLOCK as f64,
				"goal": 1.0,
				"unit": "× one block of a typical lease (0.05 STINT)",
				"holds": fee < TYPICAL_PRICE_PER_BLOCK,
				"fee_stint": fee as f64 / STINT as f64,
			}));
		}
		for name in ["market.place_bid", "leases.submit_result"] {
			let (_, _, call) = calls().into_iter().find(|(n, ..)| *n == name).unwrap();
			let (_, charged) = typical_charges().into_iter().find(|(n, _)| *n == name).unwrap();
			let fee = typical_fee(&call, charged);
			figures.push(json!({
				"name": format!("fee.typical.{name}"),
				"value": fee as f64 / TYPICAL_PRICE_PER_BLOCK as f64,
				"goal": 1.0,
				"unit": "× one block of a typical lease (0.05 STINT), after refunds",
				"holds": fee < TYPICAL_PRICE_PER_BLOCK,
				"fee_stint": fee as f64 / STINT as f64,
			}));
		}
		let transfer_fee = fee(&transfer());
		figures.push(json!({
			"name": "fee.transfer_keep_alive",
			"value": transfer_fee as f64 / STINT as f64,
			"goal": 0.02,
			"unit": "STINT",
			"holds": transfer_fee <= 20 * MILLI_STINT,
		}));

		let document = json!({ "figures": figures, "hooks_curve": hooks_curve });
		if let Ok(path) = std::env::var("STINT_PERF_OUT") {
			std::fs::write(&path, serde_json::to_string_pretty(&document).unwrap()).unwrap();
		}
		// Every figure is finite and every call weighs something.
		for figure in document["figures"].as_array().unwrap() {
			assert!(figure["value"].as_f64().unwrap().is_finite(), "{figure}");
			assert!(figure["value"].as_f64().unwrap() > 0.0, "{figure}");
		}
	});
}

/// `call` signed by `who` as a wallet sends it: immortal, the next nonce, no tip.
fn signed(who: Keyring, call: RuntimeCall) -> crate::UncheckedExtrinsic {
	use polkadot_sdk::{frame_metadata_hash_extension, frame_system, pallet_transaction_payment};
	let nonce = frame_system::Pallet::<Runtime>::account_nonce(who.to_account_id());
	let extension: crate::TxExtension = (
		frame_system::AuthorizeCall::new(),
		frame_system::CheckNonZeroSender::new(),
		frame_system::CheckSpecVersion::new(),
		frame_system::CheckTxVersion::new(),
		frame_system::CheckGenesis::new(),
		frame_system::CheckEra::from(sp_runtime::generic::Era::Immortal),
		frame_system::CheckNonce::from(nonce),
		frame_system::CheckWeight::new(),
		pallet_transaction_payment::ChargeTransactionPayment::from(0),
		frame_metadata_hash_extension::CheckMetadataHash::new(false),
		frame_system::WeightReclaim::new(),
	);
	let payload = crate::SignedPayload::new(call.clone(), extension.clone()).unwrap();
	let signature = payload.using_encoded(|bytes| who.pair().sign(bytes));
	crate::UncheckedExtrinsic::new_signed(
		call,
		who.to_account_id().into(),
		signature.into(),
		extension,
	)
}

/// Applies `call` signed by `who` in a new block through the whole signed path (the executive,
/// the fee extension, weight reclaim) and checks it was charged for `did`, what it did, and not
/// for the worst case it declared: the fee lies between the fee of `did` and that of `did` plus
/// the extensions' own weight (which they may refund in part), below the declared fee, and the
/// block counts the weight used. Returns the fee paid and the fee declared.
fn charged_for_what_it_did(who: Keyring, call: RuntimeCall, did: Weight) -> (Balance, Balance) {
	use crate::{Executive, Header, System};
	use polkadot_sdk::{
		frame_support::dispatch::PostDispatchInfo, pallet_transaction_payment::Event as FeeEvent,
		sp_runtime::traits::Header as _,
	};
	let number = System::block_number() + 1;
	let header = Header::new(
		number,
		Default::default(),
		Default::default(),
		[1; 32].into(),
		Default::default(),
	);
	Executive::initialize_block(&header);
	let xt = signed(who, call);
	let len = xt.encoded_size() as u32;
	let declared = xt.get_dispatch_info();
	assert!(did.ref_time() < declared.call_weight.ref_time(), "it did less than its worst case");
	assert_ok!(Executive::apply_extrinsic(xt).unwrap());
	let fee_for = |weight: Weight| {
		let post = PostDispatchInfo { actual_weight: Some(weight), pays_fee: declared.pays_fee };
		TransactionPayment::compute_actual_fee(len, &declared, &post, 0)
	};
	let (least, most_after) =
		(fee_for(did), fee_for(did.saturating_add(declared.extension_weight)));
	let most = TransactionPayment::compute_fee(len, &declared, 0);
	let paid = System::events()
		.into_iter()
		.find_map(|record| match record.event {
			crate::RuntimeEvent::TransactionPayment(FeeEvent::TransactionFeePaid {
				who: payer,
				actual_fee,
				..
			}) if payer == who.to_account_id() => Some(actual_fee),
			_ => None,
		})
		.expect("the fee event");
	assert!(
		(least..=most_after).contains(&paid),
		"charged {paid}: between {least} and {most_after}, not the worst case's {most}"
	);
	assert!(most_after < most, "a refund: {most_after} of {most}");
	// The block counts the weight the call used, not the weight it declared.
	let base = RuntimeBlockWeights::get().get(declared.class).base_extrinsic;
	let counted = System::block_weight().get(declared.class).ref_time();
	let used = base.saturating_add(did);
	assert!(
		(used.ref_time()..=used.saturating_add(declared.extension_weight).ref_time())
			.contains(&counted),
		"the block counts {counted}, not the declared {}",
		declared.total_weight().ref_time()
	);
	(paid, most)
}

/// A buyer cancelling an order with one bid pays for one bid's unwinding, not for
/// `MaxBidsPerOrder` of them, and loses nothing else.
#[test]
fn a_refunded_call_charges_the_fee_of_what_it_did() {
	use super::lifecycle::{alice, bid, eve, free, gpu, order};
	use crate::System;
	use pallet_market::WeightInfo as _;
	type MarketWeights = <Runtime as pallet_market::Config>::WeightInfo;
	crate::genesis_config_presets::tests::build(DEV_RUNTIME_PRESET).execute_with(|| {
		System::set_block_number(1);
		let before = free(&alice());
		let id = order(&alice(), terms(Some(100), false, 0), 100 * STINT);
		bid(&eve(), id, STINT / 2, gpu("eve", 0));
		let call = RuntimeCall::Market(pallet_market::Call::cancel_order { order: id });
		let (paid, most) =
			charged_for_what_it_did(Keyring::Alice, call, MarketWeights::cancel_order(1));
		assert!(paid < most / 2, "the refund is worth having: {paid} of {most}");
		// Everything the order held came back but Eve's pay for her bid's time; the fee and that
		// are all the buyer is out.
		assert!(pallet_market::Orders::<Runtime>::get(id).is_none());
		let compensation = <Runtime as pallet_market::Config>::BidCompensation::get();
		assert_eq!(free(&alice()), before - paid - compensation);
	});
}

/// A bid that finds a free slot on an order is refunded the search for a bid to displace, and
/// a result for a lease of one GPU and one depositor pays for those, not for the largest lease
/// (the worst cases the calls declare).
#[test]
fn a_bid_and_a_result_are_charged_for_what_they_did() {
	use super::lifecycle::{alice, eve, gpu, lease_of, order, result, run_to, signed as report};
	use crate::{Leases, RuntimeOrigin, System};
	use pallet_leases::WeightInfo as _;
	use pallet_market::WeightInfo as _;
	use stint_primitives::ReportKind;
	type MarketWeights = <Runtime as pallet_market::Config>::WeightInfo;
	type LeaseWeights = <Runtime as pallet_leases::Config>::WeightInfo;
	crate::genesis_config_presets::tests::build(DEV_RUNTIME_PRESET).execute_with(|| {
		System::set_block_number(1);
		let id = order(&alice(), terms(Some(100), true, 0), 100 * STINT);
		let call = RuntimeCall::Market(pallet_market::Call::place_bid {
			order: id,
			price_per_block: STINT / 2,
			devices: bounded_vec![gpu("eve", 0)],
		});
		charged_for_what_it_did(Keyring::Eve, call, MarketWeights::place_bid(1, 0));
		assert!(pallet_market::Bids::<Runtime>::get(id, eve()).is_some());

		// Accepted by the market's hook, acknowledged, run for half its length.
		run_to(3);
		let lease = lease_of(id);
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(eve()), lease));
		run_to(53);
		let commitment = result(0);
		let call = RuntimeCall::Leases(pallet_leases::Call::submit_result {
			lease,
			commitment,
			signature: report(lease, ReportKind::Final, &commitment),
		});
		charged_for_what_it_did(Keyring::Bob, call, LeaseWeights::submit_result(1, 1));
		assert!(pallet_leases::Leases::<Runtime>::get(lease).unwrap().result.is_some());
	});
}
