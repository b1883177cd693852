//! The node's JSON-RPC extensions beyond the standard set: account nonces and fee queries.
//!
//! Stint's own queries are runtime APIs and view functions (callable through `state_call`), not
//! custom RPC methods, so that any client that speaks the standard interface can use them.

use std::sync::Arc;

use jsonrpsee::RpcModule;
use polkadot_sdk::{
	pallet_transaction_payment_rpc,
	sc_transaction_pool_api::TransactionPool,
	sp_api::ProvideRuntimeApi,
	sp_block_builder::BlockBuilder,
	sp_blockchain::{Error as BlockChainError, HeaderBackend, HeaderMetadata},
	substrate_frame_rpc_system,
};
use stint_runtime::{opaque::Block, AccountId, Balance, Nonce};

/// What the RPC extensions need.
pub struct FullDeps<C, P> {
	/// The client.
	pub client: Arc<C>,
	/// The transaction pool.
	pub pool: Arc<P>,
}

/// Builds the RPC extensions of a full node.
pub fn create_full<C, P>(
	deps: FullDeps<C, P>,
) -> Result<RpcModule<()>, Box<dyn std::error::Error + Send + Sync>>
where
	C: ProvideRuntimeApi<Block>
		+ HeaderBackend<Block>
		+ HeaderMetadata<Block, Error = BlockChainError>
		+ Send
		+ Sync
		+ 'static,
	C::Api: substrate_frame_rpc_system::AccountNonceApi<Block, AccountId, Nonce>,
	C::Api: pallet_transaction_payment_rpc::TransactionPaymentRuntimeApi<Block, Balance>,
	C::Api: BlockBuilder<Block>,
	P: TransactionPool + 'static,
{
	use pallet_transaction_payment_rpc::{TransactionPayment, TransactionPaymentApiServer};
	use substrate_frame_rpc_system::{System, SystemApiServer};

	let mut module = RpcModule::new(());
	let FullDeps { client, pool } = deps;
	module.merge(System::new(client.clone(), pool).into_rpc())?;
	module.merge(TransactionPayment::new(client).into_rpc())?;
	Ok(module)
}
