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

/// Names a job's environment may not set: the worker sets them itself (`STINT_*`), they pick the
/// GPUs a job sees (`NVIDIA_*`, `CUDA_VISIBLE_DEVICES` and its kin), or the dynamic loader and
/// the C library act on them, loading code of the buyer's choosing into the process (glibc's
/// list of variables unsafe for privileged programs).
const RESERVED_ENV_PREFIXES: [&[u8]; 3] = [b"STINT_", b"NVIDIA_", b"LD_"];
const RESERVED_ENV_NAMES: [&[u8]; 17] = [
	b"CUDA_VISIBLE_DEVICES",
	b"GPU_DEVICE_ORDINAL",
	b"HIP_VISIBLE_DEVICES",
	b"ROCR_VISIBLE_DEVICES",
	b"PATH",
	b"GCONV_PATH",
	b"GETCONF_DIR",
	b"GLIBC_TUNABLES",
	b"HOSTALIASES",
	b"LOCALDOMAIN",
	b"LOCPATH",
	b"MALLOC_TRACE",
	b"NIS_PATH",
	b"NLSPATH",
	b"RESOLV_HOST_CONF",
	b"RES_OPTIONS",
	b"TZDIR",
];

/// Whether a job may set the environment variable `key`: a portable name (a letter or `_`,
/// then letters, digits and `_`) that is not reserved (see the prefixes and names above).
pub fn is_job_env_name(key: &[u8]) -> bool {
	let portable = key.first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
		&& key.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
	let starts = |prefix: &[u8]| {
		key.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix))
	};
	portable
		&& !RESERVED_ENV_PREFIXES.iter().any(|prefix| starts(prefix))
		&& !RESERVED_ENV_NAMES.iter().any(|name| key.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn a_job_sets_only_its_own_portable_names() {
		for fine in [
			"EPOCHS",
			"batch_size",
			"_X1",
			"MODEL_PATH",
			"CUDA_LAUNCH_BLOCKING",
			"MALLOC_ARENA_MAX",
			"TMPDIR",
		] {
			assert!(is_job_env_name(fine.as_bytes()), "{fine}");
		}
		for refused in [
			"",
			"1X",
			"A-B",
			"A=B",
			"A B",
			"LD_PRELOAD",
			"ld_preload",
			"LD_LIBRARY_PATH",
			"CUDA_VISIBLE_DEVICES",
			"NVIDIA_VISIBLE_DEVICES",
			"STINT_LEASE",
			"PATH",
			"GCONV_PATH",
			"GLIBC_TUNABLES",
			"MALLOC_TRACE",
		] {
			assert!(!is_job_env_name(refused.as_bytes()), "{refused}");
		}
	}

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
