//! The `wearhouse` service: configuration and start-up of its parts. The binary (`main.rs`)
//! is a thin CLI over this; the end-to-end tests start the same parts.

pub mod app;
pub mod config;
pub mod import;
pub mod reprocess;
pub mod resubscribe;
pub mod seal;
