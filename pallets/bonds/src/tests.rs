//! Every call's happy and unhappy paths, collateral, and slashing with exact money accounting.

use crate::{mock::*, *};
use frame::{testing_prelude::*, traits::fungible::InspectHold};
use polkadot_sdk::pallet_balances;
use stint_primitives::SlashReason;
use stint_traits::refused;
use stint_traits::{ProviderCollateral, Slashing};

/// Free plus held of every account that can hold money in these tests.
fn money_everywhere() -> Balance {
	(1..=10u64).chain([99]).map(|who| free(who) + Balances::total_balance_on_hold(&who)).sum()
}

#[test]
fn bond_holds_the_amount() {
	ExtBuilder::default().build_and_execute(|| {
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 500));
		assert_eq!(ledger(1), BondLedgerOf::<Test>::new(500));
		assert_eq!((held(1), free(1)), (500, ENDOWMENT - 500));
		assert_eq!(last_event(), Event::Bonded { provider: 1, amount: 500 });
	});
}

#[test]
fn bond_refuses_bad_input() {
	ExtBuilder::default().build_and_execute(|| {
		assert_noop!(
			refused(Bonds::bond(RuntimeOrigin::signed(1), MIN_BOND - 1)),
			Error::<Test>::BondTooSmall
		);
		assert_noop!(
			refused(Bonds::bond(RuntimeOrigin::signed(1), ENDOWMENT + 1)),
			Error::<Test>::InsufficientBalance
		);
		assert_noop!(
			refused(Bonds::bond(RuntimeOrigin::signed(42), MIN_BOND)),
			Error::<Test>::InsufficientBalance
		);
		assert_noop!(
			refused(Bonds::bond(RuntimeOrigin::none(), MIN_BOND)),
			DispatchError::BadOrigin
		);
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), MIN_BOND));
		assert_noop!(
			refused(Bonds::bond(RuntimeOrigin::signed(1), MIN_BOND)),
			Error::<Test>::AlreadyBonded
		);
	});
}

#[test]
fn bond_more_adds_to_the_active_bond() {
	ExtBuilder::default().build_and_execute(|| {
		assert_noop!(
			refused(Bonds::bond_more(RuntimeOrigin::signed(1), 10)),
			Error::<Test>::NotBonded
		);
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 500));
		assert_noop!(
			refused(Bonds::bond_more(RuntimeOrigin::signed(1), 0)),
			Error::<Test>::ZeroAmount
		);
		assert_noop!(
			refused(Bonds::bond_more(RuntimeOrigin::signed(1), ENDOWMENT)),
			Error::<Test>::InsufficientBalance
		);
		assert_ok!(Bonds::bond_more(RuntimeOrigin::signed(1), 250));
		assert_eq!((ledger(1).active, held(1)), (750, 750));
	});
}

#[test]
fn unbond_moves_free_bond_into_a_chunk() {
	ExtBuilder::default().build_and_execute(|| {
		assert_noop!(
			refused(Bonds::unbond(RuntimeOrigin::signed(1), 10)),
			Error::<Test>::NotBonded
		);
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		assert_noop!(
			refused(Bonds::unbond(RuntimeOrigin::signed(1), 0)),
			Error::<Test>::ZeroAmount
		);
		assert_noop!(
			refused(Bonds::unbond(RuntimeOrigin::signed(1), 1_001)),
			Error::<Test>::UnbondMoreThanBonded
		);
		// Leaving dust below the minimum is refused; unbonding everything is fine.
		assert_noop!(
			refused(Bonds::unbond(RuntimeOrigin::signed(1), 950)),
			Error::<Test>::BondTooSmall
		);
		assert_ok!(Bonds::unbond(RuntimeOrigin::signed(1), 300));
		assert_ok!(Bonds::unbond(RuntimeOrigin::signed(1), 100));
		let l = ledger(1);
		assert_eq!(l.active, 600);
		assert_eq!(
			l.unlocking.to_vec(),
			vec![UnlockChunk { value: 400, unlocks_at: 1 + UNBONDING }]
		);
		assert_eq!(held(1), 1_000, "unbonding funds stay held");
		assert_eq!(
			last_event(),
			Event::Unbonded { provider: 1, amount: 100, unlocks_at: 1 + UNBONDING }
		);
	});
}

#[test]
fn unbond_cannot_touch_locked_collateral_and_chunks_are_bounded() {
	ExtBuilder::default().build_and_execute(|| {
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		assert_ok!(Bonds::lock_collateral(&1, 600));
		assert_eq!(Bonds::free_bond(&1), 400);
		assert_noop!(
			refused(Bonds::unbond(RuntimeOrigin::signed(1), 401)),
			Error::<Test>::CollateralLocked
		);
		for block in 2..=4 {
			System::set_block_number(block);
			assert_ok!(Bonds::unbond(RuntimeOrigin::signed(1), 100));
		}
		System::set_block_number(5);
		assert_noop!(
			refused(Bonds::unbond(RuntimeOrigin::signed(1), 100)),
			Error::<Test>::TooManyUnlockingChunks
		);
	});
}

#[test]
fn rebond_takes_the_newest_chunks_first() {
	ExtBuilder::default().build_and_execute(|| {
		assert_noop!(
			refused(Bonds::rebond(RuntimeOrigin::signed(1), 10)),
			Error::<Test>::NotBonded
		);
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		assert_ok!(Bonds::unbond(RuntimeOrigin::signed(1), 200));
		System::set_block_number(2);
		assert_ok!(Bonds::unbond(RuntimeOrigin::signed(1), 300));
		assert_noop!(
			refused(Bonds::rebond(RuntimeOrigin::signed(1), 0)),
			Error::<Test>::ZeroAmount
		);
		assert_noop!(
			refused(Bonds::rebond(RuntimeOrigin::signed(1), 501)),
			Error::<Test>::RebondMoreThanUnbonding
		);
		assert_ok!(Bonds::rebond(RuntimeOrigin::signed(1), 350));
		let l = ledger(1);
		assert_eq!(l.active, 850);
		assert_eq!(
			l.unlocking.to_vec(),
			vec![UnlockChunk { value: 150, unlocks_at: 1 + UNBONDING }]
		);
		assert_eq!(last_event(), Event::Rebonded { provider: 1, amount: 350 });
	});
}

#[test]
fn withdraw_releases_only_matured_chunks() {
	ExtBuilder::default().build_and_execute(|| {
		assert_noop!(
			refused(Bonds::withdraw_unbonded(RuntimeOrigin::signed(1))),
			Error::<Test>::NotBonded
		);
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		assert_ok!(Bonds::unbond(RuntimeOrigin::signed(1), 400));
		System::set_block_number(5);
		assert_ok!(Bonds::unbond(RuntimeOrigin::signed(1), 600));
		assert_noop!(
			refused(Bonds::withdraw_unbonded(RuntimeOrigin::signed(1))),
			Error::<Test>::NothingToWithdraw
		);

		System::set_block_number(1 + UNBONDING);
		assert_ok!(Bonds::withdraw_unbonded(RuntimeOrigin::signed(1)));
		assert_eq!(last_event(), Event::Withdrawn { provider: 1, amount: 400 });
		assert_eq!((held(1), free(1)), (600, ENDOWMENT - 600));

		System::set_block_number(5 + UNBONDING);
		assert_ok!(Bonds::withdraw_unbonded(RuntimeOrigin::signed(1)));
		assert_eq!((held(1), free(1)), (0, ENDOWMENT));
		assert!(Ledgers::<Test>::get(1).is_none(), "an empty ledger is removed");
	});
}

#[test]
fn collateral_locks_free_bond_and_unlocks_saturating() {
	ExtBuilder::default().build_and_execute(|| {
		assert_eq!(Bonds::free_bond(&1), 0);
		assert_noop!(refused(Bonds::lock_collateral(&1, 1)), Error::<Test>::NotBonded);
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		assert_ok!(Bonds::lock_collateral(&1, 700));
		assert_eq!(last_event(), Event::CollateralLocked { provider: 1, amount: 700 });
		assert_noop!(refused(Bonds::lock_collateral(&1, 301)), Error::<Test>::InsufficientFreeBond);
		Bonds::unlock_collateral(&1, 200);
		assert_eq!(ledger(1).locked, 500);
		Bonds::unlock_collateral(&1, 10_000);
		assert_eq!(ledger(1).locked, 0);
		assert_eq!(last_event(), Event::CollateralUnlocked { provider: 1, amount: 500 });
	});
}

#[test]
fn slash_pays_buyer_and_reporter_and_burns_the_rest_exactly() {
	ExtBuilder::default().build_and_execute(|| {
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		let (issuance, money) = (Balances::total_issuance(), money_everywhere());
		let (buyer_before, reporter_before) = (free(2), free(3));

		let slashed = Bonds::slash(&1, 400, Some(&2), Some(&3), SlashReason::NoShow);
		assert_eq!(slashed, 400);
		// 50% to the buyer, 10% to the reporter, 40% burnt.
		assert_eq!(free(2), buyer_before + 200);
		assert_eq!(free(3), reporter_before + 40);
		assert_eq!((held(1), ledger(1).active), (600, 600));
		assert_eq!(Balances::total_issuance(), issuance - 160);
		assert_eq!(money_everywhere(), money - 160);
		assert_eq!(
			last_event(),
			Event::Slashed {
				provider: 1,
				reason: SlashReason::NoShow,
				amount: 400,
				buyer: Some(2),
				to_buyer: 200,
				reporter: Some(3),
				to_reporter: 40,
				to_handler: 160,
			}
		);
	});
}

#[test]
fn unbonding_does_not_escape_a_slash() {
	ExtBuilder::default().build_and_execute(|| {
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		assert_ok!(Bonds::unbond(RuntimeOrigin::signed(1), 300));
		System::set_block_number(2);
		assert_ok!(Bonds::unbond(RuntimeOrigin::signed(1), 500));
		let (issuance, money) = (Balances::total_issuance(), money_everywhere());

		// Active (200) first, then the newest chunk (500), then the oldest (300): 900 in all.
		let slashed = Bonds::slash(&1, 900, None, None, SlashReason::MissedResult);
		assert_eq!(slashed, 900);
		let l = ledger(1);
		assert_eq!(l.active, 0);
		assert_eq!(
			l.unlocking.to_vec(),
			vec![UnlockChunk { value: 100, unlocks_at: 1 + UNBONDING }]
		);
		assert_eq!(held(1), 100);
		assert_eq!(Balances::total_issuance(), issuance - 900);
		assert_eq!(money_everywhere(), money - 900);
	});
}

#[test]
fn slash_beyond_the_bond_takes_everything_and_keeps_the_claims() {
	ExtBuilder::default().build_and_execute(|| {
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		assert_ok!(Bonds::lock_collateral(&1, 800));
		let slashed = Bonds::slash(&1, 500, Some(&99), None, SlashReason::NoShow);
		assert_eq!(slashed, 500);
		assert_eq!(ledger(1).locked, 800, "the leases still claim what they claimed");
		assert_eq!(Bonds::free_bond(&1), 0);
		assert_eq!(free(99), 250, "a new account can receive the buyer share");

		let money = money_everywhere();
		assert_eq!(Bonds::slash(&1, 10_000, Some(&2), Some(&3), SlashReason::MissedResult), 500);
		assert_eq!((ledger(1).active, ledger(1).locked), (0, 800));
		assert_eq!(held(1), 0);
		// Once the leases end, the empty ledger goes.
		Bonds::unlock_collateral(&1, 800);
		assert!(Ledgers::<Test>::get(1).is_none());
		assert_eq!(money_everywhere(), money - 200);
		// Nothing left to slash, and no bond at all: nothing happens.
		assert_eq!(Bonds::slash(&1, 1, None, None, SlashReason::NoShow), 0);
		assert_eq!(Bonds::slash(&4, 1, None, None, SlashReason::NoShow), 0);
	});
}

#[test]
fn a_slash_below_the_locked_collateral_never_frees_what_backs_a_live_lease() {
	ExtBuilder::default().build_and_execute(|| {
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		// Two leases, 400 each.
		assert_ok!(Bonds::lock_collateral(&1, 400));
		assert_ok!(Bonds::lock_collateral(&1, 400));
		assert_ok!(Bonds::force_slash(RuntimeOrigin::root(), 1, 500, None));
		assert_eq!(Bonds::free_bond(&1), 0);
		assert_noop!(refused(Bonds::lock_collateral(&1, 1)), Error::<Test>::InsufficientFreeBond);
		// The first lease ends. Today's code had cut the lock to 500 at the slash, so this
		// unlock left 100 locked and 400 free: the provider could unbond what backs the second.
		Bonds::unlock_collateral(&1, 400);
		assert_eq!((ledger(1).active, ledger(1).locked, Bonds::free_bond(&1)), (500, 400, 100));
		assert_noop!(
			refused(Bonds::unbond(RuntimeOrigin::signed(1), 101)),
			Error::<Test>::CollateralLocked
		);
		// Bonding more frees it again.
		assert_ok!(Bonds::bond_more(RuntimeOrigin::signed(1), 300));
		assert_eq!(Bonds::free_bond(&1), 400);
	});
}

#[test]
fn force_slash_is_for_governance_only() {
	ExtBuilder::default().build_and_execute(|| {
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		assert_noop!(
			refused(Bonds::force_slash(RuntimeOrigin::signed(2), 1, 100, None)),
			DispatchError::BadOrigin
		);
		assert_noop!(
			refused(Bonds::force_slash(RuntimeOrigin::root(), 4, 100, None)),
			Error::<Test>::NotBonded
		);
		assert_noop!(
			refused(Bonds::force_slash(RuntimeOrigin::root(), 1, 0, None)),
			Error::<Test>::ZeroAmount
		);
		let (issuance, before) = (Balances::total_issuance(), free(5));
		assert_ok!(Bonds::force_slash(RuntimeOrigin::root(), 1, 100, Some(5)));
		assert_eq!(free(5), before + 50);
		assert_eq!(Balances::total_issuance(), issuance - 50);
		assert!(matches!(
			last_event(),
			Event::Slashed { reason: SlashReason::Governance, amount: 100, .. }
		));
	});
}

#[test]
fn genesis_bonds_are_held() {
	let mut storage = frame_system::GenesisConfig::<Test>::default().build_storage().unwrap();
	pallet_balances::GenesisConfig::<Test> { balances: vec![(1, ENDOWMENT)], ..Default::default() }
		.assimilate_storage(&mut storage)
		.unwrap();
	crate::GenesisConfig::<Test> { bonds: vec![(1, 5_000)] }
		.assimilate_storage(&mut storage)
		.unwrap();
	TestState::new(storage).execute_with(|| {
		assert_eq!((ledger(1).active, held(1)), (5_000, 5_000));
		Bonds::do_try_state().unwrap();
	});
}

#[test]
fn try_state_catches_a_ledger_that_disagrees_with_the_hold() {
	ExtBuilder::default().build().execute_with(|| {
		assert_ok!(Bonds::bond(RuntimeOrigin::signed(1), 1_000));
		Ledgers::<Test>::mutate(1, |l| l.as_mut().unwrap().active = 999);
		assert!(Bonds::do_try_state().is_err());
	});
}
