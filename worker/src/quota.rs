//! A hard limit on what a job may write: its outputs folder is a filesystem of its own, in a
//! sparse file under the lease's folder (`outputs.img`), mounted through a loop device with
//! `nosuid,nodev` (nothing a job leaves there is set-id or a device on the host). It holds the
//! order's `max_output_bytes` and a margin for the filesystem's own records, so the kernel
//! refuses a write beyond it at once, however fast the job writes (`fallocate` takes real
//! blocks in milliseconds), while the walk of the outputs every second can only stop a job
//! after the fact. The margin is what a job can write past its limit (then it is over its
//! limit, `OutputOverLimit`), so a buyer can never fill the provider's disk.
//!
//! It takes root (to mount) and `mkfs.ext4` (e2fsprogs). A worker without them keeps the walk
//! alone and says so once at start: run it as root, or give `data_dir` a quota.

use std::{
	path::{Path, PathBuf},
	process::Command,
};

use crate::commit::LeaseDirs;

/// The image of a lease's outputs, under its folder.
pub fn image_of(dirs: &LeaseDirs) -> PathBuf {
	dirs.root.join("outputs.img")
}

/// The size of the filesystem for `limit` bytes of outputs: the limit, a 32nd of it and 16 MiB
/// for the filesystem's records (its inode tables take a 64th), in whole 4 KiB blocks.
pub fn image_bytes(limit: u64) -> u64 {
	let bytes = limit.saturating_add(limit / 32).saturating_add(16 << 20);
	bytes.div_ceil(4096).saturating_mul(4096)
}

/// Whether the outputs can be held to their limit by the kernel on this machine.
#[derive(Clone, Debug)]
pub struct Quota {
	/// `None`: enforced; `Some(why)`: not, and why.
	unavailable: Option<String>,
}

impl Quota {
	/// Looks at this machine once: root, a loop device control, `mkfs.ext4`.
	pub fn detect() -> Self {
		let unavailable = if !rustix::process::geteuid().is_root() {
			Some("the worker does not run as root (mounting takes it)".to_string())
		} else if !Path::new("/dev/loop-control").exists() {
			Some("this machine has no loop devices (/dev/loop-control)".to_string())
		} else if Command::new("mkfs.ext4").arg("-V").output().is_err() {
			Some("mkfs.ext4 is not installed (e2fsprogs)".to_string())
		} else {
			None
		};
		Self { unavailable }
	}

	/// A quota that is never enforced (run-once without root, tests).
	pub fn off(why: &str) -> Self {
		Self { unavailable: Some(why.to_string()) }
	}

	/// Why the outputs are not held by the kernel here, if they are not.
	pub fn unavailable(&self) -> Option<&str> {
		self.unavailable.as_deref()
	}

	/// Mounts a filesystem of [`image_bytes`]`(limit)` at `dirs.outputs()`, made the first time
	/// (the folders must exist: [`LeaseDirs::create`]). Once mounted, it is left as it is: the
	/// call is the same after a restart, and after a reboot it mounts the image again. An
	/// outputs folder that already holds files and has no image (a lease prepared before the
	/// worker held outputs this way) is left to the walk. Returns whether the outputs are held.
	pub fn mount(&self, dirs: &LeaseDirs, limit: u64) -> Result<bool, String> {
		if self.unavailable.is_some() {
			return Ok(false);
		}
		let outputs = dirs.outputs();
		if is_mounted(&outputs)? {
			return Ok(true);
		}
		let image = image_of(dirs);
		if !image.exists() {
			let holds_files = std::fs::read_dir(&outputs)
				.map_err(|e| format!("{}: {e}", outputs.display()))?
				.next()
				.is_some();
			if holds_files {
				return Ok(false);
			}
			make(&image, limit)?;
		}
		run(Command::new("mount")
			.args(["-t", "ext4", "-o", "loop,nosuid,nodev,noatime"])
			.arg(&image)
			.arg(&outputs))?;
		// Writable by the job's user, whoever it is; and none of the filesystem's own folders
		// among the outputs.
		use std::os::unix::fs::PermissionsExt;
		let opened = std::fs::set_permissions(&outputs, std::fs::Permissions::from_mode(0o777));
		let _ = std::fs::remove_dir(outputs.join("lost+found"));
		opened.map_err(|e| format!("{}: {e}", outputs.display()))?;
		Ok(true)
	}

	/// Unmounts the outputs of `dirs` if they are mounted, before the lease's folder is removed
	/// (its files go with the image). Lazily: a process still in the folder does not keep it.
	pub fn unmount(&self, dirs: &LeaseDirs) -> Result<(), String> {
		let outputs = dirs.outputs();
		if !is_mounted(&outputs)? {
			return Ok(());
		}
		run(Command::new("umount").arg("-l").arg(&outputs))
	}

	/// Mounts again the outputs of every lease under `data_dir` that has an image (after a
	/// reboot the images are there, their mounts not). Returns those it could not mount.
	pub fn remount_all(&self, data_dir: &Path) -> Vec<(PathBuf, String)> {
		let mut failed = Vec::new();
		if self.unavailable.is_some() {
			return failed;
		}
		let Ok(leases) = std::fs::read_dir(data_dir.join("leases")) else { return failed };
		for lease in leases.flatten() {
			let dirs = LeaseDirs { root: lease.path() };
			if image_of(&dirs).is_file() && dirs.outputs().is_dir() {
				// The limit only matters when the image is made: it is there already.
				if let Err(why) = self.mount(&dirs, 0) {
					failed.push((dirs.root, why));
				}
			}
		}
		failed
	}
}

/// Makes the sparse image of a filesystem for `limit` bytes of outputs.
fn make(image: &Path, limit: u64) -> Result<(), String> {
	let file = std::fs::File::create(image).map_err(|e| format!("{}: {e}", image.display()))?;
	file.set_len(image_bytes(limit)).map_err(|e| format!("{}: {e}", image.display()))?;
	drop(file);
	// No reserved blocks, no journal (the outputs are the job's scratch until committed), and
	// ext4's usual inode for every 16 KiB (past 1.6 GB, more inodes than the
	// `MAX_OUTPUT_ENTRIES` a job may have).
	let made = run(Command::new("mkfs.ext4")
		.args(["-q", "-F", "-m", "0", "-O", "^has_journal", "-i", "16384"])
		.arg(image));
	if made.is_err() {
		let _ = std::fs::remove_file(image);
	}
	made
}

fn run(command: &mut Command) -> Result<(), String> {
	let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
	if output.status.success() {
		return Ok(());
	}
	Err(format!("{command:?}: {}", String::from_utf8_lossy(&output.stderr).trim()))
}

/// Whether `path` is a mount point, by the kernel's table (`/proc/self/mountinfo`).
fn is_mounted(path: &Path) -> Result<bool, String> {
	let path = match std::fs::canonicalize(path) {
		Ok(path) => path,
		Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
		Err(e) => return Err(format!("{}: {e}", path.display())),
	};
	let table = std::fs::read_to_string("/proc/self/mountinfo")
		.map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
	let wanted = escape(&path.to_string_lossy());
	Ok(table.lines().any(|line| line.split(' ').nth(4) == Some(wanted.as_str())))
}

/// A path as the mount table writes it: space, tab, newline and backslash in octal.
fn escape(path: &str) -> String {
	let mut out = String::with_capacity(path.len());
	for c in path.chars() {
		match c {
			' ' => out.push_str("\\040"),
			'\t' => out.push_str("\\011"),
			'\n' => out.push_str("\\012"),
			'\\' => out.push_str("\\134"),
			c => out.push(c),
		}
	}
	out
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn the_image_holds_the_limit_and_a_bounded_margin() {
		assert_eq!(image_bytes(0), 16 << 20);
		let gib = 1u64 << 30;
		assert_eq!(image_bytes(gib), gib + gib / 32 + (16 << 20));
		assert_eq!(image_bytes(1) % 4096, 0);
	}

	#[test]
	fn a_mounted_outputs_folder_refuses_writes_past_its_size_at_once() {
		let quota = Quota::detect();
		if let Some(why) = quota.unavailable() {
			eprintln!("skipped: {why}");
			return;
		}
		/// Unmounts when dropped, a failing test's mounts too.
		struct Unmount(Quota, LeaseDirs);
		impl Drop for Unmount {
			fn drop(&mut self) {
				let _ = self.0.unmount(&self.1);
			}
		}
		let dir = tempfile::tempdir().unwrap();
		let dirs = LeaseDirs { root: dir.path().join("lease") };
		dirs.create().unwrap();
		let _first = Unmount(quota.clone(), dirs.clone());
		assert!(quota.mount(&dirs, 4 << 20).unwrap());
		assert!(quota.mount(&dirs, 4 << 20).unwrap(), "mounting again is a no-op");
		assert!(std::fs::read_dir(dirs.outputs()).unwrap().next().is_none(), "no lost+found");
		// Space taken at once, as `fallocate` does: refused past the filesystem's size.
		let file = std::fs::File::create(dirs.outputs().join("f")).unwrap();
		let taken = rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, 1 << 30);
		assert!(taken.is_err(), "a GiB in a filesystem of 20 MiB");
		// What it did take (ext4 keeps what it allocated before running out) is within the image.
		let blocks = std::os::unix::fs::MetadataExt::blocks(&file.metadata().unwrap()) * 512;
		assert!(blocks <= image_bytes(4 << 20), "{blocks}");
		drop(file);
		std::fs::remove_file(dirs.outputs().join("f")).unwrap();
		let mut written = 0u64;
		let chunk = vec![b'x'; 1 << 20];
		let mut out = std::fs::File::create(dirs.outputs().join("g")).unwrap();
		while std::io::Write::write_all(&mut out, &chunk).is_ok() {
			written += chunk.len() as u64;
			assert!(written <= image_bytes(4 << 20), "writes go on past the image's size");
		}
		assert!(written >= 4 << 20, "the limit itself fits: {written}");
		drop(out);
		quota.unmount(&dirs).unwrap();
		assert!(!is_mounted(&dirs.outputs()).unwrap());
		// After a reboot: the image is mounted again with what the job wrote.
		assert_eq!(quota.remount_all(dir.path()).len(), 0);
		assert!(!is_mounted(&dirs.outputs()).unwrap(), "only leases under data_dir/leases");
		let data = tempfile::tempdir().unwrap();
		let dirs = LeaseDirs::new(data.path(), 7);
		dirs.create().unwrap();
		let _second = Unmount(quota.clone(), dirs.clone());
		assert!(quota.mount(&dirs, 1 << 20).unwrap());
		std::fs::write(dirs.outputs().join("kept"), b"42").unwrap();
		quota.unmount(&dirs).unwrap();
		assert!(quota.remount_all(data.path()).is_empty());
		assert_eq!(std::fs::read(dirs.outputs().join("kept")).unwrap(), b"42");
		quota.unmount(&dirs).unwrap();
	}
}
