//! Seeded random walks over the whole market on the real runtime: buyers and providers send
//! every kind of call in random order with random arguments (most of them refused), blocks pass
//! at random, and after every step every pallet's `try_state` holds, each provider's locked
//! collateral is what its bids and leases claim, and not a unit is created or lost but what
//! slashes burn, and no block's hooks and calls weigh more than the block may. Six seeds walk
//! about 5,000 blocks in all. A failing seed is printed: rerun it with `STINT_PROPERTY_SEED`.

use super::lifecycle::{alice, bob, eve, ferdie, gpu, result, spec, terms, AccountId, Books};
use crate::{Leases, Market, Runtime, RuntimeCall, RuntimeOrigin, Streams, System, STINT};
use codec::Encode;
use pallet_leases::LeaseStatus;
use polkadot_sdk::frame_support::{
	dispatch::{DispatchClass, GetDispatchInfo},
	traits::Hooks,
	weights::Weight,
};
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring as Keyring,
	sp_runtime::traits::Dispatchable,
};
use stint_primitives::{Report, ReportKind, ResultCommitment};

/// A small deterministic generator (SplitMix64): the same seed, the same walk.
struct Rng(u64);

impl Rng {
	fn next(&mut self) -> u64 {
		self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
		let mut z = self.0;
		z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
		z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
		z ^ (z >> 31)
	}

	fn below(&mut self, n: u64) -> u64 {
		self.next() % n.max(1)
	}

	fn pick<T: Clone>(&mut self, items: &[T]) -> T {
		items[self.below(items.len() as u64) as usize].clone()
	}
}

/// What was burnt so far, from the events: slashes' handler part, and the deposits forfeited
/// by bids a worker key placed.
fn burnt() -> crate::Balance {
	use pallet_market::Event as M;
	System::events()
		.into_iter()
		.filter_map(|record| match record.event {
			crate::RuntimeEvent::Bonds(pallet_bonds::Event::Slashed { to_handler, .. }) => {
				Some(to_handler)
			}
			crate::RuntimeEvent::Market(
				M::BidRetracted { forfeited, burnt: true, .. }
				| M::BidDropped { forfeited, burnt: true, .. },
			) => Some(forfeited),
			_ => None,
		})
		.sum()
}

/// The worker key that signs for `provider`'s leases in the dev preset.
fn worker_of(provider: &AccountId) -> Keyring {
	if *provider == eve() {
		Keyring::EveStash
	} else {
		Keyring::FerdieStash
	}
}

/// One random call, dispatched as a transaction would be: a refused call changes nothing.
fn step(rng: &mut Rng) -> RuntimeCall {
	let providers = [eve(), ferdie()];
	let orders = pallet_market::NextOrderId::<Runtime>::get();
	let leases = pallet_leases::NextLeaseId::<Runtime>::get();
	// Mostly the latest few (the live ones), now and then any id, or one that does not exist.
	let recent = |rng: &mut Rng, next: u64| match rng.below(5) {
		0 => rng.below(next + 1),
		_ => next.saturating_sub(1 + rng.below(3)),
	};
	let order = recent(rng, orders);
	let lease = recent(rng, leases);
	let price = 1 + rng.below(STINT as u64) as crate::Balance;
	use pallet_leases::Call as L;
	use pallet_market::Call as M;
	use pallet_streams::Call as S;
	// One call in ten is about verdicts, notices, checkpoints and replicas; the rest drive the
	// market.
	let kind = if rng.below(10) == 0 { 16 + rng.below(9) } else { rng.below(16) };
	match kind {
		0 | 1 => {
			let duration = if rng.below(3) == 0 { None } else { Some(2 + rng.below(40) as u32) };
			let mut terms = terms(duration, rng.below(2) == 0, rng.below(3) as u32);
			terms.bid_window = 2 + rng.below(5) as u32;
			terms.deterministic = rng.below(2) == 0;
			let mut deposit = (10 + rng.below(60) as crate::Balance) * STINT;
			// Now and then two replicas: mostly a valid replicated order (deterministic, fixed,
			// auto-accept, escrow for both), now and then not.
			if rng.below(4) == 0 {
				terms.replicas = 2;
				if let Some(blocks) = duration.filter(|_| rng.below(5) != 0) {
					(terms.deterministic, terms.auto_accept) = (true, true);
					deposit = 2 * crate::Balance::from(blocks) * STINT;
				}
			}
			RuntimeCall::Market(M::create_order { spec: spec(), terms, deposit })
		}
		2..=5 => {
			let provider = rng.pick(&providers);
			let name = if provider == eve() { "eve" } else { "ferdie" };
			let devices = polkadot_sdk::sp_runtime::bounded_vec![gpu(name, rng.below(2) as u8)];
			// Half the time an open replicated order: it needs both providers' bids.
			let replicated = pallet_market::OpenOrders::<Runtime>::iter_keys().find(|id| {
				pallet_market::Orders::<Runtime>::get(id).is_some_and(|o| o.terms.replicas > 1)
			});
			let order = replicated.filter(|_| rng.below(2) == 0).unwrap_or(order);
			RuntimeCall::Market(M::place_bid { order, price_per_block: price, devices })
		}
		6 => {
			// A retraction, or the buyer's rejection of a bid, or anyone's drop of a dead one.
			let provider = pallet_market::Bids::<Runtime>::iter_prefix(order)
				.next()
				.map_or(eve(), |(provider, _)| provider);
			match rng.below(3) {
				0 => RuntimeCall::Market(M::retract_bid { order }),
				1 => RuntimeCall::Market(M::reject_bid { order, provider }),
				_ => RuntimeCall::Market(M::drop_dead_bid { order, provider }),
			}
		}
		// The buyer's cancel, or anyone's close of an order the hook has not reached.
		7 if rng.below(3) == 0 => RuntimeCall::Market(M::close_order { order }),
		7 => RuntimeCall::Market(M::cancel_order { order }),
		8 => {
			let bid = pallet_market::Bids::<Runtime>::iter_prefix(order).next();
			match bid {
				Some((provider, bid)) => RuntimeCall::Market(M::accept_bid {
					order,
					provider,
					price_per_block: bid.price_per_block,
					devices: bid.devices,
				}),
				None => RuntimeCall::Market(M::reap_order { order }),
			}
		}
		9 | 10 => RuntimeCall::Leases(L::ack_lease { lease }),
		11 | 12 => {
			let c = result(rng.below(2) as i32);
			let signer = pallet_leases::Leases::<Runtime>::get(lease)
				.map(|l| worker_of(&l.provider))
				.unwrap_or(Keyring::EveStash);
			let report = Report::new(Leases::genesis_hash(), lease, ReportKind::Final, c);
			let signature = signer.pair().sign(&report.signing_bytes());
			RuntimeCall::Leases(L::submit_result { lease, commitment: c, signature })
		}
		13 => RuntimeCall::Leases(L::close_lease { lease }),
		14 => RuntimeCall::Leases(L::terminate { lease }),
		15 if rng.below(2) == 0 => {
			let stream = pallet_leases::Leases::<Runtime>::get(lease).map_or(0, |l| l.stream);
			let amount = rng.below(200) as crate::Balance * STINT;
			RuntimeCall::Streams(S::top_up { stream, amount })
		}
		16..=18 | 21 => {
			// Mostly a lease whose verdict is pending, now and then any.
			let pending = pallet_leases::PendingVerdicts::<Runtime>::iter_keys().next();
			let lease = match pending {
				Some(pending) if rng.below(4) != 0 => pending,
				_ => lease,
			};
			match kind {
				16 => RuntimeCall::Leases(L::accept_result { lease }),
				17 => RuntimeCall::Leases(L::object_to_result { lease }),
				21 => RuntimeCall::Leases(L::dispute { lease }),
				_ => RuntimeCall::Leases(L::confirm_result { lease }),
			}
		}
		19 => RuntimeCall::Leases(L::give_notice { lease }),
		22..=24 => {
			// Mostly a replica in the state the call needs (running to commit, sealed to
			// reveal), now and then any lease; its result mostly the one most replicas seal.
			let wanted = |l: &pallet_leases::LeaseOf<Runtime>| match kind {
				22 => l.status == LeaseStatus::Running,
				23 => l.status == LeaseStatus::Sealed,
				_ => true,
			};
			let replica = pallet_leases::Leases::<Runtime>::iter()
				.find(|(_, l)| l.replicas > 1 && wanted(l))
				.map(|(id, _)| id)
				.filter(|_| rng.below(4) != 0);
			let lease = replica.unwrap_or(lease);
			let root = if rng.below(4) == 0 { [2; 32] } else { [1; 32] };
			let c = ResultCommitment { output_root: root, ..result(0) };
			let salt = [lease as u8; 32];
			let Some(l) = pallet_leases::Leases::<Runtime>::get(lease) else {
				return RuntimeCall::Leases(L::decide_replicas { order });
			};
			match kind {
				22 => {
					let seal = stint_primitives::seal(&c, &l.provider.encode(), &salt);
					RuntimeCall::Leases(L::commit_result { lease, seal })
				}
				23 => {
					let report = Report::new(Leases::genesis_hash(), lease, ReportKind::Final, c);
					let signature = worker_of(&l.provider).pair().sign(&report.signing_bytes());
					RuntimeCall::Leases(L::reveal_result { lease, commitment: c, salt, signature })
				}
				_ => RuntimeCall::Leases(L::decide_replicas { order: l.order }),
			}
		}
		_ => RuntimeCall::Leases(L::report_no_show { lease }),
	}
}

/// Who signs a call: the party it is meant for most of the time, anyone now and then.
fn signer_for(call: &RuntimeCall, rng: &mut Rng) -> AccountId {
	let everyone = [alice(), bob(), eve(), ferdie()];
	if rng.below(10) == 0 {
		return rng.pick(&everyone);
	}
	let buyers = [alice(), bob()];
	let providers = [eve(), ferdie()];
	match call {
		RuntimeCall::Market(pallet_market::Call::create_order { .. }) => rng.pick(&buyers),
		RuntimeCall::Market(pallet_market::Call::place_bid { devices, .. }) => {
			let provider = if devices.first() == Some(&gpu("eve", 0))
				|| devices.first() == Some(&gpu("eve", 1))
			{
				eve()
			} else {
				ferdie()
			};
			// A quarter of the bids are signed by the provider's worker key.
			match rng.below(4) {
				0 => worker_of(&provider).to_account_id(),
				_ => provider,
			}
		}
		RuntimeCall::Market(pallet_market::Call::retract_bid { .. }) => {
			let provider = rng.pick(&providers);
			match rng.below(4) {
				0 => worker_of(&provider).to_account_id(),
				_ => provider,
			}
		}
		RuntimeCall::Market(pallet_market::Call::cancel_order { order })
		| RuntimeCall::Market(pallet_market::Call::reject_bid { order, .. })
		| RuntimeCall::Market(pallet_market::Call::accept_bid { order, .. }) => {
			pallet_market::Orders::<Runtime>::get(order).map_or(alice(), |o| o.buyer)
		}
		RuntimeCall::Leases(pallet_leases::Call::ack_lease { lease })
		| RuntimeCall::Leases(pallet_leases::Call::commit_result { lease, .. })
		| RuntimeCall::Leases(pallet_leases::Call::give_notice { lease })
		| RuntimeCall::Leases(pallet_leases::Call::terminate { lease }) => {
			pallet_leases::Leases::<Runtime>::get(lease).map_or(eve(), |l| l.provider)
		}
		RuntimeCall::Leases(pallet_leases::Call::close_lease { lease })
		| RuntimeCall::Leases(pallet_leases::Call::accept_result { lease })
		| RuntimeCall::Leases(pallet_leases::Call::object_to_result { lease })
		| RuntimeCall::Leases(pallet_leases::Call::dispute { lease }) => {
			pallet_leases::Leases::<Runtime>::get(lease).map_or(alice(), |l| l.buyer)
		}
		_ => rng.pick(&everyone),
	}
}

/// What one block consumed: its hooks' weight and its calls' (as a block author counts them),
/// checked against the block's limits when the block closes.
struct BlockUse {
	hooks: Weight,
	calls: Weight,
}

impl BlockUse {
	/// Closes this block (checking it), runs the hooks of the next `blocks` blocks and checks
	/// each of them too.
	fn advance(&mut self, seed: u64, blocks: u32) {
		for _ in 0..blocks {
			self.check(seed);
			let next = System::block_number() + 1;
			System::set_block_number(next);
			self.hooks = Market::on_initialize(next)
				.saturating_add(Streams::on_initialize(next))
				.saturating_add(Leases::on_initialize(next));
			self.calls = Weight::zero();
		}
	}

	fn check(&self, seed: u64) {
		let limits = <Runtime as polkadot_sdk::frame_system::Config>::BlockWeights::get();
		let normal = limits.get(DispatchClass::Normal).max_total.unwrap_or(limits.max_block);
		let block = System::block_number();
		assert!(
			self.calls.all_lte(normal),
			"seed {seed}: the calls of block {block} weigh {:?}, over {normal:?}",
			self.calls
		);
		assert!(
			self.hooks.saturating_add(self.calls).all_lte(limits.max_block),
			"seed {seed}: block {block} weighs {:?} + {:?}, over {:?}",
			self.hooks,
			self.calls,
			limits.max_block
		);
	}
}

fn walk(seed: u64, steps: u32) {
	crate::genesis_config_presets::tests::build(DEV_RUNTIME_PRESET).execute_with(|| {
		let books = Books::open();
		let mut rng = Rng(seed);
		let (mut accepted, mut refused) = (0u32, 0u32);
		let mut used = BlockUse { hooks: Weight::zero(), calls: Weight::zero() };
		for n in 0..steps {
			if rng.below(4) == 0 {
				used.advance(seed, 1 + rng.below(3) as u32);
			} else {
				let call = step(&mut rng);
				let who = signer_for(&call, &mut rng);
				// A refused call still fills its block: its author counted its weight.
				used.calls.saturating_accrue(call.get_dispatch_info().call_weight);
				match call.dispatch(RuntimeOrigin::signed(who)) {
					Ok(_) => accepted += 1,
					Err(_) => refused += 1,
				}
			}
			let check =
				std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| books.check(burnt())));
			if check.is_err() {
				panic!("seed {seed}: the books broke at step {n}");
			}
		}
		used.check(seed);
		let leases = pallet_leases::NextLeaseId::<Runtime>::get();
		let blocks = System::block_number();
		let groups = pallet_leases::ReplicaGroups::<Runtime>::iter().count();
		let sealed = pallet_leases::ReplicaGroups::<Runtime>::iter()
			.flat_map(|(_, group)| group.replicas.into_iter())
			.filter(|replica| replica.seal.is_some())
			.count();
		println!(
			"seed {seed}: {accepted} calls went through, {refused} refused, {leases} leases, \
			 {blocks} blocks, {groups} replica groups, {sealed} replicas sealed"
		);
		// A walk whose calls are all refused proves little.
		assert!(accepted > steps / 10, "seed {seed}: {accepted} calls went through, {refused} not");
	});
}

#[test]
fn random_walks_keep_every_invariant_and_every_unit() {
	let seeds: Vec<u64> = match std::env::var("STINT_PROPERTY_SEED") {
		Ok(seed) => vec![seed.parse().expect("a u64 seed")],
		Err(_) => (1..=6).collect(),
	};
	for seed in seeds {
		walk(seed, 2_000);
	}
}
