//! What the tests of Stint's pallets share, so that each pallet's mock keeps only what is its own:
//!
//! - [`ext`]: test externalities with endowed accounts, a keystore, at block 1;
//! - [`Books`]: the money-conservation check every pallet's tests run after each test (the
//!   issuance moves only by what slashes burn, and every unit is in some account);
//! - [`device`], [`Devices`] and [`FakeBonds`]: the stand-ins for the registry's device
//!   commitments and the bonds' collateral (and slashes), for the pallets that use them through
//!   `stint-traits` (market, leases);
//! - [`last_event`]: a pallet's last event.
//!
//! Accounts and balances are `u64` in every mock. Stand-in state lives in storage (not in thread
//! locals) wherever a failed call must roll it back; only what is recorded for inspection
//! (slashes) lives beside it, and [`reset`] clears it.

use core::{cell::RefCell, marker::PhantomData};
use frame::{deps::frame_support::storage_alias, prelude::*, testing_prelude::*};
use polkadot_sdk::{pallet_balances, sp_keystore};
use stint_primitives::{DeviceId, LeaseId, SlashReason};
use stint_traits::{ProviderCollateral, Slashing};

/// Accounts in every mock.
pub type AccountId = u64;
/// Balances in every mock.
pub type Balance = u64;

/// Test externalities for the mock runtime `T`: `balances` endowed, an in-memory keystore (for
/// benchmarks that sign), block 1.
pub fn ext<T>(balances: Vec<(AccountId, Balance)>) -> TestState
where
	T: frame_system::Config<AccountId = AccountId> + pallet_balances::Config<Balance = Balance>,
{
	let mut storage = frame_system::GenesisConfig::<T>::default().build_storage().unwrap();
	pallet_balances::GenesisConfig::<T> { balances, ..Default::default() }
		.assimilate_storage(&mut storage)
		.unwrap();
	let mut state = TestState::new(storage);
	state.register_extension(sp_keystore::KeystoreExt::new(
		sp_keystore::testing::MemoryKeystore::new(),
	));
	state.execute_with(|| {
		reset();
		frame_system::Pallet::<T>::set_block_number(1u32.into())
	});
	state
}

/// The books of a mock runtime: what was issued when they were opened.
pub struct Books<T> {
	issuance: Balance,
	_runtime: PhantomData<T>,
}

impl<T> Books<T>
where
	T: frame_system::Config<
			AccountId = AccountId,
			AccountData = pallet_balances::AccountData<Balance>,
		> + pallet_balances::Config<Balance = Balance>,
{
	pub fn open() -> Self {
		Self { issuance: pallet_balances::Pallet::<T>::total_issuance(), _runtime: PhantomData }
	}

	/// The issuance fell by exactly `burnt` since the books were opened, and every unit of it is
	/// in some account, free or held.
	pub fn check(&self, burnt: Balance) {
		let issuance = pallet_balances::Pallet::<T>::total_issuance();
		assert_eq!(issuance, self.issuance - burnt, "only slashes burn, and nothing mints");
		let everywhere: Balance = frame_system::Account::<T>::iter()
			.map(|(_, account)| account.data.free + account.data.reserved)
			.sum();
		assert_eq!(everywhere, issuance, "every unit is in some account");
	}
}

/// The last event of the pallet whose events are `E`.
pub fn last_event<T: frame_system::Config, E>() -> E
where
	T::RuntimeEvent: TryInto<E>,
{
	frame_system::Pallet::<T>::events()
		.into_iter()
		.filter_map(|record| record.event.try_into().ok())
		.last()
		.expect("an event was emitted")
}

/// The `i`-th device of `owner`: its account in the first eight bytes, `i` in the ninth.
pub fn device(owner: AccountId, i: u8) -> DeviceId {
	let mut id = [0u8; 32];
	id[..8].copy_from_slice(&owner.to_le_bytes());
	id[8] = i;
	id
}

/// Who owns a [`device`].
pub fn owner_of(device: &DeviceId) -> AccountId {
	u64::from_le_bytes(device[..8].try_into().expect("32 bytes"))
}

#[storage_alias]
type Committed = StorageMap<Fakes, Blake2_128Concat, DeviceId, LeaseId, OptionQuery>;
#[storage_alias]
type Locked = StorageMap<Fakes, Blake2_128Concat, AccountId, Balance, ValueQuery>;
#[storage_alias]
type Taken = StorageMap<Fakes, Blake2_128Concat, AccountId, Balance, ValueQuery>;
/// A forfeit as [`FakeBonds`] recorded it: (provider, amount, paid to; burnt if none).
pub type ForfeitRecord = (AccountId, Balance, Option<AccountId>);
#[storage_alias]
type Forfeits = StorageValue<Fakes, Vec<ForfeitRecord>, ValueQuery>;

/// The forfeits of locked bond [`FakeBonds`] made, in order.
pub fn forfeits() -> Vec<ForfeitRecord> {
	Forfeits::get()
}

/// The registry's device commitments, as a stand-in keeps them.
pub struct Devices;

impl Devices {
	/// The lease `device` is committed to.
	pub fn committed_to(device: &DeviceId) -> Option<LeaseId> {
		Committed::get(device)
	}

	/// Commits every one of `devices` to `lease`, or none if one is taken.
	pub fn commit(devices: &[DeviceId], lease: LeaseId) -> DispatchResult {
		ensure!(
			devices.iter().all(|d| Committed::get(d).is_none()),
			DispatchError::Other("DeviceCommitted")
		);
		devices.iter().for_each(|d| Committed::insert(d, lease));
		Ok(())
	}

	/// Releases those of `devices` committed to `lease`.
	pub fn release(devices: &[DeviceId], lease: LeaseId) {
		for device in devices {
			if Committed::get(device) == Some(lease) {
				Committed::remove(device);
			}
		}
	}
}

/// A slash as [`FakeBonds`] recorded it: (provider, amount, buyer, reporter, reason).
pub type SlashRecord = (AccountId, Balance, Option<AccountId>, Option<AccountId>, SlashReason);

thread_local! {
	static SLASHED: RefCell<Vec<SlashRecord>> = const { RefCell::new(Vec::new()) };
}

/// Clears what the stand-ins recorded (done by [`ext`]).
pub fn reset() {
	SLASHED.with(|s| s.borrow_mut().clear());
}

/// The slashes [`FakeBonds`] was asked for, in order.
pub fn slashes() -> Vec<SlashRecord> {
	SLASHED.with(|s| s.borrow().clone())
}

/// The bonds as a stand-in: every provider has a bond of `Bond`, collateral is locked against
/// it, and a slash is recorded (see [`slashes`]) without moving money. A forfeit of locked bond
/// takes it out of the bond and is recorded (see [`forfeits`]), moving no money either.
pub struct FakeBonds<Bond>(PhantomData<Bond>);

impl<Bond> FakeBonds<Bond> {
	/// The collateral locked for `who`.
	pub fn locked(who: AccountId) -> Balance {
		Locked::get(who)
	}
}

impl<Bond: Get<Balance>> ProviderCollateral<AccountId, Balance> for FakeBonds<Bond> {
	fn free_bond(who: &AccountId) -> Balance {
		Bond::get() - Taken::get(who) - Locked::get(who)
	}
	fn lock_collateral(who: &AccountId, amount: Balance) -> DispatchResult {
		ensure!(amount <= Self::free_bond(who), DispatchError::Other("InsufficientFreeBond"));
		Locked::mutate(who, |l| *l += amount);
		Ok(())
	}
	fn unlock_collateral(who: &AccountId, amount: Balance) {
		Locked::mutate(who, |l| *l = l.saturating_sub(amount));
	}
	fn forfeit_locked(who: &AccountId, amount: Balance, to: Option<&AccountId>) -> Balance {
		let amount = amount.min(Locked::get(who));
		Locked::mutate(who, |l| *l -= amount);
		Taken::mutate(who, |t| *t += amount);
		Forfeits::append((*who, amount, to.copied()));
		amount
	}
}

impl<Bond> Slashing<AccountId, Balance> for FakeBonds<Bond> {
	fn slash(
		who: &AccountId,
		amount: Balance,
		buyer: Option<&AccountId>,
		reporter: Option<&AccountId>,
		reason: SlashReason,
	) -> Balance {
		SLASHED.with(|s| {
			s.borrow_mut().push((*who, amount, buyer.copied(), reporter.copied(), reason))
		});
		amount
	}

	fn restitute(who: &AccountId, amount: Balance, to: &AccountId, reason: SlashReason) -> Balance {
		Self::slash(who, amount, Some(to), None, reason)
	}
}

/// Each of `providers` has exactly the collateral locked that `claimed` says its bids and
/// leases hold.
pub fn assert_collateral_adds_up(providers: &[AccountId], claimed: impl Fn(AccountId) -> Balance) {
	for provider in providers {
		assert_eq!(Locked::get(provider), claimed(*provider), "collateral of {provider} adds up");
	}
}
