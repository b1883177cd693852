//! Every call's happy and unhappy paths, the registry trait, reputation, and the money.

use crate::{mock::*, *};
use frame::deps::sp_runtime::bounded_vec;
use frame::{
	deps::frame_support::{dispatch::GetDispatchInfo, traits::UnfilteredDispatchable},
	testing_prelude::*,
};
use polkadot_sdk::pallet_balances;
use stint_primitives::{ComputeCapability, GpuRequirements, Outcome};
use stint_traits::refused;
use stint_traits::{ProviderRegistry, ReputationRecorder};

fn requirements(count: u32) -> GpuRequirements {
	GpuRequirements {
		gpu_count: count,
		min_vram_mib: 40_000,
		min_compute_capability: ComputeCapability { major: 8, minor: 0 },
		models: Default::default(),
		min_cuda_driver_version: 12_000,
		region: None,
		min_reputation: Permill::zero(),
	}
}

#[test]
fn register_stores_the_record_and_holds_the_deposit() {
	ExtBuilder::default().build_and_execute(|| {
		let issuance = Balances::total_issuance();
		register(1, &[1, 2]);
		let record = Providers::record(&1).unwrap();
		assert_eq!(record.hardware.gpus.len(), 2);
		assert_eq!(record.status, ProviderStatus::Active);
		assert_eq!(record.deposit, DEPOSIT + 2 * DEPOSIT_PER_GPU);
		assert_eq!(held(1), DEPOSIT + 2 * DEPOSIT_PER_GPU);
		assert_eq!(free(1) + held(1), ENDOWMENT);
		assert_eq!(Balances::total_issuance(), issuance);
		assert_eq!(ProviderCount::<Test>::get(), 1);
		assert_eq!(
			last_event(),
			Event::Registered { provider: 1, gpus: 2, deposit: DEPOSIT + 2 * DEPOSIT_PER_GPU }
		);
	});
}

#[test]
fn register_refuses_bad_input_and_changes_nothing() {
	ExtBuilder::default().build_and_execute(|| {
		let try_register = |info: ProviderInfo, hw: HardwareSpec| {
			Providers::register(RuntimeOrigin::signed(1), info, worker_key(9), hw, proof(9, 1))
		};
		let with = |f: fn(&mut ProviderInfo)| {
			let mut i = info();
			f(&mut i);
			i
		};
		let hw_with = |f: fn(&mut HardwareSpec)| {
			let mut h = hardware(&[1]);
			f(&mut h);
			h
		};
		let cases: Vec<(ProviderInfo, HardwareSpec, Error<Test>)> = vec![
			(with(|i| i.name = Default::default()), hardware(&[1]), Error::EmptyName),
			(
				with(|i| i.name = vec![b'a'; 17].try_into().unwrap()),
				hardware(&[1]),
				Error::NameTooLong,
			),
			(with(|i| i.endpoint = Default::default()), hardware(&[1]), Error::EmptyEndpoint),
			(
				with(|i| i.endpoint = b"ftp://x".to_vec().try_into().unwrap()),
				hardware(&[1]),
				Error::InvalidEndpoint,
			),
			(
				with(|i| {
					i.endpoint = [b"https://".as_slice(), &[b'a'; 30]].concat().try_into().unwrap()
				}),
				hardware(&[1]),
				Error::EndpointTooLong,
			),
			(with(|i| i.region = *b"de"), hardware(&[1]), Error::InvalidRegion),
			(info(), hardware(&[]), Error::NoGpus),
			(info(), hardware(&[1, 2, 3, 4, 5]), Error::TooManyGpus),
			(info(), hardware(&[1, 1]), Error::DuplicateDevice),
			(info(), hw_with(|h| h.gpus[0].vram_mib = 0), Error::ZeroVram),
			(info(), hw_with(|h| h.gpus[0].model = Default::default()), Error::EmptyGpuModel),
			(info(), hw_with(|h| h.cpu_cores = 0), Error::ZeroCpuCores),
			(info(), hw_with(|h| h.ram_mib = 0), Error::ZeroRam),
		];
		for (info, hw, error) in cases {
			assert_noop!(refused(try_register(info, hw)), error);
		}
	});
}

#[test]
fn register_refuses_a_second_registration_and_a_poor_account_not_a_device_id_in_use() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1, 2]);
		assert_noop!(
			refused(Providers::register(
				RuntimeOrigin::signed(1),
				info(),
				worker_key(9),
				hardware(&[3]),
				proof(9, 1)
			)),
			Error::<Test>::AlreadyRegistered
		);
		// A device id names a GPU within its provider's inventory: nobody blocks another
		// provider's GPUs by declaring their ids first (issue 37, hole 5; before, this was
		// refused with `DeviceTaken`).
		assert_ok!(Providers::register(
			RuntimeOrigin::signed(2),
			info(),
			worker_key(9),
			hardware(&[2, 3]),
			proof(9, 2)
		));
		assert_ok!(Providers::commit_devices(&1, &[[2; 32]], 7));
		assert_eq!(Providers::committed_to(&2, &[2; 32]), None);
		assert_ok!(Providers::commit_devices(&2, &[[2; 32]], 8));
		// Account 7 has nothing to hold the deposit from.
		assert_noop!(
			refused(Providers::register(
				RuntimeOrigin::signed(7),
				info(),
				worker_key(10),
				hardware(&[3]),
				proof(10, 7)
			)),
			Error::<Test>::InsufficientBalance
		);
		assert_noop!(
			refused(Providers::register(
				RuntimeOrigin::none(),
				info(),
				worker_key(9),
				hardware(&[3]),
				proof(9, 1)
			)),
			DispatchError::BadOrigin
		);
	});
}

#[test]
fn update_info_changes_name_endpoint_and_region() {
	ExtBuilder::default().build_and_execute(|| {
		assert_noop!(
			refused(Providers::update_info(RuntimeOrigin::signed(1), info())),
			Error::<Test>::NotRegistered
		);
		register(1, &[1]);
		let new = ProviderInfo {
			name: b"new".to_vec().try_into().unwrap(),
			endpoint: b"http://10.0.0.1:8080".to_vec().try_into().unwrap(),
			region: *b"FR",
		};
		// Plain HTTP only where the chain allows it (development and local chains).
		assert_noop!(
			refused(Providers::update_info(RuntimeOrigin::signed(1), new.clone())),
			Error::<Test>::InsecureEndpoint
		);
		AllowPlainHttp::<Test>::put(true);
		assert_ok!(Providers::update_info(RuntimeOrigin::signed(1), new));
		let record = Providers::record(&1).unwrap();
		assert_eq!((record.name.to_vec(), record.region), (b"new".to_vec(), *b"FR"));
		assert_eq!(last_event(), Event::InfoUpdated { provider: 1 });
		let bad = ProviderInfo { region: *b"1A", ..info() };
		assert_noop!(
			refused(Providers::update_info(RuntimeOrigin::signed(1), bad)),
			Error::<Test>::InvalidRegion
		);
	});
}

#[test]
fn update_hardware_moves_the_deposit() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1, 2]);
		register(2, &[5]);
		// Grow to three GPUs: keeps its own devices, holds 10 more.
		assert_ok!(Providers::update_hardware(RuntimeOrigin::signed(1), hardware(&[1, 2, 3])));
		assert_eq!(held(1), DEPOSIT + 3 * DEPOSIT_PER_GPU);
		assert_eq!(free(1) + held(1), ENDOWMENT);
		// Shrink to one new GPU: the old ones are free for others, the deposit is released.
		assert_ok!(Providers::update_hardware(RuntimeOrigin::signed(1), hardware(&[4])));
		assert_eq!(held(1), DEPOSIT + DEPOSIT_PER_GPU);
		// Bids name devices of the old inventory: withdrawn at each change.
		assert_eq!(retracted(), vec![1, 1]);
		assert_eq!(
			last_event(),
			Event::HardwareUpdated { provider: 1, gpus: 1, deposit: DEPOSIT + DEPOSIT_PER_GPU }
		);
		assert_noop!(
			refused(Providers::update_hardware(RuntimeOrigin::signed(3), hardware(&[6]))),
			Error::<Test>::NotRegistered
		);
	});
}

#[test]
fn update_hardware_is_refused_while_a_device_is_committed() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1, 2]);
		assert_ok!(Providers::commit_devices(&1, &[[1; 32]], 7));
		assert_noop!(
			refused(Providers::update_hardware(RuntimeOrigin::signed(1), hardware(&[1, 2, 3]))),
			Error::<Test>::DevicesCommitted
		);
		Providers::release_devices(&1, &[[1; 32]], 7);
		assert_ok!(Providers::update_hardware(RuntimeOrigin::signed(1), hardware(&[1, 2, 3])));
	});
}

#[test]
fn rotate_worker_key_moves_the_key_and_its_devices() {
	ExtBuilder::default().build_and_execute(|| {
		let rotate = |from, to: u8| {
			Providers::rotate_worker_key(
				RuntimeOrigin::signed(1),
				from,
				worker_key(to),
				proof(to, 1),
			)
		};
		assert_noop!(refused(rotate(worker_key(40), 41)), Error::<Test>::NotRegistered);
		register(1, &[1, 2]);
		let first = worker_key(101);
		assert_eq!(Providers::acting_for(&worker_account(101)), Ok((1, Some(first))));
		assert_noop!(refused(rotate(worker_key(40), 41)), Error::<Test>::UnknownWorkerKey);
		// The new key must consent, to this provider.
		assert_noop!(
			refused(Providers::rotate_worker_key(
				RuntimeOrigin::signed(1),
				first,
				worker_key(40),
				proof(41, 1)
			)),
			Error::<Test>::BadWorkerKeyProof
		);
		assert_noop!(
			refused(Providers::rotate_worker_key(
				RuntimeOrigin::signed(1),
				first,
				worker_key(40),
				proof(40, 2)
			)),
			Error::<Test>::BadWorkerKeyProof
		);
		assert_ok!(rotate(first, 40));
		assert_eq!(
			last_event(),
			Event::WorkerKeyRotated { provider: 1, from: first, to: worker_key(40) }
		);
		// The old key acts for nobody; the new one for the same devices.
		assert_eq!(
			Providers::acting_for(&worker_account(101)),
			Err(Error::<Test>::NotProviderOrWorker.into())
		);
		assert_eq!(Providers::acting_for(&worker_account(40)), Ok((1, Some(worker_key(40)))));
		assert_eq!(Providers::worker_for(&1, &[[1; 32], [2; 32]]), Some(worker_key(40)));
		assert_eq!(Providers::worker_devices(&1, &worker_key(40)), vec![[1; 32], [2; 32]]);
		// A provider acts for itself.
		assert_eq!(Providers::acting_for(&1), Ok((1, None)));
	});
}

#[test]
fn worker_keys_are_unique_across_providers_and_never_a_providers_account() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1]);
		// Nobody can take another provider's worker key: not even with a replayed proof.
		assert_noop!(
			refused(Providers::register(
				RuntimeOrigin::signed(2),
				info(),
				worker_key(101),
				hardware(&[2]),
				proof(101, 1)
			)),
			Error::<Test>::WorkerKeyTaken
		);
		// A worker key is never its own provider's account, nor another provider's.
		let own = worker_account(30);
		assert_noop!(
			refused(Providers::register(
				RuntimeOrigin::signed(own),
				info(),
				worker_key(30),
				hardware(&[2]),
				proof(30, own)
			)),
			Error::<Test>::WorkerKeyIsAccount
		);
		let provider_key = worker_account(31);
		// Funded from account 5, so that no unit is created.
		assert_ok!(Balances::transfer_allow_death(
			RuntimeOrigin::signed(5),
			provider_key,
			ENDOWMENT / 2
		));
		assert_ok!(Providers::register(
			RuntimeOrigin::signed(provider_key),
			info(),
			worker_key(32),
			hardware(&[5]),
			proof(32, provider_key)
		));
		assert_noop!(
			refused(Providers::register(
				RuntimeOrigin::signed(2),
				info(),
				worker_key(31),
				hardware(&[2]),
				proof(31, 2)
			)),
			Error::<Test>::WorkerKeyIsProvider
		);
		// A worker key's account cannot register as a provider.
		assert_ok!(Providers::rotate_worker_key(
			RuntimeOrigin::signed(1),
			worker_key(101),
			worker_key(3),
			proof(3, 1)
		));
		assert_noop!(
			refused(Providers::register(
				RuntimeOrigin::signed(worker_account(3)),
				info(),
				worker_key(4),
				hardware(&[2]),
				proof(4, worker_account(3))
			)),
			Error::<Test>::AccountIsWorkerKey
		);
		register(2, &[2]);
		assert_noop!(
			refused(Providers::rotate_worker_key(
				RuntimeOrigin::signed(2),
				worker_key(102),
				worker_key(3),
				proof(3, 2)
			)),
			Error::<Test>::WorkerKeyTaken
		);
		assert_noop!(
			refused(Providers::bind_worker(
				RuntimeOrigin::signed(2),
				worker_key(3),
				bounded_vec![[2; 32]],
				proof(3, 2)
			)),
			Error::<Test>::WorkerKeyTaken
		);
		// And nobody binds a key that did not consent to them (no squatting).
		assert_noop!(
			refused(Providers::bind_worker(
				RuntimeOrigin::signed(2),
				worker_key(60),
				bounded_vec![[2; 32]],
				proof(60, 1)
			)),
			Error::<Test>::BadWorkerKeyProof
		);
	});
}

#[test]
fn a_provider_binds_one_worker_key_per_machine() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1, 2, 3, 4]);
		let first = worker_key(101);
		let bind = |seed: u8, devices: Vec<[u8; 32]>| {
			Providers::bind_worker(
				RuntimeOrigin::signed(1),
				worker_key(seed),
				devices.try_into().unwrap(),
				proof(seed, 1),
			)
		};
		// The devices must be its own, once each, and not another worker's.
		assert_noop!(refused(bind(40, vec![])), Error::<Test>::NoDevicesOffered);
		assert_noop!(refused(bind(40, vec![[9; 32]])), Error::<Test>::UnknownDevice);
		assert_noop!(refused(bind(101, vec![[3; 32], [3; 32]])), Error::<Test>::DuplicateDevice);
		assert_noop!(refused(bind(40, vec![[3; 32]])), Error::<Test>::DeviceBoundElsewhere);
		// Move devices 3 and 4 from the first machine's worker to a second one.
		assert_ok!(bind(101, vec![[1; 32], [2; 32]]));
		assert_ok!(bind(40, vec![[3; 32], [4; 32]]));
		assert_eq!(
			last_event(),
			Event::WorkerBound { provider: 1, worker_key: worker_key(40), devices: 2 }
		);
		assert_eq!(Providers::acting_for(&worker_account(40)), Ok((1, Some(worker_key(40)))));
		assert_eq!(Providers::worker_for(&1, &[[3; 32], [4; 32]]), Some(worker_key(40)));
		assert_eq!(Providers::worker_for(&1, &[[1; 32]]), Some(first));
		// A bid must stay on one machine.
		assert_eq!(Providers::worker_for(&1, &[[2; 32], [3; 32]]), None);
		assert_noop!(
			refused(Providers::check_offer(&1, &[[2; 32], [3; 32]], &requirements(2))),
			Error::<Test>::DevicesNotOnOneWorker
		);
		assert_ok!(Providers::check_offer(&1, &[[3; 32], [4; 32]], &requirements(2)));
		// At most MaxWorkers (3).
		assert_ok!(bind(40, vec![[3; 32]]));
		assert_ok!(bind(41, vec![[4; 32]]));
		assert_noop!(refused(bind(42, vec![[9; 32]])), Error::<Test>::UnknownDevice);
		assert_ok!(bind(101, vec![[1; 32]]));
		assert_noop!(refused(bind(42, vec![[2; 32]])), Error::<Test>::TooManyWorkers);
		// Devices of a running lease cannot change hands, and their worker cannot go.
		assert_ok!(Providers::commit_devices(&1, &[[3; 32]], 7));
		assert_noop!(
			refused(bind(41, vec![[3; 32], [4; 32]])),
			Error::<Test>::DeviceBoundElsewhere
		);
		assert_noop!(refused(bind(40, vec![[2; 32]])), Error::<Test>::DevicesCommitted);
		assert_noop!(
			refused(Providers::unbind_worker(RuntimeOrigin::signed(1), worker_key(40))),
			Error::<Test>::DevicesCommitted
		);
		Providers::release_devices(&1, &[[3; 32]], 7);
		assert_ok!(Providers::unbind_worker(RuntimeOrigin::signed(1), worker_key(40)));
		assert_eq!(last_event(), Event::WorkerUnbound { provider: 1, worker_key: worker_key(40) });
		assert_eq!(
			Providers::acting_for(&worker_account(40)),
			Err(Error::<Test>::NotProviderOrWorker.into())
		);
		assert_noop!(
			refused(Providers::unbind_worker(RuntimeOrigin::signed(1), worker_key(40))),
			Error::<Test>::UnknownWorkerKey
		);
		// Device 3 is on no machine now: it cannot be offered until bound.
		assert_noop!(
			refused(Providers::check_offer(&1, &[[3; 32]], &requirements(1))),
			Error::<Test>::DevicesNotOnOneWorker
		);
	});
}

#[test]
fn hardware_changes_and_deregistration_keep_the_worker_index_right() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1, 2]);
		let first = worker_key(101);
		// One worker: it follows the machine's new inventory.
		assert_ok!(Providers::update_hardware(RuntimeOrigin::signed(1), hardware(&[2, 3])));
		assert_eq!(Providers::worker_devices(&1, &first), vec![[2; 32], [3; 32]]);
		// Two workers: a device that is gone leaves its worker; a worker left with none goes.
		assert_ok!(Providers::bind_worker(
			RuntimeOrigin::signed(1),
			first,
			bounded_vec![[2; 32]],
			proof(101, 1)
		));
		assert_ok!(Providers::bind_worker(
			RuntimeOrigin::signed(1),
			worker_key(40),
			bounded_vec![[3; 32]],
			proof(40, 1)
		));
		assert_ok!(Providers::update_hardware(RuntimeOrigin::signed(1), hardware(&[2, 4])));
		assert_eq!(Providers::worker_devices(&1, &first), vec![[2; 32]]);
		assert_eq!(
			Providers::acting_for(&worker_account(40)),
			Err(Error::<Test>::NotProviderOrWorker.into())
		);
		// Device 4 is new: with two workers before the change, it waits for `bind_worker`.
		assert_eq!(Providers::worker_for(&1, &[[4; 32]]), None);
		Providers::do_try_state().unwrap();

		assert_ok!(Providers::announce_exit(RuntimeOrigin::signed(1)));
		System::set_block_number(1 + EXIT_NOTICE);
		assert_ok!(Providers::deregister(RuntimeOrigin::signed(1)));
		assert_eq!(WorkerAccounts::<Test>::iter().count(), 0);
		// The key is free again.
		register(2, &[1]);
		assert_ok!(Providers::rotate_worker_key(
			RuntimeOrigin::signed(2),
			worker_key(102),
			first,
			proof(101, 2)
		));
	});
}

#[test]
fn pause_and_resume_toggle_whether_the_provider_takes_leases() {
	ExtBuilder::default().build_and_execute(|| {
		assert_noop!(
			refused(Providers::pause(RuntimeOrigin::signed(1))),
			Error::<Test>::NotRegistered
		);
		register(1, &[1]);
		assert!(Providers::is_active(&1));
		assert_noop!(
			refused(Providers::resume(RuntimeOrigin::signed(1))),
			Error::<Test>::NotPaused
		);
		// Weighed for the most standing bids a provider may have, charged for its own.
		let call = crate::Call::<Test>::pause {};
		let declared = call.get_dispatch_info().call_weight;
		let bids = |n| <RecordedBids as stint_traits::StandingBids<u64>>::retract_weight(n);
		assert_eq!(declared, <() as WeightInfo>::pause() + bids(64));
		let charged = call.dispatch_bypass_filter(RuntimeOrigin::signed(1)).unwrap();
		assert_eq!(charged.actual_weight, Some(<() as WeightInfo>::pause() + bids(STANDING_BIDS)));
		assert_eq!(last_event(), Event::Paused { provider: 1 });
		assert!(!Providers::is_active(&1));
		// A paused provider's standing bids are withdrawn: none can win a lease it won't serve.
		assert_eq!(retracted(), vec![1]);
		assert_noop!(
			refused(Providers::pause(RuntimeOrigin::signed(1))),
			Error::<Test>::AlreadyPaused
		);
		assert_noop!(
			refused(Providers::check_offer(&1, &[[1; 32]], &requirements(1))),
			Error::<Test>::ProviderNotActive
		);
		assert_ok!(Providers::resume(RuntimeOrigin::signed(1)));
		assert_eq!(last_event(), Event::Resumed { provider: 1 });
		assert!(Providers::is_active(&1));
	});
}

#[test]
fn exit_takes_notice_and_no_running_lease() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1, 2]);
		assert_noop!(
			refused(Providers::deregister(RuntimeOrigin::signed(1))),
			Error::<Test>::NotExiting
		);
		assert_ok!(Providers::commit_devices(&1, &[[1; 32]], 7));
		assert_ok!(Providers::pause(RuntimeOrigin::signed(1)));
		assert_ok!(Providers::announce_exit(RuntimeOrigin::signed(1)));
		assert_eq!(
			last_event(),
			Event::ExitAnnounced { provider: 1, notice_ends: 1 + EXIT_NOTICE }
		);
		assert!(!Providers::is_active(&1));
		assert_eq!(retracted(), vec![1, 1], "withdrawn when pausing, and again when leaving");
		assert_noop!(
			refused(Providers::announce_exit(RuntimeOrigin::signed(1))),
			Error::<Test>::Exiting
		);
		assert_noop!(refused(Providers::pause(RuntimeOrigin::signed(1))), Error::<Test>::Exiting);
		assert_noop!(refused(Providers::resume(RuntimeOrigin::signed(1))), Error::<Test>::Exiting);
		assert_noop!(
			refused(Providers::deregister(RuntimeOrigin::signed(1))),
			Error::<Test>::NoticeNotServed
		);

		System::set_block_number(1 + EXIT_NOTICE);
		assert_noop!(
			refused(Providers::deregister(RuntimeOrigin::signed(1))),
			Error::<Test>::ActiveLeases
		);
		Providers::release_devices(&1, &[[1; 32]], 7);
		// The lease's result still waits for its buyer's verdict: leaving would dodge it.
		Pending::set(vec![(1, 1)]);
		assert_noop!(
			refused(Providers::deregister(RuntimeOrigin::signed(1))),
			Error::<Test>::VerdictsPending
		);
		Pending::set(vec![]);

		let issuance = Balances::total_issuance();
		assert_ok!(Providers::deregister(RuntimeOrigin::signed(1)));
		// It used a worker-key consent: the chain keeps that (and its score), paid for.
		let kept = Providers::history_deposit();
		assert_eq!(
			last_event(),
			Event::Deregistered {
				provider: 1,
				deposit_released: DEPOSIT + 2 * DEPOSIT_PER_GPU - kept,
				deposit_kept: kept
			}
		);
		assert_eq!((held(1), free(1)), (kept, ENDOWMENT - kept));
		assert_eq!(Balances::total_issuance(), issuance);
		assert_eq!(ProviderCount::<Test>::get(), 0);
	});
}

#[test]
fn check_offer_names_what_is_wrong() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1, 2]);
		register(2, &[3]);
		let req = requirements(2);
		assert_ok!(Providers::check_offer(&1, &[[1; 32], [2; 32]], &req));
		let check = |who, devices: &[[u8; 32]], req: &GpuRequirements| {
			Providers::check_offer(&who, devices, req)
		};
		assert_noop!(refused(check(4, &[[1; 32]], &req)), Error::<Test>::NotRegistered);
		assert_noop!(refused(check(1, &[], &req)), Error::<Test>::NoDevicesOffered);
		assert_noop!(refused(check(1, &[[1; 32], [1; 32]], &req)), Error::<Test>::DuplicateDevice);
		assert_noop!(refused(check(1, &[[1; 32], [3; 32]], &req)), Error::<Test>::UnknownDevice);
		assert_noop!(refused(check(1, &[[1; 32]], &req)), Error::<Test>::WrongDeviceCount);
		assert_noop!(
			refused(check(
				1,
				&[[1; 32], [2; 32]],
				&GpuRequirements { region: Some(*b"US"), ..req.clone() }
			)),
			Error::<Test>::RegionMismatch
		);
		assert_noop!(
			refused(check(
				1,
				&[[1; 32], [2; 32]],
				&GpuRequirements { min_vram_mib: 100_000, ..req.clone() }
			)),
			Error::<Test>::TooLittleVram
		);
		assert_noop!(
			refused(check(
				1,
				&[[1; 32], [2; 32]],
				&GpuRequirements {
					min_compute_capability: ComputeCapability { major: 10, minor: 0 },
					..req.clone()
				}
			)),
			Error::<Test>::ComputeCapabilityTooLow
		);
		assert_noop!(
			refused(check(
				1,
				&[[1; 32], [2; 32]],
				&GpuRequirements {
					models: vec![b"NVIDIA A100".to_vec().try_into().unwrap()].try_into().unwrap(),
					..req.clone()
				}
			)),
			Error::<Test>::ModelNotAllowed
		);
		assert_noop!(
			refused(check(
				1,
				&[[1; 32], [2; 32]],
				&GpuRequirements { min_cuda_driver_version: 13_000, ..req.clone() }
			)),
			Error::<Test>::DriverTooOld
		);
		assert_noop!(
			refused(check(
				1,
				&[[1; 32], [2; 32]],
				&GpuRequirements { min_reputation: Permill::from_percent(51), ..req.clone() }
			)),
			Error::<Test>::ReputationTooLow
		);
		assert_ok!(Providers::commit_devices(&1, &[[2; 32]], 9));
		assert_noop!(refused(check(1, &[[1; 32], [2; 32]], &req)), Error::<Test>::DeviceBusy);
	});
}

#[test]
fn committing_and_releasing_devices_tracks_active_leases() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1, 2, 3]);
		register(2, &[4]);
		assert_ok!(Providers::commit_devices(&1, &[[1; 32], [2; 32]], 10));
		assert_ok!(Providers::commit_devices(&1, &[[3; 32]], 11));
		assert_eq!(Providers::record(&1).unwrap().active_leases, 2);
		assert_eq!(Providers::committed_to(&1, &[2; 32]), Some(10));
		assert_noop!(
			refused(Providers::commit_devices(&1, &[[3; 32]], 12)),
			Error::<Test>::DeviceBusy
		);
		assert_noop!(
			refused(Providers::commit_devices(&1, &[[4; 32]], 12)),
			Error::<Test>::UnknownDevice
		);
		assert_noop!(
			refused(Providers::commit_devices(&1, &[], 12)),
			Error::<Test>::NoDevicesOffered
		);
		// Releasing with the wrong lease id releases nothing.
		Providers::release_devices(&1, &[[1; 32], [2; 32]], 11);
		assert_eq!(Providers::record(&1).unwrap().active_leases, 2);
		Providers::release_devices(&1, &[[1; 32], [2; 32]], 10);
		assert_eq!(Providers::record(&1).unwrap().active_leases, 1);
		assert_eq!(Providers::committed_to(&1, &[1; 32]), None);
	});
}

/// A buyer none of the tests' leases had before: each lease counts in full.
fn next_buyer() -> u64 {
	thread_local!(static NEXT: core::cell::Cell<u64> = const { core::cell::Cell::new(10_000) });
	NEXT.with(|next| {
		next.set(next.get() + 1);
		next.get()
	})
}

#[test]
fn one_buyer_counts_for_at_most_its_credit_and_faults_always_count() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1]);
		let record = |buyer: u64, outcome, weight| {
			<Providers as ReputationRecorder<u64>>::record(&1, &buyer, outcome, weight)
		};
		// One buyer's leases count for two full outcomes (`CreditPerBuyer`), however many.
		record(7, Outcome::Completed, Permill::from_percent(50));
		for _ in 0..10 {
			record(7, Outcome::Completed, Permill::one());
		}
		let reputation = Providers::record(&1).unwrap().reputation;
		assert_eq!((reputation.completed, reputation.good), (11, 1_975));
		assert_eq!(Credits::<Test>::get(1).into_inner(), vec![(7, 2_000)]);
		// Its faults still count in full.
		record(7, Outcome::NoShow, Permill::one());
		assert_eq!(Providers::record(&1).unwrap().reputation.no_shows, 1);
		// Another buyer counts again.
		record(8, Outcome::Completed, Permill::one());
		assert_eq!(Credits::<Test>::get(1).into_inner(), vec![(7, 2_000), (8, 1_000)]);
		// The earliest of `MaxCreditors` buyers is forgotten first.
		for buyer in 100..115 {
			record(buyer, Outcome::Completed, Permill::one());
		}
		let credits = Credits::<Test>::get(1);
		assert_eq!((credits.len(), credits[0].0, credits[15].0), (16, 8, 114));
		leave(1);
		assert!(Credits::<Test>::get(1).is_empty(), "removed with the record");
	});
}

#[test]
fn reputation_follows_outcomes_with_decay() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1]);
		assert_eq!(Providers::reputation(&1), Some(Permill::from_percent(50)));
		<Providers as ReputationRecorder<u64>>::record(
			&1,
			&next_buyer(),
			Outcome::Completed,
			Permill::one(),
		);
		// (1 + 1) / (1 + 0 + 2)
		assert_eq!(Providers::reputation(&1), Some(Permill::from_rational(2u32, 3u32)));
		assert_eq!(
			last_event(),
			Event::ReputationUpdated {
				provider: 1,
				outcome: Outcome::Completed,
				score: Permill::from_rational(2u32, 3u32)
			}
		);
		// A failed job is neutral: not even decay moves the score.
		<Providers as ReputationRecorder<u64>>::record(
			&1,
			&next_buyer(),
			Outcome::Failed,
			Permill::one(),
		);
		assert_eq!(Providers::reputation(&1), Some(Permill::from_rational(2u32, 3u32)));
		<Providers as ReputationRecorder<u64>>::record(
			&1,
			&next_buyer(),
			Outcome::Slashed,
			Permill::one(),
		);
		<Providers as ReputationRecorder<u64>>::record(
			&1,
			&next_buyer(),
			Outcome::NoShow,
			Permill::one(),
		);
		let record = Providers::record(&1).unwrap().reputation;
		assert_eq!(
			(record.completed, record.failed, record.slashed, record.no_shows),
			(1, 1, 1, 1)
		);
		assert!(Providers::reputation(&1).unwrap() < Permill::from_percent(50));
		// Recent good behaviour outweighs old faults: decay makes them fade.
		for _ in 0..200 {
			<Providers as ReputationRecorder<u64>>::record(
				&1,
				&next_buyer(),
				Outcome::Completed,
				Permill::one(),
			);
		}
		assert!(Providers::reputation(&1).unwrap() > Permill::from_percent(95));
		// Unknown providers are ignored.
		<Providers as ReputationRecorder<u64>>::record(
			&9,
			&next_buyer(),
			Outcome::Completed,
			Permill::one(),
		);
	});
}

#[test]
fn reputation_score_is_the_beta_mean() {
	let mut r = Reputation::default();
	assert_eq!(r.score(), Permill::from_percent(50));
	r.record(Outcome::Slashed, Permill::zero(), Permill::one());
	assert_eq!(r.score(), Permill::from_rational(1u32, 3u32));
	r.record(Outcome::Completed, Permill::zero(), Permill::one());
	r.record(Outcome::Completed, Permill::zero(), Permill::one());
	assert_eq!(r.score(), Permill::from_rational(3u32, 5u32));
}

#[test]
fn an_outcome_counts_by_its_weight_and_light_ones_wash_nothing_out() {
	let decay = Permill::from_percent(2);
	let mut r = Reputation::default();
	r.record(Outcome::NoShow, decay, Permill::one());
	let after_fault = r.score();
	// A thousand leases that delivered nothing neither raise the score nor decay the fault.
	for _ in 0..1_000 {
		r.record(Outcome::Completed, decay, Permill::zero());
	}
	assert_eq!((r.score(), r.completed), (after_fault, 1_000));
	// Half a lease counts half.
	let mut half = Reputation::default();
	half.record(Outcome::Completed, Permill::zero(), Permill::from_percent(50));
	assert_eq!(half.score(), Permill::from_rational(3u32, 5u32));
	let mut objected = Reputation::default();
	objected.record(Outcome::Objected, Permill::zero(), Permill::one());
	assert_eq!((objected.objected, objected.score()), (1, Permill::from_rational(1u32, 3u32)));
}

fn leave(who: u64) {
	assert_ok!(Providers::announce_exit(RuntimeOrigin::signed(who)));
	System::set_block_number(System::block_number() + EXIT_NOTICE);
	assert_ok!(Providers::deregister(RuntimeOrigin::signed(who)));
}

#[test]
fn a_history_follows_its_account_and_no_gpu_carries_one() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1, 2]);
		<Providers as ReputationRecorder<u64>>::record(
			&1,
			&next_buyer(),
			Outcome::NoShow,
			Permill::one(),
		);
		let bad = Providers::reputation(&1).unwrap();
		assert!(bad < Permill::from_percent(50));
		leave(1);
		register(1, &[3]);
		assert_eq!(Providers::reputation(&1), Some(bad), "the same account keeps its history");
		// Device ids are the provider's own word: another account declaring the same ids
		// neither inherits a history from them nor writes one onto them (issue 37, hole 5).
		register(2, &[2]);
		assert_eq!(Providers::reputation(&2), Some(Permill::from_percent(50)));
		register(3, &[1]);
		<Providers as ReputationRecorder<u64>>::record(
			&3,
			&next_buyer(),
			Outcome::Slashed,
			Permill::one(),
		);
		leave(3);
		register(4, &[1]);
		assert_eq!(Providers::reputation(&4), Some(Permill::from_percent(50)));
	});
}

#[test]
fn a_good_history_is_not_bought_with_a_used_gpu() {
	ExtBuilder::default().build_and_execute(|| {
		register(1, &[1]);
		for _ in 0..10 {
			<Providers as ReputationRecorder<u64>>::record(
				&1,
				&next_buyer(),
				Outcome::Completed,
				Permill::one(),
			);
		}
		leave(1);
		register(2, &[1]);
		assert_eq!(Providers::reputation(&2), Some(Permill::from_percent(50)));
	});
}

#[test]
fn the_history_kept_after_leaving_is_paid_for_by_its_size_and_refunded_on_return() {
	use codec::MaxEncodedLen;
	ExtBuilder::default().build_and_execute(|| {
		// The deposit is `DepositPerByte` for each byte of the row: its key (a 16-byte hash and
		// the account) and its value.
		let bytes = 16 + u64::max_encoded_len() + History::<Balance>::max_encoded_len();
		assert_eq!(Providers::history_deposit(), bytes as Balance);
		register(1, &[1, 2]);
		<Providers as ReputationRecorder<u64>>::record(
			&1,
			&next_buyer(),
			Outcome::Completed,
			Permill::one(),
		);
		leave(1);
		let history = crate::Histories::<Test>::get(1).expect("kept");
		assert_eq!((history.consents, history.deposit), (1, Providers::history_deposit()));
		assert_eq!(held(1), history.deposit);
		// The consent it used stays used: registering again needs its next one.
		assert_eq!(Providers::consent_nonce(&1), 1);
		assert_noop!(
			refused(Providers::register(
				RuntimeOrigin::signed(1),
				info(),
				worker_key(101),
				hardware(&[1]),
				stale_proof(101, 1, 0)
			)),
			Error::<Test>::BadWorkerKeyProof
		);
		// Coming back takes the row and releases its deposit.
		register(1, &[1]);
		assert!(crate::Histories::<Test>::get(1).is_none());
		assert_eq!(held(1), DEPOSIT + DEPOSIT_PER_GPU);
		assert_eq!(Providers::record(&1).unwrap().consents, 2);
	});
}

#[test]
fn genesis_registers_providers_and_holds_their_deposits() {
	let mut storage = frame_system::GenesisConfig::<Test>::default().build_storage().unwrap();
	pallet_balances::GenesisConfig::<Test> { balances: vec![(1, ENDOWMENT)], ..Default::default() }
		.assimilate_storage(&mut storage)
		.unwrap();
	crate::GenesisConfig::<Test> {
		providers: vec![(1, info(), worker_key(9), hardware(&[1, 2]))],
		allow_plain_http: false,
	}
	.assimilate_storage(&mut storage)
	.unwrap();
	TestState::new(storage).execute_with(|| {
		assert!(Providers::is_active(&1));
		assert_eq!(held(1), DEPOSIT + 2 * DEPOSIT_PER_GPU);
		assert_eq!(Providers::devices(&1).len(), 2);
		assert_eq!(Providers::worker_for(&1, &[[1; 32], [2; 32]]), Some(worker_key(9)));
		Providers::do_try_state().unwrap();
	});
}

#[test]
fn try_state_catches_a_broken_counter() {
	ExtBuilder::default().build().execute_with(|| {
		register(1, &[1]);
		ProviderCount::<Test>::put(5);
		assert!(Providers::do_try_state().is_err());
	});
}
