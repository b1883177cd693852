//! Benchmarks (v2) of every call, each at its worst case: leases of `MaxGpusPerLease` devices,
//! every ending closing the stream, and the slashing paths paying buyer, reporter and handler.

use crate::*;
use frame::{
	benchmarking::prelude::*,
	deps::{sp_core::crypto::KeyTypeId, sp_io},
};
use stint_primitives::{Report, ReportKind};
use stint_traits::{LeaseFactory, NewLease, PaymentStreams};

const WORKER: KeyTypeId = KeyTypeId(*b"stwk");

struct Setup<T: Config> {
	lease: LeaseId,
	provider: T::AccountId,
	buyer: T::AccountId,
	key: WorkerKey,
}

/// The most depositors a stream takes.
fn max_depositors<T: Config>() -> u32 {
	<T::Streams as PaymentStreams<_, _, _>>::max_depositors()
}

/// A lease of the most devices; an open-ended one's stream has the most depositors.
fn lease<T: Config>(duration: Option<u32>, notice: u32) -> Setup<T> {
	lease_of::<T>(duration, notice, T::MaxGpusPerLease::get(), max_depositors::<T>())
}

/// A lease of `gpus` devices; an open-ended one's stream has `depositors`.
fn lease_of<T: Config>(duration: Option<u32>, notice: u32, gpus: u32, depositors: u32) -> Setup<T> {
	let key = sp_io::crypto::sr25519_generate(WORKER, None);
	let collateral: T::Balance = 1_000u32.into();
	let (provider, devices) = T::BenchmarkHelper::provider(0, gpus, key, collateral);
	let buyer = T::BenchmarkHelper::buyer(0);
	let price: T::Balance = 1_000_000u32.into();
	let lease = Pallet::<T>::create_lease(NewLease {
		order: 0,
		buyer: buyer.clone(),
		provider: provider.clone(),
		devices,
		price_per_block: price,
		escrow: price.saturating_mul(1_000u32.into()),
		duration: duration.map(Into::into),
		collateral,
		termination_notice: notice.into(),
		image_digest: [7; 32],
		// Every settlement withholds: the worst case.
		holdback: Permill::from_percent(10),
		verdict_window: Zero::zero(),
		// Its result may be disputed (nothing else depends on it).
		deterministic: true,
		replicas: 1,
	})
	.unwrap();
	if duration.is_none() {
		// Only an open-ended lease's stream takes other depositors (a fixed one is paid in
		// full from the start): the worst case settles and refunds every one of them.
		T::BenchmarkHelper::fill_stream(Leases::<T>::get(lease).unwrap().stream, depositors);
	}
	Setup { lease, provider, buyer, key }
}

fn running<T: Config>(duration: Option<u32>, notice: u32) -> Setup<T> {
	acknowledged(lease::<T>(duration, notice))
}

fn acknowledged<T: Config>(setup: Setup<T>) -> Setup<T> {
	Pallet::<T>::do_ack_lease(&setup.provider, setup.lease).unwrap();
	setup
}

fn advance<T: Config>(blocks: BlockNumberFor<T>) {
	frame_system::Pallet::<T>::set_block_number(
		frame_system::Pallet::<T>::block_number().saturating_add(blocks),
	);
}

fn signed<T: Config>(setup: &Setup<T>, kind: ReportKind) -> (ResultCommitment, WorkerSignature) {
	let commitment = ResultCommitment {
		output_root: [1; 32],
		receipt_hash: [2; 32],
		exit_code: 0,
		gpu_seconds: 1,
		image_digest: [7; 32],
	};
	let report = Report::new(Pallet::<T>::genesis_hash(), setup.lease, kind, commitment);
	let signature =
		sp_io::crypto::sr25519_sign(WORKER, &setup.key, &report.signing_bytes()).unwrap();
	(commitment, signature)
}

fn status<T: Config>(id: LeaseId) -> LeaseStatus {
	Leases::<T>::get(id).unwrap().status
}

/// Ends a fixed lease early (soon after its acknowledgement, so that an objection slashes), so
/// that its outcome waits for a verdict.
fn early_result<T: Config>() -> Setup<T> {
	let setup = running::<T>(Some(100), 0);
	advance::<T>(10u32.into());
	let (commitment, signature) = signed(&setup, ReportKind::Final);
	Pallet::<T>::do_submit_result(setup.lease, commitment, signature).unwrap();
	assert!(PendingVerdicts::<T>::contains_key(setup.lease));
	setup
}

/// The result a benchmark replica seals: output root `root`.
fn outputs(root: u8) -> ResultCommitment {
	ResultCommitment {
		output_root: [root; 32],
		receipt_hash: [2; 32],
		exit_code: 0,
		gpu_seconds: 1,
		image_digest: [7; 32],
	}
}

/// `r` replicas of order 1, each on its own provider with `gpus` devices, acknowledged.
fn replicas<T: Config>(r: u32, gpus: u32) -> alloc::vec::Vec<Setup<T>> {
	let collateral: T::Balance = 1_000u32.into();
	let price: T::Balance = 1_000_000u32.into();
	let buyer = T::BenchmarkHelper::buyer(0);
	(0..r)
		.map(|i| {
			let key = sp_io::crypto::sr25519_generate(WORKER, None);
			let (provider, devices) = T::BenchmarkHelper::provider(i, gpus, key, collateral);
			let lease = Pallet::<T>::create_lease(NewLease {
				order: 1,
				buyer: buyer.clone(),
				provider: provider.clone(),
				devices,
				price_per_block: price,
				escrow: price.saturating_mul(100u32.into()),
				duration: Some(100u32.into()),
				collateral,
				termination_notice: Zero::zero(),
				image_digest: [7; 32],
				holdback: Permill::from_percent(10),
				verdict_window: Zero::zero(),
				deterministic: true,
				replicas: r,
			})
			.unwrap();
			acknowledged(Setup { lease, provider, buyer: buyer.clone(), key })
		})
		.collect()
}

/// Replica `i` seals output root `roots[i]` with salt `[i; 32]`.
fn seal_all<T: Config>(setups: &[Setup<T>], roots: &[u8]) {
	for (i, setup) in setups.iter().enumerate() {
		let sealed =
			stint_primitives::seal(&outputs(roots[i]), &setup.provider.encode(), &[i as u8; 32]);
		Pallet::<T>::do_commit_result(&setup.provider, setup.lease, sealed).unwrap();
	}
}

/// What replica `i` reveals: its result, salt and signature.
fn opening<T: Config>(
	setup: &Setup<T>,
	i: usize,
	root: u8,
) -> (ResultCommitment, [u8; 32], WorkerSignature) {
	let commitment = outputs(root);
	let report =
		Report::new(Pallet::<T>::genesis_hash(), setup.lease, ReportKind::Final, commitment);
	let signature =
		sp_io::crypto::sr25519_sign(WORKER, &setup.key, &report.signing_bytes()).unwrap();
	(commitment, [i as u8; 32], signature)
}

#[benchmarks]
mod benches {
	use super::*;

	#[benchmark]
	fn ack_lease() {
		let setup = lease::<T>(Some(100), 0);
		#[extrinsic_call]
		_(RawOrigin::Signed(setup.provider.clone()), setup.lease);
		assert_eq!(status::<T>(setup.lease), LeaseStatus::Running);
	}

	/// An open-ended lease of `g` devices whose stream has `d` depositors ends early: every
	/// device released, every depositor refunded, the verdict left pending.
	#[benchmark]
	fn submit_result(
		g: Linear<1, { T::MaxGpusPerLease::get() }>,
		d: Linear<1, { max_depositors::<T>() }>,
	) {
		let setup = acknowledged(lease_of::<T>(None, 0, g, d));
		advance::<T>(10u32.into());
		let (commitment, signature) = signed(&setup, ReportKind::Final);
		#[extrinsic_call]
		_(RawOrigin::Signed(setup.buyer.clone()), setup.lease, commitment, signature);
		assert_eq!(status::<T>(setup.lease), LeaseStatus::Completed);
		assert!(PendingVerdicts::<T>::contains_key(setup.lease));
	}

	/// Settles a stream with `d` depositors, withholding this period's holdback and paying
	/// an earlier period's whose window passed.
	#[benchmark]
	fn checkpoint(d: Linear<1, { max_depositors::<T>() }>) {
		let setup = acknowledged(lease_of::<T>(None, 0, T::MaxGpusPerLease::get(), d));
		let stream = Leases::<T>::get(setup.lease).unwrap().stream;
		advance::<T>(5u32.into());
		let now = frame_system::Pallet::<T>::block_number();
		T::Streams::mark(stream, now).unwrap();
		advance::<T>(5u32.into());
		let (commitment, signature) = signed(&setup, ReportKind::Checkpoint { sequence: 1 });
		#[extrinsic_call]
		_(RawOrigin::Signed(setup.buyer.clone()), setup.lease, commitment, signature);
		assert_eq!(Leases::<T>::get(setup.lease).unwrap().checkpoints, 1);
	}

	#[benchmark]
	fn give_notice() {
		let setup = running::<T>(None, 10);
		#[extrinsic_call]
		_(RawOrigin::Signed(setup.provider.clone()), setup.lease);
		assert!(Leases::<T>::get(setup.lease).unwrap().notice_ends_at.is_some());
	}

	/// Without notice: closes a stream with `d` depositors, releases `g` devices, slashes.
	#[benchmark]
	fn terminate(
		g: Linear<1, { T::MaxGpusPerLease::get() }>,
		d: Linear<1, { max_depositors::<T>() }>,
	) {
		let setup = acknowledged(lease_of::<T>(None, 10, g, d));
		advance::<T>(10u32.into());
		#[extrinsic_call]
		_(RawOrigin::Signed(setup.provider.clone()), setup.lease);
		assert!(matches!(status::<T>(setup.lease), LeaseStatus::Terminated { .. }));
	}

	/// Closes a stream with `d` depositors and releases `g` devices.
	#[benchmark]
	fn close_lease(
		g: Linear<1, { T::MaxGpusPerLease::get() }>,
		d: Linear<1, { max_depositors::<T>() }>,
	) {
		let setup = acknowledged(lease_of::<T>(None, 0, g, d));
		advance::<T>(10u32.into());
		#[extrinsic_call]
		_(RawOrigin::Signed(setup.buyer.clone()), setup.lease);
		assert!(matches!(status::<T>(setup.lease), LeaseStatus::Terminated { .. }));
	}

	/// A lease never acknowledged: its pending stream (topped up by `d` depositors meanwhile)
	/// refunded, `g` devices released, the provider slashed, the reporter rewarded.
	#[benchmark]
	fn report_no_show(
		g: Linear<1, { T::MaxGpusPerLease::get() }>,
		d: Linear<1, { max_depositors::<T>() }>,
	) {
		let setup = lease_of::<T>(None, 0, g, d);
		advance::<T>(T::AckDeadline::get().saturating_add(One::one()));
		let reporter: T::AccountId = whitelisted_caller();
		#[extrinsic_call]
		_(RawOrigin::Signed(reporter), setup.lease);
		assert!(matches!(status::<T>(setup.lease), LeaseStatus::Terminated { .. }));
	}

	#[benchmark]
	fn report_missed_result(
		g: Linear<1, { T::MaxGpusPerLease::get() }>,
		d: Linear<1, { max_depositors::<T>() }>,
	) {
		let setup = acknowledged(lease_of::<T>(None, 0, g, d));
		advance::<T>(T::CheckpointInterval::get().saturating_add(One::one()));
		let reporter: T::AccountId = whitelisted_caller();
		#[extrinsic_call]
		_(RawOrigin::Signed(reporter), setup.lease);
		assert!(matches!(status::<T>(setup.lease), LeaseStatus::Terminated { .. }));
	}

	#[benchmark]
	fn accept_result() {
		let setup = early_result::<T>();
		#[extrinsic_call]
		_(RawOrigin::Signed(setup.buyer.clone()), setup.lease);
		assert!(!PendingVerdicts::<T>::contains_key(setup.lease));
	}

	#[benchmark]
	fn object_to_result() {
		let setup = early_result::<T>();
		#[extrinsic_call]
		_(RawOrigin::Signed(setup.buyer.clone()), setup.lease);
		assert!(!PendingVerdicts::<T>::contains_key(setup.lease));
	}

	#[benchmark]
	fn confirm_result() {
		let setup = early_result::<T>();
		advance::<T>(T::VerdictWindow::get().saturating_add(One::one()));
		let caller: T::AccountId = whitelisted_caller();
		#[extrinsic_call]
		_(RawOrigin::Signed(caller), setup.lease);
		assert!(!PendingVerdicts::<T>::contains_key(setup.lease));
	}

	/// A top-up resumed the stream of a suspended lease: what the streams charge that top-up
	/// for telling the leases.
	#[benchmark]
	fn on_resumed() {
		let setup = running::<T>(None, 0);
		let stream = Leases::<T>::get(setup.lease).unwrap().stream;
		Leases::<T>::mutate(setup.lease, |lease| {
			lease.as_mut().unwrap().status = LeaseStatus::Suspended;
		});
		#[block]
		{
			<Pallet<T> as stint_traits::StreamObserver>::on_resumed(setup.lease, stream);
		}
		assert_eq!(status::<T>(setup.lease), LeaseStatus::Running);
	}

	/// The buyer disputes an early result: the bond held in a stream, the draw queued.
	#[benchmark]
	fn dispute() {
		let setup = early_result::<T>();
		#[extrinsic_call]
		_(RawOrigin::Signed(setup.buyer.clone()), setup.lease);
		assert!(Disputes::<T>::contains_key(setup.lease));
	}

	/// The draw queue holds `r` disputes due now that were decided since (each read and passed
	/// over): the hook's cost besides the draws themselves, which `draw_weight` bounds.
	#[benchmark]
	fn on_initialize(r: Linear<0, { T::MaxDrawsPerBlock::get() }>) {
		let now = frame_system::Pallet::<T>::block_number().saturating_add(One::one());
		for id in 0..r as LeaseId {
			stint_traits::buckets::schedule::<crate::DrawQueue<T>>(id, now, now);
		}
		frame_system::Pallet::<T>::set_block_number(now);
		#[block]
		{
			Pallet::<T>::draw_due(now);
		}
		assert!(Draws::<T>::iter().next().is_none());
	}

	/// A replica of `g` devices seals its result: its fixed lease's stream closed, its devices
	/// released, its verdict left to the replicas.
	#[benchmark]
	fn commit_result(g: Linear<1, { T::MaxGpusPerLease::get() }>) {
		let setups = replicas::<T>(2, g);
		advance::<T>(10u32.into());
		let sealed = stint_primitives::seal(&outputs(1), &setups[0].provider.encode(), &[0; 32]);
		#[extrinsic_call]
		_(RawOrigin::Signed(setups[0].provider.clone()), setups[0].lease, sealed);
		assert_eq!(status::<T>(setups[0].lease), LeaseStatus::Sealed);
	}

	/// The last of `r` replicas reveals and decides them all: a bare majority agrees, every
	/// other replica is outvoted and convicted (the costlier way to decide one).
	#[benchmark]
	fn reveal_result(r: Linear<2, { stint_primitives::MAX_REPLICAS }>) {
		let setups = replicas::<T>(r, 1);
		advance::<T>(10u32.into());
		let majority = r as usize / 2 + 1;
		let roots: alloc::vec::Vec<u8> =
			(0..r as usize).map(|i| if i < majority { 1 } else { 2 }).collect();
		seal_all(&setups, &roots);
		let last = r as usize - 1;
		for (i, setup) in setups.iter().enumerate().take(last) {
			let (commitment, salt, signature) = opening(setup, i, roots[i]);
			Pallet::<T>::do_reveal_result(setup.lease, commitment, salt, signature).unwrap();
		}
		let (commitment, salt, signature) = opening(&setups[last], last, roots[last]);
		#[extrinsic_call]
		_(
			RawOrigin::Signed(setups[0].buyer.clone()),
			setups[last].lease,
			commitment,
			salt,
			signature,
		);
		let group = ReplicaGroups::<T>::get(1).unwrap();
		assert!(matches!(group.status, ReplicaStatus::Decided { .. }));
	}

	/// After the reveal window, `r` replicas that sealed and never revealed are all convicted.
	#[benchmark]
	fn decide_replicas(r: Linear<2, { stint_primitives::MAX_REPLICAS }>) {
		let setups = replicas::<T>(r, 1);
		advance::<T>(10u32.into());
		let roots: alloc::vec::Vec<u8> = (0..r).map(|_| 1).collect();
		seal_all(&setups, &roots);
		let until = ReplicaGroups::<T>::get(1).unwrap().reveal_until;
		frame_system::Pallet::<T>::set_block_number(until.saturating_add(One::one()));
		#[extrinsic_call]
		_(RawOrigin::Signed(setups[0].buyer.clone()), 1);
		let group = ReplicaGroups::<T>::get(1).unwrap();
		assert!(matches!(group.status, ReplicaStatus::Decided { .. }));
	}

	impl_benchmark_test_suite!(Pallet, crate::mock::ExtBuilder::build(), crate::mock::Test);
}
