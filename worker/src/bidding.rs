//! Which open orders to bid on, and at what price: [`choose`] applies the configuration's policy
//! to the orders the runtime says this worker can serve (`MarketApi::servable_orders`). It is
//! pure; the runner sends what it returns, one order at a time, so one order's refusal never
//! stops the others.

use stint_client::{BidCosts, BuyerStanding};
use stint_primitives::{is_job_env_name, Balance, DeviceId};

use crate::{
	config::BiddingConfig,
	executor::{private_registry, registry_of},
};

/// An order the runtime says this worker can serve, with what the policy reads of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
	pub order: u64,
	/// The devices the runtime would take, and each one's model.
	pub devices: Vec<(DeviceId, String)>,
	pub max_price_per_block: Balance,
	pub duration: Option<u32>,
	pub image: Vec<u8>,
	pub max_output_bytes: u64,
	/// The names of the environment variables the job sets.
	pub env: Vec<Vec<u8>>,
	/// What the order's buyer's verdicts were (`Leases.BuyerRecords`).
	pub buyer: BuyerStanding,
	/// The verdict window the order asks (zero: the chain's): the collateral stays locked that
	/// long after the result.
	pub verdict_window: u32,
	/// Blocks a bid placed now may stand before it wins or is released: to the close of the
	/// bid window and, for an order its buyer accepts by hand, the time the buyer has to
	/// accept after it.
	pub stands_for: u32,
}

/// A bid of this worker's standing now that it may withdraw for free to bid elsewhere: its
/// window is not in its last quarter (where a retraction forfeits the deposit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Displaceable {
	pub order: u64,
	pub devices: Vec<DeviceId>,
	/// As [`Candidate::stands_for`], from now.
	pub stands_for: u32,
}

/// What [`choose`] decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Choice {
	/// Bids to place, in order.
	pub bids: Vec<Bid>,
	/// Orders whose standing bids to withdraw first: each freed its slot and devices for an
	/// order that closes much sooner.
	pub displaced: Vec<u64>,
	/// Why the other orders get no bid.
	pub skipped: Vec<(u64, Skip)>,
}

/// Where the provider stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
	/// Takes new leases (not paused, not exiting).
	pub active: bool,
	pub live_leases: u32,
	pub standing_bids: u32,
	/// The provider's bond not locked yet: each bid locks its collateral and its deposit.
	pub free_bond: Balance,
	pub costs: BidCosts,
	/// Free space where outputs are written.
	pub scratch_free_bytes: u64,
}

/// Devices already promised: in a live lease or a standing bid. A device is offered to one
/// order at a time, so that every bid that wins can be honoured (a bid whose devices went to
/// another lease fails at acceptance, and the buyer's order with it).
pub type Busy = std::collections::HashSet<DeviceId>;

/// A bid to place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bid {
	pub order: u64,
	pub price_per_block: Balance,
	pub devices: Vec<DeviceId>,
	/// What the order may write: disk this bid holds while it stands.
	pub max_output_bytes: u64,
}

/// Why an order gets no bid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
	Disabled,
	NotActive,
	Full,
	TooLong,
	OpenEnded,
	Registry(String),
	/// The image's registry is loopback or on a private network: never, whatever the list.
	PrivateRegistry(String),
	OutputTooLarge,
	DeviceNotSeen,
	/// The job sets an environment variable the worker reserves (the loader's, the GPUs', the
	/// worker's own): never run, whatever it pays.
	ReservedEnv(String),
	BelowOurPrice {
		ours: Balance,
	},
	/// The free bond does not cover the bid's collateral and deposit.
	BondShort,
	/// A device offered is already in a live lease or another standing bid.
	DeviceBusy,
	/// The executor does not answer (the Docker engine is down): a lease won now could not be
	/// acknowledged, and a provider that does not show is slashed.
	ExecutorDown,
	/// The runtime was upgraded and its calls no longer match this worker's: it takes no new
	/// lease, so it keeps no bid standing either.
	RuntimeIncompatible,
	/// The order asks a longer verdict window than the policy accepts.
	VerdictWindowTooLong,
	/// A bid on it could stand longer than `max_bid_blocks` before it wins or is released (a
	/// long bid window, or a buyer that accepts by hand): the devices would wait on it and bid
	/// nowhere else.
	StandsTooLong {
		blocks: u32,
	},
	/// The buyer's objections slashed providers more often than the policy accepts.
	BuyerObjects {
		slashing: u32,
		verdicts: u32,
	},
}

/// Whether the policy refuses to serve `buyer`: more slashing objections than
/// `buyer_objection_grace`, and more than `buyer_objection_percent` of its verdicts. An
/// objection to an early end burns the provider's collateral at stake and earns the buyer
/// nothing, so only spite (or a provider that really left early) explains many of them.
pub fn refuses_buyer(policy: &BiddingConfig, buyer: &BuyerStanding) -> bool {
	let slashing = u64::from(buyer.slashing_objections);
	slashing > u64::from(policy.buyer_objection_grace)
		&& slashing * 100 > u64::from(policy.buyer_objection_percent) * u64::from(buyer.verdicts)
}

/// `candidate` with each busy device it offers swapped for a free device of this machine of
/// the same model (the runtime offers the first devices that fit, not knowing which ones other
/// bids hold; the chain checks the swap where the bid lands). Unchanged when none is free.
pub fn with_free_devices(
	mut candidate: Candidate,
	mine: &[(DeviceId, String)],
	busy: &Busy,
) -> Candidate {
	let mut taken: Busy = busy.clone();
	taken.extend(candidate.devices.iter().map(|(device, _)| *device));
	for slot in candidate.devices.iter_mut() {
		if !busy.contains(&slot.0) {
			continue;
		}
		if let Some((free, model)) =
			mine.iter().find(|(device, model)| *model == slot.1 && !taken.contains(device))
		{
			taken.insert(*free);
			*slot = (*free, model.clone());
		}
	}
	candidate
}

/// Our price for `devices`: each GPU at its model's price, else the default.
pub fn price_of(policy: &BiddingConfig, devices: &[(DeviceId, String)]) -> Balance {
	devices
		.iter()
		.map(|(_, model)| policy.prices.get(model).copied().unwrap_or(policy.price))
		.fold(0, Balance::saturating_add)
}

/// Why the policy would not serve `candidate` at all, whatever the provider's standing: too
/// long, open-ended, from a registry not allowed, more output than the scratch space holds, or
/// on a device this machine does not see.
fn misfit(
	policy: &BiddingConfig,
	candidate: &Candidate,
	scratch_free_bytes: u64,
	sees: impl Fn(&DeviceId) -> bool,
) -> Option<Skip> {
	let registry = std::str::from_utf8(&candidate.image)
		.ok()
		.and_then(|image| image.rsplit_once('@'))
		.map(|(name, _)| registry_of(name).to_string())
		.unwrap_or_default();
	if let Some(key) = candidate.env.iter().find(|key| !is_job_env_name(key)) {
		Some(Skip::ReservedEnv(String::from_utf8_lossy(key).into_owned()))
	} else if candidate.duration.is_some_and(|d| d > policy.max_duration) {
		Some(Skip::TooLong)
	} else if candidate.duration.is_none() && !policy.open_ended {
		Some(Skip::OpenEnded)
	} else if candidate.verdict_window > policy.max_verdict_window {
		Some(Skip::VerdictWindowTooLong)
	} else if candidate.stands_for > policy.max_bid_blocks {
		Some(Skip::StandsTooLong { blocks: candidate.stands_for })
	} else if private_registry(&registry) {
		Some(Skip::PrivateRegistry(registry))
	} else if !policy.registries.is_empty() && !policy.registries.contains(&registry) {
		Some(Skip::Registry(registry))
	} else if candidate.max_output_bytes > scratch_free_bytes {
		Some(Skip::OutputTooLarge)
	} else if !candidate.devices.iter().all(|(device, _)| sees(device)) {
		Some(Skip::DeviceNotSeen)
	} else {
		None
	}
}

/// Why a bid standing on `candidate` at `bid_price` per block no longer fits the policy (it
/// changed, the machine lost a device, the scratch space filled up), if it does not: such a
/// bid is retracted before it can win a lease the worker would not take. Bond and deposit are
/// not asked again: the bid already holds its own.
pub fn stale(
	policy: &BiddingConfig,
	candidate: &Candidate,
	bid_price: Balance,
	scratch_free_bytes: u64,
	sees: impl Fn(&DeviceId) -> bool,
) -> Option<Skip> {
	let ours = price_of(policy, &candidate.devices);
	if !policy.enabled {
		Some(Skip::Disabled)
	} else if let Some(misfit) = misfit(policy, candidate, scratch_free_bytes, sees) {
		Some(misfit)
	} else if ours > bid_price {
		Some(Skip::BelowOurPrice { ours })
	} else {
		None
	}
}

/// A standing bid stands in the way of a candidate only if the candidate closes this many
/// times sooner: displacing it must pay (a retraction is a transaction), and two orders that
/// close about together are taken in turn.
pub const DISPLACE_FACTOR: u32 = 4;

/// The bids to place on `candidates`, those that close soonest first (a bid on an order that
/// closes soon holds its devices for less time, and wins or is released sooner), and why the
/// others get none.
///
/// A standing bid is not a live lease: when a candidate has no slot or its devices stand in a
/// bid on an order that closes at least [`DISPLACE_FACTOR`] times later, and that bid can still
/// be withdrawn for free (`displaceable`), it is withdrawn and the candidate takes its place.
/// So an order with a long bid window, or a buyer that accepts by hand, cannot hold a worker's
/// devices against the orders behind it; `max_bid_blocks` caps how long any bid may stand.
pub fn choose(
	policy: &BiddingConfig,
	standing: &Standing,
	candidates: &[Candidate],
	sees: impl Fn(&DeviceId) -> bool,
	busy: &Busy,
	displaceable: &[Displaceable],
) -> Choice {
	let mut candidates: Vec<&Candidate> = candidates.iter().collect();
	candidates.sort_by_key(|candidate| candidate.stands_for);
	// The latest-closing first: the first to give way.
	let mut displaceable: Vec<&Displaceable> = displaceable.iter().collect();
	displaceable.sort_by_key(|held| std::cmp::Reverse(held.stands_for));
	let mut displaced: Vec<u64> = Vec::new();
	let mut busy = busy.clone();
	let mut bids = Vec::new();
	let mut skipped = Vec::new();
	let mut slots = policy.max_leases.saturating_sub(standing.live_leases + standing.standing_bids);
	let mut bond = standing.free_bond;
	// Each bid placed holds the disk its order may write: two orders never count on the same
	// free bytes.
	let mut scratch = standing.scratch_free_bytes;
	for candidate in candidates {
		let skip = |why| (candidate.order, why);
		// Locked in the bond while the bid stands: its collateral and its deposit.
		let locks = standing
			.costs
			.collateral_per_gpu
			.saturating_mul(candidate.devices.len() as Balance)
			.saturating_add(standing.costs.bid_deposit);
		let ours = price_of(policy, &candidate.devices);
		let uses = |held: &Displaceable| {
			candidate
				.devices
				.iter()
				.all(|(device, _)| !busy.contains(device) || held.devices.contains(device))
		};
		// A standing bid that gives way to this candidate, if it needs one.
		let gives_way = (slots == 0
			|| candidate.devices.iter().any(|(device, _)| busy.contains(device)))
		.then(|| {
			displaceable.iter().position(|held| {
				held.stands_for >= candidate.stands_for.saturating_mul(DISPLACE_FACTOR)
					&& !displaced.contains(&held.order)
					&& uses(held)
			})
		})
		.flatten();
		let why = if !policy.enabled {
			Some(Skip::Disabled)
		} else if !standing.active {
			Some(Skip::NotActive)
		} else if slots == 0 && gives_way.is_none() {
			Some(Skip::Full)
		} else if let Some(misfit) = misfit(policy, candidate, scratch, &sees) {
			Some(misfit)
		} else if refuses_buyer(policy, &candidate.buyer) {
			Some(Skip::BuyerObjects {
				slashing: candidate.buyer.slashing_objections,
				verdicts: candidate.buyer.verdicts,
			})
		} else if gives_way.is_none()
			&& candidate.devices.iter().any(|(device, _)| busy.contains(device))
		{
			Some(Skip::DeviceBusy)
		} else if ours > candidate.max_price_per_block {
			Some(Skip::BelowOurPrice { ours })
		} else if locks > bond {
			Some(Skip::BondShort)
		} else {
			None
		};
		match why {
			Some(why) => skipped.push(skip(why)),
			None => {
				if let Some(index) = gives_way {
					let held = displaceable.remove(index);
					displaced.push(held.order);
					for device in &held.devices {
						busy.remove(device);
					}
					// Its slot is this candidate's now (its deposit and collateral come back
					// only once the retraction lands: not counted here).
					slots += 1;
				}
				slots -= 1;
				busy.extend(candidate.devices.iter().map(|(device, _)| *device));
				bond -= locks;
				scratch -= candidate.max_output_bytes;
				bids.push(Bid {
					order: candidate.order,
					price_per_block: ours,
					devices: candidate.devices.iter().map(|(device, _)| *device).collect(),
					max_output_bytes: candidate.max_output_bytes,
				});
			}
		}
	}
	Choice { bids, displaced, skipped }
}

#[cfg(test)]
mod tests {
	use super::*;
	use stint_primitives::{MILLI_STINT, STINT};

	/// [`choose`] with no standing bid that may give way: the bids and the skipped orders.
	fn pick(
		policy: &BiddingConfig,
		standing: &Standing,
		candidates: &[Candidate],
		sees: impl Fn(&DeviceId) -> bool,
		busy: &Busy,
	) -> (Vec<Bid>, Vec<(u64, Skip)>) {
		let choice = choose(policy, standing, candidates, sees, busy, &[]);
		assert!(choice.displaced.is_empty());
		(choice.bids, choice.skipped)
	}

	fn policy() -> BiddingConfig {
		let mut policy = BiddingConfig {
			price: 10 * MILLI_STINT,
			max_leases: 3,
			max_duration: 1000,
			..BiddingConfig::default()
		};
		policy.prices.insert("NVIDIA H200".into(), 20 * MILLI_STINT);
		policy
	}

	fn standing() -> Standing {
		Standing {
			active: true,
			live_leases: 0,
			standing_bids: 0,
			free_bond: 1000 * STINT,
			costs: BidCosts {
				bid_deposit: STINT,
				collateral_per_gpu: 10 * STINT,
				accept_period: 600,
				worker_era: 600,
			},
			scratch_free_bytes: 1 << 30,
		}
	}

	fn order(id: u64, model: &str) -> Candidate {
		Candidate {
			order: id,
			devices: vec![([id as u8; 32], model.into())],
			max_price_per_block: STINT,
			duration: Some(100),
			image: format!("ghcr.io/acme/x@sha256:{}", "a".repeat(64)).into_bytes(),
			max_output_bytes: 1 << 20,
			env: vec![b"EPOCHS".to_vec()],
			buyer: BuyerStanding::default(),
			verdict_window: 0,
			stands_for: 10,
		}
	}

	#[test]
	fn an_order_that_would_lock_the_collateral_too_long_gets_no_bid() {
		let long = Candidate { verdict_window: 14_401, ..order(1, "NVIDIA H100") };
		let (bids, skipped) = pick(&policy(), &standing(), &[long], |_| true, &Busy::new());
		assert!(bids.is_empty());
		assert_eq!(skipped, vec![(1, Skip::VerdictWindowTooLong)]);
	}

	#[test]
	fn a_buyer_whose_objections_keep_slashing_providers_gets_no_bid() {
		let policy = policy();
		let with = |verdicts, slashing_objections| Candidate {
			buyer: BuyerStanding {
				verdicts,
				objections: slashing_objections,
				slashing_objections,
				..Default::default()
			},
			..order(1, "NVIDIA H100")
		};
		let skipped = |candidate: Candidate| {
			pick(&policy, &standing(), &[candidate], |_| true, &Busy::new()).1
		};
		// A few are allowed (providers do leave early); beyond them, a fifth of its verdicts.
		assert!(skipped(with(2, 2)).is_empty());
		assert!(skipped(with(100, 20)).is_empty());
		assert_eq!(
			skipped(with(10, 3)),
			vec![(1, Skip::BuyerObjects { slashing: 3, verdicts: 10 })]
		);
	}

	#[test]
	fn each_gpu_is_priced_by_its_model() {
		let (bids, skipped) = pick(
			&policy(),
			&standing(),
			&[order(1, "NVIDIA H200"), order(2, "other")],
			|_| true,
			&Busy::new(),
		);
		assert!(skipped.is_empty());
		assert_eq!(bids[0].price_per_block, 20 * MILLI_STINT);
		assert_eq!(bids[1].price_per_block, 10 * MILLI_STINT);
		assert_eq!(bids[1].devices, vec![[2; 32]]);
	}

	#[test]
	fn the_policy_says_why_an_order_gets_no_bid() {
		let mut cheap = order(1, "x");
		cheap.max_price_per_block = MILLI_STINT;
		let mut long = order(2, "x");
		long.duration = Some(5000);
		let mut open = order(3, "x");
		open.duration = None;
		let mut big = order(4, "x");
		big.max_output_bytes = 2 << 30;
		let unseen = order(5, "x");
		let mut preloads = order(7, "x");
		preloads.env.push(b"LD_PRELOAD".to_vec());
		let mut policy = policy();
		policy.open_ended = false;
		policy.max_leases = 10;
		let (bids, skipped) = pick(
			&policy,
			&standing(),
			&[cheap, long, open, big, unseen, preloads],
			|d| d != &[5; 32],
			&Busy::new(),
		);
		assert!(bids.is_empty());
		let reasons: Vec<Skip> = skipped.into_iter().map(|(_, why)| why).collect();
		assert_eq!(
			reasons,
			vec![
				Skip::BelowOurPrice { ours: 10 * MILLI_STINT },
				Skip::TooLong,
				Skip::OpenEnded,
				Skip::OutputTooLarge,
				Skip::DeviceNotSeen,
				Skip::ReservedEnv("LD_PRELOAD".into()),
			]
		);
		policy.registries = vec!["docker.io".into()];
		let (_, skipped) = pick(&policy, &standing(), &[order(6, "x")], |_| true, &Busy::new());
		assert_eq!(skipped, vec![(6, Skip::Registry("ghcr.io".into()))]);
		// A loopback or private registry never, even listed (or with any registry allowed).
		let image = |registry: &str| format!("{registry}/x@sha256:{}", "a".repeat(64));
		for registry in ["localhost:5000", "127.0.0.1:5000", "10.0.0.7"] {
			policy.registries = vec![registry.into()];
			let inside = Candidate { image: image(registry).into_bytes(), ..order(7, "x") };
			let (_, skipped) = pick(&policy, &standing(), &[inside], |_| true, &Busy::new());
			assert_eq!(skipped, vec![(7, Skip::PrivateRegistry(registry.into()))]);
		}
		policy.registries = vec![];
		let inside = Candidate { image: image("[::1]:5000").into_bytes(), ..order(8, "x") };
		let (_, skipped) = pick(&policy, &standing(), &[inside], |_| true, &Busy::new());
		assert_eq!(skipped, vec![(8, Skip::PrivateRegistry("[::1]:5000".into()))]);
	}

	#[test]
	fn two_bids_never_count_on_the_same_free_disk() {
		let mut first = order(1, "x");
		first.max_output_bytes = 600 << 20;
		let mut second = order(2, "x");
		second.max_output_bytes = 600 << 20;
		let mut third = order(3, "x");
		third.max_output_bytes = 100 << 20;
		let (bids, skipped) =
			pick(&policy(), &standing(), &[first, second, third], |_| true, &Busy::new());
		assert_eq!(bids.iter().map(|b| b.order).collect::<Vec<_>>(), [1, 3]);
		assert_eq!(skipped, vec![(2, Skip::OutputTooLarge)]);
	}

	#[test]
	fn a_standing_bid_that_no_longer_fits_is_stale() {
		let policy = policy();
		let standing_on = order(1, "NVIDIA H200");
		let bid_price = 20 * MILLI_STINT;
		assert_eq!(stale(&policy, &standing_on, bid_price, 1 << 30, |_| true), None);
		// The machine lost the device, the scratch space filled up.
		assert_eq!(
			stale(&policy, &standing_on, bid_price, 1 << 30, |_| false),
			Some(Skip::DeviceNotSeen)
		);
		assert_eq!(
			stale(&policy, &standing_on, bid_price, 1 << 10, |_| true),
			Some(Skip::OutputTooLarge)
		);
		// The operator changed the policy: a higher price, shorter leases, no bidding at all.
		let mut dearer = policy.clone();
		dearer.prices.insert("NVIDIA H200".into(), 30 * MILLI_STINT);
		assert_eq!(
			stale(&dearer, &standing_on, bid_price, 1 << 30, |_| true),
			Some(Skip::BelowOurPrice { ours: 30 * MILLI_STINT })
		);
		let mut shorter = policy.clone();
		shorter.max_duration = 50;
		assert_eq!(
			stale(&shorter, &standing_on, bid_price, 1 << 30, |_| true),
			Some(Skip::TooLong)
		);
		let mut off = policy.clone();
		off.enabled = false;
		assert_eq!(stale(&off, &standing_on, bid_price, 1 << 30, |_| true), Some(Skip::Disabled));
		// A cheaper price now is no reason to drop a bid that may win.
		let mut cheaper = policy;
		cheaper.prices.insert("NVIDIA H200".into(), 5 * MILLI_STINT);
		assert_eq!(stale(&cheaper, &standing_on, bid_price, 1 << 30, |_| true), None);
	}

	#[test]
	fn a_busy_device_is_swapped_for_a_free_one_of_the_same_model() {
		let mine = vec![
			([1; 32], "H100".to_string()),
			([2; 32], "H100".to_string()),
			([3; 32], "A100".to_string()),
		];
		let mut wants = order(9, "H100");
		wants.devices = vec![([1; 32], "H100".into())];
		let busy: Busy = [[1u8; 32]].into();
		assert_eq!(
			with_free_devices(wants.clone(), &mine, &busy).devices,
			vec![([2; 32], "H100".into())]
		);
		let all: Busy = [[1u8; 32], [2; 32]].into();
		assert_eq!(with_free_devices(wants.clone(), &mine, &all).devices, wants.devices);
	}

	#[test]
	fn a_device_is_offered_to_one_order_at_a_time() {
		let mut same = order(2, "x");
		same.devices = order(1, "x").devices;
		let leased: Busy = [[3u8; 32]].into();
		let orders = [order(1, "x"), same, order(3, "x")];
		let (bids, skipped) = pick(&policy(), &standing(), &orders, |_| true, &leased);
		assert_eq!(bids.iter().map(|b| b.order).collect::<Vec<_>>(), vec![1]);
		assert_eq!(skipped, vec![(2, Skip::DeviceBusy), (3, Skip::DeviceBusy)]);
	}

	#[test]
	fn bids_stop_at_the_cap_and_the_bond_and_never_while_paused() {
		let orders: Vec<_> = (1..=5).map(|i| order(i, "x")).collect();
		let mut busy = standing();
		busy.live_leases = 1;
		busy.standing_bids = 1;
		let (bids, skipped) = pick(&policy(), &busy, &orders, |_| true, &Busy::new());
		assert_eq!(bids.len(), 1);
		assert!(skipped.iter().all(|(_, why)| *why == Skip::Full));
		let mut poor = standing();
		poor.free_bond = 15 * STINT;
		let (bids, skipped) = pick(&policy(), &poor, &orders, |_| true, &Busy::new());
		assert_eq!(bids.len(), 1);
		assert_eq!(skipped[0], (2, Skip::BondShort));
		// The deposit is locked in the bond too: collateral alone does not do.
		let mut no_deposit = standing();
		no_deposit.free_bond = standing().costs.collateral_per_gpu;
		assert_eq!(
			pick(&policy(), &no_deposit, &orders, |_| true, &Busy::new()).1[0].1,
			Skip::BondShort
		);
		let mut paused = standing();
		paused.active = false;
		assert!(pick(&policy(), &paused, &orders, |_| true, &Busy::new()).0.is_empty());
	}

	#[test]
	fn a_bait_that_would_hold_the_devices_for_a_day_gets_no_bid_and_sooner_orders_go_first() {
		let bait = Candidate { stands_for: 14_400 + 600, ..order(1, "NVIDIA H100") };
		let later = Candidate { stands_for: 300, ..order(2, "NVIDIA H100") };
		let sooner = Candidate { stands_for: 20, ..order(3, "NVIDIA H100") };
		let policy = BiddingConfig { max_leases: 3, ..policy() };
		let (bids, skipped) =
			pick(&policy, &standing(), &[bait, later, sooner], |_| true, &Busy::new());
		assert_eq!(bids.iter().map(|bid| bid.order).collect::<Vec<_>>(), vec![3, 2]);
		assert_eq!(skipped, vec![(1, Skip::StandsTooLong { blocks: 15_000 })]);
		// With one slot, the sooner order takes it.
		let policy = BiddingConfig { max_leases: 1, ..policy };
		let candidates = [
			Candidate { stands_for: 300, ..order(2, "NVIDIA H100") },
			Candidate { stands_for: 20, ..order(3, "NVIDIA H100") },
		];
		let (bids, skipped) = pick(&policy, &standing(), &candidates, |_| true, &Busy::new());
		assert_eq!(bids.iter().map(|bid| bid.order).collect::<Vec<_>>(), vec![3]);
		assert_eq!(skipped, vec![(2, Skip::Full)]);
	}

	#[test]
	fn a_standing_bid_gives_way_to_an_order_that_closes_much_sooner_while_it_is_free_to() {
		// One GPU, its bid standing on an order that closes in 1,000 blocks.
		let device = [9u8; 32];
		let held = Displaceable { order: 7, devices: vec![device], stands_for: 1_000 };
		let policy = BiddingConfig { max_leases: 1, ..policy() };
		let full = Standing { standing_bids: 1, ..standing() };
		let busy: Busy = [device].into_iter().collect();
		let on = |stands_for| Candidate {
			devices: vec![(device, "NVIDIA H100".into())],
			stands_for,
			..order(3, "NVIDIA H100")
		};
		let choice =
			choose(&policy, &full, &[on(100)], |_| true, &busy, std::slice::from_ref(&held));
		assert_eq!(choice.displaced, vec![7]);
		assert_eq!(choice.bids.len(), 1);
		assert_eq!(choice.bids[0].devices, vec![device]);
		// Not for an order that closes about as late: the slot stays the standing bid's.
		let choice =
			choose(&policy, &full, &[on(400)], |_| true, &busy, std::slice::from_ref(&held));
		assert!(choice.displaced.is_empty() && choice.bids.is_empty());
		assert_eq!(choice.skipped, vec![(3, Skip::Full)]);
		// Nor once withdrawing it would forfeit (the runner offers only bids free to go).
		let choice = choose(&policy, &full, &[on(100)], |_| true, &busy, &[]);
		assert!(choice.displaced.is_empty() && choice.bids.is_empty());
		// A standing bid on other GPUs frees a slot, but its devices stay promised.
		let other = Displaceable { devices: vec![[8u8; 32]], ..held };
		let roomy = BiddingConfig { max_leases: 2, ..policy };
		let choice = choose(&roomy, &full, &[on(100)], |_| true, &busy, &[other]);
		assert!(choice.displaced.is_empty());
		assert_eq!(choice.skipped, vec![(3, Skip::DeviceBusy)]);
	}
}
