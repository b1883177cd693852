//! Reads: the chain's status, orders, bids, leases, streams, providers and bonds, through the
//! runtime API where it answers and storage elsewhere.

use crate::{runtime, AccountId, Client, Error, StintConfig};
use stint_primitives::{Balance, BlockNumber, DeviceId, LeaseId};
use subxt::{
	config::{Header, RpcConfigFor},
	rpcs::LegacyRpcMethods,
};

/// An order as the chain stores it.
pub type OrderRecord = crate::Order<AccountId, Balance, BlockNumber>;
/// A bid as the chain stores it.
pub type BidRecord = crate::Bid<Balance, BlockNumber>;
/// A lease as the chain stores it.
pub type LeaseRecord = crate::Lease<AccountId, Balance, BlockNumber>;
/// A provider's registry record.
pub type ProviderRecord =
	runtime::runtime_types::pallet_providers::types::ProviderRecord<Balance, BlockNumber>;
/// A provider's bond ledger.
pub type BondLedger = runtime::runtime_types::pallet_bonds::types::BondLedger<Balance, BlockNumber>;
/// A stream's money now.
pub type StreamView = runtime::runtime_types::stint_runtime_api::StreamView<Balance, BlockNumber>;

/// Where the chain is.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ChainStatus {
	pub chain: String,
	pub node: String,
	pub best_block: u64,
	pub finalized_block: u64,
	pub genesis_hash: String,
	pub spec_version: u32,
	pub peers: usize,
}

impl Client {
	pub(crate) fn legacy(&self) -> LegacyRpcMethods<RpcConfigFor<StintConfig>> {
		LegacyRpcMethods::new(self.rpc.clone())
	}

	/// When block `number` was authored: its `Timestamp::Now`, in Unix milliseconds.
	pub async fn block_time_ms(&self, number: u64) -> Result<Option<u64>, Error> {
		let at = self.api.at_block(number).await.map_err(Error::rpc)?;
		match at
			.storage()
			.try_fetch(runtime::storage().timestamp().now(), ())
			.await
			.map_err(Error::rpc)?
		{
			Some(now) => Ok(Some(now.decode().map_err(Error::rpc)?)),
			None => Ok(None),
		}
	}

	/// The chain's type as its chain spec says: `Development`, `Local` or `Live`.
	pub async fn chain_type(&self) -> Result<String, Error> {
		self.legacy().system_chain_type().await.map_err(Error::rpc)
	}

	/// The chain's name, its best and finalized blocks, and the runtime version.
	pub async fn status(&self) -> Result<ChainStatus, Error> {
		let rpc = self.legacy();
		let at = self.block().await?;
		let best = rpc.chain_get_header(None).await.map_err(Error::rpc)?;
		Ok(ChainStatus {
			chain: rpc.system_chain().await.map_err(Error::rpc)?,
			node: format!(
				"{} {}",
				rpc.system_name().await.map_err(Error::rpc)?,
				rpc.system_version().await.map_err(Error::rpc)?
			),
			best_block: best.map(|h| h.number()).unwrap_or_default(),
			finalized_block: at.block_number(),
			genesis_hash: format!("0x{}", hex::encode(self.genesis_hash())),
			spec_version: at.spec_version(),
			peers: rpc.system_health().await.map_err(Error::rpc)?.peers,
		})
	}

	/// The free balance of `who`.
	pub async fn free_balance(&self, who: &AccountId) -> Result<Balance, Error> {
		let at = self.block().await?;
		let account = at
			.storage()
			.fetch(runtime::storage().system().account(), (*who,))
			.await
			.map_err(Error::rpc)?
			.decode()
			.map_err(Error::rpc)?;
		Ok(account.data.free)
	}

	/// An order, open or leased.
	pub async fn order(&self, id: u64) -> Result<Option<OrderRecord>, Error> {
		self.call_api(runtime::runtime_apis().market_api().order(id)).await
	}

	/// Open orders, `limit` at most, after `start_after`.
	pub async fn open_orders(
		&self,
		start_after: Option<u64>,
		limit: u32,
	) -> Result<Vec<(u64, OrderRecord)>, Error> {
		self.call_api(runtime::runtime_apis().market_api().open_orders(start_after, limit)).await
	}

	/// One page of the open orders `provider` can bid on now, with the devices it would offer,
	/// and the id to page on from (`None` once every open order was read). The node reads a
	/// bounded number of orders per page, so a page may hold fewer than `limit`, or none, while
	/// more follow.
	pub async fn servable_orders(
		&self,
		provider: &AccountId,
		start_after: Option<u64>,
		limit: u32,
	) -> Result<(Vec<(u64, Vec<DeviceId>)>, Option<u64>), Error> {
		let call =
			runtime::runtime_apis().market_api().servable_orders(*provider, start_after, limit);
		let page = self.call_api(call).await?;
		Ok((page.orders, page.next))
	}

	/// The open orders `provider` can bid on now, up to `limit`, paging through every open
	/// order from the start.
	pub async fn all_servable_orders(
		&self,
		provider: &AccountId,
		limit: u32,
	) -> Result<Vec<(u64, Vec<DeviceId>)>, Error> {
		let (mut found, mut next) = self.servable_orders(provider, None, limit).await?;
		while let Some(after) = next {
			if found.len() >= limit as usize {
				break;
			}
			let wanted = limit - found.len() as u32;
			let (more, after) = self.servable_orders(provider, Some(after), wanted).await?;
			found.extend(more);
			next = after;
		}
		Ok(found)
	}

	/// The standing bids on `order`, by provider.
	pub async fn bids(&self, order: u64) -> Result<Vec<(AccountId, BidRecord)>, Error> {
		let at = self.block().await?;
		let mut entries = at
			.storage()
			.iter(runtime::storage().market().bids(), (order,))
			.await
			.map_err(Error::rpc)?;
		let mut bids = Vec::new();
		while let Some(entry) = entries.next().await {
			let entry = entry.map_err(Error::rpc)?;
			let (_, provider) = entry.key().map_err(Error::rpc)?.decode().map_err(Error::rpc)?;
			bids.push((provider, entry.value().decode().map_err(Error::rpc)?));
		}
		Ok(bids)
	}

	/// A lease, live or ended.
	pub async fn lease(&self, id: LeaseId) -> Result<Option<LeaseRecord>, Error> {
		self.call_api(runtime::runtime_apis().market_api().lease(id)).await
	}

	/// The id the next lease will get: every lease below it was created by this block.
	pub async fn next_lease_id(&self) -> Result<LeaseId, Error> {
		let at = self.block().await?;
		match at
			.storage()
			.try_fetch(runtime::storage().leases().next_lease_id(), ())
			.await
			.map_err(Error::rpc)?
		{
			Some(value) => value.decode().map_err(Error::rpc),
			None => Ok(0),
		}
	}

	/// The last block in which the buyer of `lease` may still object to its early result, while
	/// its verdict is pending (`None`: nothing pending).
	pub async fn pending_verdict(&self, lease: LeaseId) -> Result<Option<u32>, Error> {
		let at = self.block().await?;
		match at
			.storage()
			.try_fetch(runtime::storage().leases().pending_verdicts(), (lease,))
			.await
			.map_err(Error::rpc)?
		{
			Some(value) => {
				let verdict = value.decode().map_err(Error::rpc)?;
				Ok(Some(verdict.objections_until))
			}
			None => Ok(None),
		}
	}

	/// The verdict `lease`'s result waits for, if one does: until when the buyer may object,
	/// what an objection would slash, and what the lease's stream withholds meanwhile.
	pub async fn verdict(&self, lease: LeaseId) -> Result<Option<VerdictView>, Error> {
		let at = self.block().await?;
		let Some(verdict) = at
			.storage()
			.try_fetch(runtime::storage().leases().pending_verdicts(), (lease,))
			.await
			.map_err(Error::rpc)?
		else {
			return Ok(None);
		};
		let verdict = verdict.decode().map_err(Error::rpc)?;
		let mut withheld = 0;
		if let Some(record) = self.lease(lease).await? {
			if let Some(stream) = at
				.storage()
				.try_fetch(runtime::storage().streams().records(), (record.stream,))
				.await
				.map_err(Error::rpc)?
			{
				withheld = stream.decode().map_err(Error::rpc)?.withheld;
			}
		}
		Ok(Some(VerdictView {
			objections_until: verdict.objections_until,
			at_stake: verdict.at_stake,
			collateral: verdict.collateral,
			withheld,
		}))
	}

	/// What `buyer`'s verdicts were: results judged, objections, and objections that slashed a
	/// provider (all zero for a buyer that never reached one).
	pub async fn buyer_record(&self, buyer: &AccountId) -> Result<BuyerStanding, Error> {
		let at = self.block().await?;
		let fetched = at
			.storage()
			.try_fetch(runtime::storage().leases().buyer_records(), (*buyer,))
			.await
			.map_err(Error::rpc)?;
		Ok(match fetched {
			Some(value) => {
				let record = value.decode().map_err(Error::rpc)?;
				BuyerStanding {
					verdicts: record.verdicts,
					objections: record.objections,
					slashing_objections: record.slashing_objections,
					disputes: record.disputes,
					disputes_lost: record.disputes_lost,
					no_majority: record.no_majority,
				}
			}
			None => BuyerStanding::default(),
		})
	}

	/// The dispute of `lease`'s result, if its buyer opened one (kept, decided, until the lease
	/// is pruned).
	pub async fn dispute(&self, lease: LeaseId) -> Result<Option<DisputeView>, Error> {
		use runtime::runtime_types::pallet_leases::types::DisputeStatus as S;
		let at = self.block().await?;
		let Some(dispute) = at
			.storage()
			.try_fetch(runtime::storage().leases().disputes(), (lease,))
			.await
			.map_err(Error::rpc)?
		else {
			return Ok(None);
		};
		let dispute = dispute.decode().map_err(Error::rpc)?;
		let state = match dispute.status {
			S::Drawing { at } => DisputeState::Drawing { at },
			S::Verifying { lease } => DisputeState::Verifying { lease },
			S::Upheld => DisputeState::Upheld,
			S::Overturned => DisputeState::Overturned,
			S::Void => DisputeState::Void,
		};
		Ok(Some(DisputeView {
			state,
			bond: dispute.bond,
			draws: dispute.draws,
			verifiers: dispute.verifiers.0,
		}))
	}

	/// The replicas of replicated order `order` (kept until the order is pruned).
	pub async fn replicas(&self, order: u64) -> Result<Option<ReplicasView>, Error> {
		use runtime::runtime_types::pallet_leases::types::{ReplicaStatus, ReplicaVerdict};
		let at = self.block().await?;
		let Some(group) = at
			.storage()
			.try_fetch(runtime::storage().leases().replica_groups(), (order,))
			.await
			.map_err(Error::rpc)?
		else {
			return Ok(None);
		};
		let group = group.decode().map_err(Error::rpc)?;
		let decided = match group.status {
			ReplicaStatus::Open => None,
			ReplicaStatus::Decided { at, verdict } => Some((
				at,
				match verdict {
					ReplicaVerdict::Majority { output_root, exit_code, votes } => {
						ReplicaDecision::Majority { output_root, exit_code, votes }
					}
					ReplicaVerdict::NoMajority => ReplicaDecision::NoMajority,
					ReplicaVerdict::Alone { lease, output_root, exit_code } => {
						ReplicaDecision::Alone { lease, output_root, exit_code }
					}
				},
			)),
		};
		Ok(Some(ReplicasView {
			replicas: group.replicas.0.iter().map(|r| (r.lease, r.seal.is_some())).collect(),
			reveals_from: group.reveals_from,
			reveal_until: group.reveal_until,
			decided,
		}))
	}

	/// The live leases of `provider`.
	pub async fn leases_of(
		&self,
		provider: &AccountId,
	) -> Result<Vec<(LeaseId, LeaseRecord)>, Error> {
		self.call_api(runtime::runtime_apis().market_api().leases_of(*provider)).await
	}

	/// Every lease `buyer` pays or paid for, live or ended (a scan of all leases: for a CLI, not
	/// for a hot path).
	pub async fn leases_of_buyer(
		&self,
		buyer: &AccountId,
	) -> Result<Vec<(LeaseId, LeaseRecord)>, Error> {
		let at = self.block().await?;
		let mut entries = at
			.storage()
			.iter(runtime::storage().leases().leases(), ())
			.await
			.map_err(Error::rpc)?;
		let mut leases = Vec::new();
		while let Some(entry) = entries.next().await {
			let entry = entry.map_err(Error::rpc)?;
			let lease: LeaseRecord = entry.value().decode().map_err(Error::rpc)?;
			if &lease.buyer == buyer {
				let (id,) = entry.key().map_err(Error::rpc)?.decode().map_err(Error::rpc)?;
				leases.push((id, lease));
			}
		}
		leases.sort_by_key(|(id, _)| *id);
		Ok(leases)
	}

	/// A stream's owed, remaining and depletion block, while it is open.
	pub async fn stream(&self, id: u64) -> Result<Option<StreamView>, Error> {
		self.call_api(runtime::runtime_apis().market_api().stream(id)).await
	}

	/// A provider's registry record.
	pub async fn provider(&self, who: &AccountId) -> Result<Option<ProviderRecord>, Error> {
		let at = self.block().await?;
		match at
			.storage()
			.try_fetch(runtime::storage().providers().registry(), (*who,))
			.await
			.map_err(Error::rpc)?
		{
			Some(value) => Ok(Some(value.decode().map_err(Error::rpc)?)),
			None => Ok(None),
		}
	}

	/// A provider's bond.
	pub async fn bond(&self, who: &AccountId) -> Result<Option<BondLedger>, Error> {
		let at = self.block().await?;
		match at
			.storage()
			.try_fetch(runtime::storage().bonds().ledgers(), (*who,))
			.await
			.map_err(Error::rpc)?
		{
			Some(value) => Ok(Some(value.decode().map_err(Error::rpc)?)),
			None => Ok(None),
		}
	}

	async fn call_api<P: subxt::runtime_apis::Payload>(
		&self,
		payload: P,
	) -> Result<P::ReturnType, Error> {
		let at = self.block().await?;
		at.runtime_apis().call(payload).await.map_err(Error::rpc)
	}
}

/// A live lease and what its provider must do next, as `MarketApi::duties` gives it.
#[derive(Clone, Debug)]
pub struct DutyRecord {
	pub id: LeaseId,
	pub lease: LeaseRecord,
	/// The order's job spec (`None` only if the order is no longer stored).
	pub spec: Option<stint_primitives::JobSpec>,
	pub next: stint_primitives::NextDuty<BlockNumber>,
}

impl Client {
	/// The live leases `who` (a provider, or one of its worker keys: then only the leases on that
	/// key's machine) must act on, each with its job spec and next duty.
	pub async fn duties(&self, who: &AccountId) -> Result<Vec<DutyRecord>, Error> {
		use runtime::runtime_types::stint_primitives::report::NextDuty as Generated;
		use stint_primitives::NextDuty;
		let duties = self.call_api(runtime::runtime_apis().market_api().duties(*who)).await?;
		Ok(duties
			.into_iter()
			.map(|duty| DutyRecord {
				id: duty.id,
				lease: duty.lease,
				spec: duty.spec.map(|spec| spec.0),
				next: match duty.next {
					Generated::Ack { by } => NextDuty::Ack { by },
					Generated::Result { ends_at, by } => NextDuty::Result { ends_at, by },
					Generated::Checkpoint { sequence, by } => NextDuty::Checkpoint { sequence, by },
					Generated::Suspended => NextDuty::Suspended,
				},
			})
			.collect())
	}

	/// The standing bids of `who` (a provider or one of its worker keys), by order.
	pub async fn bids_of(&self, who: &AccountId) -> Result<Vec<(u64, BidRecord)>, Error> {
		self.call_api(runtime::runtime_apis().market_api().bids_of(*who)).await
	}

	/// Whom `who` acts for: `(provider, None)` for a provider's own account, `(provider,
	/// Some(devices))` for a worker key bound to those devices, `None` for anyone else.
	pub async fn acting_for(
		&self,
		who: &AccountId,
	) -> Result<Option<(AccountId, Option<Vec<DeviceId>>)>, Error> {
		self.call_api(runtime::runtime_apis().market_api().acting_for(*who)).await
	}

	/// The number of the best block the node knows.
	pub async fn best_number(&self) -> Result<u64, Error> {
		let header = self.legacy().chain_get_header(None).await.map_err(Error::rpc)?;
		Ok(header.map(|h| h.number()).unwrap_or_default())
	}
}

/// What a bid costs its provider, from the runtime's constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BidCosts {
	/// Locked in the provider's bond, with the collateral, per standing bid.
	pub bid_deposit: Balance,
	/// Locked from the provider's bond per GPU bid (and per GPU leased).
	pub collateral_per_gpu: Balance,
	/// Blocks after the close of its window a buyer who accepts by hand has to accept a bid.
	pub accept_period: u32,
	/// The blocks of one era of the cap on what a provider's worker keys commit in bids.
	pub worker_era: u32,
}

/// A result waiting for its buyer's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerdictView {
	/// The last block the buyer may object in.
	pub objections_until: u32,
	/// Slashed from the provider if the buyer objects (it ended the lease early).
	pub at_stake: Balance,
	/// The provider's bond locked until the verdict.
	pub collateral: Balance,
	/// The lease's payments withheld from the provider until the verdict.
	pub withheld: Balance,
}

/// What a buyer's verdicts say about it (`Leases.BuyerRecords`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuyerStanding {
	/// Verdicts reached on its leases: accepted, confirmed or objected.
	pub verdicts: u32,
	/// Of them, objections.
	pub objections: u32,
	/// Of them, objections that slashed a provider.
	pub slashing_objections: u32,
	/// Disputes it opened.
	pub disputes: u32,
	/// Of them, disputes whose re-execution found the same outputs: the result stood.
	pub disputes_lost: u32,
	/// Replicated orders of its whose replicas found no majority.
	pub no_majority: u32,
}

/// How a replicated order's replicas were decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaDecision {
	/// More than half of the replicas revealed this output root and exit code.
	Majority { output_root: [u8; 32], exit_code: i32, votes: u32 },
	/// No result had more than half: the buyer was refunded and the order flagged.
	NoMajority,
	/// Replica `lease` alone revealed a result: it waits for the buyer's verdict (accept,
	/// object, dispute, or confirmed once its window passes) like any result.
	Alone { lease: LeaseId, output_root: [u8; 32], exit_code: i32 },
}

/// The replicas of a replicated order (`Leases.ReplicaGroups`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicasView {
	/// Each replica's lease, and whether it committed its sealed result.
	pub replicas: Vec<(LeaseId, bool)>,
	/// The first block of the reveals.
	pub reveals_from: u32,
	/// The last block of the reveals: after it anyone may decide the replicas.
	pub reveal_until: u32,
	/// The decision and its block, once made.
	pub decided: Option<(u32, ReplicaDecision)>,
}

/// Where a dispute of a result is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisputeState {
	/// A verifier is drawn at the start of this block.
	Drawing { at: u32 },
	/// This verification lease re-executes the job.
	Verifying { lease: LeaseId },
	/// The same outputs: the result stood, the buyer lost its bond's use.
	Upheld,
	/// Other outputs: the provider was slashed and the buyer refunded.
	Overturned,
	/// No verifier delivered: the bond was refunded and the result stands.
	Void,
}

/// A buyer's dispute of a result (`Leases.Disputes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisputeView {
	pub state: DisputeState,
	/// The bond the buyer posted: it pays the verifier.
	pub bond: Balance,
	/// Verifiers drawn, or draws that found none.
	pub draws: u32,
	/// The verification leases, in the order drawn.
	pub verifiers: Vec<LeaseId>,
}

impl DisputeView {
	/// Whether it is still to be decided (a verifier is being drawn or re-executes the job).
	pub fn is_open(&self) -> bool {
		matches!(self.state, DisputeState::Drawing { .. } | DisputeState::Verifying { .. })
	}
}

/// What the chain asks of every order at least, from the runtime's constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderMinimums {
	/// Blocks of notice an open-ended order's provider must give before it leaves.
	pub termination_notice: u32,
	/// The share of every payment withheld until the buyer's verdict.
	pub holdback: stint_primitives::Permill,
}

impl Client {
	/// The least termination notice (open-ended orders) and holdback an order may set.
	pub async fn order_minimums(&self) -> Result<OrderMinimums, Error> {
		let at = self.block().await?;
		let constants = at.constants();
		let holdback =
			constants.entry(runtime::constants().market().min_holdback()).map_err(Error::rpc)?;
		Ok(OrderMinimums {
			termination_notice: constants
				.entry(runtime::constants().market().min_termination_notice())
				.map_err(Error::rpc)?,
			holdback: stint_primitives::Permill::from_parts(holdback.0),
		})
	}

	/// Where the next worker-key consent to act for `provider` holds: this chain, at the
	/// provider's nonce (how many consents it used: `consents` in its record, or in the history
	/// the chain keeps of it once it left, `Providers.Histories`).
	pub async fn consent_scope(&self, provider: &AccountId) -> Result<crate::ConsentScope, Error> {
		let nonce = match self.provider(provider).await? {
			Some(record) => record.consents,
			None => {
				let at = self.block().await?;
				let fetched = at
					.storage()
					.try_fetch(runtime::storage().providers().histories(), (*provider,))
					.await
					.map_err(Error::rpc)?;
				match fetched {
					Some(value) => value.decode().map_err(Error::rpc)?.consents,
					None => 0,
				}
			}
		};
		Ok(crate::ConsentScope { genesis: self.genesis_hash(), nonce })
	}

	/// The market's bid deposit and collateral per GPU.
	pub async fn bid_costs(&self) -> Result<BidCosts, Error> {
		let at = self.block().await?;
		let constants = at.constants();
		Ok(BidCosts {
			bid_deposit: constants
				.entry(runtime::constants().market().bid_deposit())
				.map_err(Error::rpc)?,
			collateral_per_gpu: constants
				.entry(runtime::constants().market().collateral_per_gpu())
				.map_err(Error::rpc)?,
			accept_period: constants
				.entry(runtime::constants().market().accept_period())
				.map_err(Error::rpc)?,
			worker_era: constants
				.entry(runtime::constants().market().worker_era())
				.map_err(Error::rpc)?,
		})
	}
}

impl Client {
	/// The hash of the best block the node knows (reads there see transactions not yet
	/// finalized).
	pub async fn best_hash(&self) -> Result<[u8; 32], Error> {
		let hash = self.legacy().chain_get_block_hash(None).await.map_err(Error::rpc)?;
		hash.map(|h| h.0).ok_or_else(|| Error::Rpc("the node has no best block".into()))
	}

	/// The best block the node knows: its hash and number.
	pub async fn best_head(&self) -> Result<([u8; 32], u64), Error> {
		let hash = self.best_hash().await?;
		let header = self
			.legacy()
			.chain_get_header(Some(subxt::utils::H256(hash)))
			.await
			.map_err(Error::rpc)?
			.ok_or_else(|| Error::Rpc("the node has no best block".into()))?;
		Ok((hash, header.number()))
	}
}

impl Client {
	/// Whether the extrinsic named `hash` (blake2-256 of its bytes) is in a block of the best
	/// chain numbered above `after`: the blocks from the best one back along their parents,
	/// [`MAX_BLOCKS_SEARCHED`] at most.
	pub async fn in_best_chain_after(&self, hash: [u8; 32], after: u64) -> Result<bool, Error> {
		let mut at = None;
		for _ in 0..MAX_BLOCKS_SEARCHED {
			let Some(details) = self.legacy().chain_get_block(at).await.map_err(Error::rpc)? else {
				return Ok(false);
			};
			let header = details.block.header;
			if header.number <= after {
				return Ok(false);
			}
			let found = details
				.block
				.extrinsics
				.iter()
				.any(|bytes| stint_primitives::blake2_256(&bytes.0) == hash);
			if found {
				return Ok(true);
			}
			at = Some(header.parent_hash);
		}
		Ok(false)
	}
}

/// How many blocks [`Client::in_best_chain_after`] looks through at most.
pub const MAX_BLOCKS_SEARCHED: u32 = 64;

impl Client {
	/// The next nonce of `who` as the node's pool sees it (its transactions still in the pool
	/// count).
	pub async fn next_nonce(&self, who: &AccountId) -> Result<u64, Error> {
		self.legacy().system_account_next_index(who).await.map_err(Error::rpc)
	}
}

impl Client {
	/// The runtime's spec version at the last finalized block, and which of the calls and
	/// runtime APIs a provider's worker uses no longer match this client's metadata (after a
	/// runtime upgrade that changed them): each as `Pallet.call: why`.
	pub async fn worker_compatibility(&self) -> Result<(u32, Vec<String>), Error> {
		let at = self.api.at_current_block().await.map_err(Error::rpc)?;
		let tx = runtime::tx();
		let apis = runtime::runtime_apis().market_api();
		let commitment = subxt::utils::Static(stint_primitives::ResultCommitment::default());
		let transactions = at.transactions();
		let calls = [
			("Leases.ack_lease", transactions.validate(&tx.leases().ack_lease(0))),
			(
				"Leases.submit_result",
				transactions.validate(&tx.leases().submit_result(0, commitment.clone(), [0; 64])),
			),
			(
				"Leases.checkpoint",
				transactions.validate(&tx.leases().checkpoint(0, commitment, [0; 64])),
			),
			("Leases.confirm_result", transactions.validate(&tx.leases().confirm_result(0))),
			(
				"Market.place_bid",
				transactions.validate(&tx.market().place_bid(0, 0, crate::Bounded(Vec::new()))),
			),
			("Market.retract_bid", transactions.validate(&tx.market().retract_bid(0))),
			("Streams.settle", transactions.validate(&tx.streams().settle(0))),
		];
		let mut incompatible: Vec<String> = calls
			.into_iter()
			.filter_map(|(name, checked)| checked.err().map(|e| format!("{name}: {e}")))
			.collect();
		let who = AccountId::from([0u8; 32]);
		let runtime_apis = at.runtime_apis();
		let reads = [
			("MarketApi.duties", runtime_apis.validate(apis.duties(who)).err()),
			(
				"MarketApi.servable_orders",
				runtime_apis.validate(apis.servable_orders(who, None, 1)).err(),
			),
			("MarketApi.lease", runtime_apis.validate(apis.lease(0)).err()),
		];
		incompatible.extend(
			reads.into_iter().filter_map(|(name, error)| error.map(|e| format!("{name}: {e}"))),
		);
		Ok((at.spec_version(), incompatible))
	}
}
