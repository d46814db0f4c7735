//! `wearhouse resubscribe --provider <vendor>`: makes every active connection's notification
//! subscriptions again with the notification URL of now (after `<VENDOR>_WEBHOOK_TOKEN` is set
//! or changed, those made before point at a URL whose notifications are refused).

use anyhow::Context;

use crate::app;
use crate::config::Settings;

pub async fn run(settings: &Settings, provider: &str) -> anyhow::Result<()> {
    let vendor = vendors::by_slug(provider)
        .with_context(|| format!("no cloud vendor named '{provider}'"))?;
    let slug = vendor.provider().slug;
    let config = settings.vendors();
    let ends = config.endpoints(slug).with_context(|| {
        format!("{slug} is not configured (set its CLIENT_ID and CLIENT_SECRET)")
    })?;
    let keys = settings.master_keys()?;
    app::migrate(settings).await?;
    let db = app::connect_db(settings).await?;
    let http = vendors::oauth::http_client().context("the HTTP client for vendors")?;
    let redirect = vendors::callback_url(&settings.public_url, slug);
    let client = vendors::tokens::Client {
        db: &db,
        keys: &keys,
        http: &http,
        redirect: &redirect,
        events: settings.outgoing_webhooks_enabled,
    };
    let done = vendors::resubscribe::run(&client, vendor, ends, &settings.public_url)
        .await
        .context("resubscribing")?;
    for (user, why) in &done.failed {
        eprintln!("user {user}: {why}");
    }
    println!(
        "resubscribed {} {slug} connection(s) to {}; {} failed",
        done.done,
        vendors::webhook_url(&settings.public_url, vendor, ends)
            .split('?')
            .next()
            .unwrap_or_default(),
        done.failed.len()
    );
    anyhow::ensure!(done.failed.is_empty(), "some connections were not resubscribed");
    Ok(())
}
