#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub use pallet::*;

mod asset;
#[cfg(feature = "runtime-benchmarks")]
mod benchmarking;
mod dispatchable_impls;
#[cfg(test)]
mod mock;
mod registry_impls;
#[cfg(test)]
mod tests;
mod types;
pub mod weights;

pub use types::*;
pub use weights::WeightInfo;

use frame::{
	deps::sp_runtime::TryRuntimeError,
	prelude::*,
	traits::{fungible, Convert},
};

/// A worker key's signature over [`stint_primitives::worker_proof_payload`] of its provider's
/// account: its consent to act for that provider.
pub type WorkerProof = frame::deps::sp_core::sr25519::Signature;

/// The balance type of the currency the deposit is held in.
pub type BalanceOf<T> =
	<<T as Config>::Currency as fungible::Inspect<<T as frame_system::Config>::AccountId>>::Balance;

#[frame::pallet]
pub mod pallet {
	use super::*;
	use alloc::vec::Vec;
	use stint_primitives::{DeviceId, LeaseId, Outcome, WorkerKey};
	use stint_traits::StandingBids;

	const STORAGE_VERSION: StorageVersion = StorageVersion::new(0);

	#[pallet::pallet]
	#[pallet::storage_version(STORAGE_VERSION)]
	pub struct Pallet<T>(_);

	/// Defaults for the bounds and weights; money and time are set by each runtime.
	pub mod config_preludes {
		use super::*;
		use frame::runtime::prelude::derive_impl;

		pub struct TestDefaultConfig;

		#[derive_impl(frame_system::config_preludes::TestDefaultConfig, no_aggregated_types)]
		impl frame_system::DefaultConfig for TestDefaultConfig {}

		#[frame::deps::frame_support::register_default_impl(TestDefaultConfig)]
		impl DefaultConfig for TestDefaultConfig {
			type MaxNameLen = ConstU32<64>;
			type MaxEndpointLen = ConstU32<128>;
			type MaxGpus = ConstU32<16>;
			type MaxWorkers = ConstU32<8>;
			type ReputationDecay = ReputationDecay;
			type CreditPerBuyer = ConstU32<2>;
			type MaxCreditors = ConstU32<16>;
			type WeightInfo = ();
		}

		frame::deps::frame_support::parameter_types! {
			pub const ReputationDecay: Permill = Permill::from_percent(2);
		}
	}

	#[pallet::config(with_default)]
	pub trait Config: frame_system::Config<RuntimeEvent: From<Event<Self>>> {
		/// The currency the registration deposit is held in.
		#[pallet::no_default]
		type Currency: fungible::Inspect<Self::AccountId>
			+ fungible::Mutate<Self::AccountId>
			+ fungible::MutateHold<Self::AccountId, Reason = Self::RuntimeHoldReason>;

		/// The runtime's hold reasons, which include this pallet's.
		#[pallet::no_default]
		type RuntimeHoldReason: From<HoldReason>;

		/// Held for every registered provider.
		#[pallet::constant]
		#[pallet::no_default]
		type RegistrationDeposit: Get<BalanceOf<Self>>;

		/// Held in addition for each registered GPU.
		#[pallet::constant]
		#[pallet::no_default]
		type DepositPerGpu: Get<BalanceOf<Self>>;

		/// Held for each byte of a record kept after its provider left ([`Histories`]).
		#[pallet::constant]
		#[pallet::no_default]
		type DepositPerByte: Get<BalanceOf<Self>>;

		/// Blocks between `announce_exit` and the earliest `deregister`.
		#[pallet::constant]
		#[pallet::no_default]
		type ExitNotice: Get<BlockNumberFor<Self>>;

		/// The longest provider name, in bytes.
		#[pallet::constant]
		type MaxNameLen: Get<u32>;

		/// The longest endpoint URL, in bytes.
		#[pallet::constant]
		type MaxEndpointLen: Get<u32>;

		/// The most GPUs one provider may register.
		#[pallet::constant]
		type MaxGpus: Get<u32>;

		/// The most worker keys (machines) one provider may bind.
		#[pallet::constant]
		type MaxWorkers: Get<u32>;

		/// The account a worker key signs transactions as (in a runtime whose accounts are
		/// sr25519 keys: the same 32 bytes).
		#[pallet::no_default]
		type WorkerAccount: Convert<WorkerKey, Self::AccountId>;

		/// How much of its reputation history a provider's score forgets at each new outcome.
		#[pallet::constant]
		type ReputationDecay: Get<Permill>;

		/// The most full outcomes the leases of one buyer count for toward a provider's
		/// reputation, among its `MaxCreditors` latest buyers: one buyer (or a provider's own
		/// account under another name) cannot carry a score. Faults always count.
		#[pallet::constant]
		type CreditPerBuyer: Get<u32>;

		/// How many of a provider's latest buyers [`Credits`] remembers.
		#[pallet::constant]
		type MaxCreditors: Get<u32>;

		/// The market's standing bids: withdrawn when a provider pauses, announces its exit or
		/// changes its hardware.
		#[pallet::no_default]
		type Bids: stint_traits::StandingBids<Self::AccountId>;

		/// What a provider still answers for after its leases ended (results waiting for the
		/// buyer's verdict): it cannot deregister until they are settled.
		#[pallet::no_default]
		type Obligations: stint_traits::Obligations<Self::AccountId>;

		/// Weights of this pallet's calls.
		type WeightInfo: WeightInfo;
	}

	/// Why this pallet holds funds.
	#[pallet::composite_enum]
	pub enum HoldReason {
		/// The storage deposit of a provider's registration.
		#[codec(index = 0)]
		ProviderDeposit,
	}

	/// Every registered provider.
	#[pallet::storage]
	pub type Registry<T: Config> =
		StorageMap<_, Blake2_128Concat, T::AccountId, ProviderRecordOf<T>, OptionQuery>;

	/// The lease each committed GPU serves, by provider and device. A device id names a GPU
	/// within its provider's inventory only: without attestation the chain cannot tell one GPU
	/// declared by two providers from two GPUs, so it does not try, and nobody can block or
	/// taint another provider's GPUs by declaring their ids first.
	#[pallet::storage]
	pub type CommittedDevices<T: Config> = StorageDoubleMap<
		_,
		Blake2_128Concat,
		T::AccountId,
		Blake2_128Concat,
		DeviceId,
		LeaseId,
		OptionQuery,
	>;

	/// The provider each bound worker key acts for, by the worker key's account: worker keys are
	/// unique across providers.
	#[pallet::storage]
	pub type WorkerAccounts<T: Config> =
		StorageMap<_, Blake2_128Concat, T::AccountId, (T::AccountId, WorkerKey), OptionQuery>;

	/// How many providers are registered.
	#[pallet::storage]
	pub type ProviderCount<T: Config> = StorageValue<_, u32, ValueQuery>;

	/// Whether providers' endpoints may be `http://`: set at genesis, on development and local
	/// chains only. Elsewhere an endpoint is `https://`, so the buyer's signed fetch request and
	/// the outputs do not travel in clear.
	#[pallet::storage]
	pub type AllowPlainHttp<T: Config> = StorageValue<_, bool, ValueQuery>;

	/// What the chain keeps of accounts that deregistered, each with the deposit that pays for
	/// it: registering again starts from its reputation, not from a clean 50 %, and its used
	/// worker-key consents stay used.
	#[pallet::storage]
	pub type Histories<T: Config> =
		StorageMap<_, Blake2_128Concat, T::AccountId, History<BalanceOf<T>>, OptionQuery>;

	/// What each of a provider's latest buyers' leases counted toward its reputation, in
	/// thousandths of a full outcome, the latest buyer last (at most `MaxCreditors`: the
	/// earliest is forgotten first). Covered by the registration deposit and removed with the
	/// provider's record.
	#[pallet::storage]
	pub type Credits<T: Config> = StorageMap<
		_,
		Blake2_128Concat,
		T::AccountId,
		BoundedVec<(T::AccountId, u64), T::MaxCreditors>,
		ValueQuery,
	>;

	#[pallet::event]
	#[pallet::generate_deposit(pub(super) fn deposit_event)]
	pub enum Event<T: Config> {
		/// A provider registered.
		Registered {
			/// The provider's account.
			provider: T::AccountId,
			/// How many GPUs it registered.
			gpus: u32,
			/// The deposit held.
			deposit: BalanceOf<T>,
		},
		/// A provider changed its name, endpoint or region.
		InfoUpdated {
			/// The provider's account.
			provider: T::AccountId,
		},
		/// A provider replaced its hardware inventory.
		HardwareUpdated {
			/// The provider's account.
			provider: T::AccountId,
			/// How many GPUs it now has.
			gpus: u32,
			/// The deposit now held.
			deposit: BalanceOf<T>,
		},
		/// A provider's worker now signs with a new key, for the same devices.
		WorkerKeyRotated {
			/// The provider's account.
			provider: T::AccountId,
			/// The key that no longer acts for the provider.
			from: WorkerKey,
			/// The key that does now.
			to: WorkerKey,
		},
		/// A worker key was bound to devices of its provider (added, or its devices changed).
		WorkerBound {
			/// The provider's account.
			provider: T::AccountId,
			/// The worker key.
			worker_key: WorkerKey,
			/// How many devices it acts for.
			devices: u32,
		},
		/// A worker key no longer acts for its provider.
		WorkerUnbound {
			/// The provider's account.
			provider: T::AccountId,
			/// The worker key.
			worker_key: WorkerKey,
		},
		/// A provider takes no new leases until it resumes.
		Paused {
			/// The provider's account.
			provider: T::AccountId,
		},
		/// A paused provider takes new leases again.
		Resumed {
			/// The provider's account.
			provider: T::AccountId,
		},
		/// A provider announced it is leaving.
		ExitAnnounced {
			/// The provider's account.
			provider: T::AccountId,
			/// The first block it may deregister at.
			notice_ends: BlockNumberFor<T>,
		},
		/// A provider left the registry.
		Deregistered {
			/// The provider's account.
			provider: T::AccountId,
			/// The deposit returned to it.
			deposit_released: BalanceOf<T>,
			/// Kept held for the history the chain keeps of it ([`Histories`]), until it
			/// registers again.
			deposit_kept: BalanceOf<T>,
		},
		/// A lease outcome changed a provider's reputation.
		ReputationUpdated {
			/// The provider's account.
			provider: T::AccountId,
			/// What happened.
			outcome: Outcome,
			/// The provider's score now.
			score: Permill,
		},
	}

	#[pallet::error]
	pub enum Error<T> {
		/// This account is already a registered provider.
		AlreadyRegistered,
		/// This account is not a registered provider.
		NotRegistered,
		/// The name is empty.
		EmptyName,
		/// The name is longer than `MaxNameLen`.
		NameTooLong,
		/// The endpoint is empty.
		EmptyEndpoint,
		/// The endpoint is longer than `MaxEndpointLen`.
		EndpointTooLong,
		/// The endpoint is not an `https://` URL (nor, on a development chain, an `http://` one).
		InvalidEndpoint,
		/// The endpoint is `http://`, which this chain refuses: a buyer's signed fetch request
		/// would travel in clear. Only development and local chains take it (`AllowPlainHttp`).
		InsecureEndpoint,
		/// The region is not an upper-case ISO 3166-1 alpha-2 code.
		InvalidRegion,
		/// The worker key is the provider's own account key; it must be a separate key.
		WorkerKeyIsAccount,
		/// The worker key is already bound, by this provider or another.
		WorkerKeyTaken,
		/// The worker key is a registered provider's account.
		WorkerKeyIsProvider,
		/// This account is a provider's worker key, so it cannot register as a provider.
		AccountIsWorkerKey,
		/// The provider has no such worker key.
		UnknownWorkerKey,
		/// The provider already has `MaxWorkers` worker keys.
		TooManyWorkers,
		/// A device is bound to another of the provider's worker keys.
		DeviceBoundElsewhere,
		/// The signer is neither a registered provider nor a worker key bound by one (a
		/// rotated-out or unbound key no longer is).
		NotProviderOrWorker,
		/// The signer is a worker key of the provider, but not of the machine these devices are
		/// on.
		NotThisWorker,
		/// The devices are not all bound to one worker key (one machine).
		DevicesNotOnOneWorker,
		/// The proof is not the worker key's signature over its consent to act for the signer on
		/// this chain as the signer's next consent (its `consents` count): a consent works once.
		BadWorkerKeyProof,
		/// No GPU in the inventory.
		NoGpus,
		/// More GPUs than `MaxGpus`.
		TooManyGpus,
		/// A GPU reports zero memory.
		ZeroVram,
		/// A GPU has no model name.
		EmptyGpuModel,
		/// A GPU (UUID hash) appears twice.
		DuplicateDevice,
		/// The machine reports zero CPU cores.
		ZeroCpuCores,
		/// The machine reports zero RAM.
		ZeroRam,
		/// The account cannot afford the deposit.
		InsufficientBalance,
		/// A device is committed to a lease: the hardware cannot change now.
		DevicesCommitted,
		/// The provider is already paused.
		AlreadyPaused,
		/// The provider is not paused.
		NotPaused,
		/// The provider has announced its exit.
		Exiting,
		/// The provider has not announced its exit.
		NotExiting,
		/// The exit notice has not been served yet.
		NoticeNotServed,
		/// Leases still run on the provider's devices.
		ActiveLeases,
		/// Results of the provider's leases still wait for their buyers' verdicts (their
		/// collateral locked): deregister once they are settled.
		VerdictsPending,
		/// The provider is paused or leaving and takes no new leases.
		ProviderNotActive,
		/// The provider is not in the region the order requires.
		RegionMismatch,
		/// The provider's reputation is below what the order requires.
		ReputationTooLow,
		/// No device was offered.
		NoDevicesOffered,
		/// A device offered is not registered by this provider.
		UnknownDevice,
		/// A device offered is committed to another lease.
		DeviceBusy,
		/// Not as many devices as the order asks for.
		WrongDeviceCount,
		/// A device has less memory than the order requires.
		TooLittleVram,
		/// A device's compute capability is below what the order requires.
		ComputeCapabilityTooLow,
		/// A device's model is not one the order accepts.
		ModelNotAllowed,
		/// A device's CUDA driver is older than the order requires.
		DriverTooOld,
	}

	#[pallet::genesis_config]
	#[derive(frame::prelude::DefaultNoBound)]
	pub struct GenesisConfig<T: Config> {
		/// Providers registered at genesis, with their deposits held.
		pub providers: Vec<(T::AccountId, ProviderInfo, WorkerKey, HardwareSpec)>,
		/// Whether providers' endpoints may be `http://` ([`AllowPlainHttp`]): development and
		/// local chains only.
		pub allow_plain_http: bool,
	}

	#[pallet::genesis_build]
	impl<T: Config> BuildGenesisConfig for GenesisConfig<T> {
		fn build(&self) {
			AllowPlainHttp::<T>::put(self.allow_plain_http);
			for (who, info, worker_key, hardware) in &self.providers {
				// Genesis is trusted: its keys need no proof.
				Pallet::<T>::do_register(who, info.clone(), *worker_key, hardware.clone(), None)
					.expect("genesis providers must be valid and able to pay their deposit");
			}
		}
	}

	#[pallet::hooks]
	impl<T: Config> Hooks<BlockNumberFor<T>> for Pallet<T> {
		fn integrity_test() {
			assert!(
				Pallet::<T>::history_deposit() <= T::RegistrationDeposit::get(),
				"a history's deposit must come out of the registration deposit"
			);
			// What a call may carry must be enough for what the registry keeps.
			assert!(T::MaxNameLen::get() <= MAX_NAME_ARG, "MaxNameLen above MAX_NAME_ARG");
			assert!(
				T::MaxEndpointLen::get() <= MAX_ENDPOINT_ARG,
				"MaxEndpointLen above MAX_ENDPOINT_ARG"
			);
			assert!(T::MaxGpus::get() <= MAX_GPUS_ARG, "MaxGpus above MAX_GPUS_ARG");
		}

		#[cfg(feature = "try-runtime")]
		fn try_state(_: BlockNumberFor<T>) -> Result<(), TryRuntimeError> {
			Self::do_try_state()
		}
	}

	#[pallet::call(weight(<T as Config>::WeightInfo))]
	impl<T: Config> Pallet<T> {
		/// Registers the signer as a provider with its machine's `hardware`, the `worker_key` its
		/// worker signs with (`proof`: the key's signature over its consent to act for the
		/// signer), and a name, endpoint and region. Holds the registration deposit.
		#[pallet::call_index(0)]
		#[pallet::weight(T::WeightInfo::register(hardware.gpus.len() as u32))]
		pub fn register(
			origin: OriginFor<T>,
			info: ProviderInfo,
			worker_key: WorkerKey,
			hardware: HardwareSpec,
			proof: WorkerProof,
		) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_register(&who, info, worker_key, hardware, Some(&proof))
		}

		/// Changes the signer's name, endpoint and region.
		#[pallet::call_index(1)]
		pub fn update_info(origin: OriginFor<T>, info: ProviderInfo) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_update_info(&who, info)
		}

		/// Replaces the signer's hardware inventory, adjusting the deposit. Refused while any of
		/// its devices is committed to a lease. Its standing bids are withdrawn (weighed at the
		/// most a provider may have, refunded to the ones it had).
		#[pallet::call_index(2)]
		#[pallet::weight(T::WeightInfo::update_hardware(hardware.gpus.len() as u32)
			.saturating_add(T::Bids::retract_all_weight()))]
		pub fn update_hardware(
			origin: OriginFor<T>,
			hardware: HardwareSpec,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let gpus = hardware.gpus.len() as u32;
			let retracted = Self::do_update_hardware(&who, hardware).map_err(Self::refused)?;
			let weight = T::WeightInfo::update_hardware(gpus);
			Ok(Some(weight.saturating_add(T::Bids::retract_weight(retracted))).into())
		}

		/// Replaces the signer's worker key `from` by `to` (`proof`: `to`'s signature over its
		/// consent to act for the signer), for the same devices: `from` no longer acts for the
		/// signer, `to` does (results of running leases included).
		#[pallet::call_index(3)]
		pub fn rotate_worker_key(
			origin: OriginFor<T>,
			from: WorkerKey,
			to: WorkerKey,
			proof: WorkerProof,
		) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_rotate_worker_key(&who, from, to, &proof)
		}

		/// Stops the signer from getting new leases (its standing bids are withdrawn, weighed as
		/// for `update_hardware`); running leases go on.
		#[pallet::call_index(4)]
		#[pallet::weight(T::WeightInfo::pause().saturating_add(T::Bids::retract_all_weight()))]
		pub fn pause(origin: OriginFor<T>) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let retracted = Self::do_pause(&who).map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::pause().saturating_add(T::Bids::retract_weight(retracted)))
				.into())
		}

		/// Lets a paused signer get new leases again.
		#[pallet::call_index(5)]
		pub fn resume(origin: OriginFor<T>) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_resume(&who)
		}

		/// Announces that the signer is leaving: no new leases (its standing bids are withdrawn),
		/// and `deregister` becomes possible after `ExitNotice` blocks once its running leases
		/// have ended.
		#[pallet::call_index(6)]
		#[pallet::weight(T::WeightInfo::announce_exit()
			.saturating_add(T::Bids::retract_all_weight()))]
		pub fn announce_exit(origin: OriginFor<T>) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let retracted = Self::do_announce_exit(&who).map_err(Self::refused)?;
			let weight = T::WeightInfo::announce_exit();
			Ok(Some(weight.saturating_add(T::Bids::retract_weight(retracted))).into())
		}

		/// Removes the signer from the registry and releases its deposit. Only after the exit
		/// notice is served and with no lease running.
		#[pallet::call_index(7)]
		pub fn deregister(origin: OriginFor<T>) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_deregister(&who)
		}

		/// Binds `worker_key` to `devices` of the signer (one machine): a new worker, or new
		/// devices for one it has. The key then bids with, acknowledges, gives notice on and signs
		/// results for leases on those devices only. Devices that change hands must not be
		/// committed to a lease. `proof`: the key's signature over its consent to act for the
		/// signer. Standing bids that name a device leaving or joining the worker are withdrawn,
		/// as retractions (weighed at the most a provider may have, refunded to the ones it had).
		#[pallet::call_index(8)]
		#[pallet::weight(T::WeightInfo::bind_worker(devices.len() as u32)
			.saturating_add(T::Bids::retract_all_weight()))]
		pub fn bind_worker(
			origin: OriginFor<T>,
			worker_key: WorkerKey,
			devices: BoundedVec<DeviceId, ConstU32<MAX_GPUS_ARG>>,
			proof: WorkerProof,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let weight = T::WeightInfo::bind_worker(devices.len() as u32);
			let looked_at =
				Self::do_bind_worker(&who, worker_key, devices, &proof).map_err(Self::refused)?;
			Ok(Some(weight.saturating_add(T::Bids::retract_weight(looked_at))).into())
		}

		/// Unbinds the signer's `worker_key`: it acts for nobody from now on. Refused while a
		/// lease runs on its devices. Standing bids on its devices are withdrawn, as
		/// retractions: late ones forfeit their deposits (unbinding is no free way out of a bid
		/// that can no longer win).
		#[pallet::call_index(9)]
		#[pallet::weight(T::WeightInfo::unbind_worker()
			.saturating_add(T::Bids::retract_all_weight()))]
		pub fn unbind_worker(
			origin: OriginFor<T>,
			worker_key: WorkerKey,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let looked_at = Self::do_unbind_worker(&who, worker_key).map_err(Self::refused)?;
			Ok(Some(
				T::WeightInfo::unbind_worker().saturating_add(T::Bids::retract_weight(looked_at)),
			)
			.into())
		}
	}

	impl<T: Config> Pallet<T> {
		/// The registry's invariants: counters match maps, every device has one owner, held
		/// deposits match the records, lease counts match the committed devices.
		pub fn do_try_state() -> Result<(), TryRuntimeError> {
			registry_impls::check_invariants::<T>()
		}
	}
}
