//! Outgoing webhooks, built on PostgreSQL and Redis without an external webhook service:
//! Standard Webhooks signing (`sign`), the Svix retry schedule (`schedule`), timeseries
//! chunking (`chunk`) and which endpoints receive an event (`fanout`). The sender that uses
//! them runs in the worker.

mod chunk;
mod deliver;
pub mod dispatch;
mod fanout;
pub mod guard;
pub mod schedule;
pub mod sender;
pub mod sign;
