//! How a buyer proves to a provider that it may fetch a lease's outputs, receipt and logs.
//!
//! The buyer signs [`FetchAuth::signing_bytes`] with its account's sr25519 key and sends the
//! SCALE encoding of [`SignedFetchAuth`], in hex, in the [`FETCH_AUTH_HEADER`] of every request.
//! The provider's worker checks the tag, the chain, the lease, the expiry (not past, and not
//! further ahead than [`MAX_FETCH_AUTH_TTL_SECS`]) and that the signer is the lease's buyer.

use crate::LeaseId;
use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use scale_info::TypeInfo;

/// Prefixes every fetch authorisation: `stint/fetch/v1`.
pub const FETCH_DOMAIN: [u8; 14] = *b"stint/fetch/v1";
/// The HTTP header that carries a [`SignedFetchAuth`] (hex of its SCALE encoding).
pub const FETCH_AUTH_HEADER: &str = "x-stint-fetch-auth";
/// The longest a provider honours an authorisation for, from the time it checks it.
pub const MAX_FETCH_AUTH_TTL_SECS: u64 = 3600;

/// What the buyer signs.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub struct FetchAuth {
	/// [`FETCH_DOMAIN`].
	pub domain: [u8; 14],
	/// The hash of the chain's genesis block.
	pub genesis_hash: [u8; 32],
	pub lease: LeaseId,
	/// Seconds since the Unix epoch after which the provider refuses it.
	pub expires_at: u64,
}

impl FetchAuth {
	/// The authorisation to fetch `lease` of the chain with `genesis_hash` until `expires_at`.
	pub fn new(genesis_hash: [u8; 32], lease: LeaseId, expires_at: u64) -> Self {
		Self { domain: FETCH_DOMAIN, genesis_hash, lease, expires_at }
	}

	/// The exact bytes signed: the SCALE encoding.
	pub fn signing_bytes(&self) -> alloc::vec::Vec<u8> {
		self.encode()
	}
}

/// An authorisation with the buyer's sr25519 signature over its [`FetchAuth::signing_bytes`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Encode, Decode, DecodeWithMemTracking, TypeInfo)]
pub struct SignedFetchAuth {
	pub auth: FetchAuth,
	pub signature: [u8; 64],
}

/// Why a provider refuses a fetch.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FetchAuthError {
	/// No authorisation, or not hex of a [`SignedFetchAuth`].
	Malformed,
	/// Not a fetch authorisation (another tag).
	WrongDomain,
	/// For another chain.
	WrongChain,
	/// For another lease.
	WrongLease,
	/// Its expiry has passed.
	Expired,
	/// Its expiry is further ahead than [`MAX_FETCH_AUTH_TTL_SECS`].
	ExpiryTooFar,
	/// Not signed by the lease's buyer.
	BadSignature,
}

impl core::fmt::Display for FetchAuthError {
	fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
		f.write_str(match self {
			Self::Malformed => "no valid fetch authorisation",
			Self::WrongDomain => "not a fetch authorisation",
			Self::WrongChain => "the authorisation is for another chain",
			Self::WrongLease => "the authorisation is for another lease",
			Self::Expired => "the authorisation has expired",
			Self::ExpiryTooFar => "the authorisation's expiry is too far ahead",
			Self::BadSignature => "the authorisation is not signed by the lease's buyer",
		})
	}
}

#[cfg(feature = "std")]
impl SignedFetchAuth {
	/// Signs `auth` with `pair`.
	pub fn sign(auth: FetchAuth, pair: &polkadot_sdk::sp_core::sr25519::Pair) -> Self {
		use polkadot_sdk::sp_core::Pair;
		Self { auth, signature: pair.sign(&auth.signing_bytes()).0 }
	}

	/// The header value: hex of the SCALE encoding.
	pub fn to_header(&self) -> String {
		self.encode().iter().map(|b| format!("{b:02x}")).collect()
	}

	/// Reads a header value.
	pub fn from_header(value: &str) -> Result<Self, FetchAuthError> {
		let value = value.trim();
		let value = value.strip_prefix("0x").unwrap_or(value);
		if !value.len().is_multiple_of(2) || !value.is_ascii() {
			return Err(FetchAuthError::Malformed);
		}
		let bytes = (0..value.len())
			.step_by(2)
			.map(|i| u8::from_str_radix(&value[i..i + 2], 16))
			.collect::<Result<Vec<u8>, _>>()
			.map_err(|_| FetchAuthError::Malformed)?;
		Self::decode(&mut &bytes[..]).map_err(|_| FetchAuthError::Malformed)
	}

	/// Checks the authorisation for `lease` of the chain with `genesis_hash`, bought by `buyer`,
	/// at `now` (seconds since the Unix epoch).
	pub fn check(
		&self,
		genesis_hash: &[u8; 32],
		lease: LeaseId,
		buyer: &polkadot_sdk::sp_core::sr25519::Public,
		now: u64,
	) -> Result<(), FetchAuthError> {
		use polkadot_sdk::sp_core::{sr25519, Pair};
		let auth = &self.auth;
		if auth.domain != FETCH_DOMAIN {
			return Err(FetchAuthError::WrongDomain);
		}
		if &auth.genesis_hash != genesis_hash {
			return Err(FetchAuthError::WrongChain);
		}
		if auth.lease != lease {
			return Err(FetchAuthError::WrongLease);
		}
		if auth.expires_at <= now {
			return Err(FetchAuthError::Expired);
		}
		if auth.expires_at > now.saturating_add(MAX_FETCH_AUTH_TTL_SECS) {
			return Err(FetchAuthError::ExpiryTooFar);
		}
		let signature = sr25519::Signature::from_raw(self.signature);
		if !sr25519::Pair::verify(&signature, auth.signing_bytes(), buyer) {
			return Err(FetchAuthError::BadSignature);
		}
		Ok(())
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use polkadot_sdk::sp_core::{sr25519, Pair};

	#[test]
	fn the_signed_bytes_are_tag_chain_lease_expiry() {
		let auth = FetchAuth::new([0x11; 32], 7, 1_700_000_000);
		let mut expected = b"stint/fetch/v1".to_vec();
		expected.extend_from_slice(&[0x11; 32]);
		expected.extend_from_slice(&7u64.to_le_bytes());
		expected.extend_from_slice(&1_700_000_000u64.to_le_bytes());
		assert_eq!(auth.signing_bytes(), expected);
		assert_eq!(expected.len(), 62);
	}

	#[test]
	fn a_provider_accepts_only_the_buyers_live_authorisation_for_this_lease() {
		let buyer = sr25519::Pair::from_seed(&[1; 32]);
		let stranger = sr25519::Pair::from_seed(&[2; 32]);
		let now = 1_700_000_000;
		let signed = SignedFetchAuth::sign(FetchAuth::new([0x11; 32], 7, now + 60), &buyer);
		let header = signed.to_header();
		assert_eq!(header.len(), 2 * (62 + 64));
		let back = SignedFetchAuth::from_header(&header).unwrap();
		assert_eq!(back, signed);
		assert_eq!(back.check(&[0x11; 32], 7, &buyer.public(), now), Ok(()));

		use FetchAuthError::*;
		assert_eq!(back.check(&[0x11; 32], 7, &stranger.public(), now), Err(BadSignature));
		assert_eq!(back.check(&[0x12; 32], 7, &buyer.public(), now), Err(WrongChain));
		assert_eq!(back.check(&[0x11; 32], 8, &buyer.public(), now), Err(WrongLease));
		assert_eq!(back.check(&[0x11; 32], 7, &buyer.public(), now + 60), Err(Expired));
		let far = SignedFetchAuth::sign(FetchAuth::new([0x11; 32], 7, now + 7200), &buyer);
		assert_eq!(far.check(&[0x11; 32], 7, &buyer.public(), now), Err(ExpiryTooFar));
		let mut tampered = signed;
		tampered.auth.expires_at += 1;
		assert_eq!(tampered.check(&[0x11; 32], 7, &buyer.public(), now), Err(BadSignature));
		let mut other_tag = SignedFetchAuth::sign(FetchAuth::new([0x11; 32], 7, now + 60), &buyer);
		other_tag.auth.domain = *b"stint/report/1";
		assert_eq!(other_tag.check(&[0x11; 32], 7, &buyer.public(), now), Err(WrongDomain));
		assert_eq!(SignedFetchAuth::from_header("zz"), Err(Malformed));
		assert_eq!(SignedFetchAuth::from_header(&header[..40]), Err(Malformed));
	}
}
