//! A typed client for Stint: every call and query of Stint's pallets and `MarketApi`, generated
//! from the metadata committed in `client/metadata.scale` (a test in the runtime fails when it no
//! longer matches; `scripts/update-metadata.sh` rewrites it).
//!
//! - [`Client::connect`] to a node, [`Client::submit`] a call signed by a [`Keypair`] (from a
//!   secret URI such as `//Alice`, or a key file: see [`keypair`]), following its progress to
//!   inclusion or finality;
//! - a refused call comes back as [`Error::Dispatch`] with the pallet's error name and its doc
//!   text, e.g. `Market.PriceAboveCeiling: The price is above the order's ceiling.`;
//! - [`Client::sign`] a call into bytes to keep (a worker stores them before sending, so that
//!   after a crash it sends exactly the same transaction again), [`Client::broadcast`] them later;
//! - reads: orders, bids, leases, streams, providers and bonds, and the runtime API, at the last
//!   finalized block or, through [`Client::at_block`], at any block the node still has;
//! - [`Failover`]: a connection over several node URLs that reconnects with backoff.

use std::{fmt, path::Path, str::FromStr};

use subxt::{
	error::{DispatchError, TransactionEventsError, TransactionProgressError},
	tx::TransactionStatus,
	utils::AccountId32,
	OnlineClient, PolkadotConfig,
};
pub use subxt::{tx::Payload, utils::Static};
pub use subxt_signer::sr25519::Keypair;
use subxt_signer::SecretUri;

mod amount;
mod connection;
mod describe;
pub mod job_file;
mod queries;

pub use amount::{format_stint, parse_stint};
pub use connection::{Backoff, Failover};
pub use queries::*;

/// Types and calls generated from Stint's metadata.
#[subxt::subxt(
	runtime_metadata_path = "metadata.scale",
	derive_for_all_types = "Clone, Debug",
	substitute_type(
		path = "stint_primitives::job::JobSpec",
		with = "::subxt::utils::Static<::stint_primitives::JobSpec>"
	),
	substitute_type(
		path = "stint_primitives::hardware::GpuRequirements",
		with = "::subxt::utils::Static<::stint_primitives::GpuRequirements>"
	),
	substitute_type(
		path = "stint_primitives::hardware::GpuDevice",
		with = "::subxt::utils::Static<::stint_primitives::GpuDevice>"
	),
	substitute_type(
		path = "stint_primitives::report::ResultCommitment",
		with = "::subxt::utils::Static<::stint_primitives::ResultCommitment>"
	)
)]
pub mod runtime {}

/// A list as a call carries it: bounded by the runtime, which refuses to decode a longer one.
pub use runtime::runtime_types::bounded_collections::bounded_vec::BoundedVec as Bounded;
pub use runtime::runtime_types::{
	pallet_leases::types::{Lease, LeaseStatus, TerminationReason},
	pallet_market::types::{Bid, Order, OrderStatus, OrderTerms},
};

/// The client configuration that matches Stint's runtime (MultiAddress, MultiSignature, u128).
pub type StintConfig = PolkadotConfig;
/// An account on Stint.
pub type AccountId = AccountId32;

/// What can go wrong, each with a message meant for a person.
#[derive(Debug, thiserror::Error)]
pub enum Error {
	/// The node could not be reached.
	#[error("cannot connect to {url}: {reason} (is a node running there? start one with scripts/run-dev.sh)")]
	Connect { url: String, reason: String },
	/// A secret URI or key file that is not a usable sr25519 key.
	#[error("bad key: {0}")]
	Key(String),
	/// The chain refused the call: the pallet's error and its documentation.
	#[error("{pallet}.{error}: {docs}")]
	Dispatch { pallet: String, error: String, docs: String },
	/// The chain refused the call for a reason that is not a pallet error (e.g. bad origin).
	#[error("the chain refused the call: {0}")]
	Refused(String),
	/// The transaction was not accepted into the pool (bad nonce, too low a balance for fees…).
	#[error("the transaction was rejected: {0}")]
	Rejected(String),
	/// Something the question named does not exist.
	#[error("{0} not found")]
	NotFound(String),
	/// Anything else from the RPC layer.
	#[error("{0}")]
	Rpc(String),
}

impl Error {
	fn rpc(error: impl fmt::Display) -> Self {
		Self::Rpc(error.to_string())
	}
}

/// Loads an sr25519 keypair from a secret URI (`//Alice`, a mnemonic with an optional
/// `//derivation`, or `0x` and a 32-byte hex seed) or, if `source` names a file, from the first
/// line of that file.
pub fn keypair(source: &str) -> Result<Keypair, Error> {
	let text = if Path::new(source).is_file() {
		std::fs::read_to_string(source)
			.map_err(|e| Error::Key(format!("cannot read key file {source}: {e}")))?
			.lines()
			.next()
			.unwrap_or_default()
			.trim()
			.to_string()
	} else {
		source.to_string()
	};
	let uri = SecretUri::from_str(&text).map_err(|e| Error::Key(format!("{e}")))?;
	Keypair::from_uri(&uri).map_err(|e| Error::Key(format!("{e}")))
}

/// The account of `pair`.
pub fn account_of(pair: &Keypair) -> AccountId {
	pair.public_key().to_account_id()
}

/// 32 bytes written as hex, with or without a leading `0x` (hashes, device ids, public keys).
pub fn parse_hex32(text: &str) -> Option<[u8; 32]> {
	hex::decode(text.strip_prefix("0x").unwrap_or(text)).ok()?.try_into().ok()
}

/// A worker's public key: `0x` and 32 bytes of hex, or a secret URI (or key file) whose sr25519
/// public key it is.
pub fn parse_worker_key(text: &str) -> Result<[u8; 32], Error> {
	match text.starts_with("0x") {
		true => {
			parse_hex32(text).ok_or_else(|| Error::Key(format!("{text} is not 32 bytes of hex")))
		}
		false => Ok(keypair(text)?.public_key().0),
	}
}

/// Where a worker key's consent holds: on the chain whose genesis hash is `genesis`, as the
/// provider's consent number `nonce` ([`Client::consent_scope`] reads both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConsentScope {
	pub genesis: [u8; 32],
	pub nonce: u32,
}

/// A worker key's consent to act for `provider`: its signature over
/// [`stint_primitives::worker_proof_payload`] of the chain, the provider's account and the
/// provider's consent nonce. The chain binds a worker key only with it, once.
pub fn worker_proof(worker: &Keypair, provider: &AccountId, scope: ConsentScope) -> [u8; 64] {
	let payload = stint_primitives::worker_proof_payload(&scope.genesis, &provider.0, scope.nonce);
	worker.sign(&payload).0
}

/// A worker key and its consent to act for `provider`. `key` is a secret URI or key file (the
/// consent is signed here), or `0x` and 32 bytes, whose consent `proof` (`0x` and 64 bytes)
/// must then give: made where the key is, with `stint --key <worker key> provider key-proof
/// <provider>`.
pub fn worker_key_with_proof(
	key: &str,
	proof: Option<&str>,
	provider: &AccountId,
	scope: ConsentScope,
) -> Result<([u8; 32], [u8; 64]), Error> {
	if !key.starts_with("0x") {
		let pair = keypair(key)?;
		return Ok((pair.public_key().0, worker_proof(&pair, provider, scope)));
	}
	let public = parse_worker_key(key)?;
	let proof = proof.ok_or_else(|| {
		Error::Key(format!(
			"{key} is a public key: give its consent to act for {provider} too (make it where the \
			 key is, with `stint --key <worker key> provider key-proof {provider}`)"
		))
	})?;
	let bytes = hex::decode(proof.strip_prefix("0x").unwrap_or(proof))
		.ok()
		.and_then(|b| <[u8; 64]>::try_from(b).ok())
		.ok_or_else(|| Error::Key(format!("{proof} is not 64 bytes of hex")))?;
	Ok((public, bytes))
}

/// Parses an SS58 address (or `0x` and 32 bytes of hex).
pub fn parse_account(text: &str) -> Result<AccountId, Error> {
	if text.starts_with("0x") {
		let bytes = parse_hex32(text)
			.ok_or_else(|| Error::Key(format!("{text} is not 32 bytes of hex")))?;
		return Ok(AccountId32(bytes));
	}
	AccountId32::from_str(text).map_err(|e| Error::Key(format!("{text} is not an address: {e}")))
}

/// How long [`Client::submit`] waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
	/// Until the transaction is in a best block.
	InBlock,
	/// Until the block holding it is finalized.
	Finalized,
}

/// Where a submitted transaction is, as [`Client::submit`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
	Submitted,
	Validated,
	Broadcast,
	InBlock(String),
	Finalized(String),
}

/// An event of a successful transaction: its pallet, its name, and its fields as text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct EventRecord {
	pub pallet: String,
	pub name: String,
	pub fields: String,
}

/// A transaction the chain accepted and executed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Included {
	pub block_hash: String,
	pub extrinsic_hash: String,
	pub events: Vec<EventRecord>,
	#[serde(skip)]
	raw: std::sync::Arc<subxt::extrinsics::ExtrinsicEvents<StintConfig>>,
}

impl Included {
	/// The first event `pallet.name`, if any.
	pub fn event(&self, pallet: &str, name: &str) -> Option<&EventRecord> {
		self.events.iter().find(|e| e.pallet == pallet && e.name == name)
	}

	/// The first event of type `E` (e.g. `runtime::market::events::OrderCreated`), decoded.
	pub fn find_first<E: subxt::events::DecodeAsEvent>(&self) -> Option<E> {
		self.raw.find_first::<E>().and_then(Result::ok)
	}
}

/// A connection to a Stint node.
#[derive(Clone)]
pub struct Client {
	api: OnlineClient<StintConfig>,
	rpc: subxt::rpcs::RpcClient,
	url: String,
	/// Reads are of this block, if set ([`Client::at_block`]), else of the last finalized one.
	pinned: Option<[u8; 32]>,
}

/// A signed transaction, as bytes to keep and send (again) later.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SignedTx {
	/// The SCALE-encoded extrinsic, exactly as the node receives it.
	#[serde(with = "hex_bytes")]
	pub bytes: Vec<u8>,
	/// Its hash (blake2-256), as the node's pool and blocks name it.
	#[serde(with = "hex_bytes")]
	pub hash: Vec<u8>,
	/// The signer's nonce it was signed with.
	pub nonce: u64,
	/// The first block it can no longer be in: it is mortal for [`MORTAL_BLOCKS`] from the
	/// parent of the finalized block it was signed at. `None`: immortal.
	#[serde(default)]
	pub valid_until: Option<u64>,
}

/// How many blocks a transaction signed by [`Client::sign`] stays valid.
pub const MORTAL_BLOCKS: u64 = 32;

/// The first block a transaction signed at block `from`, mortal for [`MORTAL_BLOCKS`], cannot
/// be in: the era's death (`sp_runtime::generic::Era`). [`MORTAL_BLOCKS`] is a power of two
/// under 4096, so the era is born at `from` exactly.
pub fn mortal_until(from: u64) -> u64 {
	from + MORTAL_BLOCKS
}

mod hex_bytes {
	pub fn serialize<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
		s.serialize_str(&format!("0x{}", hex::encode(bytes)))
	}
	pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
		let text = <String as serde::Deserialize>::deserialize(d)?;
		hex::decode(text.strip_prefix("0x").unwrap_or(&text)).map_err(serde::de::Error::custom)
	}
}

impl Client {
	/// Connects to the node at `url` (e.g. `ws://127.0.0.1:9944`).
	pub async fn connect(url: &str) -> Result<Self, Error> {
		let refused = |reason: String| Error::Connect { url: url.to_string(), reason };
		let rpc = subxt::rpcs::RpcClient::from_insecure_url(url)
			.await
			.map_err(|e| refused(e.to_string()))?;
		let api = OnlineClient::<StintConfig>::from_rpc_client(rpc.clone())
			.await
			.map_err(|e| refused(e.to_string()))?;
		Ok(Self { api, rpc, url: url.to_string(), pinned: None })
	}

	/// The same connection, reading at block `hash` (which the node must still have: an archive
	/// node keeps every block, others the recent ones) instead of the last finalized block.
	pub fn at_block(&self, hash: [u8; 32]) -> Self {
		Self { pinned: Some(hash), ..self.clone() }
	}

	/// The block reads are made at: the pinned one, else the last finalized.
	pub(crate) async fn block(
		&self,
	) -> Result<subxt::client::OnlineClientAtBlock<StintConfig>, Error> {
		match self.pinned {
			Some(hash) => self
				.api
				.at_block(subxt::backend::BlockRef::from_hash(subxt::utils::H256(hash)))
				.await
				.map_err(Error::rpc),
			None => self.api.at_current_block().await.map_err(Error::rpc),
		}
	}

	/// The last finalized block: its hash and number.
	pub async fn finalized_head(&self) -> Result<([u8; 32], u64), Error> {
		let at = self.api.at_current_block().await.map_err(Error::rpc)?;
		Ok((at.block_hash().0, at.block_number()))
	}

	/// The node's address.
	pub fn url(&self) -> &str {
		&self.url
	}

	/// The underlying subxt client, for anything this crate does not wrap.
	pub fn api(&self) -> &OnlineClient<StintConfig> {
		&self.api
	}

	/// The chain's genesis hash: part of every signed worker report.
	pub fn genesis_hash(&self) -> [u8; 32] {
		self.api.genesis_hash().0
	}

	/// Signs `call` with `signer`, submits it, calls `progress` at every step, and waits as
	/// `wait` says. A call the chain refuses is an [`Error::Dispatch`] naming the pallet's error.
	pub async fn submit(
		&self,
		call: &impl Payload,
		signer: &Keypair,
		wait: Wait,
		progress: impl FnMut(Progress),
	) -> Result<Included, Error> {
		let signed = self.sign(call, signer, None).await?;
		self.broadcast(&signed.bytes, wait, progress).await
	}

	/// Signs `call` with `signer` without sending it: bytes to store and [`Client::broadcast`]
	/// (once, or again after a crash: the same bytes are the same transaction, which the chain
	/// includes at most once). `nonce` by default is the next one the node's pool expects.
	pub async fn sign(
		&self,
		call: &impl Payload,
		signer: &Keypair,
		nonce: Option<u64>,
	) -> Result<SignedTx, Error> {
		// The nonce as the node's pool sees it, not as the last finalized block does: a signer's
		// transactions still in the pool or in unfinalized blocks count, so commands in quick
		// succession (`--no-wait-finality`, a worker acking then checkpointing) never reuse one.
		let nonce = match nonce {
			Some(nonce) => nonce,
			None => self
				.legacy()
				.system_account_next_index(&account_of(signer))
				.await
				.map_err(Error::rpc)?,
		};
		let at = self.api.at_current_block().await.map_err(Error::rpc)?;
		// Mortal from the parent of the finalized block it is signed at, said explicitly, so
		// that whoever keeps the bytes knows when they expire. Not from that block itself: a
		// block's own hash is only in the chain's `BlockHash` from its child on, so a dry run on
		// it (when it is also the best block) would find the era's birth unknown
		// (`AncientBirthBlock`) and could not judge the call.
		let (from, birth) = match at.block_number() {
			0 => (0, at.block_hash()),
			number => {
				let header = self
					.legacy()
					.chain_get_header(Some(at.block_hash()))
					.await
					.map_err(Error::rpc)?
					.ok_or_else(|| Error::Rpc("the finalized block has no header".into()))?;
				(number - 1, header.parent_hash)
			}
		};
		let params = subxt::config::DefaultExtrinsicParamsBuilder::<StintConfig>::new()
			.nonce(nonce)
			.mortal_from_unchecked(MORTAL_BLOCKS, from, birth)
			.build();
		let signed = at
			.transactions()
			.create_signed(call, signer, params)
			.await
			.map_err(|e| Error::Rejected(e.to_string()))?;
		Ok(SignedTx {
			hash: signed.hash().0.to_vec(),
			bytes: signed.into_encoded(),
			nonce,
			valid_until: Some(mortal_until(from)),
		})
	}

	/// Runs the signed transaction `bytes` on the state of the best block without sending it
	/// (the runtime's `BlockBuilder_apply_extrinsic`, through `state_call`, which every node
	/// serves): `Err` with the chain's named refusal ([`Error::Dispatch`]) if the call would fail
	/// there, so a refused call costs nothing. A transaction that block could not apply as it
	/// stands (a nonce still ahead of its state, when others of the signer's are in the pool) is
	/// not judged: the pool says the rest when it is sent.
	pub async fn dry_run(&self, bytes: &[u8]) -> Result<(), Error> {
		let best = self.best_hash().await?;
		let at = self
			.api
			.at_block(subxt::backend::BlockRef::from_hash(subxt::utils::H256(best)))
			.await
			.map_err(Error::rpc)?;
		let result = at
			.runtime_apis()
			.call_raw("BlockBuilder_apply_extrinsic", Some(bytes))
			.await
			.map_err(Error::rpc)?;
		// `Result<Result<(), DispatchError>, TransactionValidityError>`, SCALE-encoded.
		match result.as_slice() {
			[0, 0, ..] | [1, ..] => Ok(()),
			[0, 1, error @ ..] => {
				match DispatchError::decode_from(error, at.metadata()).map_err(Error::rpc)? {
					DispatchError::Module(module) => Err(match module.details() {
						Ok(details) => Error::Dispatch {
							pallet: details.pallet.name().to_string(),
							error: details.variant.name.clone(),
							docs: details.variant.docs.join(" "),
						},
						Err(_) => Error::Refused(module.details_string()),
					}),
					other => Err(Error::Refused(other.to_string())),
				}
			}
			_ => Err(Error::Rpc("apply_extrinsic answered something that is not a result".into())),
		}
	}

	/// Sends a transaction signed earlier ([`Client::sign`]), calls `progress` at every step, and
	/// waits as `wait` says.
	pub async fn broadcast(
		&self,
		bytes: &[u8],
		wait: Wait,
		mut progress: impl FnMut(Progress),
	) -> Result<Included, Error> {
		let at = self.api.at_current_block().await.map_err(Error::rpc)?;
		let mut watch = at
			.transactions()
			.from_bytes(bytes.to_vec())
			.submit_and_watch()
			.await
			.map_err(|e| Error::Rejected(e.to_string()))?;
		progress(Progress::Submitted);
		while let Some(status) = watch.next().await {
			let status = status.map_err(progress_error)?;
			let block = match status {
				TransactionStatus::Validated => {
					progress(Progress::Validated);
					continue;
				}
				TransactionStatus::Broadcasted => {
					progress(Progress::Broadcast);
					continue;
				}
				TransactionStatus::NoLongerInBestBlock => continue,
				TransactionStatus::InBestBlock(block) => {
					progress(Progress::InBlock(hex_of(block.block_hash().as_ref())));
					if wait == Wait::Finalized {
						continue;
					}
					block
				}
				TransactionStatus::InFinalizedBlock(block) => {
					progress(Progress::Finalized(hex_of(block.block_hash().as_ref())));
					block
				}
				TransactionStatus::Error { message }
				| TransactionStatus::Invalid { message }
				| TransactionStatus::Dropped { message } => return Err(Error::Rejected(message)),
			};
			let events = block.wait_for_success().await.map_err(events_error)?;
			let mut records = Vec::new();
			for event in events.iter() {
				let event = event.map_err(Error::rpc)?;
				let fields = event
					.decode_fields_unchecked_as::<subxt::dynamic::Value>()
					.map(|v| {
						describe::event_fields(
							at.metadata_ref(),
							event.pallet_name(),
							event.event_index(),
							&v,
						)
					})
					.unwrap_or_default();
				records.push(EventRecord {
					pallet: event.pallet_name().to_string(),
					name: event.event_name().to_string(),
					fields,
				});
			}
			return Ok(Included {
				block_hash: hex_of(block.block_hash().as_ref()),
				extrinsic_hash: hex_of(block.extrinsic_hash().as_ref()),
				events: records,
				raw: std::sync::Arc::new(events),
			});
		}
		Err(Error::Rejected("the node stopped reporting the transaction's progress".into()))
	}
}

fn hex_of(bytes: &[u8]) -> String {
	format!("0x{}", hex::encode(bytes))
}

fn progress_error(error: TransactionProgressError) -> Error {
	Error::Rejected(error.to_string())
}

fn events_error(error: TransactionEventsError) -> Error {
	match error {
		TransactionEventsError::ExtrinsicFailed(DispatchError::Module(module)) => {
			match module.details() {
				Ok(details) => Error::Dispatch {
					pallet: details.pallet.name().to_string(),
					error: details.variant.name.clone(),
					docs: details.variant.docs.join(" "),
				},
				Err(_) => Error::Refused(module.details_string()),
			}
		}
		TransactionEventsError::ExtrinsicFailed(other) => Error::Refused(other.to_string()),
		other => Error::rpc(other),
	}
}
