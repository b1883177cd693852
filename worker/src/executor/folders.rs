//! Folders a job made that the worker may not enter. Under Docker a job runs as root (or as its
//! image's user) in its container, not as the worker's user: a folder it makes under `/outputs`
//! with the usual umask (`0755`, root's) is the worker's to read but not to empty, so its outputs
//! could never be removed when their retention ends; one it makes `0700` is not even counted, so
//! a job could fill the disk past its limit there. A worker run as root is stopped by neither.
//! One run as a provider's own user opens them: its own (a native job's, a job run as the
//! worker's user) itself, the others through the executor (Docker: the engine, which is root,
//! changes their mode). Opened means read, write and search for others, the job's owner and the
//! rest of its mode kept, so the job goes on as before; the lease's folder is the worker's alone
//! (`0700`), so nobody else reaches them.
//!
//! A folder the worker opened that is closed again when it looks next is a job hiding its
//! outputs from the count: it is over its limit ([`Usage::hidden`]).

use std::{
	collections::HashSet,
	os::{fd::AsRawFd, unix::fs::MetadataExt},
	path::{Path, PathBuf},
};

use stint_primitives::LeaseId;

use super::Executor;
use crate::commit::{self, Usage, MAX_OUTPUT_DEPTH};

/// The most rounds of opening one look makes: each opens the closed folders the last walk
/// found, which shows what lies in them, down to the deepest folder the outputs may have.
const ROUNDS: usize = MAX_OUTPUT_DEPTH + 2;

/// The mode an opened folder gets from its mode `mode`: read, write and search for others, the
/// owner's and the group's bits kept (set-id and sticky bits dropped: a sticky folder would keep
/// the worker from removing the job's files in it).
pub fn opened_mode(mode: u32) -> u32 {
	(mode & 0o770) | 0o007
}

/// Walks the outputs under `outputs`, opening every closed folder it finds (see the module's
/// documentation) until none is left, and returns what they take. `handle` is the job that made
/// them; it may have stopped. What cannot be opened is left uncounted, and said why.
pub async fn open_all<E: Executor>(
	executor: &E,
	handle: &str,
	outputs: &Path,
) -> (Usage, Result<(), String>) {
	let mut opened: HashSet<PathBuf> = HashSet::new();
	let mut usage = walk(outputs).await;
	for _ in 0..ROUNDS {
		if usage.closed.is_empty() {
			return (usage, Ok(()));
		}
		if usage.closed.iter().any(|folder| opened.contains(folder)) {
			usage.hidden = true;
			return (usage, Ok(()));
		}
		let theirs = open_own(outputs, &usage.closed);
		if !theirs.is_empty() {
			if let Err(why) = executor.open_folders(handle, outputs, &theirs).await {
				return (usage, Err(why));
			}
		}
		opened.extend(std::mem::take(&mut usage.closed));
		usage = walk(outputs).await;
	}
	let left = usage.closed.len();
	(usage, Err(format!("{left} folder(s) still closed after {ROUNDS} rounds of opening")))
}

/// [`open_all`], saying in the log what could not be opened: what a job's outputs take, for
/// its limit.
pub async fn counted<E: Executor>(
	executor: &E,
	handle: &str,
	lease: Option<LeaseId>,
	outputs: &Path,
) -> Usage {
	let (usage, opened) = open_all(executor, handle, outputs).await;
	if let Err(why) = opened {
		crate::log::warn("executor", lease, format!("outputs not all counted: {why}"));
	}
	usage
}

/// [`commit::usage`] off the async threads (a job with many files makes a long walk).
async fn walk(outputs: &Path) -> Usage {
	let outputs = outputs.to_path_buf();
	tokio::task::spawn_blocking(move || commit::usage(&outputs)).await.unwrap_or_default()
}

/// Opens the folders of `closed` (relative to `outputs`) that belong to the owner of `outputs`
/// (the worker): a native job runs as the worker's user, and so may a container. Returns the
/// others. A folder that is gone, or no longer a folder, is left to the next walk.
///
/// Every step is one name through a descriptor, never through a symbolic link (a job running
/// as the worker's user may swap a folder for a link to any folder of the worker's, such as its
/// data directory, between the walk and this): the folder is found with `O_PATH`, which needs
/// no permission on it, and its mode changed through that descriptor.
pub fn open_own(outputs: &Path, closed: &[PathBuf]) -> Vec<PathBuf> {
	let Ok(ours) = std::fs::symlink_metadata(outputs).map(|m| m.uid()) else {
		return closed.to_vec();
	};
	let mut theirs = Vec::new();
	for folder in closed {
		let Ok(fd) = commit::find_folder_beneath(outputs, folder) else { continue };
		let Ok(stat) = rustix::fs::fstat(&fd) else { continue };
		if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::Directory {
			continue;
		}
		if stat.st_uid != ours {
			theirs.push(folder.clone());
			continue;
		}
		let mode = rustix::fs::Mode::from_raw_mode(opened_mode(stat.st_mode) | 0o700);
		// `fchmod` refuses an `O_PATH` descriptor; its `/proc` entry names that very folder.
		let _ = rustix::fs::chmod(format!("/proc/self/fd/{}", fd.as_raw_fd()), mode);
	}
	theirs
}

/// Removes the lease folder `root` and everything in it, opening through the executor what its
/// job (`handle`, if its container is still there) closed to the worker.
pub async fn remove_all<E: Executor>(
	executor: &E,
	handle: Option<&str>,
	lease: Option<LeaseId>,
	root: &Path,
) -> Result<(), String> {
	let first = match std::fs::remove_dir_all(root) {
		Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => e,
		Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
		done => return done.map_err(|e| format!("{}: {e}", root.display())),
	};
	let Some(handle) = handle else {
		return Err(format!("{}: {first} (the job that made it is gone)", root.display()));
	};
	// A walk lists at most so many closed folders, and stops at so many entries: what removal
	// took away lets the next round see further.
	let outputs = crate::commit::LeaseDirs { root: root.to_path_buf() }.outputs();
	for _ in 0..ROUNDS {
		let (_, opened) = open_all(executor, handle, &outputs).await;
		if let Err(why) = opened {
			crate::log::warn("executor", lease, format!("opening the job's folders: {why}"));
		}
		match std::fs::remove_dir_all(root) {
			Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => continue,
			Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
			done => return done.map_err(|e| format!("{}: {e}", root.display())),
		}
	}
	Err(format!("{}: {first}, even after opening the job's folders", root.display()))
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn opening_own_folders_never_goes_through_a_link() {
		use std::os::unix::fs::PermissionsExt;
		let dir = tempfile::tempdir().unwrap();
		let outputs = dir.path().join("outputs");
		let private = dir.path().join("private");
		std::fs::create_dir_all(outputs.join("a/closed")).unwrap();
		std::fs::create_dir(&private).unwrap();
		std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
		std::fs::set_permissions(outputs.join("a/closed"), std::fs::Permissions::from_mode(0o000))
			.unwrap();
		// A job swapped a folder the walk saw for a link to the worker's private folder, and
		// another for a link above a folder.
		std::os::unix::fs::symlink(&private, outputs.join("swapped")).unwrap();
		std::os::unix::fs::symlink(dir.path(), outputs.join("up")).unwrap();
		let closed =
			[PathBuf::from("a/closed"), PathBuf::from("swapped"), PathBuf::from("up/private")];
		assert!(open_own(&outputs, &closed).is_empty());
		let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777;
		assert_eq!(mode(&outputs.join("a/closed")), 0o707, "its own closed folder is opened");
		assert_eq!(mode(&private), 0o700, "nothing through a link");
	}

	#[test]
	fn an_opened_folder_keeps_its_owners_bits_and_loses_sticky_and_set_id() {
		assert_eq!(opened_mode(0o700), 0o707);
		assert_eq!(opened_mode(0o755), 0o757);
		assert_eq!(opened_mode(0o1777), 0o777);
		assert_eq!(opened_mode(0o2750), 0o757);
		assert_eq!(opened_mode(0o000), 0o007);
	}
}
