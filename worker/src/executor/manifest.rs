//! An image's size read from its registry before anything is pulled: the manifest its pinned
//! digest names (for an index, the one for this machine's platform), whose config and layers'
//! sizes are what the engine would download. Each manifest read is checked against the digest
//! that names it, so a registry cannot pass off a smaller one. Anonymous pulls only, as the
//! engine's: a registry that wants credentials is not asked again, and the pull's own watch
//! ([`super::pull`]) holds the image to the limit then, and always for what it unpacks to.

use std::{io::Read, time::Duration};

use sha2::{Digest, Sha256};
use stint_primitives::ReservedExit;

use super::{pull::PullRules, PrepareError};

/// How long the registry may take to answer each request.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The most bytes of a manifest or token read: real ones are a few KiB.
const MAX_DOCUMENT: u64 = 4 << 20;

const ACCEPT: &str = "application/vnd.oci.image.index.v1+json, \
                      application/vnd.docker.distribution.manifest.list.v2+json, \
                      application/vnd.oci.image.manifest.v1+json, \
                      application/vnd.docker.distribution.manifest.v2+json";

/// Why the size could not be had.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
	/// The registry could not be asked, or wants credentials: the pull's watch decides.
	#[error("the registry's manifest could not be read: {0}")]
	Unreadable(String),
	/// What the registry served is not the pinned image (another digest, not a manifest, no
	/// manifest for this platform): the order's fault.
	#[error("{0}")]
	NotTheImage(String),
}

/// Where a pinned image's manifest is: the registry's address and the repository in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
	/// `https://registry-1.docker.io`, or `http://127.0.0.1:5000` where plain HTTP is allowed.
	pub base: String,
	pub repository: String,
	/// `sha256:<64 hex>`.
	pub digest: String,
}

impl Location {
	/// The manifest of `name` (as an order names it, with or without a registry) pinned at
	/// `digest`. `plain_http`: the registry is spoken to over HTTP (loopback ones in tests).
	pub fn of(name: &str, digest: &str, plain_http: bool) -> Self {
		let registry = super::registry_of(name);
		let repository = match name.strip_prefix(&format!("{registry}/")) {
			Some(rest) => rest.to_string(),
			// Docker Hub's names: `ubuntu` is `library/ubuntu`.
			None if name.contains('/') => name.to_string(),
			None => format!("library/{name}"),
		};
		let host = match registry {
			"docker.io" => "registry-1.docker.io",
			other => other,
		};
		let scheme = if plain_http { "http" } else { "https" };
		Self { base: format!("{scheme}://{host}"), repository, digest: digest.to_string() }
	}
}

/// Refuses the image `name@digest`, as the order's fault, when its registry says it is larger
/// than `rules` allow, or serves something else than the pinned image. An image whose size
/// cannot be read passes: the pull's watch holds it.
pub async fn within(name: &str, digest: &str, rules: PullRules) -> Result<(), PrepareError> {
	let plain_http = rules.private_registries && super::private_registry(super::registry_of(name));
	let location = Location::of(name, digest, plain_http);
	match tokio::task::spawn_blocking(move || download_size(&location)).await {
		Ok(Ok(bytes)) if bytes > rules.max_image_bytes => Err(PrepareError::Order(
			ReservedExit::ImageTooLarge,
			format!(
				"{name}@{digest}: its manifest says {bytes} bytes to download, more than the {} \
				 this worker takes",
				rules.max_image_bytes
			),
		)),
		Ok(Err(ManifestError::NotTheImage(why))) => {
			Err(PrepareError::Order(ReservedExit::ImageUnavailable, why))
		}
		Ok(Ok(_)) | Ok(Err(ManifestError::Unreadable(_))) | Err(_) => Ok(()),
	}
}

/// The bytes the engine would download for the image at `location` (its config and layers,
/// compressed), read from its registry.
pub fn download_size(location: &Location) -> Result<u64, ManifestError> {
	let agent = ureq::AgentBuilder::new().timeout(TIMEOUT).redirects(3).build();
	let mut token = None;
	let top = fetch(&agent, location, &location.digest, &mut token)?;
	let manifest = match platform_manifest(&top)? {
		Some(digest) => fetch(&agent, location, &digest, &mut token)?,
		None => top,
	};
	size_of(&manifest)
}

/// The manifest `digest` of `location`'s repository, checked against it.
fn fetch(
	agent: &ureq::Agent,
	location: &Location,
	digest: &str,
	token: &mut Option<String>,
) -> Result<serde_json::Value, ManifestError> {
	let url = format!("{}/v2/{}/manifests/{digest}", location.base, location.repository);
	let unreadable = |why: String| ManifestError::Unreadable(format!("{url}: {why}"));
	let get = |token: &Option<String>| -> Result<ureq::Response, Box<ureq::Error>> {
		let request = agent.get(&url).set("Accept", ACCEPT);
		let request = match token {
			Some(token) => request.set("Authorization", &format!("Bearer {token}")),
			None => request,
		};
		request.call().map_err(Box::new)
	};
	let response = match get(token).map_err(|e| *e) {
		Ok(response) => response,
		// Anonymous access, as the engine's pull: a token for it, once.
		Err(ureq::Error::Status(401, response)) if token.is_none() => {
			let challenge = response.header("WWW-Authenticate").unwrap_or_default().to_string();
			*token = Some(anonymous_token(agent, &challenge).map_err(unreadable)?);
			get(token).map_err(|e| unreadable(e.to_string()))?
		}
		Err(ureq::Error::Status(404, _)) => {
			return Err(ManifestError::NotTheImage(format!("{url}: no such manifest")))
		}
		Err(e) => return Err(unreadable(e.to_string())),
	};
	let body = read_capped(response.into_reader()).map_err(unreadable)?;
	let served = format!("sha256:{}", hex::encode(Sha256::digest(&body)));
	if served != digest {
		return Err(ManifestError::NotTheImage(format!(
			"{url}: the registry served a manifest of digest {served}"
		)));
	}
	serde_json::from_slice(&body)
		.map_err(|e| ManifestError::NotTheImage(format!("{url}: not a manifest: {e}")))
}

/// A token for anonymous pulls, from the realm a `Bearer` challenge names.
fn anonymous_token(agent: &ureq::Agent, challenge: &str) -> Result<String, String> {
	let params = challenge
		.strip_prefix("Bearer ")
		.ok_or_else(|| format!("credentials wanted ({challenge:?})"))?;
	let field = |name: &str| {
		params.split(',').find_map(|part| {
			let (key, value) = part.trim().split_once('=')?;
			(key == name).then(|| value.trim_matches('"').to_string())
		})
	};
	let realm = field("realm").ok_or("a challenge with no realm")?;
	if !realm.starts_with("https://") {
		return Err(format!("a token realm not over HTTPS: {realm}"));
	}
	let mut request = agent.get(&realm);
	for name in ["service", "scope"] {
		if let Some(value) = field(name) {
			request = request.query(name, &value);
		}
	}
	let response = request.call().map_err(|e| format!("token: {e}"))?;
	let body = read_capped(response.into_reader())?;
	let answer: serde_json::Value =
		serde_json::from_slice(&body).map_err(|e| format!("token: {e}"))?;
	answer["token"]
		.as_str()
		.or_else(|| answer["access_token"].as_str())
		.map(str::to_string)
		.ok_or_else(|| "the token answer has no token".to_string())
}

fn read_capped(reader: impl Read) -> Result<Vec<u8>, String> {
	let mut body = Vec::new();
	reader.take(MAX_DOCUMENT + 1).read_to_end(&mut body).map_err(|e| e.to_string())?;
	match body.len() as u64 > MAX_DOCUMENT {
		true => Err(format!("more than {MAX_DOCUMENT} bytes")),
		false => Ok(body),
	}
}

/// This machine's platform as image indexes name it.
fn architecture() -> &'static str {
	match std::env::consts::ARCH {
		"x86_64" => "amd64",
		"aarch64" => "arm64",
		other => other,
	}
}

/// For an index (a multi-platform image), the digest of its manifest for this machine's
/// platform; `None` for a manifest itself.
fn platform_manifest(document: &serde_json::Value) -> Result<Option<String>, ManifestError> {
	let Some(manifests) = document["manifests"].as_array() else { return Ok(None) };
	manifests
		.iter()
		.find(|m| m["platform"]["os"] == "linux" && m["platform"]["architecture"] == architecture())
		.and_then(|m| m["digest"].as_str())
		.map(|digest| Some(digest.to_string()))
		.ok_or_else(|| {
			ManifestError::NotTheImage(format!("no manifest for linux/{}", architecture()))
		})
}

/// A manifest's config and layers, in bytes.
fn size_of(manifest: &serde_json::Value) -> Result<u64, ManifestError> {
	let not = |why: &str| ManifestError::NotTheImage(format!("not an image manifest: {why}"));
	let layers = manifest["layers"].as_array().ok_or_else(|| not("no layers"))?;
	let config = manifest["config"]["size"].as_u64().ok_or_else(|| not("no config size"))?;
	layers.iter().try_fold(config, |sum, layer| {
		let size = layer["size"].as_u64().ok_or_else(|| not("a layer with no size"))?;
		Ok(sum.saturating_add(size))
	})
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn an_image_name_is_found_in_its_registry() {
		let d = format!("sha256:{}", "a".repeat(64));
		let hub = Location::of("ubuntu", &d, false);
		assert_eq!(hub.base, "https://registry-1.docker.io");
		assert_eq!(hub.repository, "library/ubuntu");
		assert_eq!(Location::of("pytorch/pytorch", &d, false).repository, "pytorch/pytorch");
		let ghcr = Location::of("ghcr.io/acme/train", &d, false);
		assert_eq!(
			(ghcr.base.as_str(), ghcr.repository.as_str()),
			("https://ghcr.io", "acme/train")
		);
		let local = Location::of("127.0.0.1:5000/stint-test/bomb", &d, true);
		assert_eq!(local.base, "http://127.0.0.1:5000");
		assert_eq!(local.repository, "stint-test/bomb");
	}

	#[test]
	fn the_size_is_the_config_and_layers_of_this_platforms_manifest() {
		let manifest = serde_json::json!({
			"config": { "size": 1000 },
			"layers": [{ "size": 5u64 << 30 }, { "size": 3u64 << 30 }],
		});
		assert_eq!(size_of(&manifest), Ok(1000 + (8 << 30)));
		assert!(matches!(size_of(&serde_json::json!({})), Err(ManifestError::NotTheImage(_))));
		assert_eq!(platform_manifest(&manifest), Ok(None));
		let index = serde_json::json!({ "manifests": [
			{ "digest": "sha256:arm", "platform": { "os": "linux", "architecture": "arm" } },
			{ "digest": "sha256:ours", "platform": { "os": "linux", "architecture": architecture() } },
		]});
		assert_eq!(platform_manifest(&index), Ok(Some("sha256:ours".into())));
		let other = serde_json::json!({ "manifests": [
			{ "digest": "sha256:win", "platform": { "os": "windows", "architecture": "amd64" } },
		]});
		assert!(matches!(platform_manifest(&other), Err(ManifestError::NotTheImage(_))));
	}
}
