//! Assembles a full node: client, import queue, networking, Aura authoring, GRANDPA finality.
//!
//! For tests there is a second way to make blocks ([`DevSeal`]): a block every few hundred
//! milliseconds, final as soon as it is imported, with the same runtime and the same Aura slot
//! digest in every block, but neither Aura's slot timer nor GRANDPA's voting.

use std::{sync::Arc, time::Duration};

use polkadot_sdk::{
	sc_basic_authorship, sc_consensus, sc_consensus_aura, sc_consensus_grandpa,
	sc_consensus_manual_seal, sc_executor, sc_network, sc_service, sc_telemetry,
	sc_transaction_pool, sc_transaction_pool_api::OffchainTransactionPoolFactory,
	sp_consensus_aura, sp_io, sp_runtime, sp_timestamp,
};
use sc_consensus_aura::{ImportQueueParams, SlotProportion, StartAuraParams};
use sc_service::{error::Error as ServiceError, Configuration, TaskManager, WarpSyncConfig};
use sc_telemetry::{Telemetry, TelemetryWorker};
use sp_consensus_aura::sr25519::{AuthorityId as AuraId, AuthorityPair as AuraPair};
use stint_runtime::{apis::RuntimeApi, opaque::Block};

/// The client of a full node, executing the on-chain wasm runtime.
pub type FullClient = sc_service::TFullClient<
	Block,
	RuntimeApi,
	sc_executor::WasmExecutor<sp_io::SubstrateHostFunctions>,
>;
type FullBackend = sc_service::TFullBackend<Block>;
type FullSelectChain = sc_consensus::LongestChain<FullBackend, Block>;
type TransactionPool = sc_transaction_pool::TransactionPoolHandle<Block, FullClient>;
type GrandpaBlockImport =
	sc_consensus_grandpa::GrandpaBlockImport<FullBackend, Block, FullClient, FullSelectChain>;
type GrandpaLinkHalf = sc_consensus_grandpa::LinkHalf<Block, FullClient, FullSelectChain>;

/// Every this many blocks a GRANDPA justification is imported and generated, at least.
const GRANDPA_JUSTIFICATION_PERIOD: u32 = 512;

/// The parts of a node that the maintenance subcommands need too.
pub type Service = sc_service::PartialComponents<
	FullClient,
	FullBackend,
	FullSelectChain,
	sc_consensus::DefaultImportQueue<Block>,
	TransactionPool,
	(GrandpaBlockImport, GrandpaLinkHalf, Option<Telemetry>),
>;

/// Development sealing: a block every `interval`, finalized on import.
#[derive(Clone, Copy, Debug)]
pub struct DevSeal {
	pub interval: Duration,
}

/// Aura's inherent data for a block built now: the timestamp and the slot it falls in.
fn aura_inherent_data(
	slot_duration: sp_consensus_aura::SlotDuration,
) -> (sp_consensus_aura::inherents::InherentDataProvider, sp_timestamp::InherentDataProvider) {
	let timestamp = sp_timestamp::InherentDataProvider::from_system_time();
	let slot = sp_consensus_aura::inherents::InherentDataProvider::from_timestamp_and_slot_duration(
		*timestamp,
		slot_duration,
	);
	(slot, timestamp)
}

/// Builds the client, backend, transaction pool and import queue (Aura's, or with `dev_seal` one
/// that takes the node's own sealed blocks as they are).
pub fn new_partial(config: &Configuration, dev_seal: bool) -> Result<Service, ServiceError> {
	let telemetry = config
		.telemetry_endpoints
		.clone()
		.filter(|endpoints| !endpoints.is_empty())
		.map(|endpoints| -> Result<_, sc_telemetry::Error> {
			let worker = TelemetryWorker::new(16)?;
			let telemetry = worker.handle().new_telemetry(endpoints);
			Ok((worker, telemetry))
		})
		.transpose()?;

	let executor = sc_service::new_wasm_executor::<sp_io::SubstrateHostFunctions>(&config.executor);
	let (client, backend, keystore_container, task_manager) =
		sc_service::new_full_parts::<Block, RuntimeApi, _>(
			config,
			telemetry.as_ref().map(|(_, telemetry)| telemetry.handle()),
			executor,
			Vec::new(),
		)?;
	let client = Arc::new(client);

	let telemetry = telemetry.map(|(worker, telemetry)| {
		task_manager.spawn_handle().spawn("telemetry", None, worker.run());
		telemetry
	});

	let select_chain = sc_consensus::LongestChain::new(backend.clone());

	let transaction_pool = Arc::from(
		sc_transaction_pool::Builder::new(
			task_manager.spawn_essential_handle(),
			client.clone(),
			config.role.is_authority().into(),
		)
		.with_options(config.transaction_pool.clone())
		.with_prometheus(config.prometheus_registry())
		.build(),
	);

	let (grandpa_block_import, grandpa_link) = sc_consensus_grandpa::block_import(
		client.clone(),
		GRANDPA_JUSTIFICATION_PERIOD,
		&client,
		select_chain.clone(),
		telemetry.as_ref().map(|x| x.handle()),
	)?;

	let import_queue = if dev_seal {
		sc_consensus_manual_seal::import_queue(
			Box::new(client.clone()),
			&task_manager.spawn_essential_handle(),
			config.prometheus_registry(),
		)
	} else {
		let slot_duration = sc_consensus_aura::slot_duration::<AuraId, _, _>(&*client)?;
		sc_consensus_aura::import_queue::<AuraPair, _, _, _, _, _>(ImportQueueParams {
			block_import: grandpa_block_import.clone(),
			justification_import: Some(Box::new(grandpa_block_import.clone())),
			client: client.clone(),
			create_inherent_data_providers: move |_, ()| async move {
				Ok(aura_inherent_data(slot_duration))
			},
			spawner: &task_manager.spawn_essential_handle(),
			registry: config.prometheus_registry(),
			check_for_equivocation: Default::default(),
			telemetry: telemetry.as_ref().map(|x| x.handle()),
			compatibility_mode: Default::default(),
		})?
	};

	Ok(sc_service::PartialComponents {
		client,
		backend,
		task_manager,
		import_queue,
		keystore_container,
		select_chain,
		transaction_pool,
		other: (grandpa_block_import, grandpa_link, telemetry),
	})
}

/// Builds and starts a full node (an authority when it holds the keys), or with `dev_seal` a
/// development node that seals its own blocks.
pub fn new_full<
	N: sc_network::NetworkBackend<Block, <Block as sp_runtime::traits::Block>::Hash>,
>(
	config: Configuration,
	dev_seal: Option<DevSeal>,
) -> Result<TaskManager, ServiceError> {
	let sc_service::PartialComponents {
		client,
		backend,
		mut task_manager,
		import_queue,
		keystore_container,
		select_chain,
		transaction_pool,
		other: (block_import, grandpa_link, mut telemetry),
	} = new_partial(&config, dev_seal.is_some())?;

	let mut net_config = sc_network::config::FullNetworkConfiguration::<
		Block,
		<Block as sp_runtime::traits::Block>::Hash,
		N,
	>::new(&config.network, config.prometheus_registry().cloned());
	let metrics = N::register_notification_metrics(config.prometheus_registry());

	let peer_store_handle = net_config.peer_store_handle();
	let genesis_hash = client.chain_info().genesis_hash;
	let grandpa_protocol_name =
		sc_consensus_grandpa::protocol_standard_name(&genesis_hash, &config.chain_spec);
	let (grandpa_protocol_config, grandpa_notification_service) =
		sc_consensus_grandpa::grandpa_peers_set_config::<_, N>(
			grandpa_protocol_name.clone(),
			metrics.clone(),
			peer_store_handle,
		);
	net_config.add_notification_protocol(grandpa_protocol_config);

	let warp_sync = Arc::new(sc_consensus_grandpa::warp_proof::NetworkProvider::new(
		backend.clone(),
		grandpa_link.shared_authority_set().clone(),
		Vec::default(),
	));

	let (network, system_rpc_tx, tx_handler_controller, sync_service, _bitswap) =
		sc_service::build_network(sc_service::BuildNetworkParams {
			config: &config,
			net_config,
			client: client.clone(),
			transaction_pool: transaction_pool.clone(),
			spawn_handle: task_manager.spawn_handle(),
			spawn_essential_handle: task_manager.spawn_essential_handle(),
			import_queue,
			block_announce_validator_builder: None,
			warp_sync_config: Some(WarpSyncConfig::WithProvider(warp_sync)),
			block_relay: None,
			metrics,
			gap_sync_body_policy: None,
		})?;

	let role = config.role;
	let force_authoring = config.force_authoring;
	let name = config.network.node_name.clone();
	let enable_grandpa = !config.disable_grandpa;
	let prometheus_registry = config.prometheus_registry().cloned();

	let rpc_extensions_builder = {
		let client = client.clone();
		let pool = transaction_pool.clone();
		Box::new(move |_| {
			let deps = crate::rpc::FullDeps { client: client.clone(), pool: pool.clone() };
			crate::rpc::create_full(deps).map_err(Into::into)
		})
	};

	sc_service::spawn_tasks(sc_service::SpawnTasksParams {
		network: network.clone(),
		client: client.clone(),
		keystore: keystore_container.keystore(),
		task_manager: &mut task_manager,
		transaction_pool: transaction_pool.clone(),
		rpc_builder: rpc_extensions_builder,
		backend: backend.clone(),
		system_rpc_tx,
		tx_handler_controller,
		sync_service: sync_service.clone(),
		config,
		telemetry: telemetry.as_mut(),
		tracing_execute_block: None,
	})?;

	// Whichever way blocks are made (development sealing or Aura), they are proposed alike.
	let proposer_factory = sc_basic_authorship::ProposerFactory::new(
		task_manager.spawn_handle(),
		client.clone(),
		transaction_pool.clone(),
		prometheus_registry.as_ref(),
		telemetry.as_ref().map(|x| x.handle()),
	);

	if let Some(seal) = dev_seal {
		start_dev_seal(
			&task_manager,
			client,
			transaction_pool,
			select_chain,
			proposer_factory,
			seal,
		)?;
		return Ok(task_manager);
	}

	if role.is_authority() {
		let slot_duration = sc_consensus_aura::slot_duration::<AuraId, _, _>(&*client)?;
		let aura = sc_consensus_aura::start_aura::<AuraPair, _, _, _, _, _, _, _, _, _, _>(
			StartAuraParams {
				slot_duration,
				client,
				select_chain,
				block_import,
				proposer_factory,
				create_inherent_data_providers: move |_, ()| async move {
					Ok(aura_inherent_data(slot_duration))
				},
				force_authoring,
				backoff_authoring_blocks: Option::<()>::None,
				keystore: keystore_container.keystore(),
				sync_oracle: sync_service.clone(),
				justification_sync_link: sync_service.clone(),
				block_proposal_slot_portion: SlotProportion::new(2f32 / 3f32),
				max_block_proposal_slot_portion: None,
				telemetry: telemetry.as_ref().map(|x| x.handle()),
				compatibility_mode: Default::default(),
			},
		)?;
		// Authoring is essential: if it fails, the node goes down with it.
		task_manager.spawn_essential_handle().spawn_blocking("aura", Some("block-authoring"), aura);
	}

	if enable_grandpa {
		// Only an authority needs keys to vote; everyone else follows finality.
		let keystore = role.is_authority().then(|| keystore_container.keystore());
		let grandpa_config = sc_consensus_grandpa::Config {
			gossip_duration: Duration::from_millis(333),
			justification_generation_period: GRANDPA_JUSTIFICATION_PERIOD,
			name: Some(name),
			observer_enabled: false,
			keystore,
			local_role: role,
			telemetry: telemetry.as_ref().map(|x| x.handle()),
			protocol_name: grandpa_protocol_name,
		};
		let grandpa_params = sc_consensus_grandpa::GrandpaParams {
			config: grandpa_config,
			link: grandpa_link,
			network,
			sync: Arc::new(sync_service),
			notification_service: grandpa_notification_service,
			voting_rule: sc_consensus_grandpa::VotingRulesBuilder::default().build(),
			prometheus_registry,
			shared_voter_state: sc_consensus_grandpa::SharedVoterState::empty(),
			telemetry: telemetry.as_ref().map(|x| x.handle()),
			offchain_tx_pool_factory: OffchainTransactionPoolFactory::new(transaction_pool),
		};
		task_manager.spawn_essential_handle().spawn_blocking(
			"grandpa-voter",
			None,
			sc_consensus_grandpa::run_grandpa_voter(grandpa_params)?,
		);
	}

	Ok(task_manager)
}

/// Seals a block every `seal.interval` on the best block, finalized on import. Each block carries
/// the Aura pre-digest of its slot, and its timestamp is the start of that slot: the slot of the
/// wall clock, or the parent's slot plus one when blocks come faster than slots. So the runtime's
/// checks hold as under Aura (the slot grows every block, the timestamp is the slot's), and the
/// chain's clock runs ahead of the wall clock by one slot (6 s) per block sealed early.
fn start_dev_seal(
	task_manager: &TaskManager,
	client: Arc<FullClient>,
	pool: Arc<TransactionPool>,
	select_chain: FullSelectChain,
	proposer_factory: sc_basic_authorship::ProposerFactory<TransactionPool, FullClient>,
	seal: DevSeal,
) -> Result<(), ServiceError> {
	use futures::{channel::mpsc, SinkExt};
	use sc_consensus_manual_seal::{
		consensus::aura::AuraConsensusDataProvider, EngineCommand, ManualSealParams,
	};
	use sp_consensus_aura::{sr25519::AuthoritySignature, Slot};

	let slot_duration = sc_consensus_aura::slot_duration::<AuraId, _, _>(&*client)?;
	let (mut commands, engine_commands) = mpsc::channel(16);
	task_manager.spawn_handle().spawn("dev-seal-timer", Some("block-authoring"), async move {
		loop {
			futures_timer::Delay::new(seal.interval).await;
			let command = EngineCommand::SealNewBlock {
				create_empty: true,
				finalize: true,
				parent_hash: None,
				sender: None,
			};
			if commands.send(command).await.is_err() {
				break;
			}
		}
	});

	let headers = client.clone();
	let create_inherent_data_providers = move |parent, ()| {
		let headers = headers.clone();
		async move {
			let header = headers
				.header(parent)?
				.ok_or_else(|| format!("dev seal: no header for the parent {parent}"))?;
			let parent_slot =
				sc_consensus_aura::find_pre_digest::<Block, AuthoritySignature>(&header)
					.map_err(|e| format!("dev seal: the parent has no Aura slot: {e}"))?;
			let now = Slot::from_timestamp(sp_timestamp::Timestamp::current(), slot_duration);
			let slot = now.max(parent_slot + 1);
			let timestamp = slot
				.timestamp(slot_duration)
				.ok_or_else(|| format!("dev seal: slot {slot:?} has no timestamp"))?;
			Ok((
				sp_timestamp::InherentDataProvider::new(timestamp),
				sp_consensus_aura::inherents::InherentDataProvider::new(slot),
			))
		}
	};

	let authorship = sc_consensus_manual_seal::run_manual_seal(ManualSealParams {
		block_import: client.clone(),
		env: proposer_factory,
		client: client.clone(),
		pool,
		commands_stream: Box::pin(engine_commands),
		select_chain,
		consensus_data_provider: Some(Box::new(AuraConsensusDataProvider::new(client))),
		create_inherent_data_providers,
	});
	// Sealing is essential: if it stops, the node goes down with it.
	task_manager.spawn_essential_handle().spawn_blocking(
		"dev-seal",
		Some("block-authoring"),
		authorship,
	);
	Ok(())
}
