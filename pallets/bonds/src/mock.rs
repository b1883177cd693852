//! A test runtime: system, balances and the bonds, with a slash handler that burns.

use crate::{self as pallet_bonds, *};
use frame::{runtime::prelude::*, testing_prelude::*, traits::fungible::InspectHold};
use polkadot_sdk::pallet_balances;

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
	pub type Bonds = pallet_bonds;
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

pub const MIN_BOND: Balance = 100;
pub const UNBONDING: u64 = 20;
pub const ENDOWMENT: Balance = 1_000_000;

parameter_types! {
	pub const BuyerShare: Permill = Permill::from_percent(50);
	pub const ReporterShare: Permill = Permill::from_percent(10);
}

#[derive_impl(pallet_bonds::config_preludes::TestDefaultConfig)]
impl pallet_bonds::Config for Test {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type MinBond = ConstU64<MIN_BOND>;
	type UnbondingPeriod = ConstU64<UNBONDING>;
	type MaxUnlockingChunks = ConstU32<3>;
	type BuyerShare = BuyerShare;
	type ReporterShare = ReporterShare;
	/// The rest of a slash is burnt: total issuance falls by exactly that much.
	type OnSlash = ();
	type ForceOrigin = EnsureRoot<u64>;
}

pub struct ExtBuilder {
	balances: Vec<(u64, Balance)>,
}

impl Default for ExtBuilder {
	fn default() -> Self {
		Self { balances: (1..=5).map(|who| (who, ENDOWMENT)).collect() }
	}
}

impl ExtBuilder {
	pub fn build(self) -> TestState {
		stint_testkit::ext::<Test>(self.balances)
	}

	/// Runs `test`, then checks the bonds' invariants and the money: every unit is in some
	/// account, and the issuance fell by exactly what the slashes burnt (their handler's part).
	pub fn build_and_execute(self, test: impl FnOnce()) {
		self.build().execute_with(|| {
			let books = stint_testkit::Books::<Test>::open();
			test();
			Bonds::do_try_state().expect("bond invariants hold");
			let burnt: Balance = System::events()
				.into_iter()
				.filter_map(|r| match r.event {
					RuntimeEvent::Bonds(Event::Slashed { to_handler, .. }) => Some(to_handler),
					_ => None,
				})
				.sum();
			books.check(burnt);
		});
	}
}

/// The last event of this pallet.
pub fn last_event() -> Event<Test> {
	stint_testkit::last_event::<Test, _>()
}

pub fn held(who: u64) -> Balance {
	Balances::balance_on_hold(&HoldReason::ProviderBond.into(), &who)
}

pub fn free(who: u64) -> Balance {
	Balances::free_balance(who)
}

pub fn ledger(who: u64) -> BondLedgerOf<Test> {
	Ledgers::<Test>::get(who).expect("bonded")
}
