//! Outbox → messages: each outbox event becomes one message (a timeseries event: one per
//! chunk of its samples), and each message a pending delivery to every endpoint that receives
//! it, in one transaction with marking the event dispatched. A message's `event_id` (outbox id
//! and chunk) makes a replay store nothing twice.

use schema::Db;
use schema::catalogue::series_types;
use schema::ids::{EndpointId, MessageId};
use schema::outbox::Payload;
use schema::webhook_endpoints::Endpoint;
use schema::webhook_messages::{self as messages, EventSample, OutboxEvent};
use serde_json::{Map, Value, json};

use crate::chunk::{MAX_BODY_BYTES, MAX_SAMPLES, timeseries_bodies};
use crate::fanout::{Target, receives};

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dispatched {
    pub events: usize,
    pub messages: usize,
    pub deliveries: usize,
}

fn sample_json(s: &EventSample, slug: &str, unit: &str, additive: bool) -> Value {
    json!({
        "timestamp": schema::zone::local_time(s.ts, s.zone_offset),
        "zone_offset": s.zone_offset.map(schema::zone::format),
        "type": slug,
        "value": s.value,
        "unit": unit,
        "source": { "provider": s.provider, "device": s.device },
        // Levels (heart rate, SpO2) have no daily totals: always null.
        "is_daily_total": if additive { json!(s.is_daily_total.unwrap_or(false)) } else { Value::Null },
    })
}

/// The bodies of one outbox event; none for an event that cannot be read (logged, and marked
/// dispatched with the rest, so that it does not hold up the outbox).
async fn bodies(
    client: &impl deadpool_postgres::GenericClient,
    e: &OutboxEvent,
) -> schema::Result<Vec<Value>> {
    let t = match Payload::read(e.payload.clone()) {
        Ok(Payload::Session { data }) => {
            return Ok(vec![json!({ "type": e.event_type, "data": data })]);
        }
        Ok(Payload::Timeseries(t)) => t,
        Err(err) => {
            tracing::error!(outbox_id = e.id, error = %err, "unreadable outbox event; not sent");
            return Ok(Vec::new());
        }
    };
    let Some(series) = series_types::by_slug(&t.series_type) else {
        tracing::error!(
            outbox_id = e.id,
            series = t.series_type,
            "outbox event of an unknown series; not sent"
        );
        return Ok(Vec::new());
    };
    let rows =
        messages::event_samples(client, e.user_id, series.id, t.batch_id, t.start_time, t.end_time)
            .await?;
    let additive = series.is_additive();
    let samples: Vec<Value> =
        rows.iter().map(|s| sample_json(s, series.slug, series.unit, additive)).collect();
    // The event's data: the reference without the batch it points into.
    let mut data = Map::new();
    data.insert("user_id".into(), json!(t.user_id));
    data.insert("provider".into(), json!(t.provider));
    data.insert("series_type".into(), json!(t.series_type));
    data.insert("sample_count".into(), json!(t.sample_count));
    data.insert("start_time".into(), json!(t.start_time));
    data.insert("end_time".into(), json!(t.end_time));
    Ok(timeseries_bodies(&e.event_type, &data, &samples, MAX_SAMPLES, MAX_BODY_BYTES))
}

/// Turns up to `limit` outbox events into messages and deliveries.
pub async fn dispatch_once(db: &Db, limit: i64) -> schema::Result<Dispatched> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let events = messages::claim_outbox(&tx, limit).await?;
    if events.is_empty() {
        // The sender asks several times a second: an idle pass stops here.
        return Ok(Dispatched::default());
    }
    let endpoints: Vec<Endpoint> = schema::webhook_endpoints::list(db).await?;
    let mut done = Dispatched { events: events.len(), ..Dispatched::default() };
    for e in &events {
        let targets: Vec<EndpointId> = endpoints
            .iter()
            .filter(|ep| {
                let t = Target {
                    filter_types: ep.filter_types.as_deref(),
                    user_id: ep.user_id,
                    disabled: ep.disabled_at.is_some(),
                };
                receives(&t, &e.event_type, Some(e.user_id))
            })
            .map(|ep| EndpointId(ep.id.clone()))
            .collect();
        for (k, body) in bodies(&tx, e).await?.iter().enumerate() {
            let event_id = format!("{}:{k}", e.id);
            let stored =
                messages::insert_message(&tx, &e.event_type, &event_id, Some(e.user_id), body)
                    .await?;
            if let Some(message_id) = stored.map(MessageId) {
                done.messages += 1;
                if !targets.is_empty() {
                    schema::webhook_deliveries::insert_pending(&tx, &message_id, &targets).await?;
                    done.deliveries += targets.len();
                }
            }
        }
    }
    let ids: Vec<i64> = events.iter().map(|e| e.id).collect();
    messages::mark_dispatched(&tx, &ids).await?;
    tx.commit().await?;
    Ok(done)
}
