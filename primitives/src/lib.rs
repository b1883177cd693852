//! Types both the Stint runtime and the software around it (the provider worker, the client and
//! the CLI) must agree on, byte for byte.
//!
//! Anything that is signed off-chain and verified on-chain (result commitments, checkpoints) is
//! defined here once, so the runtime and the worker cannot drift apart.
#![cfg_attr(not(feature = "std"), no_std)]

/// An account's balance, in the smallest unit (1 STINT = 10^12 units).
pub type Balance = u128;
/// A block number.
pub type BlockNumber = u32;
/// A transaction index (nonce).
pub type Nonce = u32;

/// The native token's symbol.
pub const TOKEN_SYMBOL: &str = "STINT";
/// The native token's number of decimals.
pub const TOKEN_DECIMALS: u8 = 12;
/// One STINT in the smallest unit.
pub const STINT: Balance = 10u128.pow(TOKEN_DECIMALS as u32);
/// A thousandth of a STINT.
pub const MILLI_STINT: Balance = STINT / 1_000;
/// A millionth of a STINT.
pub const MICRO_STINT: Balance = STINT / 1_000_000;

/// The SS58 address prefix (42, the generic Substrate prefix, until Stint registers its own).
pub const SS58_PREFIX: u16 = 42;

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn units_are_consistent() {
		assert_eq!(STINT, 1_000_000_000_000);
		assert_eq!(MILLI_STINT * 1_000, STINT);
		assert_eq!(MICRO_STINT * 1_000_000, STINT);
	}
}
