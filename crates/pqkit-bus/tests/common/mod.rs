pub mod agents;
pub mod nats_server;
