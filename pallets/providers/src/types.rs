//! Records the registry keeps, and what a registration call carries.

use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use frame::prelude::*;
use scale_info::TypeInfo;
use stint_primitives::{DeviceId, GpuDevice, Outcome, RegionCode, WorkerKey};

/// Reputation weights are kept in thousandths, so that decay keeps some precision.
pub const REPUTATION_UNIT: u64 = 1_000;

/// The longest name a call may carry (the runtime's `MaxNameLen` may be shorter): a longer one
/// does not decode.
pub const MAX_NAME_ARG: u32 = 256;
/// The longest endpoint a call may carry (the runtime's `MaxEndpointLen` may be shorter).
pub const MAX_ENDPOINT_ARG: u32 = 512;
/// The most GPUs or devices a call may carry (the runtime's `MaxGpus` may be fewer).
pub const MAX_GPUS_ARG: u32 = 64;

/// A provider's description as a call carries it: checked and bounded by the pallet.
#[derive(
	Clone,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct ProviderInfo {
	/// A display name, not empty.
	pub name: BoundedVec<u8, ConstU32<MAX_NAME_ARG>>,
	/// Where buyers reach the provider's worker, an `http://` or `https://` URL.
	pub endpoint: BoundedVec<u8, ConstU32<MAX_ENDPOINT_ARG>>,
	/// Where the machine is: an ISO 3166-1 alpha-2 country code, e.g. `DE`.
	pub region: RegionCode,
}

/// A machine's hardware as a call carries it: checked and bounded by the pallet.
#[derive(
	Clone,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct HardwareSpec {
	/// The GPUs, at least one, each with its own UUID hash.
	pub gpus: BoundedVec<GpuDevice, ConstU32<MAX_GPUS_ARG>>,
	pub cpu_cores: u32,
	pub ram_mib: u64,
	pub disk_gib: u64,
}

/// A machine's hardware as the registry stores it.
#[derive(
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	CloneNoBound,
	PartialEqNoBound,
	EqNoBound,
	DebugNoBound,
)]
#[scale_info(skip_type_params(MaxGpus))]
pub struct Hardware<MaxGpus: Get<u32>> {
	pub gpus: BoundedVec<GpuDevice, MaxGpus>,
	pub cpu_cores: u32,
	pub ram_mib: u64,
	pub disk_gib: u64,
}

/// Whether a provider takes new leases.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub enum ProviderStatus<BlockNumber> {
	/// Takes new leases.
	Active,
	/// Takes no new leases until resumed; running leases go on.
	Paused,
	/// Leaving: takes no new leases; may deregister from `notice_ends` once no lease runs.
	Exiting { notice_ends: BlockNumber },
}

/// What the chain keeps of a provider after it deregistered: the reputation it comes back with
/// and how many worker-key consents it used (so that none of them binds a key again), with the
/// deposit held on its account for keeping the row. Registering again takes the row and
/// releases the deposit.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub struct History<Balance> {
	pub reputation: Reputation,
	pub consents: u32,
	pub deposit: Balance,
}

/// A provider's track record, from on-chain outcomes only.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Default,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub struct Reputation {
	pub completed: u32,
	pub failed: u32,
	pub slashed: u32,
	pub no_shows: u32,
	/// Early results the buyer objected to.
	pub objected: u32,
	/// Decayed count of good outcomes, in thousandths.
	pub good: u64,
	/// Decayed count of bad outcomes, in thousandths.
	pub bad: u64,
}

impl Reputation {
	/// The Beta score `(good + 1) / (good + bad + 2)`: 50% with no history.
	pub fn score(&self) -> Permill {
		Permill::from_rational(
			self.good.saturating_add(REPUTATION_UNIT),
			self.good.saturating_add(self.bad).saturating_add(2 * REPUTATION_UNIT),
		)
	}

	/// Adds `weight` of one outcome, after decaying the history by `weight` of `decay`: a lease
	/// that delivered little moves the score little, and cannot wash old faults out either. A
	/// failed job (an honest non-zero exit) is only counted: it may be the buyer's code.
	pub fn record(&mut self, outcome: Outcome, decay: Permill, weight: Permill) {
		if outcome != Outcome::Failed {
			let keep = Permill::one().saturating_sub(weight * decay);
			self.good = keep.mul_floor(self.good);
			self.bad = keep.mul_floor(self.bad);
		}
		let unit = weight.mul_floor(REPUTATION_UNIT);
		match outcome {
			Outcome::Completed => {
				self.completed.saturating_inc();
				self.good.saturating_accrue(unit);
			}
			Outcome::Failed => self.failed.saturating_inc(),
			Outcome::Slashed => {
				self.slashed.saturating_inc();
				self.bad.saturating_accrue(unit);
			}
			Outcome::NoShow => {
				self.no_shows.saturating_inc();
				self.bad.saturating_accrue(unit);
			}
			Outcome::Objected => {
				self.objected.saturating_inc();
				self.bad.saturating_accrue(unit);
			}
		}
	}
}

/// A worker key and the devices of the machine it runs: the key may bid with, acknowledge and
/// sign results for these devices only, on its provider's behalf.
#[derive(
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	CloneNoBound,
	PartialEqNoBound,
	EqNoBound,
	DebugNoBound,
)]
#[scale_info(skip_type_params(MaxGpus))]
pub struct Worker<MaxGpus: Get<u32>> {
	pub key: WorkerKey,
	/// Registered devices of the provider, bound to no other of its workers.
	pub devices: BoundedVec<DeviceId, MaxGpus>,
}

/// Everything the registry knows of one provider.
#[derive(
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	CloneNoBound,
	PartialEqNoBound,
	EqNoBound,
	DebugNoBound,
)]
#[scale_info(skip_type_params(MaxName, MaxEndpoint, MaxGpus, MaxWorkers))]
pub struct ProviderRecord<Balance, BlockNumber, MaxName, MaxEndpoint, MaxGpus, MaxWorkers>
where
	Balance: Clone + PartialEq + Eq + core::fmt::Debug,
	BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug,
	MaxName: Get<u32>,
	MaxEndpoint: Get<u32>,
	MaxGpus: Get<u32>,
	MaxWorkers: Get<u32>,
{
	pub name: BoundedVec<u8, MaxName>,
	pub endpoint: BoundedVec<u8, MaxEndpoint>,
	pub region: RegionCode,
	/// The worker keys, one per machine, each with its devices.
	pub workers: BoundedVec<Worker<MaxGpus>, MaxWorkers>,
	pub hardware: Hardware<MaxGpus>,
	pub status: ProviderStatus<BlockNumber>,
	/// Held from the provider's account while it is registered.
	pub deposit: Balance,
	pub registered_at: BlockNumber,
	pub reputation: Reputation,
	/// Leases its devices are committed to now.
	pub active_leases: u32,
	/// How many worker-key consents it used: the nonce the next one signs
	/// ([`stint_primitives::worker_proof_payload`]).
	pub consents: u32,
}

/// The record type for a runtime.
pub type ProviderRecordOf<T> = ProviderRecord<
	crate::BalanceOf<T>,
	BlockNumberFor<T>,
	<T as crate::Config>::MaxNameLen,
	<T as crate::Config>::MaxEndpointLen,
	<T as crate::Config>::MaxGpus,
	<T as crate::Config>::MaxWorkers,
>;

/// The stored worker type for a runtime.
pub type WorkerOf<T> = Worker<<T as crate::Config>::MaxGpus>;

impl<
		Balance: Clone + PartialEq + Eq + core::fmt::Debug,
		BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug,
		MaxName: Get<u32>,
		MaxEndpoint: Get<u32>,
		MaxGpus: Get<u32>,
		MaxWorkers: Get<u32>,
	> ProviderRecord<Balance, BlockNumber, MaxName, MaxEndpoint, MaxGpus, MaxWorkers>
{
	/// The worker `key`, if the provider has it.
	pub fn worker(&self, key: &WorkerKey) -> Option<&Worker<MaxGpus>> {
		self.workers.iter().find(|worker| &worker.key == key)
	}

	/// The worker whose devices include every one of `devices`, if there is one.
	pub fn worker_for(&self, devices: &[DeviceId]) -> Option<&Worker<MaxGpus>> {
		let first = devices.first()?;
		let worker = self.workers.iter().find(|worker| worker.devices.contains(first))?;
		devices.iter().all(|device| worker.devices.contains(device)).then_some(worker)
	}
}

/// The stored hardware type for a runtime.
pub type HardwareOf<T> = Hardware<<T as crate::Config>::MaxGpus>;
