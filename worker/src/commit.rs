//! What the worker commits to when a job stops: the output files' manifest and root, the logs'
//! root, the [`ExecutionReceipt`], and the [`ResultCommitment`] signed by the worker key over the
//! [`Report`] the runtime verifies.
//!
//! Only plain files count as outputs: a job that leaves a symbolic link in `/outputs` (say to the
//! host's `/etc/shadow`) gets it neither hashed nor served.

use std::{
	fs,
	io::Read,
	os::fd::OwnedFd,
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
	hash_reader(fs::File::open(path)?)
}

fn hash_reader(mut file: impl Read) -> std::io::Result<([u8; 32], u64)> {
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

/// Deeper folders than this in a job's outputs are left out.
pub const MAX_OUTPUT_DEPTH: usize = 64;

/// Whether `error` is one a job can cause with what it leaves in its outputs (a link, a name
/// too long, a mode that forbids reading, a file gone while it ran): that entry is left out.
/// Any other (no file handles left, a disk that fails) is the worker's: the commit waits.
fn caused_by_the_job(error: &rustix::io::Errno) -> bool {
	use rustix::io::Errno;
	[
		Errno::ACCESS,
		Errno::PERM,
		Errno::LOOP,
		Errno::NOENT,
		Errno::NOTDIR,
		Errno::NAMETOOLONG,
		Errno::NXIO,
		Errno::ISDIR,
	]
	.contains(error)
}

/// The kind of the entry `name` in the open folder `dir`, read without following a link.
fn kind_at(dir: &OwnedFd, name: &str) -> rustix::io::Result<rustix::fs::FileType> {
	use rustix::fs::{statat, AtFlags, FileType};
	Ok(FileType::from_raw_mode(statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?.st_mode))
}

/// Opens the entry `name` of `dir` if it is a folder or a plain file (checked before it is
/// opened, so no device or pipe is ever opened, and again on what was opened), never through
/// a link; `None` for anything else.
fn open_at(dir: &OwnedFd, name: &str) -> rustix::io::Result<Option<(OwnedFd, bool)>> {
	use rustix::fs::{fstat, openat, FileType, Mode, OFlags};
	let base = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
	let (flags, folder) = match kind_at(dir, name)? {
		FileType::Directory => (base | OFlags::DIRECTORY, true),
		FileType::RegularFile => (base | OFlags::NONBLOCK, false),
		_ => return Ok(None),
	};
	let fd = openat(dir, name, flags, Mode::empty())?;
	let opened = FileType::from_raw_mode(fstat(&fd)?.st_mode);
	let expected = if folder { FileType::Directory } else { FileType::RegularFile };
	Ok((opened == expected).then_some((fd, folder)))
}

/// Opens a folder the worker made (a lease's outputs), never through a link in its place.
fn open_root(root: &Path) -> std::io::Result<OwnedFd> {
	use rustix::fs::{open, Mode, OFlags};
	let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
	Ok(open(root, flags, Mode::empty())?)
}

/// Finds the folder `relative` under `root` one name at a time, never through a symbolic link
/// at any step, and returns an `O_PATH` descriptor of it (which needs no permission on the
/// folder itself: enough to read its owner and mode, and to name it).
pub fn find_folder_beneath(root: &Path, relative: &Path) -> std::io::Result<OwnedFd> {
	use rustix::fs::{openat, Mode, OFlags};
	let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
	let mut at = open_root(root)?;
	for part in relative.components() {
		let std::path::Component::Normal(name) = part else {
			return Err(std::io::Error::new(std::io::ErrorKind::NotFound, "not beneath"));
		};
		at = openat(&at, name, flags, Mode::empty())?;
	}
	Ok(at)
}

/// Opens the plain file `relative` (a safe output path) under `root` one name at a time, never
/// through a symbolic link at any step (a job may leave a link to `/` in its outputs and name a
/// host file through it), and never a device or a pipe the job made.
pub fn open_beneath(root: &Path, relative: &str) -> std::io::Result<fs::File> {
	let refused =
		|| std::io::Error::new(std::io::ErrorKind::NotFound, "not a file inside the outputs");
	if !is_safe_output_path(relative) || relative.split('/').count() > MAX_OUTPUT_DEPTH {
		return Err(refused());
	}
	let mut at = open_root(root)?;
	let parts: Vec<&str> = relative.split('/').collect();
	for (i, part) in parts.iter().enumerate() {
		let last = i + 1 == parts.len();
		match open_at(&at, part)? {
			Some((fd, folder)) if folder != last => at = fd,
			_ => return Err(refused()),
		}
	}
	Ok(fs::File::from(at))
}

/// Every plain file under the open folder `dir`, found by name relative to it and opened
/// without following a link, with its path from the walk's root. What a job can make
/// unreadable (links, pipes, modes, names too long, folders deeper than the limit) and names
/// that are no safe output path are left out, so nothing a job leaves in its outputs can make
/// its result impossible to commit; an error the job cannot cause is returned.
fn visit(
	dir: &OwnedFd,
	prefix: &str,
	depth: usize,
	found: &mut dyn FnMut(String, fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
	let skip = |error: rustix::io::Errno| match caused_by_the_job(&error) {
		true => Ok(()),
		false => Err(std::io::Error::from(error)),
	};
	if depth >= MAX_OUTPUT_DEPTH {
		return Ok(());
	}
	let entries = match rustix::fs::Dir::read_from(dir) {
		Ok(entries) => entries,
		Err(error) => return skip(error),
	};
	let mut names = Vec::new();
	for entry in entries {
		let name = match entry {
			Ok(entry) => entry.file_name().to_bytes().to_vec(),
			Err(error) => return skip(error),
		};
		if name != b"." && name != b".." {
			if let Ok(name) = String::from_utf8(name) {
				names.push(name);
			}
		}
	}
	for name in names {
		let relative = match prefix.is_empty() {
			true => name.clone(),
			false => format!("{prefix}/{name}"),
		};
		if !is_safe_output_path(&relative) {
			continue;
		}
		match open_at(dir, &name) {
			Ok(Some((fd, true))) => visit(&fd, &relative, depth + 1, found)?,
			Ok(Some((fd, false))) => found(relative, fs::File::from(fd))?,
			Ok(None) => {}
			Err(error) => skip(error)?,
		}
	}
	Ok(())
}

/// Walks the outputs under `root` (nothing when there is no such folder, or a link or a file
/// in its place: a native job runs as the worker's user and could put one there).
fn walk(
	root: &Path,
	found: &mut dyn FnMut(String, fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
	use rustix::fs::{open, Mode, OFlags};
	let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
	match open(root, flags, Mode::empty()) {
		Ok(root) => visit(&root, "", 0, found),
		Err(error) if caused_by_the_job(&error) => Ok(()),
		Err(error) => Err(error.into()),
	}
}

/// The plain files under `root` (recursively; links, special files, what a job made
/// unreadable and names that are not safe relative UTF-8 paths left out), sorted by path.
pub fn manifest(root: &Path) -> std::io::Result<Manifest> {
	let mut files = Vec::new();
	walk(root, &mut |path, file| {
		let (hash, size) = hash_reader(file)?;
		files.push(ManifestFile { path, size, blake2_256: format!("0x{}", hex::encode(hash)) });
		Ok(())
	})?;
	files.sort_by(|a: &ManifestFile, b| a.path.cmp(&b.path));
	Ok(Manifest { files })
}

/// The most entries (plain files, folders, links, anything) a running job's outputs may hold:
/// past it the job is over its limit whatever its bytes (millions of empty files would use up
/// the disk's inodes, and stall every walk of the outputs).
pub const MAX_OUTPUT_ENTRIES: u64 = 100_000;

/// What a running job's outputs take on the disk, counted over every entry whatever its name,
/// kind or depth: what the manifest leaves out (names that are no output path, folders too
/// deep) still fills the disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
	/// The sizes of the plain files.
	pub bytes: u64,
	/// Entries seen.
	pub entries: u64,
	/// More entries than allowed (the walk stopped there).
	pub too_many: bool,
	/// Folders nested deeper than [`MAX_OUTPUT_DEPTH`] (not walked).
	pub too_deep: bool,
	/// Files the job deleted but still holds open or mapped: no walk sees them, the disk does
	/// ([`crate::executor::held`]).
	pub held: u64,
	/// Folders this process may not read, write or search (relative to the outputs; at most
	/// [`MAX_CLOSED`]): a job run as another user (root in its container) made them. Their
	/// content is not counted until they are opened ([`crate::executor::folders`]).
	pub closed: Vec<PathBuf>,
	/// Folders opened for this process that the job closed again at once: outputs it hides from
	/// the count.
	pub hidden: bool,
}

impl Usage {
	/// Whether outputs this size break an order's limit of `max_bytes`.
	pub fn over(&self, max_bytes: u64) -> bool {
		self.bytes.saturating_add(self.held) > max_bytes
			|| self.too_many
			|| self.too_deep
			|| self.hidden
	}
}

/// The most closed folders one walk lists.
pub const MAX_CLOSED: usize = 4096;

/// What the outputs under `root` take (nothing when there is no such folder). A folder the
/// worker may not read is counted and listed as closed, its content is not (a worker run as
/// root reads them all).
pub fn usage(root: &Path) -> Usage {
	usage_of(root, MAX_OUTPUT_ENTRIES)
}

fn usage_of(root: &Path, max_entries: u64) -> Usage {
	let mut usage = Usage::default();
	if let Ok(root) = open_root(root) {
		count(&root, Path::new(""), 0, max_entries, &mut usage);
	}
	usage
}

fn count(dir: &OwnedFd, path: &Path, depth: usize, max_entries: u64, usage: &mut Usage) {
	use rustix::fs::{accessat, openat, statat, Access, AtFlags, FileType, Mode, OFlags};
	use std::os::unix::ffi::OsStrExt;
	if depth >= MAX_OUTPUT_DEPTH {
		usage.too_deep = true;
		return;
	}
	let Ok(entries) = rustix::fs::Dir::read_from(dir) else { return };
	for entry in entries {
		let Ok(entry) = entry else { return };
		let name = entry.file_name();
		if matches!(name.to_bytes(), b"." | b"..") {
			continue;
		}
		usage.entries += 1;
		if usage.entries > max_entries {
			usage.too_many = true;
			return;
		}
		let Ok(stat) = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else { continue };
		match FileType::from_raw_mode(stat.st_mode) {
			FileType::RegularFile => {
				usage.bytes = usage.bytes.saturating_add(u64::try_from(stat.st_size).unwrap_or(0))
			}
			FileType::Directory => {
				let all = Access::READ_OK | Access::WRITE_OK | Access::EXEC_OK;
				if accessat(dir, name, all, AtFlags::EACCESS).is_err()
					&& usage.closed.len() < MAX_CLOSED
				{
					usage.closed.push(path.join(std::ffi::OsStr::from_bytes(name.to_bytes())));
				}
				let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
				if let Ok(folder) = openat(dir, name, flags, Mode::empty()) {
					let inner = path.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
					count(&folder, &inner, depth + 1, max_entries, usage);
				}
				if usage.too_many {
					return;
				}
			}
			_ => {}
		}
	}
}

/// Keeps `manifest` (the final one) as `dirs`' `manifest.json`, written whole or not at all.
pub fn keep_manifest(dirs: &LeaseDirs, manifest: &Manifest) -> std::io::Result<()> {
	let partial = dirs.root.join("manifest.json.partial");
	fs::write(&partial, serde_json::to_vec(manifest).expect("plain data serializes"))?;
	fs::rename(&partial, dirs.manifest())
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
	/// The outputs' manifest as the final result committed to it (see [`keep_manifest`]).
	pub fn manifest(&self) -> PathBuf {
		self.root.join("manifest.json")
	}
	/// Creates the folders: `outputs` writable by the job's user whoever it is (a container
	/// reaches it as its mount, not through the folders above it) within the lease's folder,
	/// which is closed to the host's other users.
	pub fn create(&self) -> std::io::Result<()> {
		for dir in [self.inputs(), self.outputs(), self.logs()] {
			fs::create_dir_all(&dir)?;
		}
		use std::os::unix::fs::PermissionsExt;
		fs::set_permissions(&self.root, fs::Permissions::from_mode(0o700))?;
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

	/// `walk` run by a thread of its own whose effective user is `nobody` (the kernel's
	/// credentials are per thread; the rest of the process stays root). `None` when this
	/// process is not root.
	fn as_nobody<T: Send + 'static>(walk: impl FnOnce() -> T + Send + 'static) -> Option<T> {
		use rustix::thread::{set_thread_res_uid, Uid};
		let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
		if !status
			.lines()
			.any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
		{
			return None;
		}
		let thread = std::thread::spawn(move || {
			set_thread_res_uid(None, Uid::from_raw(65534), None).unwrap();
			walk()
		});
		Some(thread.join().unwrap())
	}

	#[test]
	fn folders_closed_to_the_worker_are_listed_and_their_content_not_counted() {
		use std::os::unix::fs::PermissionsExt;
		let dir = tempfile::tempdir().unwrap();
		let root = dir.path().to_path_buf();
		let set = |path: &Path, mode| fs::set_permissions(path, fs::Permissions::from_mode(mode));
		set(&root, 0o755).unwrap();
		for (folder, mode) in [("open", 0o777), ("theirs", 0o755), ("shut", 0o700)] {
			fs::create_dir(root.join(folder)).unwrap();
			fs::write(root.join(folder).join("f"), [0u8; 10]).unwrap();
			set(&root.join(folder), mode).unwrap();
		}
		fs::create_dir(root.join("theirs/inner")).unwrap();
		set(&root.join("theirs/inner"), 0o777).unwrap();
		let walked = root.clone();
		let Some(usage) = as_nobody(move || usage(&walked)) else {
			eprintln!("skipped: needs root to walk as another user");
			return;
		};
		// `theirs` may be read but not emptied: closed all the same (its files could never be
		// removed); `shut`'s file is not counted.
		let mut closed = usage.closed.clone();
		closed.sort();
		assert_eq!(closed, [PathBuf::from("shut"), PathBuf::from("theirs")]);
		assert_eq!(usage.bytes, 20);
		assert_eq!(usage.entries, 6);
		assert!(!usage.over(20));
		// Root sees everything, nothing closed.
		let all = super::usage(&root);
		assert!(all.closed.is_empty());
		assert_eq!(all.bytes, 30);
		// A hidden folder is over any limit.
		assert!(Usage { hidden: true, ..Usage::default() }.over(u64::MAX));
	}

	#[test]
	fn a_leases_outputs_are_open_to_its_job_and_closed_to_other_users() {
		use std::os::unix::fs::PermissionsExt;
		let dir = tempfile::tempdir().unwrap();
		let dirs = LeaseDirs::new(dir.path(), 3);
		dirs.create().unwrap();
		let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
		assert_eq!(mode(&dirs.root), 0o700);
		assert_eq!(mode(&dirs.outputs()), 0o777);
		// Again (a restart): the same.
		dirs.create().unwrap();
		assert_eq!(mode(&dirs.root), 0o700);
	}

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
		// The link counts as an entry (it takes an inode), not its target's bytes.
		let counted = usage(root);
		assert_eq!((counted.bytes, counted.entries, counted.over(9)), (9, 4, false));
		assert_eq!(super::manifest(&root.join("missing")).unwrap(), Manifest::default());
	}

	#[test]
	fn nothing_a_job_leaves_in_its_outputs_escapes_them_or_stops_the_commit() {
		use rustix::fs::{mkdirat, openat, Mode, OFlags};
		let dir = tempfile::tempdir().unwrap();
		let root = dir.path().join("outputs");
		fs::create_dir_all(root.join("real")).unwrap();
		fs::write(root.join("real/kept"), b"kept").unwrap();
		// A link to the host's root, a link to a folder inside, a pipe nobody writes to.
		std::os::unix::fs::symlink("/", root.join("host")).unwrap();
		std::os::unix::fs::symlink("real", root.join("again")).unwrap();
		let made = std::process::Command::new("mkfifo").arg(root.join("pipe")).status().unwrap();
		assert!(made.success());
		// Folders nested deeper than the limit and past PATH_MAX, made one name at a time.
		let long = "d".repeat(200);
		let mut at: OwnedFd = fs::File::open(&root).unwrap().into();
		for _ in 0..MAX_OUTPUT_DEPTH + 8 {
			mkdirat(&at, long.as_str(), Mode::from_raw_mode(0o755)).unwrap();
			at = openat(&at, long.as_str(), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
				.unwrap();
		}
		let deep = openat(&at, "deep", OFlags::WRONLY | OFlags::CREATE, Mode::from_raw_mode(0o644))
			.unwrap();
		std::io::Write::write_all(&mut fs::File::from(deep), b"far down").unwrap();

		let manifest = manifest(&root).unwrap();
		let paths: Vec<_> = manifest.files.iter().map(|f| f.path.as_str()).collect();
		assert_eq!(paths, ["real/kept"]);
		// Still counted against the limit: the files past the depth are not, the depth is.
		let counted = usage(&root);
		assert_eq!(counted.bytes, 4);
		assert!(counted.too_deep && counted.over(u64::MAX));

		assert_eq!(
			open_beneath(&root, "real/kept").map(|f| f.metadata().unwrap().len()).ok(),
			Some(4)
		);
		for refused in ["host/etc/passwd", "again/kept", "pipe", "real", "../outputs/real/kept"] {
			assert!(open_beneath(&root, refused).is_err(), "{refused}");
		}
	}

	#[test]
	fn what_the_manifest_leaves_out_still_counts_against_the_limit() {
		use std::os::unix::ffi::OsStrExt;
		let dir = tempfile::tempdir().unwrap();
		let root = dir.path();
		// A name that is no output path, one that is no UTF-8, and what lies below them.
		fs::create_dir_all(root.join("a\\b")).unwrap();
		fs::write(root.join("a\\b/hidden"), vec![0u8; 1000]).unwrap();
		fs::write(root.join(std::ffi::OsStr::from_bytes(b"\xff")), vec![0u8; 500]).unwrap();
		assert_eq!(manifest(root).unwrap(), Manifest::default());
		// A sparse file counts its length, not the few blocks it holds.
		fs::File::create(root.join("sparse")).unwrap().set_len(1 << 40).unwrap();
		let counted = usage(root);
		assert_eq!(counted.bytes, 1500 + (1 << 40));
		assert_eq!(counted.entries, 4);
		assert!(counted.over(1 << 40) && !counted.over(2 << 40));
		// Empty files cost no bytes, but past the most entries the outputs are over the limit
		// (here 100 of them, for the test's speed; MAX_OUTPUT_ENTRIES in the worker).
		let many = root.join("many");
		fs::create_dir(&many).unwrap();
		for i in 0..100 {
			fs::File::create(many.join(i.to_string())).unwrap();
		}
		assert!(!usage_of(root, 105).over(u64::MAX));
		let counted = usage_of(root, 100);
		assert_eq!(counted.entries, 101);
		assert!(counted.too_many && counted.over(u64::MAX));
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
