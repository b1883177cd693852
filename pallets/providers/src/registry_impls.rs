//! The registry as other pallets see it ([`ProviderRegistry`], [`ReputationRecorder`]), and the
//! invariants `try_state` checks.

use crate::{
	asset, CommittedDevices, Config, Credits, Error, Event, Histories, Pallet, ProviderCount,
	ProviderStatus, Registry, WorkerAccounts, REPUTATION_UNIT,
};
use alloc::{collections::BTreeMap, collections::BTreeSet, vec::Vec};
use frame::{
	deps::{frame_support::storage::StoragePrefixedMap, sp_runtime::TryRuntimeError},
	prelude::*,
};
use stint_primitives::{DeviceId, GpuDevice, GpuRequirements, LeaseId, Outcome, Unfit, WorkerKey};
use stint_traits::{ProviderRegistry, ReputationRecorder};

impl<T: Config> ProviderRegistry<T::AccountId> for Pallet<T> {
	fn is_active(who: &T::AccountId) -> bool {
		Registry::<T>::get(who).is_some_and(|r| r.status == ProviderStatus::Active)
	}

	fn acting_for(
		signer: &T::AccountId,
	) -> Result<(T::AccountId, Option<WorkerKey>), DispatchError> {
		if Registry::<T>::contains_key(signer) {
			return Ok((signer.clone(), None));
		}
		let (provider, key) =
			WorkerAccounts::<T>::get(signer).ok_or(Error::<T>::NotProviderOrWorker)?;
		Ok((provider, Some(key)))
	}

	fn worker_for(who: &T::AccountId, devices: &[DeviceId]) -> Option<WorkerKey> {
		Registry::<T>::get(who)?.worker_for(devices).map(|worker| worker.key)
	}

	fn worker_devices(who: &T::AccountId, key: &WorkerKey) -> Vec<DeviceId> {
		Registry::<T>::get(who)
			.and_then(|record| record.worker(key).map(|worker| worker.devices.to_vec()))
			.unwrap_or_default()
	}

	fn devices(who: &T::AccountId) -> Vec<GpuDevice> {
		Registry::<T>::get(who).map(|r| r.hardware.gpus.into_inner()).unwrap_or_default()
	}

	fn reputation(who: &T::AccountId) -> Option<Permill> {
		Registry::<T>::get(who).map(|r| r.reputation.score())
	}

	fn check_offer(
		who: &T::AccountId,
		devices: &[DeviceId],
		requirements: &GpuRequirements,
	) -> DispatchResult {
		let record = Self::record(who)?;
		ensure!(record.status == ProviderStatus::Active, Error::<T>::ProviderNotActive);
		if let Some(region) = requirements.region {
			ensure!(record.region == region, Error::<T>::RegionMismatch);
		}
		ensure!(
			record.reputation.score() >= requirements.min_reputation,
			Error::<T>::ReputationTooLow
		);
		ensure!(!devices.is_empty(), Error::<T>::NoDevicesOffered);
		ensure!(devices.len() as u32 <= T::MaxGpus::get(), Error::<T>::TooManyGpus);
		let mut offered = Vec::with_capacity(devices.len());
		let mut seen = BTreeSet::new();
		for id in devices {
			ensure!(seen.insert(*id), Error::<T>::DuplicateDevice);
			let gpu = record
				.hardware
				.gpus
				.iter()
				.find(|gpu| &gpu.uuid_hash == id)
				.ok_or(Error::<T>::UnknownDevice)?;
			ensure!(!Self::is_committed(who, id), Error::<T>::DeviceBusy);
			offered.push(gpu.clone());
		}
		// Its results are signed by one worker key: the devices must be on one machine.
		ensure!(record.worker_for(devices).is_some(), Error::<T>::DevicesNotOnOneWorker);
		requirements.admits(&offered).map_err(|unfit| {
			match unfit {
				Unfit::WrongCount => Error::<T>::WrongDeviceCount,
				Unfit::TooLittleVram => Error::<T>::TooLittleVram,
				Unfit::ComputeCapabilityTooLow => Error::<T>::ComputeCapabilityTooLow,
				Unfit::ModelNotAllowed => Error::<T>::ModelNotAllowed,
				Unfit::DriverTooOld => Error::<T>::DriverTooOld,
			}
			.into()
		})
	}

	fn committed_to(who: &T::AccountId, device: &DeviceId) -> Option<LeaseId> {
		CommittedDevices::<T>::get(who, device)
	}

	fn commit_devices(who: &T::AccountId, devices: &[DeviceId], lease: LeaseId) -> DispatchResult {
		let mut record = Self::record(who)?;
		ensure!(!devices.is_empty(), Error::<T>::NoDevicesOffered);
		let mut seen = BTreeSet::new();
		for id in devices {
			ensure!(seen.insert(*id), Error::<T>::DuplicateDevice);
			ensure!(
				record.hardware.gpus.iter().any(|gpu| &gpu.uuid_hash == id),
				Error::<T>::UnknownDevice
			);
			ensure!(!Self::is_committed(who, id), Error::<T>::DeviceBusy);
		}
		for id in devices {
			CommittedDevices::<T>::insert(who, id, lease);
		}
		record.active_leases.saturating_inc();
		Registry::<T>::insert(who, record);
		Ok(())
	}

	fn release_devices(who: &T::AccountId, devices: &[DeviceId], lease: LeaseId) {
		let mut released = false;
		for id in devices {
			if CommittedDevices::<T>::get(who, id) == Some(lease) {
				CommittedDevices::<T>::remove(who, id);
				released = true;
			}
		}
		if released {
			Registry::<T>::mutate(who, |record| {
				if let Some(record) = record {
					record.active_leases.saturating_dec();
				}
			});
		}
	}

	fn tied(a: &T::AccountId, b: &T::AccountId) -> bool {
		let worker_of = |account: &T::AccountId| {
			WorkerAccounts::<T>::get(account).map(|(provider, _)| provider)
		};
		a == b || worker_of(a).as_ref() == Some(b) || worker_of(b).as_ref() == Some(a)
	}

	fn draw(
		requirements: &GpuRequirements,
		seed: [u8; 32],
		exclude: &[T::AccountId],
		max_scan: u32,
		accept: &dyn Fn(&T::AccountId) -> bool,
	) -> Option<(T::AccountId, Vec<DeviceId>)> {
		// The registry is keyed by a hash of the account: starting after the key `seed` names
		// and wrapping round visits providers in an order nobody chose.
		let mut start = Registry::<T>::final_prefix().to_vec();
		start.extend_from_slice(&seed[..16]);
		let mut seen = BTreeSet::new();
		Registry::<T>::iter_from(start)
			.chain(Registry::<T>::iter())
			.take(max_scan as usize)
			.take_while(|(who, _)| seen.insert(who.clone()))
			.find_map(|(who, record)| {
				if record.status != ProviderStatus::Active || exclude.contains(&who) {
					return None;
				}
				// None of `exclude` may act for the candidate, nor it for one of them.
				if exclude.iter().any(|other| Self::tied(other, &who)) {
					return None;
				}
				let mut one = requirements.clone();
				one.gpu_count = 1;
				let devices = record.workers.iter().find_map(|worker| {
					let fit: Vec<DeviceId> = worker
						.devices
						.iter()
						.filter(|id| !Self::is_committed(&who, id))
						.filter(|id| {
							record.hardware.gpus.iter().any(|gpu| {
								&gpu.uuid_hash == *id
									&& one.admits(core::slice::from_ref(gpu)).is_ok()
							})
						})
						.take(requirements.gpu_count as usize)
						.copied()
						.collect();
					(fit.len() as u32 == requirements.gpu_count).then_some(fit)
				})?;
				(Self::check_offer(&who, &devices, requirements).is_ok() && accept(&who))
					.then_some((who, devices))
			})
	}
}

impl<T: Config> Pallet<T> {
	/// How much of `weight` of a served lease `buyer`'s credit with `who` still counts: its
	/// leases count for at most `CreditPerBuyer` full outcomes. Remembers what counted, the
	/// buyer as the latest of `who`'s buyers (the earliest forgotten when there are
	/// `MaxCreditors`).
	pub(crate) fn credit(who: &T::AccountId, buyer: &T::AccountId, weight: Permill) -> Permill {
		let cap = u64::from(T::CreditPerBuyer::get()).saturating_mul(REPUTATION_UNIT);
		Credits::<T>::mutate(who, |credits| {
			let mut credited = 0;
			if let Some(at) = credits.iter().position(|(b, _)| b == buyer) {
				credited = credits.remove(at).1;
			}
			let asked = weight.mul_floor(REPUTATION_UNIT);
			let counted = asked.min(cap.saturating_sub(credited));
			if credits.is_full() {
				credits.remove(0);
			}
			// Room was made above: the push cannot fail.
			let _ = credits.try_push((buyer.clone(), credited.saturating_add(counted)));
			Permill::from_rational(counted, REPUTATION_UNIT)
		})
	}
}

impl<T: Config> ReputationRecorder<T::AccountId> for Pallet<T> {
	fn record(who: &T::AccountId, buyer: &T::AccountId, outcome: Outcome, weight: Permill) {
		if !Registry::<T>::contains_key(who) {
			return;
		}
		let weight =
			if outcome == Outcome::Completed { Self::credit(who, buyer, weight) } else { weight };
		Registry::<T>::mutate(who, |record| {
			if let Some(record) = record {
				record.reputation.record(outcome, T::ReputationDecay::get(), weight);
				Self::deposit_event(Event::ReputationUpdated {
					provider: who.clone(),
					outcome,
					score: record.reputation.score(),
				});
			}
		});
	}
}

/// The registry's invariants.
pub(crate) fn check_invariants<T: Config>() -> Result<(), TryRuntimeError> {
	let mut providers = 0u32;
	let mut workers = 0u32;
	for (who, record) in Registry::<T>::iter() {
		providers += 1;
		ensure!(
			asset::held_deposit::<T>(&who) == record.deposit,
			"a provider's held deposit differs from its record"
		);
		ensure!(
			record.deposit == Pallet::<T>::deposit_for(&record.hardware),
			"a provider's deposit does not match its hardware"
		);
		let mut gpus = BTreeSet::new();
		for gpu in &record.hardware.gpus {
			ensure!(gpus.insert(gpu.uuid_hash), "a provider registered a GPU twice");
		}
		let mut bound = BTreeSet::new();
		for worker in &record.workers {
			workers += 1;
			ensure!(
				WorkerAccounts::<T>::get(Pallet::<T>::worker_account(&worker.key))
					== Some((who.clone(), worker.key)),
				"a worker key is not indexed to its provider"
			);
			ensure!(!worker.devices.is_empty(), "a worker key is bound to no device");
			for device in &worker.devices {
				ensure!(bound.insert(*device), "a device is bound to two worker keys");
				ensure!(
					record.hardware.gpus.iter().any(|gpu| &gpu.uuid_hash == device),
					"a worker key is bound to a device its provider does not have"
				);
			}
		}
	}
	ensure!(
		WorkerAccounts::<T>::iter().count() as u32 == workers,
		"the worker index has keys no provider bound"
	);
	ensure!(ProviderCount::<T>::get() == providers, "ProviderCount differs from the registry");
	for (who, history) in Histories::<T>::iter() {
		ensure!(!Registry::<T>::contains_key(&who), "a registered provider has a history row");
		ensure!(
			asset::held_deposit::<T>(&who) == history.deposit,
			"a history's deposit is not what its account holds"
		);
	}
	let mut leases_of: BTreeMap<T::AccountId, BTreeSet<LeaseId>> = BTreeMap::new();
	for (owner, device, lease) in CommittedDevices::<T>::iter() {
		let record = Registry::<T>::get(&owner).ok_or("a committed device has no provider")?;
		ensure!(
			record.hardware.gpus.iter().any(|gpu| gpu.uuid_hash == device),
			"a committed device is not in its provider's inventory"
		);
		leases_of.entry(owner).or_default().insert(lease);
	}
	for (who, record) in Registry::<T>::iter() {
		let leases = leases_of.get(&who).map_or(0, |l| l.len() as u32);
		ensure!(
			record.active_leases == leases,
			"a provider's active leases differ from its committed devices"
		);
	}
	let cap = u64::from(T::CreditPerBuyer::get()).saturating_mul(REPUTATION_UNIT);
	for (who, credits) in Credits::<T>::iter() {
		ensure!(Registry::<T>::contains_key(&who), "an unregistered account has credits");
		ensure!(credits.iter().all(|(_, c)| *c <= cap), "a buyer counted above its credit");
		let buyers: BTreeSet<_> = credits.iter().map(|(b, _)| b).collect();
		ensure!(buyers.len() == credits.len(), "a buyer is remembered twice");
	}
	Ok(())
}
