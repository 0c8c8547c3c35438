pub mod nats_server;
