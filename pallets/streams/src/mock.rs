//! A test runtime: system, balances and the streams, with an observer that records what it is
//! told and a 10% protocol take.

use crate::{self as pallet_streams, *};
use core::cell::RefCell;
use frame::{runtime::prelude::*, testing_prelude::*, traits::fungible::InspectHold};
use polkadot_sdk::pallet_balances;
use stint_traits::StreamObserver;

pub type Balance = u64;
type Block = frame_system::mocking::MockBlock<Test>;

#[frame_construct_runtime]
mod runtime {
	#[runtime::runtime]
	#[runtime::derive(
		RuntimeCall,
		RuntimeError,
		RuntimeEvent,
		RuntimeFreezeReason,
		RuntimeHoldReason,
		RuntimeOrigin,
		RuntimeTask
	)]
	pub struct Test;

	#[runtime::pallet_index(0)]
	pub type System = frame_system;
	#[runtime::pallet_index(1)]
	pub type Balances = pallet_balances;
	#[runtime::pallet_index(2)]
	pub type Streams = pallet_streams;
}

#[derive_impl(frame_system::config_preludes::TestDefaultConfig)]
impl frame_system::Config for Test {
	type Block = Block;
	type AccountData = pallet_balances::AccountData<Balance>;
}

#[derive_impl(pallet_balances::config_preludes::TestDefaultConfig)]
impl pallet_balances::Config for Test {
	type AccountStore = System;
	type RuntimeHoldReason = RuntimeHoldReason;
}

pub const GRACE: u64 = 5;
pub const ENDOWMENT: Balance = 1_000_000;
/// The payer and payee of most tests.
pub const BUYER: u64 = 1;
pub const PROVIDER: u64 = 2;

parameter_types! {
	pub static TakeRate: Permill = Permill::zero();
}

/// What the observer was told, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Told {
	Suspended(u64, StreamId),
	Resumed(u64, StreamId),
	Closed(u64, StreamId, CloseReason),
}

thread_local! {
	pub static TOLD: RefCell<Vec<Told>> = const { RefCell::new(Vec::new()) };
}

pub struct RecordingObserver;
impl StreamObserver for RecordingObserver {
	fn on_suspended(reference: u64, stream: StreamId) {
		TOLD.with(|t| t.borrow_mut().push(Told::Suspended(reference, stream)));
	}
	fn on_resumed(reference: u64, stream: StreamId) {
		TOLD.with(|t| t.borrow_mut().push(Told::Resumed(reference, stream)));
	}
	fn on_closed(reference: u64, stream: StreamId, reason: CloseReason) {
		TOLD.with(|t| t.borrow_mut().push(Told::Closed(reference, stream, reason)));
	}
	fn notification_weight() -> Weight {
		Weight::zero()
	}
	fn resume_weight() -> Weight {
		Weight::from_parts(1_000, 0)
	}
}

pub fn told() -> Vec<Told> {
	TOLD.with(|t| t.borrow().clone())
}

#[derive_impl(pallet_streams::config_preludes::TestDefaultConfig)]
impl pallet_streams::Config for Test {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type GracePeriod = ConstU64<GRACE>;
	type TakeRate = TakeRate;
	type Observer = RecordingObserver;
	type MaxDepositors = ConstU32<3>;
	type MaxWakeupsPerBlock = ConstU32<2>;
}

pub struct ExtBuilder;

impl ExtBuilder {
	pub fn build() -> TestState {
		stint_testkit::ext::<Test>((1..=6).map(|who| (who, ENDOWMENT)).collect())
	}

	/// Runs `test`, then checks the streams' invariants and that no money was created or lost.
	pub fn build_and_execute(test: impl FnOnce()) {
		Self::build().execute_with(|| {
			TOLD.with(|t| t.borrow_mut().clear());
			let books = stint_testkit::Books::<Test>::open();
			test();
			Streams::do_try_state().expect("stream invariants hold");
			// Streams mint nothing and burn only the protocol's take, which they report.
			let takes: Balance = System::events()
				.into_iter()
				.map(|record| match record.event {
					RuntimeEvent::Streams(
						Event::Settled { burnt, .. } | Event::Released { burnt, .. },
					) => burnt,
					_ => 0,
				})
				.sum();
			books.check(takes);
		});
	}
}

/// Runs the hooks of every block up to and including `n`.
pub fn run_to_block(n: u64) {
	while System::block_number() < n {
		let next = System::block_number() + 1;
		System::set_block_number(next);
		Streams::on_initialize(next);
	}
}

pub fn escrow(who: u64) -> Balance {
	Balances::balance_on_hold(&HoldReason::StreamEscrow.into(), &who)
}

pub fn free(who: u64) -> Balance {
	Balances::free_balance(who)
}

pub fn stream(id: StreamId) -> StreamOf<Test> {
	crate::Records::<Test>::get(id).expect("stream exists")
}

/// The last event of this pallet.
pub fn last_event() -> Event<Test> {
	stint_testkit::last_event::<Test, _>()
}
