//! `stint results fetch`: downloads a lease's outputs from its provider and keeps only what
//! matches the output root the provider's worker signed on chain.
//!
//! The provider serves, under its registered endpoint:
//! - `GET {endpoint}/leases/{lease}/manifest`: `{"files": [{"path", "size", "blake2_256"}]}`;
//! - `GET {endpoint}/leases/{lease}/files/{path}`: the file's bytes.

use std::{
	fs,
	io::{Read, Write},
	path::{Path, PathBuf},
};

use serde::Deserialize;
use stint_primitives::{is_safe_output_path, output_root, OutputFile};

#[derive(Debug, Deserialize)]
struct Manifest {
	files: Vec<ManifestFile>,
}

#[derive(Debug, Deserialize)]
struct ManifestFile {
	path: String,
	size: u64,
	blake2_256: String,
}

/// What went wrong fetching results.
pub enum FetchError {
	/// The provider could not be reached or answered badly.
	Provider(String),
	/// What the provider serves does not match the chain: nothing (more) is kept.
	Mismatch(String),
	/// The output folder could not be written.
	Local(String),
}

/// A file that was downloaded and verified.
#[derive(serde::Serialize)]
pub struct Fetched {
	pub path: String,
	pub size: u64,
}

/// Downloads the outputs of `lease` from `endpoint` into `out`, checking the manifest against
/// `root` first and every file against the manifest; a file that does not match is deleted.
pub fn fetch(
	endpoint: &str,
	lease: u64,
	root: [u8; 32],
	out: &Path,
) -> Result<Vec<Fetched>, FetchError> {
	let base = format!("{}/leases/{lease}", endpoint.trim_end_matches('/'));
	let manifest: Manifest = ureq::get(&format!("{base}/manifest"))
		.call()
		.map_err(|e| FetchError::Provider(format!("{base}/manifest: {e}")))?
		.into_json()
		.map_err(|e| FetchError::Provider(format!("{base}/manifest is not a manifest: {e}")))?;

	let mut files = Vec::with_capacity(manifest.files.len());
	for file in &manifest.files {
		if !is_safe_output_path(&file.path) {
			return Err(FetchError::Mismatch(format!(
				"unsafe path in the manifest: {:?}",
				file.path
			)));
		}
		let content_hash = stint_client::parse_hex32(&file.blake2_256).ok_or_else(|| {
			FetchError::Provider(format!(
				"{}: `{}` is not a blake2-256 hash",
				file.path, file.blake2_256
			))
		})?;
		files.push(OutputFile {
			path: file.path.clone().into_bytes(),
			size: file.size,
			content_hash,
		});
	}
	if output_root(&files) != root {
		return Err(FetchError::Mismatch(format!(
			"the provider's manifest does not match the output root on chain (0x{}): nothing downloaded",
			hex::encode(root)
		)));
	}

	fs::create_dir_all(out).map_err(|e| FetchError::Local(format!("{}: {e}", out.display())))?;
	let mut fetched = Vec::new();
	let mut refused = Vec::new();
	for file in &files {
		let path = String::from_utf8_lossy(&file.path).into_owned();
		let target: PathBuf = out.join(&path);
		match download(&format!("{base}/files/{path}"), &target, file) {
			Ok(()) => fetched.push(Fetched { path, size: file.size }),
			Err(Download::Mismatch(why)) => {
				let _ = fs::remove_file(&target);
				refused.push(format!("{path}: {why}"));
			}
			Err(Download::Failed(why)) => {
				let _ = fs::remove_file(&target);
				return Err(FetchError::Provider(format!("{path}: {why}")));
			}
		}
	}
	if !refused.is_empty() {
		return Err(FetchError::Mismatch(format!(
			"deleted {} file(s) that do not match the signed output root: {}",
			refused.len(),
			refused.join("; ")
		)));
	}
	Ok(fetched)
}

enum Download {
	Mismatch(String),
	Failed(String),
}

fn download(url: &str, target: &Path, expected: &OutputFile) -> Result<(), Download> {
	if let Some(parent) = target.parent() {
		fs::create_dir_all(parent).map_err(|e| Download::Failed(e.to_string()))?;
	}
	let response = ureq::get(url).call().map_err(|e| Download::Failed(e.to_string()))?;
	// Never read more than the manifest promised (plus one byte, to notice more).
	let mut body = response.into_reader().take(expected.size + 1);
	let mut file = fs::File::create(target).map_err(|e| Download::Failed(e.to_string()))?;
	let mut hasher = blake2b_simd::Params::new().hash_length(32).to_state();
	let mut size = 0u64;
	let mut buffer = vec![0u8; 64 * 1024];
	loop {
		let n = body.read(&mut buffer).map_err(|e| Download::Failed(e.to_string()))?;
		if n == 0 {
			break;
		}
		hasher.update(&buffer[..n]);
		file.write_all(&buffer[..n]).map_err(|e| Download::Failed(e.to_string()))?;
		size += n as u64;
	}
	if size != expected.size {
		return Err(Download::Mismatch(format!(
			"{size} bytes, the manifest says {}",
			expected.size
		)));
	}
	if hasher.finalize().as_bytes() != expected.content_hash {
		return Err(Download::Mismatch("content differs from its hash".into()));
	}
	Ok(())
}
