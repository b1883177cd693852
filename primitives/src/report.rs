//! What a provider's worker signs: the result of a lease, or a checkpoint of an open-ended one.
//!
//! The worker signs [`Report::signing_bytes`] with its registered sr25519 worker key; the runtime
//! rebuilds the same bytes from the lease and the chain it runs on, and verifies. The bytes start
//! with a domain tag and include the chain's genesis hash and the lease id, so a signature can
//! never be replayed on another chain, for another lease, or as another kind of report.

use crate::LeaseId;
use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use scale_info::TypeInfo;

/// Prefixes every signed report: `stint/report/v1`.
pub const REPORT_DOMAIN: [u8; 15] = *b"stint/report/v1";

/// What a job produced, committed to on chain.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Default,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct ResultCommitment {
	/// Merkle root (blake2-256) of the output files the provider serves.
	pub output_root: [u8; 32],
	/// blake2-256 of the execution receipt (container id, timings, device UUIDs, logs digest).
	pub receipt_hash: [u8; 32],
	/// The container's exit code: 0 is success.
	pub exit_code: i32,
	/// GPU-seconds used, summed over the lease's devices.
	pub gpu_seconds: u64,
	/// The sha256 digest of the image that ran (must be the one the order pinned).
	pub image_digest: [u8; 32],
}

impl ResultCommitment {
	/// Whether the job succeeded.
	pub fn succeeded(&self) -> bool {
		self.exit_code == 0
	}
}

/// Which report is signed.
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
	serde::Serialize,
	serde::Deserialize,
)]
pub enum ReportKind {
	/// The final result: it ends the lease.
	Final,
	/// The `sequence`-th checkpoint (from 1) of an open-ended lease: it keeps the lease alive.
	Checkpoint { sequence: u32 },
}

/// The payload a worker signs.
#[derive(Clone, PartialEq, Eq, Debug, Encode, Decode, TypeInfo)]
pub struct Report {
	pub domain: [u8; 15],
	/// The hash of the chain's genesis block.
	pub genesis_hash: [u8; 32],
	pub lease: LeaseId,
	pub kind: ReportKind,
	pub commitment: ResultCommitment,
}

impl Report {
	/// The report for `lease` on the chain with `genesis_hash`.
	pub fn new(
		genesis_hash: [u8; 32],
		lease: LeaseId,
		kind: ReportKind,
		commitment: ResultCommitment,
	) -> Self {
		Self { domain: REPORT_DOMAIN, genesis_hash, lease, kind, commitment }
	}

	/// The exact bytes signed: the SCALE encoding of the report.
	pub fn signing_bytes(&self) -> alloc::vec::Vec<u8> {
		self.encode()
	}
}

/// Prefixes a replica's sealed result: `stint/sealed/v1`.
pub const SEAL_DOMAIN: [u8; 15] = *b"stint/sealed/v1";

/// The most replicas any order may ask for (a runtime may allow fewer): what bounds a
/// replica group's record.
pub const MAX_REPLICAS: u32 = 7;

/// What a replica of a replicated order commits to first: blake2-256 of `SEAL_DOMAIN ‖
/// commitment ‖ provider ‖ salt`, with the commitment SCALE-encoded and `provider` the SCALE
/// encoding of the provider's account. Revealing it takes the commitment and the salt, and
/// checks it against the provider of the lease it was committed for: a seal copied from another
/// replica cannot be revealed by its copier (the account differs), and nobody can read the
/// result in a seal before the reveals (the salt is 32 random bytes).
pub fn seal(commitment: &ResultCommitment, provider: &[u8], salt: &[u8; 32]) -> [u8; 32] {
	let mut bytes = alloc::vec::Vec::with_capacity(15 + 120 + provider.len() + 32);
	bytes.extend_from_slice(&SEAL_DOMAIN);
	commitment.encode_to(&mut bytes);
	bytes.extend_from_slice(provider);
	bytes.extend_from_slice(salt);
	polkadot_sdk::sp_crypto_hashing::blake2_256(&bytes)
}

/// Prefixes a worker key's proof of possession: `stint/worker/v2` (v1 named neither the chain
/// nor a nonce, and so replayed).
pub const WORKER_PROOF_DOMAIN: [u8; 15] = *b"stint/worker/v2";

/// The bytes a worker key signs to agree to act for the provider whose account encodes (SCALE)
/// to `provider`, on the chain whose genesis hash is `genesis`, as its binding number `nonce`:
/// `WORKER_PROOF_DOMAIN ‖ genesis ‖ provider ‖ nonce (u32, little-endian)`. The registry binds a
/// key only with this signature, so nobody can bind (and so squat) a key that is not theirs to
/// bind; and it counts each binding of a key (`Providers.WorkerKeyNonces`), so a consent works
/// once, on one chain: not again after the key was unbound, nor on another chain.
pub fn worker_proof_payload(
	genesis: &[u8; 32],
	provider: &[u8],
	nonce: u32,
) -> alloc::vec::Vec<u8> {
	[&WORKER_PROOF_DOMAIN[..], &genesis[..], provider, &nonce.to_le_bytes()[..]].concat()
}

/// What a live lease's provider must do next, and by which block: read by the worker from the
/// chain (`MarketApi::duties`), so that no worker computes a deadline from constants.
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
	serde::Serialize,
	serde::Deserialize,
)]
pub enum NextDuty<BlockNumber> {
	/// Acknowledge the lease, at the latest in block `by`.
	Ack { by: BlockNumber },
	/// A fixed-duration lease: run the job until `ends_at`, and submit its result at the latest
	/// in block `by`.
	Result { ends_at: BlockNumber, by: BlockNumber },
	/// An open-ended lease: submit checkpoint `sequence` at the latest in block `by` (or the
	/// final result whenever the job ends).
	Checkpoint { sequence: u32, by: BlockNumber },
	/// The buyer's escrow ran out: nothing is due and nothing is paid until a top-up resumes it
	/// (pause the job) or the grace period ends it.
	Suspended,
}

#[cfg(test)]
mod tests {
	use super::*;
	use polkadot_sdk::sp_core::{sr25519, Pair};

	fn report(lease: LeaseId) -> Report {
		Report::new([7; 32], lease, ReportKind::Final, ResultCommitment::default())
	}

	#[test]
	fn the_signed_bytes_start_with_the_domain_and_name_chain_and_lease() {
		let bytes = report(9).signing_bytes();
		assert_eq!(&bytes[..15], b"stint/report/v1");
		assert_eq!(&bytes[15..47], &[7; 32]);
		assert_eq!(&bytes[47..55], &9u64.to_le_bytes());
	}

	#[test]
	fn a_worker_proof_is_the_tag_then_the_chain_the_providers_account_and_the_nonce() {
		let (genesis, provider) = ([7; 32], [0x2a; 32]);
		let payload = worker_proof_payload(&genesis, &provider, 3);
		assert_eq!(&payload[..15], b"stint/worker/v2");
		assert_eq!(&payload[15..47], &genesis);
		assert_eq!(&payload[47..79], &provider);
		assert_eq!(&payload[79..], &3u32.to_le_bytes());
		let pair = sr25519::Pair::from_seed(&[3; 32]);
		let proof = pair.sign(&payload);
		let verifies = |payload: Vec<u8>| sr25519::Pair::verify(&proof, payload, &pair.public());
		assert!(verifies(worker_proof_payload(&genesis, &provider, 3)));
		assert!(!verifies(worker_proof_payload(&genesis, &[0x2b; 32], 3)));
		assert!(!verifies(worker_proof_payload(&[8; 32], &provider, 3)));
		assert!(!verifies(worker_proof_payload(&genesis, &provider, 4)));
	}

	#[test]
	fn a_signature_covers_lease_chain_and_kind() {
		let pair = sr25519::Pair::from_seed(&[1; 32]);
		let signature = pair.sign(&report(9).signing_bytes());
		assert!(sr25519::Pair::verify(&signature, report(9).signing_bytes(), &pair.public()));
		assert!(!sr25519::Pair::verify(&signature, report(10).signing_bytes(), &pair.public()));
		let mut other_chain = report(9);
		other_chain.genesis_hash = [8; 32];
		assert!(!sr25519::Pair::verify(&signature, other_chain.signing_bytes(), &pair.public()));
		let mut checkpoint = report(9);
		checkpoint.kind = ReportKind::Checkpoint { sequence: 1 };
		assert!(!sr25519::Pair::verify(&signature, checkpoint.signing_bytes(), &pair.public()));
	}

	#[test]
	fn a_seal_names_the_commitment_the_provider_and_the_salt() {
		let c = ResultCommitment { output_root: [4; 32], ..Default::default() };
		let sealed = seal(&c, &[1; 32], &[9; 32]);
		assert_eq!(sealed, seal(&c, &[1; 32], &[9; 32]));
		// Another account cannot reveal a copied seal, nor a wrong salt or result open it.
		assert_ne!(sealed, seal(&c, &[2; 32], &[9; 32]));
		assert_ne!(sealed, seal(&c, &[1; 32], &[8; 32]));
		let other = ResultCommitment { exit_code: 1, ..c };
		assert_ne!(sealed, seal(&other, &[1; 32], &[9; 32]));
	}
}
