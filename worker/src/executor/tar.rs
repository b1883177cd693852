//! The smallest tar the engine takes: folder entries, so a container's mount points exist with
//! the owner and mode the job needs before it starts.

use std::path::Path;

/// Appends to `tar` a folder entry `path` (relative) with `mode`, owner and mtime: a pax header
/// carrying the path and the ids (any length, any bytes, any size), then the ustar header.
pub(super) fn folder(tar: &mut Vec<u8>, path: &Path, mode: u32, uid: u32, gid: u32, mtime: i64) {
	use std::os::unix::ffi::OsStrExt;
	let mut pax = Vec::new();
	for (key, value) in [
		("path", path.as_os_str().as_bytes().to_vec()),
		("uid", uid.to_string().into_bytes()),
		("gid", gid.to_string().into_bytes()),
	] {
		// "<length> <key>=<value>\n", the length counting its own digits.
		let rest = key.len() + value.len() + 3;
		let mut length = rest + 1;
		while length != rest + length.to_string().len() {
			length = rest + length.to_string().len();
		}
		pax.extend_from_slice(format!("{length} {key}=").as_bytes());
		pax.extend_from_slice(&value);
		pax.push(b'\n');
	}
	tar.extend_from_slice(&ustar_header(b"PaxHeader", 0o644, pax.len() as u64, 0, b'x'));
	let padding = (512 - pax.len() % 512) % 512;
	tar.extend_from_slice(&pax);
	tar.resize(tar.len() + padding, 0);
	tar.extend_from_slice(&ustar_header(b"folder", mode, 0, mtime.max(0) as u64, b'5'));
}

/// One 512-byte ustar header (owner 0: the pax header before it says who).
fn ustar_header(name: &[u8], mode: u32, size: u64, mtime: u64, kind: u8) -> [u8; 512] {
	let mut header = [0u8; 512];
	let mut put = |at: usize, bytes: &[u8]| header[at..at + bytes.len()].copy_from_slice(bytes);
	put(0, name);
	put(100, format!("{mode:07o}\0").as_bytes());
	put(108, b"0000000\0");
	put(116, b"0000000\0");
	put(124, format!("{:011o}\0", size).as_bytes());
	put(136, format!("{:011o}\0", mtime.min(0o77777777777)).as_bytes());
	put(148, b"        ");
	put(156, &[kind]);
	put(257, b"ustar\0");
	put(263, b"00");
	let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
	header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
	header
}
