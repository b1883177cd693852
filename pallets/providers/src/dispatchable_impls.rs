//! What each call does, after the origin is checked.

use crate::{
	asset, AllowPlainHttp, BalanceOf, CommittedDevices, Config, Credits, Error, Event, Hardware,
	HardwareOf, HardwareSpec, Histories, History, Pallet, ProviderCount, ProviderInfo,
	ProviderRecordOf, ProviderStatus, Registry, Reputation, Worker, WorkerAccounts, WorkerOf,
	WorkerProof, MAX_GPUS_ARG,
};
use alloc::{collections::BTreeSet, vec::Vec};
use codec::Encode;
use frame::{prelude::*, traits::Convert};
use stint_primitives::{is_valid_region, DeviceId, WorkerKey};
use stint_traits::{Obligations, StandingBids};

/// The bounded name, endpoint and region of a provider, once checked.
type CheckedInfo<T> = (
	BoundedVec<u8, <T as Config>::MaxNameLen>,
	BoundedVec<u8, <T as Config>::MaxEndpointLen>,
	stint_primitives::RegionCode,
);

impl<T: Config> Pallet<T> {
	/// What a call this pallet refuses is charged: its checks read the provider's record and at
	/// most two more items (the worker index, a history) before anything is written; a consent
	/// is checked before anything is written too, and costs about as much as those reads.
	pub(crate) fn refused(
		error: DispatchError,
	) -> frame::deps::frame_support::dispatch::DispatchErrorWithPostInfo {
		stint_traits::refusal::<Self>(error, T::DbWeight::get().reads(4))
	}

	pub(crate) fn do_register(
		who: &T::AccountId,
		info: ProviderInfo,
		worker_key: WorkerKey,
		hardware: HardwareSpec,
		proof: Option<&WorkerProof>,
	) -> DispatchResult {
		ensure!(!Registry::<T>::contains_key(who), Error::<T>::AlreadyRegistered);
		ensure!(!WorkerAccounts::<T>::contains_key(who), Error::<T>::AccountIsWorkerKey);
		let (name, endpoint, region) = Self::check_info(info)?;
		Self::check_new_worker_key(who, &worker_key)?;
		// A provider's history survives leaving and coming back under its account.
		let history = Histories::<T>::get(who);
		let mut consents = history.map_or(0, |history| history.consents);
		if let Some(proof) = proof {
			Self::check_proof(who, &worker_key, proof, consents)?;
			consents.saturating_inc();
		}
		let hardware = Self::check_hardware(hardware)?;

		let deposit = Self::deposit_for(&hardware);
		asset::hold_deposit::<T>(who, deposit)?;
		if let Some(history) = history {
			Histories::<T>::remove(who);
			asset::release_deposit::<T>(who, history.deposit)?;
		}
		let reputation = history.map(|history| history.reputation).unwrap_or_default();
		// The first worker runs the whole machine.
		let devices: BoundedVec<DeviceId, T::MaxGpus> =
			BoundedVec::truncate_from(hardware.gpus.iter().map(|gpu| gpu.uuid_hash).collect());
		let workers = BoundedVec::truncate_from(alloc::vec![Worker { key: worker_key, devices }]);
		WorkerAccounts::<T>::insert(Self::worker_account(&worker_key), (who.clone(), worker_key));
		let gpus = hardware.gpus.len() as u32;
		Registry::<T>::insert(
			who,
			ProviderRecordOf::<T> {
				name,
				endpoint,
				region,
				workers,
				hardware,
				status: ProviderStatus::Active,
				deposit,
				registered_at: frame_system::Pallet::<T>::block_number(),
				reputation,
				active_leases: 0,
				consents,
			},
		);
		ProviderCount::<T>::mutate(|count| count.saturating_inc());
		Self::deposit_event(Event::Registered { provider: who.clone(), gpus, deposit });
		Ok(())
	}

	pub(crate) fn do_update_info(who: &T::AccountId, info: ProviderInfo) -> DispatchResult {
		let mut record = Self::record(who)?;
		(record.name, record.endpoint, record.region) = Self::check_info(info)?;
		Registry::<T>::insert(who, record);
		Self::deposit_event(Event::InfoUpdated { provider: who.clone() });
		Ok(())
	}

	/// Returns how many standing bids were withdrawn (what it cost).
	pub(crate) fn do_update_hardware(
		who: &T::AccountId,
		hardware: HardwareSpec,
	) -> Result<u32, DispatchError> {
		let mut record = Self::record(who)?;
		ensure!(record.active_leases == 0, Error::<T>::DevicesCommitted);
		let hardware = Self::check_hardware(hardware)?;

		let deposit = Self::deposit_for(&hardware);
		asset::adjust_deposit::<T>(who, record.deposit, deposit)?;
		// Bids name devices of the old inventory: none of them may win a lease now.
		let retracted = T::Bids::retract_all(who);
		Self::rebind_after_hardware_change(who, &mut record.workers, &hardware);
		let gpus = hardware.gpus.len() as u32;
		record.hardware = hardware;
		record.deposit = deposit;
		Registry::<T>::insert(who, record);
		Self::deposit_event(Event::HardwareUpdated { provider: who.clone(), gpus, deposit });
		Ok(retracted)
	}

	/// Keeps the worker bindings right after the inventory changed: devices that are gone leave
	/// their worker (a worker left with none is unbound); new devices join the provider's worker
	/// if it has exactly one (one machine), else they wait for `bind_worker`.
	fn rebind_after_hardware_change(
		who: &T::AccountId,
		workers: &mut BoundedVec<WorkerOf<T>, T::MaxWorkers>,
		hardware: &HardwareOf<T>,
	) {
		let present: BTreeSet<DeviceId> = hardware.gpus.iter().map(|gpu| gpu.uuid_hash).collect();
		let was_single = workers.len() == 1;
		for worker in workers.iter_mut() {
			worker.devices.retain(|device| present.contains(device));
		}
		if was_single {
			let worker = &mut workers[0];
			worker.devices = BoundedVec::truncate_from(present.iter().copied().collect::<Vec<_>>());
		}
		workers.retain(|worker| {
			let keep = !worker.devices.is_empty();
			if !keep {
				WorkerAccounts::<T>::remove(Self::worker_account(&worker.key));
				Self::deposit_event(Event::WorkerUnbound {
					provider: who.clone(),
					worker_key: worker.key,
				});
			}
			keep
		});
	}

	pub(crate) fn do_rotate_worker_key(
		who: &T::AccountId,
		from: WorkerKey,
		to: WorkerKey,
		proof: &WorkerProof,
	) -> DispatchResult {
		let mut record = Self::record(who)?;
		let index = record
			.workers
			.iter()
			.position(|worker| worker.key == from)
			.ok_or(Error::<T>::UnknownWorkerKey)?;
		Self::check_new_worker_key(who, &to)?;
		Self::check_proof(who, &to, proof, record.consents)?;
		record.consents.saturating_inc();
		record.workers[index].key = to;
		WorkerAccounts::<T>::remove(Self::worker_account(&from));
		WorkerAccounts::<T>::insert(Self::worker_account(&to), (who.clone(), to));
		Registry::<T>::insert(who, record);
		Self::deposit_event(Event::WorkerKeyRotated { provider: who.clone(), from, to });
		Ok(())
	}

	/// Returns how many standing bids were looked at for withdrawal (what it cost).
	pub(crate) fn do_bind_worker(
		who: &T::AccountId,
		worker_key: WorkerKey,
		devices: BoundedVec<DeviceId, ConstU32<MAX_GPUS_ARG>>,
		proof: &WorkerProof,
	) -> Result<u32, DispatchError> {
		let mut record = Self::record(who)?;
		ensure!(!devices.is_empty(), Error::<T>::NoDevicesOffered);
		let devices: BoundedVec<DeviceId, T::MaxGpus> =
			devices.into_inner().try_into().map_err(|_| Error::<T>::TooManyGpus)?;
		let existing = record.workers.iter().position(|worker| worker.key == worker_key);
		if existing.is_none() {
			Self::check_new_worker_key(who, &worker_key)?;
		}
		Self::check_proof(who, &worker_key, proof, record.consents)?;
		record.consents.saturating_inc();
		let mut seen = BTreeSet::new();
		for device in &devices {
			ensure!(seen.insert(*device), Error::<T>::DuplicateDevice);
			ensure!(
				record.hardware.gpus.iter().any(|gpu| &gpu.uuid_hash == device),
				Error::<T>::UnknownDevice
			);
			let elsewhere = record
				.workers
				.iter()
				.any(|worker| worker.key != worker_key && worker.devices.contains(device));
			ensure!(!elsewhere, Error::<T>::DeviceBoundElsewhere);
		}
		// A device that changes hands must not be running a lease: the lease's results are
		// signed by the key its devices are bound to.
		let before: BTreeSet<DeviceId> = existing
			.map(|index| record.workers[index].devices.iter().copied().collect())
			.unwrap_or_default();
		let moved: Vec<DeviceId> = before.symmetric_difference(&seen).copied().collect();
		for device in &moved {
			ensure!(!Self::is_committed(who, device), Error::<T>::DevicesCommitted);
		}
		let count = devices.len() as u32;
		match existing {
			Some(index) => record.workers[index].devices = devices,
			None => {
				record
					.workers
					.try_push(Worker { key: worker_key, devices })
					.map_err(|_| Error::<T>::TooManyWorkers)?;
				WorkerAccounts::<T>::insert(
					Self::worker_account(&worker_key),
					(who.clone(), worker_key),
				);
			}
		}
		Registry::<T>::insert(who, record);
		// A bid on devices that left the worker (or joined it) is no longer on one machine.
		let looked_at = if moved.is_empty() { 0 } else { T::Bids::retract_on(who, &moved) };
		Self::deposit_event(Event::WorkerBound {
			provider: who.clone(),
			worker_key,
			devices: count,
		});
		Ok(looked_at)
	}

	/// Returns how many standing bids were looked at for withdrawal (what it cost).
	pub(crate) fn do_unbind_worker(
		who: &T::AccountId,
		worker_key: WorkerKey,
	) -> Result<u32, DispatchError> {
		let mut record = Self::record(who)?;
		let index = record
			.workers
			.iter()
			.position(|worker| worker.key == worker_key)
			.ok_or(Error::<T>::UnknownWorkerKey)?;
		ensure!(
			!record.workers[index].devices.iter().any(|device| Self::is_committed(who, device)),
			Error::<T>::DevicesCommitted
		);
		let worker = record.workers.remove(index);
		WorkerAccounts::<T>::remove(Self::worker_account(&worker_key));
		Registry::<T>::insert(who, record);
		// Bids on its devices could never be accepted now: withdrawn, as retractions.
		let looked_at = T::Bids::retract_on(who, &worker.devices);
		Self::deposit_event(Event::WorkerUnbound { provider: who.clone(), worker_key });
		Ok(looked_at)
	}

	/// Returns how many standing bids were withdrawn (what it cost).
	pub(crate) fn do_pause(who: &T::AccountId) -> Result<u32, DispatchError> {
		let mut record = Self::record(who)?;
		match record.status {
			ProviderStatus::Active => record.status = ProviderStatus::Paused,
			ProviderStatus::Paused => return Err(Error::<T>::AlreadyPaused.into()),
			ProviderStatus::Exiting { .. } => return Err(Error::<T>::Exiting.into()),
		}
		Registry::<T>::insert(who, record);
		let retracted = T::Bids::retract_all(who);
		Self::deposit_event(Event::Paused { provider: who.clone() });
		Ok(retracted)
	}

	pub(crate) fn do_resume(who: &T::AccountId) -> DispatchResult {
		let mut record = Self::record(who)?;
		match record.status {
			ProviderStatus::Paused => record.status = ProviderStatus::Active,
			ProviderStatus::Active => return Err(Error::<T>::NotPaused.into()),
			ProviderStatus::Exiting { .. } => return Err(Error::<T>::Exiting.into()),
		}
		Registry::<T>::insert(who, record);
		Self::deposit_event(Event::Resumed { provider: who.clone() });
		Ok(())
	}

	/// Returns how many standing bids were withdrawn (what it cost).
	pub(crate) fn do_announce_exit(who: &T::AccountId) -> Result<u32, DispatchError> {
		let mut record = Self::record(who)?;
		ensure!(!matches!(record.status, ProviderStatus::Exiting { .. }), Error::<T>::Exiting);
		let notice_ends =
			frame_system::Pallet::<T>::block_number().saturating_add(T::ExitNotice::get());
		record.status = ProviderStatus::Exiting { notice_ends };
		Registry::<T>::insert(who, record);
		let retracted = T::Bids::retract_all(who);
		Self::deposit_event(Event::ExitAnnounced { provider: who.clone(), notice_ends });
		Ok(retracted)
	}

	pub(crate) fn do_deregister(who: &T::AccountId) -> DispatchResult {
		let record = Self::record(who)?;
		let ProviderStatus::Exiting { notice_ends } = record.status else {
			return Err(Error::<T>::NotExiting.into());
		};
		ensure!(
			frame_system::Pallet::<T>::block_number() >= notice_ends,
			Error::<T>::NoticeNotServed
		);
		ensure!(record.active_leases == 0, Error::<T>::ActiveLeases);
		// A provider that left would take its pending verdicts (and the slash an objection may
		// bring) with it, and come back with its old score.
		ensure!(T::Obligations::pending(who) == 0, Error::<T>::VerdictsPending);

		asset::release_deposit::<T>(who, record.deposit)?;
		// What must outlive the record: a history to come back to, and the consents used.
		let mut deposit_kept = Zero::zero();
		if record.reputation != Reputation::default() || record.consents > 0 {
			deposit_kept = Self::history_deposit();
			asset::hold_deposit::<T>(who, deposit_kept)?;
			let history = History {
				reputation: record.reputation,
				consents: record.consents,
				deposit: deposit_kept,
			};
			Histories::<T>::insert(who, history);
		}
		for worker in &record.workers {
			WorkerAccounts::<T>::remove(Self::worker_account(&worker.key));
		}
		Registry::<T>::remove(who);
		Credits::<T>::remove(who);
		ProviderCount::<T>::mutate(|count| count.saturating_dec());
		Self::deposit_event(Event::Deregistered {
			provider: who.clone(),
			deposit_released: record.deposit.saturating_sub(deposit_kept),
			deposit_kept,
		});
		Ok(())
	}

	/// The record of a registered provider.
	pub(crate) fn record(who: &T::AccountId) -> Result<ProviderRecordOf<T>, DispatchError> {
		Registry::<T>::get(who).ok_or_else(|| Error::<T>::NotRegistered.into())
	}

	/// `RegistrationDeposit + DepositPerGpu × gpus`.
	pub(crate) fn deposit_for(hardware: &HardwareOf<T>) -> BalanceOf<T> {
		let gpus: BalanceOf<T> = (hardware.gpus.len() as u32).into();
		T::RegistrationDeposit::get().saturating_add(T::DepositPerGpu::get().saturating_mul(gpus))
	}

	fn check_info(info: ProviderInfo) -> Result<CheckedInfo<T>, DispatchError> {
		ensure!(!info.name.is_empty(), Error::<T>::EmptyName);
		ensure!(!info.endpoint.is_empty(), Error::<T>::EmptyEndpoint);
		let name: BoundedVec<_, _> =
			info.name.into_inner().try_into().map_err(|_| Error::<T>::NameTooLong)?;
		if info.endpoint.starts_with(b"http://") {
			ensure!(AllowPlainHttp::<T>::get(), Error::<T>::InsecureEndpoint);
		} else {
			ensure!(info.endpoint.starts_with(b"https://"), Error::<T>::InvalidEndpoint);
		}
		let endpoint: BoundedVec<_, _> =
			info.endpoint.into_inner().try_into().map_err(|_| Error::<T>::EndpointTooLong)?;
		ensure!(is_valid_region(&info.region), Error::<T>::InvalidRegion);
		Ok((name, endpoint, info.region))
	}

	/// The account `key` signs transactions as.
	pub(crate) fn worker_account(key: &WorkerKey) -> T::AccountId {
		T::WorkerAccount::convert(*key)
	}

	/// `proof` is `key`'s signature over its consent to act for `who`, on this chain, as `who`'s
	/// consent number `nonce` (the caller moves `who`'s count on): nobody binds (and so squats)
	/// a key they do not hold, and a consent binds once.
	fn check_proof(
		who: &T::AccountId,
		key: &WorkerKey,
		proof: &WorkerProof,
		nonce: u32,
	) -> DispatchResult {
		let payload =
			stint_primitives::worker_proof_payload(&Self::genesis_hash(), &who.encode(), nonce);
		ensure!(
			frame::deps::sp_io::crypto::sr25519_verify(proof, &payload, key),
			Error::<T>::BadWorkerKeyProof
		);
		Ok(())
	}

	/// What keeping a [`History`] row costs: `DepositPerByte` for its key and its value.
	pub fn history_deposit() -> BalanceOf<T> {
		// The key: a 16-byte hash and the account.
		let bytes =
			16 + T::AccountId::max_encoded_len() + History::<BalanceOf<T>>::max_encoded_len();
		let bytes: BalanceOf<T> = (bytes as u32).into();
		T::DepositPerByte::get().saturating_mul(bytes)
	}

	/// This chain's genesis hash: what a worker key's consent names.
	pub fn genesis_hash() -> [u8; 32] {
		stint_traits::genesis_hash::<T>()
	}

	/// The nonce the next consent to act for `who` must sign: how many consents `who` used,
	/// registered or not.
	pub fn consent_nonce(who: &T::AccountId) -> u32 {
		Registry::<T>::get(who)
			.map(|record| record.consents)
			.or_else(|| Histories::<T>::get(who).map(|history| history.consents))
			.unwrap_or(0)
	}

	/// A key that may become one of `who`'s worker keys: not its own account, bound by nobody,
	/// and not a provider's account.
	fn check_new_worker_key(who: &T::AccountId, key: &WorkerKey) -> DispatchResult {
		let account = Self::worker_account(key);
		ensure!(&account != who, Error::<T>::WorkerKeyIsAccount);
		ensure!(!WorkerAccounts::<T>::contains_key(&account), Error::<T>::WorkerKeyTaken);
		ensure!(!Registry::<T>::contains_key(&account), Error::<T>::WorkerKeyIsProvider);
		Ok(())
	}

	/// Checks an inventory: each GPU named once, none of them empty.
	fn check_hardware(spec: HardwareSpec) -> Result<HardwareOf<T>, DispatchError> {
		ensure!(!spec.gpus.is_empty(), Error::<T>::NoGpus);
		ensure!(spec.cpu_cores > 0, Error::<T>::ZeroCpuCores);
		ensure!(spec.ram_mib > 0, Error::<T>::ZeroRam);
		let gpus: BoundedVec<_, T::MaxGpus> =
			spec.gpus.into_inner().try_into().map_err(|_| Error::<T>::TooManyGpus)?;
		let mut seen = BTreeSet::new();
		for gpu in &gpus {
			ensure!(gpu.vram_mib > 0, Error::<T>::ZeroVram);
			ensure!(!gpu.model.is_empty(), Error::<T>::EmptyGpuModel);
			ensure!(seen.insert(gpu.uuid_hash), Error::<T>::DuplicateDevice);
		}
		Ok(Hardware {
			gpus,
			cpu_cores: spec.cpu_cores,
			ram_mib: spec.ram_mib,
			disk_gib: spec.disk_gib,
		})
	}

	/// Whether `who`'s `device` is committed to a lease.
	pub(crate) fn is_committed(who: &T::AccountId, device: &stint_primitives::DeviceId) -> bool {
		CommittedDevices::<T>::contains_key(who, device)
	}
}
