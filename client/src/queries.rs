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
			best_block: best.map(|h| h.number().into()).unwrap_or_default(),
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
			.fetch(runtime::storage().system().account(), (who.clone(),))
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

	/// Open orders `provider` can bid on now, with the devices it would offer.
	pub async fn servable_orders(
		&self,
		provider: &AccountId,
		start_after: Option<u64>,
		limit: u32,
	) -> Result<Vec<(u64, Vec<DeviceId>)>, Error> {
		let call = runtime::runtime_apis().market_api().servable_orders(
			provider.clone(),
			start_after,
			limit,
		);
		self.call_api(call).await
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

	/// The live leases of `provider`.
	pub async fn leases_of(
		&self,
		provider: &AccountId,
	) -> Result<Vec<(LeaseId, LeaseRecord)>, Error> {
		self.call_api(runtime::runtime_apis().market_api().leases_of(provider.clone())).await
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
			.try_fetch(runtime::storage().providers().registry(), (who.clone(),))
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
			.try_fetch(runtime::storage().bonds().ledgers(), (who.clone(),))
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
