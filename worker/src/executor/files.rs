//! The native executor's files: programs copied and hashed together, files written whole, job
//! logs kept to their cap.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The sha256 of a file, as 64 hex digits.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
	hash_through(std::fs::File::open(path)?, std::io::sink())
}

/// Reads `source` to its end, writing every byte read to `sink`; the sha256 of those bytes.
pub(super) fn hash_through(
	mut source: impl std::io::Read,
	mut sink: impl std::io::Write,
) -> std::io::Result<String> {
	let mut hasher = Sha256::new();
	let mut buffer = vec![0u8; 64 * 1024];
	loop {
		let n = source.read(&mut buffer)?;
		if n == 0 {
			break;
		}
		hasher.update(&buffer[..n]);
		sink.write_all(&buffer[..n])?;
	}
	sink.flush()?;
	Ok(hex::encode(hasher.finalize()))
}

/// Copies `from` to a new file `to` (executable by its owner only) and returns the sha256 of the
/// bytes copied: the copy is exactly what was hashed.
pub(super) fn copy_hashed(from: &Path, to: &Path) -> std::io::Result<String> {
	use std::os::unix::fs::OpenOptionsExt;
	match std::fs::remove_file(to) {
		Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
		_ => {}
	}
	let source = std::fs::File::open(from)?;
	let copy = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o500).open(to)?;
	hash_through(source, copy)
}

/// Writes `bytes` to `path` whole or not at all (a file beside it, renamed over it).
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
	let mut name = path.as_os_str().to_owned();
	name.push(".tmp");
	let temporary = PathBuf::from(name);
	std::fs::write(&temporary, bytes)?;
	std::fs::rename(&temporary, path)
}

/// Frees the disk that a job's `stdout` or `stderr` file at `path` takes past its first `cap`
/// bytes, which are all that is ever kept: those bytes become a hole (the file keeps its length
/// and its head, and the program, which writes at its own offset, goes on as before). A job
/// that prints for days takes `cap` bytes of disk for each stream, not what it printed.
pub(super) fn trim(path: &Path, cap: u64) -> std::io::Result<()> {
	use rustix::fs::FallocateFlags;
	let file = std::fs::OpenOptions::new().write(true).open(path)?;
	let length = file.metadata()?.len();
	if length <= cap {
		return Ok(());
	}
	// A block that holds the end of the head keeps it (the kernel zeroes only the part past
	// `cap`); punching a hole again where one is costs nothing.
	rustix::fs::fallocate(
		&file,
		FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
		cap,
		length - cap,
	)?;
	Ok(())
}
