//! What the worker commits to when a job stops: the output files' manifest and root, the logs'
//! root, the [`ExecutionReceipt`], and the [`ResultCommitment`] signed by the worker key over the
//! [`Report`] the runtime verifies.
//!
//! Only plain files count as outputs: a job that leaves a symbolic link in `/outputs` (say to the
//! host's `/etc/shadow`) gets it neither hashed nor served.

use std::{
	fs,
	io::Read,
	path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use stint_client::Keypair;
use stint_primitives::{
	is_safe_output_path, output_root, ExecutionReceipt, LeaseId, OutputFile, Report, ReportKind,
	ResultCommitment,
};

/// The two logs, always both (empty when the job wrote nothing).
pub const LOG_NAMES: [&str; 2] = ["stdout", "stderr"];

/// One file as the outputs API's manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
	pub path: String,
	pub size: u64,
	/// `0x` and the blake2-256 of the content.
	pub blake2_256: String,
}

/// `{"files": [...]}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
	pub files: Vec<ManifestFile>,
}

impl Manifest {
	/// The files as the output root commits to them.
	pub fn output_files(&self) -> Vec<OutputFile> {
		self.files
			.iter()
			.map(|file| OutputFile {
				path: file.path.clone().into_bytes(),
				size: file.size,
				content_hash: stint_client::parse_hex32(&file.blake2_256).unwrap_or_default(),
			})
			.collect()
	}

	/// The root over the files ([`output_root`]).
	pub fn root(&self) -> [u8; 32] {
		output_root(&self.output_files())
	}

	pub fn total_bytes(&self) -> u64 {
		self.files.iter().map(|file| file.size).sum()
	}
}

/// The blake2-256 of a file's content and its size, read in 64 KiB pieces.
pub fn hash_file(path: &Path) -> std::io::Result<([u8; 32], u64)> {
	let mut file = fs::File::open(path)?;
	let mut state = blake2b_simd::Params::new().hash_length(32).to_state();
	let mut buffer = vec![0u8; 64 * 1024];
	let mut size = 0u64;
	loop {
		let n = file.read(&mut buffer)?;
		if n == 0 {
			break;
		}
		state.update(&buffer[..n]);
		size += n as u64;
	}
	Ok((state.finalize().as_bytes().try_into().expect("32 bytes asked"), size))
}

/// The plain files under `root` (recursively, symbolic links and special files left out, and
/// names that are not safe relative UTF-8 paths), sorted by path.
pub fn manifest(root: &Path) -> std::io::Result<Manifest> {
	let mut files = Vec::new();
	if root.is_dir() {
		walk(root, root, &mut files)?;
	}
	files.sort_by(|a: &ManifestFile, b| a.path.cmp(&b.path));
	Ok(Manifest { files })
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<ManifestFile>) -> std::io::Result<()> {
	for entry in fs::read_dir(dir)? {
		let entry = entry?;
		let kind = entry.file_type()?;
		let path = entry.path();
		if kind.is_dir() {
			walk(root, &path, files)?;
			continue;
		}
		if !kind.is_file() {
			continue;
		}
		let Some(relative) = relative_path(root, &path) else { continue };
		let (hash, size) = hash_file(&path)?;
		files.push(ManifestFile {
			path: relative,
			size,
			blake2_256: format!("0x{}", hex::encode(hash)),
		});
	}
	Ok(())
}

fn relative_path(root: &Path, path: &Path) -> Option<String> {
	let relative = path.strip_prefix(root).ok()?;
	let parts: Option<Vec<&str>> = relative.components().map(|c| c.as_os_str().to_str()).collect();
	let joined = parts?.join("/");
	is_safe_output_path(&joined).then_some(joined)
}

/// The bytes under `root`, counted as the manifest would (for watching a running job).
pub fn used_bytes(root: &Path) -> u64 {
	fn size(dir: &Path) -> u64 {
		let Ok(entries) = fs::read_dir(dir) else { return 0 };
		entries
			.flatten()
			.map(|entry| match entry.file_type() {
				Ok(kind) if kind.is_dir() => size(&entry.path()),
				Ok(kind) if kind.is_file() => entry.metadata().map(|m| m.len()).unwrap_or(0),
				_ => 0,
			})
			.sum()
	}
	size(root)
}

/// The manifest of the logs in `dir`: `stdout` and `stderr`, an absent one as empty.
pub fn logs_manifest(dir: &Path) -> std::io::Result<Manifest> {
	let mut files = Vec::new();
	for name in LOG_NAMES {
		let path = dir.join(name);
		let (hash, size) = match path.is_file() {
			true => hash_file(&path)?,
			false => (stint_primitives::blake2_256(b""), 0),
		};
		files.push(ManifestFile {
			path: name.into(),
			size,
			blake2_256: format!("0x{}", hex::encode(hash)),
		});
	}
	files.sort_by(|a, b| a.path.cmp(&b.path));
	Ok(Manifest { files })
}

/// Where a lease's files live under the data directory.
#[derive(Clone, Debug)]
pub struct LeaseDirs {
	pub root: PathBuf,
}

impl LeaseDirs {
	pub fn new(data_dir: &Path, lease: LeaseId) -> Self {
		Self { root: data_dir.join("leases").join(lease.to_string()) }
	}
	pub fn inputs(&self) -> PathBuf {
		self.root.join("inputs")
	}
	pub fn outputs(&self) -> PathBuf {
		self.root.join("outputs")
	}
	pub fn logs(&self) -> PathBuf {
		self.root.join("logs")
	}
	/// The logs as the job writes them, while it runs (the API's `?follow=1`).
	pub fn live_logs(&self) -> PathBuf {
		self.root.join("live")
	}
	pub fn receipt(&self) -> PathBuf {
		self.root.join("receipt.scale")
	}
	/// Creates the folders; `outputs` writable by the job's user whoever it is.
	pub fn create(&self) -> std::io::Result<()> {
		for dir in [self.inputs(), self.outputs(), self.logs()] {
			fs::create_dir_all(&dir)?;
		}
		use std::os::unix::fs::PermissionsExt;
		fs::set_permissions(self.outputs(), fs::Permissions::from_mode(0o777))
	}
}

/// The commitment a receipt backs.
pub fn commitment_of(receipt: &ExecutionReceipt) -> ResultCommitment {
	ResultCommitment {
		output_root: receipt.output_root,
		receipt_hash: receipt.hash(),
		exit_code: receipt.exit_code,
		gpu_seconds: receipt.gpu_seconds,
		image_digest: receipt.image_digest,
	}
}

/// The worker key's signature over the report of `kind` for `lease` with `commitment`.
pub fn sign_report(
	worker: &Keypair,
	genesis_hash: [u8; 32],
	lease: LeaseId,
	kind: ReportKind,
	commitment: ResultCommitment,
) -> [u8; 64] {
	worker.sign(&Report::new(genesis_hash, lease, kind, commitment).signing_bytes()).0
}

#[cfg(test)]
mod tests {
	use super::*;
	use stint_primitives::{blake2_256, ExecutorKind, Instant, StopReason, RECEIPT_DOMAIN};

	#[test]
	fn the_manifest_covers_plain_files_only_and_matches_the_primitives_root() {
		let dir = tempfile::tempdir().unwrap();
		let root = dir.path();
		fs::create_dir_all(root.join("sub")).unwrap();
		fs::write(root.join("a.txt"), b"alpha").unwrap();
		fs::write(root.join("sub/b.bin"), b"beta").unwrap();
		std::os::unix::fs::symlink("/etc/passwd", root.join("stolen")).unwrap();
		let manifest = manifest(root).unwrap();
		let paths: Vec<_> = manifest.files.iter().map(|f| f.path.as_str()).collect();
		assert_eq!(paths, ["a.txt", "sub/b.bin"]);
		let expected = output_root(&[
			OutputFile { path: b"a.txt".to_vec(), size: 5, content_hash: blake2_256(b"alpha") },
			OutputFile { path: b"sub/b.bin".to_vec(), size: 4, content_hash: blake2_256(b"beta") },
		]);
		assert_eq!(manifest.root(), expected);
		assert_eq!(manifest.total_bytes(), 9);
		assert_eq!(used_bytes(root), 9);
		assert_eq!(super::manifest(&root.join("missing")).unwrap(), Manifest::default());
	}

	#[test]
	fn logs_are_always_stdout_and_stderr() {
		let dir = tempfile::tempdir().unwrap();
		fs::write(dir.path().join("stdout"), b"hello\n").unwrap();
		let logs = logs_manifest(dir.path()).unwrap();
		let expected = output_root(&[
			OutputFile { path: b"stdout".to_vec(), size: 6, content_hash: blake2_256(b"hello\n") },
			OutputFile { path: b"stderr".to_vec(), size: 0, content_hash: blake2_256(b"") },
		]);
		assert_eq!(logs.root(), expected);
	}

	#[test]
	fn a_receipts_commitment_carries_its_hash() {
		let receipt = ExecutionReceipt {
			domain: RECEIPT_DOMAIN,
			genesis_hash: [1; 32],
			lease: 4,
			kind: ReportKind::Final,
			image_digest: [2; 32],
			executor: ExecutorKind::Docker,
			devices: vec![],
			started: Instant::default(),
			ended: Instant::default(),
			exit_code: 3,
			stop_reason: StopReason::Exited,
			gpu_seconds: 5,
			logs_root: [6; 32],
			output_root: [7; 32],
			input_hashes: vec![],
			worker_version: b"x".to_vec(),
		};
		let commitment = commitment_of(&receipt);
		assert_eq!(commitment.receipt_hash, receipt.hash());
		assert_eq!(commitment.output_root, [7; 32]);
		assert_eq!(commitment.exit_code, 3);
		assert_eq!(commitment.gpu_seconds, 5);
		assert_eq!(commitment.image_digest, [2; 32]);
		let worker = stint_client::keypair("//Eve//stash").unwrap();
		let signature = sign_report(&worker, [1; 32], 4, ReportKind::Final, commitment);
		let bytes = Report::new([1; 32], 4, ReportKind::Final, commitment).signing_bytes();
		assert!(subxt_signer::sr25519::verify(
			&subxt_signer::sr25519::Signature(signature),
			&bytes,
			&worker.public_key()
		));
	}
}
