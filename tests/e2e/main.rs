//! End-to-end tests: the real service against real PostgreSQL/TimescaleDB and Redis.

// A test binary has no public surface: `pub` here only shares helpers between its modules.
#![allow(unreachable_pub)]

mod fixtures;
mod util;

mod access;
mod api_keys;
mod audit;
mod auth;
mod backups;
mod binary;
mod catalogues;
mod clients;
mod connect_links;
mod connect_page;
mod events;
mod exports;
mod faults;
mod guide;
mod health_scores;
mod import;
mod invitation_codes;
mod jobs;
mod lifecycle;
mod mcp;
mod oauth;
mod object_store_cluster;
mod own_postgres;
mod portal;
mod processes;
mod replicas;
mod sdk_sync;
mod sdk_tokens;
mod sealing;
mod secrets;
mod summaries;
mod team;
mod timeseries;
mod users;
mod vendor_nights;
mod vendor_notifications;
mod vendor_pulls;
mod vendors;
mod webhook_delivery;
mod webhook_dispatch;
mod webhooks;
