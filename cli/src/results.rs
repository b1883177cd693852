//! `stint results fetch` and `stint lease logs`: what a lease produced, fetched from its
//! provider and kept only when it matches what the provider's worker signed on chain.
//!
//! The provider serves, under its registered endpoint, to the lease's buyer only (every request
//! carries a [`stint_primitives::SignedFetchAuth`] in the `x-stint-fetch-auth` header):
//! - `GET {endpoint}/leases/{lease}/manifest`: `{"files": [{"path", "size", "blake2_256"}]}`;
//! - `GET {endpoint}/leases/{lease}/files/{path}`: an output file's bytes;
//! - `GET {endpoint}/leases/{lease}/receipt`: the SCALE-encoded
//!   [`stint_primitives::ExecutionReceipt`], whose blake2-256 is the result's `receipt_hash`;
//! - `GET {endpoint}/leases/{lease}/logs/manifest` and `…/logs/files/{stdout|stderr}`: the logs,
//!   whose root (built as the output root is) is the receipt's `logs_root`;
//! - `GET {endpoint}/leases/{lease}/logs/{stdout|stderr}?offset=N`: a log from byte N, also while
//!   the job runs (unverified until the result lands).

use std::{
	fs,
	io::{Read, Write},
	path::{Path, PathBuf},
};

use codec::Decode;
use serde::Deserialize;
use stint_primitives::{
	blake2_256, is_safe_output_path, output_root, ExecutionReceipt, OutputFile, ResultCommitment,
	FETCH_AUTH_HEADER,
};

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
	/// The provider refused: the request is not the buyer's, or has expired.
	Unauthorised(String),
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

/// What `fetch` downloaded and verified.
#[derive(serde::Serialize)]
pub struct FetchReport {
	pub outputs: Vec<Fetched>,
	pub logs: Vec<Fetched>,
	pub exit_code: i32,
	pub stop_reason: String,
	pub gpu_seconds: u64,
}

/// The most files a manifest may list: a worker commits at most 100,000 entries of outputs.
pub const MAX_MANIFEST_FILES: usize = 100_000;
/// The largest manifest read: 100,000 entries of long paths fit.
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// Checks a provider's registered endpoint before anything is sent to it: `http://` or
/// `https://`, a host, no credentials. Returns whether it is plain `http://` to a host other
/// than loopback, where a fetch's authorisation travels in clear.
pub fn check_endpoint(endpoint: &str) -> Result<bool, FetchError> {
	let bad =
		|why: &str| FetchError::Provider(format!("the provider's endpoint {endpoint:?} {why}"));
	let (plain, rest) = match (endpoint.strip_prefix("https://"), endpoint.strip_prefix("http://"))
	{
		(Some(rest), _) => (false, rest),
		(None, Some(rest)) => (true, rest),
		_ => return Err(bad("is not an http:// or https:// URL")),
	};
	let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
	if authority.is_empty() || authority.contains('@') {
		return Err(bad("names no host, or carries credentials"));
	}
	if endpoint.chars().any(|c| c.is_whitespace() || c.is_control()) {
		return Err(bad("holds spaces or control characters"));
	}
	let host = match authority.strip_prefix('[') {
		Some(v6) => v6.split(']').next().unwrap_or_default(),
		None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
	};
	let loopback =
		host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
	Ok(plain && !loopback)
}

/// Where a lease's results are, and who asks.
pub struct Source {
	/// `{endpoint}/leases/{lease}`.
	pub base: String,
	/// The `x-stint-fetch-auth` header's value, if the request is signed.
	pub auth: Option<String>,
}

impl Source {
	pub fn new(endpoint: &str, lease: u64, auth: Option<String>) -> Self {
		Self { base: format!("{}/leases/{lease}", endpoint.trim_end_matches('/')), auth }
	}

	/// `GET {base}/{path}`, with the authorisation, refusals named.
	pub fn get(&self, path: &str) -> Result<ureq::Response, FetchError> {
		let url = format!("{}/{path}", self.base);
		let mut request = ureq::get(&url);
		if let Some(auth) = &self.auth {
			request = request.set(FETCH_AUTH_HEADER, auth);
		}
		request.call().map_err(|error| match error {
			ureq::Error::Status(401 | 403, response) => {
				let why = response.into_string().unwrap_or_default();
				FetchError::Unauthorised(format!("the provider refused {url}: {}", why.trim()))
			}
			other => FetchError::Provider(format!("{url}: {other}")),
		})
	}

	fn manifest(&self, path: &str) -> Result<Vec<OutputFile>, FetchError> {
		// Read no more than a manifest can take, whatever the provider sends.
		let mut bytes = Vec::new();
		self.get(path)?
			.into_reader()
			.take(MAX_MANIFEST_BYTES + 1)
			.read_to_end(&mut bytes)
			.map_err(|e| FetchError::Provider(format!("{}/{path}: {e}", self.base)))?;
		if bytes.len() as u64 > MAX_MANIFEST_BYTES {
			return Err(FetchError::Provider(format!(
				"{}/{path} is larger than a manifest may be ({} MiB)",
				self.base,
				MAX_MANIFEST_BYTES >> 20
			)));
		}
		let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
			FetchError::Provider(format!("{}/{path} is not a manifest: {e}", self.base))
		})?;
		if manifest.files.len() > MAX_MANIFEST_FILES {
			return Err(FetchError::Provider(format!(
				"{}/{path} lists {} files, more than a worker commits ({MAX_MANIFEST_FILES})",
				self.base,
				manifest.files.len()
			)));
		}
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
		Ok(files)
	}

	/// The receipt, checked against the signed commitment of `lease` on the chain with
	/// `genesis`: its hash is the commitment's `receipt_hash`, and it says what the commitment
	/// says. Returns it with its bytes.
	pub fn receipt(
		&self,
		commitment: &ResultCommitment,
		genesis: &[u8; 32],
		lease: u64,
	) -> Result<(ExecutionReceipt, Vec<u8>), FetchError> {
		let mut bytes = Vec::new();
		self.get("receipt")?
			.into_reader()
			.take(1 << 20)
			.read_to_end(&mut bytes)
			.map_err(|e| FetchError::Provider(format!("{}/receipt: {e}", self.base)))?;
		if blake2_256(&bytes) != commitment.receipt_hash {
			return Err(FetchError::Mismatch(format!(
				"the provider's receipt does not hash to the receipt_hash on chain (0x{})",
				hex::encode(commitment.receipt_hash)
			)));
		}
		let receipt = ExecutionReceipt::decode(&mut &bytes[..])
			.map_err(|e| FetchError::Mismatch(format!("the receipt does not decode: {e}")))?;
		let agrees = receipt.is_for(genesis, lease)
			&& receipt.output_root == commitment.output_root
			&& receipt.exit_code == commitment.exit_code
			&& receipt.gpu_seconds == commitment.gpu_seconds
			&& receipt.image_digest == commitment.image_digest;
		if !agrees {
			return Err(FetchError::Mismatch(
				"the receipt was signed over, yet disagrees with the commitment on chain".into(),
			));
		}
		Ok((receipt, bytes))
	}
}

/// Downloads the outputs, the receipt and the logs of `lease` into `out` (`outputs/`, `logs/`,
/// `receipt.scale`, `receipt.json`): the manifest is checked against the signed output root
/// first, every file against the manifest, the receipt against the signed receipt hash, the
/// logs against the receipt's logs root; a file that does not match is deleted.
pub fn fetch(
	source: &Source,
	commitment: &ResultCommitment,
	genesis: &[u8; 32],
	lease: u64,
	out: &Path,
) -> Result<FetchReport, FetchError> {
	let files = source.manifest("manifest")?;
	if output_root(&files) != commitment.output_root {
		return Err(FetchError::Mismatch(format!(
			"the provider's manifest does not match the output root on chain (0x{}): nothing downloaded",
			hex::encode(commitment.output_root)
		)));
	}
	let (receipt, receipt_bytes) = source.receipt(commitment, genesis, lease)?;
	let logs = source.manifest("logs/manifest")?;
	if output_root(&logs) != receipt.logs_root {
		return Err(FetchError::Mismatch(
			"the provider's logs do not match the receipt's logs root: nothing downloaded".into(),
		));
	}

	let local = |e: std::io::Error| FetchError::Local(format!("{}: {e}", out.display()));
	fs::create_dir_all(out).map_err(local)?;
	fs::write(out.join("receipt.scale"), &receipt_bytes).map_err(local)?;
	let json = serde_json::to_string_pretty(&receipt).expect("plain data serializes");
	fs::write(out.join("receipt.json"), json).map_err(local)?;
	let outputs = download_all(source, "files", &files, &out.join("outputs"))?;
	let logs = download_all(source, "logs/files", &logs, &out.join("logs"))?;
	Ok(FetchReport {
		outputs,
		logs,
		exit_code: receipt.exit_code,
		stop_reason: format!("{:?}", receipt.stop_reason),
		gpu_seconds: receipt.gpu_seconds,
	})
}

fn download_all(
	source: &Source,
	prefix: &str,
	files: &[OutputFile],
	out: &Path,
) -> Result<Vec<Fetched>, FetchError> {
	fs::create_dir_all(out).map_err(|e| FetchError::Local(format!("{}: {e}", out.display())))?;
	let mut fetched = Vec::new();
	let mut refused = Vec::new();
	for file in files {
		let path = String::from_utf8_lossy(&file.path).into_owned();
		let target: PathBuf = out.join(&path);
		match download(source, &format!("{prefix}/{path}"), &target, file) {
			Ok(()) => fetched.push(Fetched { path, size: file.size }),
			Err(Download::Mismatch(why)) => {
				let _ = fs::remove_file(&target);
				refused.push(format!("{path}: {why}"));
			}
			Err(Download::Failed(why)) => {
				let _ = fs::remove_file(&target);
				return Err(why);
			}
		}
	}
	if !refused.is_empty() {
		return Err(FetchError::Mismatch(format!(
			"deleted {} file(s) that do not match what was signed: {}",
			refused.len(),
			refused.join("; ")
		)));
	}
	Ok(fetched)
}

enum Download {
	Mismatch(String),
	Failed(FetchError),
}

fn download(
	source: &Source,
	path: &str,
	target: &Path,
	expected: &OutputFile,
) -> Result<(), Download> {
	let local = |e: std::io::Error| Download::Failed(FetchError::Local(e.to_string()));
	if let Some(parent) = target.parent() {
		fs::create_dir_all(parent).map_err(local)?;
	}
	let response = source.get(path).map_err(Download::Failed)?;
	// Never read more than the manifest promised (plus one byte, to notice more).
	let mut body = response.into_reader().take(expected.size + 1);
	let mut file = fs::File::create(target).map_err(local)?;
	let mut hasher = blake2b_simd::Params::new().hash_length(32).to_state();
	let mut size = 0u64;
	let mut buffer = vec![0u8; 64 * 1024];
	loop {
		let n = body
			.read(&mut buffer)
			.map_err(|e| Download::Failed(FetchError::Provider(format!("{path}: {e}"))))?;
		if n == 0 {
			break;
		}
		hasher.update(&buffer[..n]);
		file.write_all(&buffer[..n]).map_err(local)?;
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

#[cfg(test)]
mod tests {
	use super::check_endpoint;

	#[test]
	fn an_endpoint_is_http_or_https_to_a_host_without_credentials() {
		assert_eq!(check_endpoint("https://gpus.example:8600").ok(), Some(false));
		assert_eq!(check_endpoint("http://127.0.0.1:8601").ok(), Some(false));
		assert_eq!(check_endpoint("http://[::1]:8601/").ok(), Some(false));
		assert_eq!(check_endpoint("http://localhost:8601").ok(), Some(false));
		// Plain http elsewhere: allowed, with a warning (the authorisation travels in clear).
		assert_eq!(check_endpoint("http://gpus.example:8600").ok(), Some(true));
		for bad in [
			"file:///etc/passwd",
			"ftp://gpus.example",
			"gpus.example:8600",
			"http://",
			"http://user:pass@gpus.example",
			"http://gpus.example /x",
		] {
			assert!(check_endpoint(bad).is_err(), "{bad}");
		}
	}
}
