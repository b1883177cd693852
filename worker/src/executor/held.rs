//! What a job's processes hold on the disk that no walk of its outputs sees: files it deleted
//! while keeping them open or mapped still take their blocks until the last holder lets go, so
//! a job could fill the disk under a limit the walk measures. Read from `/proc` (every process
//! the worker may inspect; a worker run as root sees all of them).

use std::{collections::HashSet, os::unix::fs::MetadataExt, path::Path};

use stint_primitives::LeaseId;

use super::{folders, Executor};
use crate::commit::Usage;

/// What the running job `handle` takes on the disk: its outputs under `outputs`, walked (the
/// folders it closed to the worker opened first, [`folders`]), and the deleted files its
/// processes hold there. Walks go off the async threads (a job with many files makes a long
/// walk).
pub async fn job_usage<E: Executor>(
	executor: &E,
	handle: &str,
	lease: Option<LeaseId>,
	outputs: &Path,
) -> Usage {
	// A job whose processes cannot be listed now (the engine is slow) is walked all the same.
	let pids = executor.processes(handle).await.unwrap_or_default();
	let usage = folders::counted(executor, handle, lease, outputs).await;
	let outputs = outputs.to_path_buf();
	let held = tokio::task::spawn_blocking(move || deleted_bytes(&pids, &outputs))
		.await
		.unwrap_or_default();
	Usage { held, ..usage }
}

/// The processes in the pid namespace of `pid` (a container's first process): every process of
/// the container. A process in the worker's own namespace stands for itself alone, so a job that
/// shares the host's namespace is never taken for the whole host.
pub fn namespace_of(pid: u32) -> Vec<u32> {
	let namespace = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok();
	let (Some(theirs), Some(ours)) = (namespace(&pid.to_string()), namespace("self")) else {
		return vec![pid];
	};
	if theirs == ours {
		return vec![pid];
	}
	let Ok(entries) = std::fs::read_dir("/proc") else { return vec![pid] };
	entries
		.flatten()
		.filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
		.filter(|other| namespace(&other.to_string()).as_ref() == Some(&theirs))
		.collect()
}

/// The bytes of the deleted files on `folder`'s filesystem that `pids` hold open or mapped,
/// each file once (by its length, as the walk counts files). What cannot be read is not counted.
pub fn deleted_bytes(pids: &[u32], folder: &Path) -> u64 {
	let Ok(device) = std::fs::metadata(folder).map(|m| m.dev()) else { return 0 };
	let mut seen = HashSet::new();
	let mut bytes = 0u64;
	for pid in pids {
		for holder in ["fd", "map_files"] {
			let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/{holder}")) else { continue };
			for entry in entries.flatten() {
				// Follows the link to the file itself, deleted or not.
				let Ok(file) = std::fs::metadata(entry.path()) else { continue };
				if file.is_file()
					&& file.nlink() == 0
					&& file.dev() == device
					&& seen.insert(file.ino())
				{
					bytes = bytes.saturating_add(file.len());
				}
			}
		}
	}
	bytes
}

#[cfg(test)]
mod tests {
	use super::*;
	use std::io::Write;

	/// A shell that holds `file` open twice, and deletes and grows it, a step per line it reads.
	fn holder(file: &Path) -> (std::process::Child, impl FnMut(&str)) {
		use std::io::{BufRead, BufReader};
		let script = "exec 3>\"$1\"; head -c 3000 /dev/zero >&3; exec 4<\"$1\"; echo linked; \
		              read _; rm \"$1\"; echo deleted; read _; head -c 1000 /dev/zero >&3; \
		              echo grown; read _";
		let mut child = std::process::Command::new("sh")
			.args(["-c", script, "sh"])
			.arg(file)
			.stdin(std::process::Stdio::piped())
			.stdout(std::process::Stdio::piped())
			.spawn()
			.unwrap();
		let (mut input, mut output) =
			(child.stdin.take().unwrap(), BufReader::new(child.stdout.take().unwrap()));
		let step = move |want: &str| {
			if want != "linked" {
				input.write_all(b"\n").unwrap();
			}
			let mut line = String::new();
			output.read_line(&mut line).unwrap();
			assert_eq!(line.trim(), want);
		};
		(child, step)
	}

	#[test]
	fn a_deleted_file_held_open_counts_once_and_a_linked_one_not_at_all() {
		// Another process: this one's other tests hold deleted temporary files of their own.
		let dir = tempfile::tempdir().unwrap();
		let (mut child, mut step) = holder(&dir.path().join("held"));
		let pid = [child.id()];
		step("linked");
		assert_eq!(deleted_bytes(&pid, dir.path()), 0, "a file still linked is the walk's");
		step("deleted");
		assert_eq!(deleted_bytes(&pid, dir.path()), 3000, "open twice, counted once");
		step("grown");
		assert_eq!(deleted_bytes(&[pid[0], pid[0]], dir.path()), 4000);
		// A folder that does not exist, or a process that does not: nothing.
		assert_eq!(deleted_bytes(&pid, &dir.path().join("nowhere")), 0);
		assert_eq!(deleted_bytes(&[u32::MAX], dir.path()), 0);
		child.kill().unwrap();
		child.wait().unwrap();
		assert_eq!(deleted_bytes(&pid, dir.path()), 0, "let go with its holder");
	}

	#[test]
	fn a_process_of_the_workers_own_namespace_stands_for_itself() {
		assert_eq!(namespace_of(std::process::id()), vec![std::process::id()]);
	}
}
