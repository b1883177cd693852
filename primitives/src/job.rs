//! What a buyer asks to run: the job spec stored with every order and read by the worker.
//!
//! Everything is bounded. The image is pinned by digest so the worker runs exactly what the buyer
//! named; inputs carry a content hash so the worker can check what it downloads.

use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use polkadot_sdk::sp_core::{bounded::BoundedVec, ConstU32};
use scale_info::TypeInfo;

/// The longest image reference, e.g. `registry/name@sha256:<64 hex>`.
pub const MAX_IMAGE_LEN: u32 = 256;
/// The most command-line words (command and arguments).
pub const MAX_ARGS: u32 = 32;
/// The longest command-line word.
pub const MAX_ARG_LEN: u32 = 256;
/// The most public environment variables.
pub const MAX_ENV: u32 = 32;
/// The longest environment variable name.
pub const MAX_ENV_KEY_LEN: u32 = 64;
/// The longest environment variable value.
pub const MAX_ENV_VALUE_LEN: u32 = 256;
/// The most inputs.
pub const MAX_INPUTS: u32 = 16;
/// The longest input URI.
pub const MAX_URI_LEN: u32 = 256;

/// Bytes of at most `N`.
pub type Text<const N: u32> = BoundedVec<u8, ConstU32<N>>;

/// A file the job needs, and the blake2-256 of its content.
#[derive(
	Clone,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct Input {
	pub uri: Text<MAX_URI_LEN>,
	pub content_hash: [u8; 32],
}

/// A public environment variable. Secrets never go on chain.
#[derive(
	Clone,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct EnvVar {
	pub key: Text<MAX_ENV_KEY_LEN>,
	pub value: Text<MAX_ENV_VALUE_LEN>,
}

/// The job an order asks for.
#[derive(
	Clone,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct JobSpec {
	/// A container image pinned by digest: `name@sha256:<64 lower-case hex digits>`.
	pub image: Text<MAX_IMAGE_LEN>,
	/// The command and its arguments; empty runs the image's entry point.
	pub command: BoundedVec<Text<MAX_ARG_LEN>, ConstU32<MAX_ARGS>>,
	pub env: BoundedVec<EnvVar, ConstU32<MAX_ENV>>,
	pub inputs: BoundedVec<Input, ConstU32<MAX_INPUTS>>,
	/// The most output the provider must keep and serve, in bytes.
	pub max_output_bytes: u64,
}

/// Whether `image` is pinned by digest: a non-empty name, then `@sha256:` and 64 lower-case hex
/// digits.
pub fn is_pinned_image(image: &[u8]) -> bool {
	const MARK: &[u8] = b"@sha256:";
	let Some(at) = image.windows(MARK.len()).position(|w| w == MARK) else { return false };
	let digest = &image[at + MARK.len()..];
	at > 0 && digest.len() == 64 && digest.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// The sha256 digest of a pinned image (see [`is_pinned_image`]), as bytes.
pub fn image_digest(image: &[u8]) -> Option<[u8; 32]> {
	if !is_pinned_image(image) {
		return None;
	}
	let hex = &image[image.len() - 64..];
	let mut digest = [0u8; 32];
	for (byte, pair) in digest.iter_mut().zip(hex.chunks(2)) {
		let nibble = |c: u8| if c.is_ascii_digit() { c - b'0' } else { c - b'a' + 10 };
		*byte = nibble(pair[0]) << 4 | nibble(pair[1]);
	}
	Some(digest)
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn only_digest_pinned_images_pass() {
		let digest = "a".repeat(64);
		assert!(is_pinned_image(format!("ghcr.io/acme/train@sha256:{digest}").as_bytes()));
		assert!(!is_pinned_image(b"ghcr.io/acme/train:latest"));
		assert!(!is_pinned_image(format!("@sha256:{digest}").as_bytes()));
		assert!(!is_pinned_image(format!("x@sha256:{}", "A".repeat(64)).as_bytes()));
		assert!(!is_pinned_image(format!("x@sha256:{}", "a".repeat(63)).as_bytes()));
	}

	#[test]
	fn the_digest_of_a_pinned_image_is_its_hex_decoded() {
		let image = format!("x@sha256:{}{}", "0f".repeat(31), "a9");
		let mut expected = [0x0f; 32];
		expected[31] = 0xa9;
		assert_eq!(image_digest(image.as_bytes()), Some(expected));
		assert_eq!(image_digest(b"x:latest"), None);
	}
}
