//! What a worker records about every job it runs, failed ones included: the execution receipt.
//!
//! The receipt stays with the provider (buyers fetch it with the outputs and logs); only its hash
//! goes on chain, as the `receipt_hash` of the signed [`crate::ResultCommitment`]:
//! `receipt_hash = blake2_256(SCALE(receipt))`. A buyer who fetched the receipt recomputes the
//! hash and compares it with the chain, then checks the receipt's `output_root` and `logs_root`
//! against the files it downloaded.
//!
//! Exit codes: the job's own exit code is 0..=255 (or `128 + signal` for a signal). Codes the
//! worker reports when the job could not run at all are negative and reserved ([`ReservedExit`]):
//! each says whose fault it was ([`Fault`]), which the market's reputation rules read.

use crate::{blake2_256, BlockNumber, DeviceId, LeaseId, ReportKind};
use alloc::vec::Vec;
use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use scale_info::TypeInfo;

/// Prefixes every execution receipt: `stint/receipt/v1`.
pub const RECEIPT_DOMAIN: [u8; 16] = *b"stint/receipt/v1";

/// What ran the job.
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
pub enum ExecutorKind {
	/// A container on a Docker engine, with the leased GPUs as a device request.
	Docker,
	/// A program the provider's configuration names, pinned by its sha256, run unisolated.
	Native,
}

/// Why the job stopped.
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
pub enum StopReason {
	/// The job exited by itself (its exit code says how), or never started (a reserved code).
	Exited,
	/// A fixed lease reached its end.
	TimeLimit,
	/// The kernel's OOM killer stopped it.
	OutOfMemory,
	/// Its outputs grew past the order's `max_output_bytes`.
	OutputOverLimit,
	/// The worker stopped it (the lease ended on chain, notice, shutdown).
	StoppedByWorker,
}

/// A point in a job's life, on the chain's clock and the wall clock.
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
pub struct Instant {
	/// The chain's best block the worker saw.
	pub block: BlockNumber,
	/// Milliseconds since the Unix epoch.
	pub unix_ms: u64,
}

/// Everything the worker commits to about one run of a lease's job.
#[derive(
	Clone,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct ExecutionReceipt {
	/// [`RECEIPT_DOMAIN`].
	pub domain: [u8; 16],
	/// The hash of the chain's genesis block.
	pub genesis_hash: [u8; 32],
	pub lease: LeaseId,
	/// The report this receipt backs: the final result or the n-th checkpoint.
	pub kind: ReportKind,
	/// The sha256 digest of the image that ran (for a native program, of the program file).
	pub image_digest: [u8; 32],
	pub executor: ExecutorKind,
	/// The leased devices (blake2-256 of each GPU's UUID, as the chain names them).
	pub devices: Vec<DeviceId>,
	pub started: Instant,
	pub ended: Instant,
	/// The job's exit code, or a [`ReservedExit`] code when it could not run.
	pub exit_code: i32,
	pub stop_reason: StopReason,
	/// GPU-seconds used, summed over the devices.
	pub gpu_seconds: u64,
	/// The root over the log files (`stdout`, `stderr`), built as [`crate::output_root`] is.
	pub logs_root: [u8; 32],
	/// The root over the output files ([`crate::output_root`]).
	pub output_root: [u8; 32],
	/// The blake2-256 of each input, in the order's order, as the worker read them.
	pub input_hashes: Vec<[u8; 32]>,
	/// The worker's version, e.g. `stint-worker 0.1.0`.
	pub worker_version: Vec<u8>,
}

impl ExecutionReceipt {
	/// The receipt's hash, the commitment's `receipt_hash`: blake2-256 of its SCALE encoding.
	pub fn hash(&self) -> [u8; 32] {
		blake2_256(&self.encode())
	}

	/// Whether the receipt is for `lease` on the chain with `genesis_hash` and has the right tag.
	pub fn is_for(&self, genesis_hash: &[u8; 32], lease: LeaseId) -> bool {
		self.domain == RECEIPT_DOMAIN && &self.genesis_hash == genesis_hash && self.lease == lease
	}
}

/// Whose fault it was that a job did not succeed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fault {
	/// The order's: its image or an input could not be had as the order pinned it.
	Order,
	/// The provider's: the worker lost the job.
	Provider,
	/// The job's own: it ran and exited non-zero. Nobody can tell more without verification.
	Job,
}

/// Exit codes a worker reports when a job could not run or was lost. All negative, so they never
/// collide with a process's own exit status (0..=255).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(i32)]
pub enum ReservedExit {
	/// The image could not be found locally nor pulled (order's fault).
	ImageUnavailable = -1001,
	/// An image was found under the name but its digest is not the one pinned (order's fault).
	ImageDigestMismatch = -1002,
	/// An input could not be downloaded (order's fault).
	InputUnreachable = -1003,
	/// An input's content does not hash to the order's `content_hash` (order's fault).
	InputHashMismatch = -1004,
	/// The image and command start no process: no command at all, no such executable, an
	/// unknown user (order's fault).
	JobUnstartable = -1005,
	/// The image is larger than the provider's limit, read before or while it is pulled, or it
	/// unpacks to more than that on disk (order's fault: a gzip bomb is the buyer's choice).
	ImageTooLarge = -1006,
	/// The container vanished (engine reset, host reboot): the provider's fault.
	ContainerLost = -2001,
	/// The machine lacked what it bid with when the lease came (disk, a GPU, its engine): the
	/// lease is acknowledged and ended at once rather than left to a no-show. The provider's
	/// fault.
	HostShort = -2002,
}

impl ReservedExit {
	/// Every reserved code.
	pub const ALL: [ReservedExit; 8] = [
		Self::ImageUnavailable,
		Self::ImageDigestMismatch,
		Self::InputUnreachable,
		Self::InputHashMismatch,
		Self::JobUnstartable,
		Self::ImageTooLarge,
		Self::ContainerLost,
		Self::HostShort,
	];

	/// The exit code reported.
	pub const fn code(self) -> i32 {
		self as i32
	}

	/// The reserved meaning of `code`, if it has one.
	pub fn from_code(code: i32) -> Option<Self> {
		Self::ALL.into_iter().find(|reserved| reserved.code() == code)
	}

	/// Whose fault this is.
	pub const fn fault(self) -> Fault {
		match self {
			Self::ImageUnavailable
			| Self::ImageDigestMismatch
			| Self::InputUnreachable
			| Self::InputHashMismatch
			| Self::JobUnstartable
			| Self::ImageTooLarge => Fault::Order,
			Self::ContainerLost | Self::HostShort => Fault::Provider,
		}
	}
}

/// Whose fault a result with `exit_code` is: `None` for success (0), the reserved code's fault,
/// or [`Fault::Job`] for any other code.
pub fn fault_of(exit_code: i32) -> Option<Fault> {
	match exit_code {
		0 => None,
		code => Some(ReservedExit::from_code(code).map_or(Fault::Job, ReservedExit::fault)),
	}
}

#[cfg(test)]
pub(crate) mod tests {
	use super::*;
	use crate::{output_root, OutputFile};

	fn receipt() -> ExecutionReceipt {
		ExecutionReceipt {
			domain: RECEIPT_DOMAIN,
			genesis_hash: [0x11; 32],
			lease: 7,
			kind: ReportKind::Final,
			image_digest: [0x22; 32],
			executor: ExecutorKind::Docker,
			devices: alloc::vec![[0x33; 32]],
			started: Instant { block: 10, unix_ms: 1_700_000_000_000 },
			ended: Instant { block: 20, unix_ms: 1_700_000_060_000 },
			exit_code: -1001,
			stop_reason: StopReason::Exited,
			gpu_seconds: 60,
			logs_root: [0x44; 32],
			output_root: [0; 32],
			input_hashes: alloc::vec![[0x55; 32]],
			worker_version: b"stint-worker 0.1.0".to_vec(),
		}
	}

	/// The receipt's bytes, written out field by field: the worker, the CLI and the runtime must
	/// agree on exactly these.
	#[test]
	fn the_receipt_encodes_field_by_field() {
		let mut expected = Vec::new();
		expected.extend_from_slice(b"stint/receipt/v1");
		expected.extend_from_slice(&[0x11; 32]);
		expected.extend_from_slice(&7u64.to_le_bytes());
		expected.push(0); // ReportKind::Final
		expected.extend_from_slice(&[0x22; 32]);
		expected.push(0); // ExecutorKind::Docker
		expected.push(1 << 2); // one device (compact length)
		expected.extend_from_slice(&[0x33; 32]);
		expected.extend_from_slice(&10u32.to_le_bytes());
		expected.extend_from_slice(&1_700_000_000_000u64.to_le_bytes());
		expected.extend_from_slice(&20u32.to_le_bytes());
		expected.extend_from_slice(&1_700_000_060_000u64.to_le_bytes());
		expected.extend_from_slice(&(-1001i32).to_le_bytes());
		expected.push(0); // StopReason::Exited
		expected.extend_from_slice(&60u64.to_le_bytes());
		expected.extend_from_slice(&[0x44; 32]);
		expected.extend_from_slice(&[0; 32]);
		expected.push(1 << 2);
		expected.extend_from_slice(&[0x55; 32]);
		expected.push(18 << 2);
		expected.extend_from_slice(b"stint-worker 0.1.0");
		assert_eq!(receipt().encode(), expected);
		assert_eq!(receipt().hash(), blake2_256(&expected));
		assert_eq!(
			hex(&receipt().hash()),
			"48c958a446781fa71fd728bba0c4d6a471e99a06b94e11753813e9ccaf324cd8"
		);
	}

	#[test]
	fn every_field_changes_the_hash() {
		let base = receipt().hash();
		let mut changed = receipt();
		changed.kind = ReportKind::Checkpoint { sequence: 1 };
		assert_ne!(changed.hash(), base);
		let mut changed = receipt();
		changed.stop_reason = StopReason::OutOfMemory;
		assert_ne!(changed.hash(), base);
		let mut changed = receipt();
		changed.logs_root = output_root(&[OutputFile {
			path: b"stdout".to_vec(),
			size: 0,
			content_hash: blake2_256(b""),
		}]);
		assert_ne!(changed.hash(), base);
		assert!(receipt().is_for(&[0x11; 32], 7));
		assert!(!receipt().is_for(&[0x11; 32], 8));
		assert!(!receipt().is_for(&[0x12; 32], 7));
	}

	#[test]
	fn reserved_codes_are_negative_distinct_and_say_whose_fault() {
		for reserved in ReservedExit::ALL {
			assert!(reserved.code() < 0);
			assert_eq!(ReservedExit::from_code(reserved.code()), Some(reserved));
		}
		assert_eq!(ReservedExit::ImageUnavailable.code(), -1001);
		assert_eq!(ReservedExit::ImageDigestMismatch.code(), -1002);
		assert_eq!(ReservedExit::InputUnreachable.code(), -1003);
		assert_eq!(ReservedExit::InputHashMismatch.code(), -1004);
		assert_eq!(ReservedExit::JobUnstartable.code(), -1005);
		assert_eq!(ReservedExit::ImageTooLarge.code(), -1006);
		assert_eq!(ReservedExit::ContainerLost.code(), -2001);
		assert_eq!(ReservedExit::HostShort.code(), -2002);
		assert_eq!(fault_of(0), None);
		assert_eq!(fault_of(1), Some(Fault::Job));
		assert_eq!(fault_of(137), Some(Fault::Job));
		assert_eq!(fault_of(-1), Some(Fault::Job));
		assert_eq!(fault_of(-1003), Some(Fault::Order));
		assert_eq!(fault_of(-1005), Some(Fault::Order));
		assert_eq!(fault_of(-2001), Some(Fault::Provider));
	}

	pub(crate) fn hex(bytes: &[u8]) -> alloc::string::String {
		use core::fmt::Write;
		bytes.iter().fold(alloc::string::String::new(), |mut s, b| {
			let _ = write!(s, "{b:02x}");
			s
		})
	}
}
