//! How a job's outputs are committed to on chain: the `output_root` of a result.
//!
//! The worker computes the root over the files it keeps and serves; a buyer's client recomputes it
//! from the provider's manifest and from each downloaded file, and accepts nothing that differs.
//! A leaf commits to a file's relative path, its size and the blake2-256 of its content; leaves
//! are sorted by path and hashed pairwise (blake2-256 of left ‖ right, an odd one carried up)
//! to a single root. No files: the root is all zeros.

use alloc::vec::Vec;
use codec::Encode;

pub use polkadot_sdk::sp_crypto_hashing::blake2_256;

/// One output file as the manifest lists it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct OutputFile {
	/// Relative, `/`-separated, UTF-8 (see [`is_safe_output_path`]).
	pub path: Vec<u8>,
	pub size: u64,
	/// blake2-256 of the content.
	pub content_hash: [u8; 32],
}

impl OutputFile {
	/// The file's leaf: blake2-256 of the SCALE encoding of (path, size, content hash).
	pub fn leaf(&self) -> [u8; 32] {
		blake2_256(&(&self.path, self.size, self.content_hash).encode())
	}
}

/// The output root of `files` (in any order).
pub fn output_root(files: &[OutputFile]) -> [u8; 32] {
	let mut sorted: Vec<&OutputFile> = files.iter().collect();
	sorted.sort_by(|a, b| a.path.cmp(&b.path));
	let mut level: Vec<[u8; 32]> = sorted.iter().map(|f| f.leaf()).collect();
	if level.is_empty() {
		return [0; 32];
	}
	while level.len() > 1 {
		level = level
			.chunks(2)
			.map(|pair| match pair {
				[left, right] => {
					let mut both = [0u8; 64];
					both[..32].copy_from_slice(left);
					both[32..].copy_from_slice(right);
					blake2_256(&both)
				}
				[odd] => *odd,
				_ => unreachable!("chunks of two"),
			})
			.collect();
	}
	level[0]
}

/// Whether `path` is a safe relative path to write under an output folder: not empty, no
/// leading `/`, no `\`, no empty, `.` or `..` component, no NUL.
pub fn is_safe_output_path(path: &str) -> bool {
	!path.is_empty()
		&& !path.starts_with('/')
		&& !path.contains('\\')
		&& !path.contains('\0')
		&& path.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
}

#[cfg(test)]
mod tests {
	use super::*;

	fn file(path: &str, content: &[u8]) -> OutputFile {
		OutputFile {
			path: path.as_bytes().to_vec(),
			size: content.len() as u64,
			content_hash: blake2_256(content),
		}
	}

	#[test]
	fn the_root_ignores_order_and_commits_to_every_field() {
		let a = file("a.txt", b"alpha");
		let b = file("dir/b.bin", b"beta");
		let c = file("z", b"");
		let root = output_root(&[a.clone(), b.clone(), c.clone()]);
		assert_eq!(root, output_root(&[c.clone(), a.clone(), b.clone()]));
		assert_ne!(root, output_root(&[a.clone(), b.clone()]));
		let mut renamed = b.clone();
		renamed.path = b"dir/c.bin".to_vec();
		assert_ne!(root, output_root(&[a.clone(), renamed, c.clone()]));
		let mut resized = b.clone();
		resized.size += 1;
		assert_ne!(root, output_root(&[a.clone(), resized, c.clone()]));
		assert_ne!(root, output_root(&[a, file("dir/b.bin", b"betA"), c]));
		assert_eq!(output_root(&[]), [0; 32]);
	}

	/// Computed apart from this code (Python's hashlib, SCALE by hand): the leaf of `a.txt` is
	/// blake2-256 of `0x14 "a.txt" 05000000_00000000 blake2-256("alpha")`, and the root of the
	/// three files below is H(H(leaf(a.txt) ‖ leaf(dir/b.bin)) ‖ leaf(z)).
	#[test]
	fn the_root_of_three_files_is_the_known_answer() {
		let files = [file("z", b""), file("dir/b.bin", b"beta"), file("a.txt", b"alpha")];
		assert_eq!(
			crate::receipt::tests::hex(&output_root(&files)),
			"db49584d8e466c449ed609b7a1e2d30c9884d14ba7767b93167dcb64bbf56173"
		);
		assert_eq!(
			crate::receipt::tests::hex(&file("hello.txt", b"hello\n").leaf()),
			"0e3140d2dd02d2816c49527de4a847e732e860e78b00151201f7d41461368392"
		);
	}

	#[test]
	fn only_plain_relative_paths_are_safe() {
		assert!(is_safe_output_path("model/weights.safetensors"));
		for bad in ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a\\b", "a/"] {
			assert!(!is_safe_output_path(bad), "{bad}");
		}
	}
}
