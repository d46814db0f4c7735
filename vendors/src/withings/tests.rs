//! The mapping against the examples of Withings' API reference (`docs/vendors/withings.md`
//! §1–3), the expected rows worked out by hand.

use ingest::{Normalised, Stage};
use serde_json::json;

use super::*;
use crate::normal::{at, values};

fn normalised() -> Normalised {
    Normalised { provider: "withings", ..Normalised::default() }
}

fn ok(body: Value) -> Value {
    json!({"status": 0, "body": body})
}

#[test]
fn token_answers_are_unwrapped_and_refusals_told_apart() {
    let answer = json!({"status": 0, "body": {"userid": 363, "access_token": "a075f8c1",
        "refresh_token": "f631236f", "expires_in": 10800, "scope": "user.info,user.metrics",
        "csrf_token": "PACn", "token_type": "Bearer"}});
    let body = token_envelope(&answer).unwrap_or_default();
    assert_eq!(body["access_token"], "a075f8c1");
    assert_eq!(Withings.token_user_id(&body).as_deref(), Some("363"));
    assert_eq!(Withings.token_user_id(&json!({"userid": "12345678"})).as_deref(), Some("12345678"));
    assert_eq!(
        token_envelope(&json!({"status": 503, "error": "Invalid Params"})),
        Err("invalid_grant")
    );
    assert_eq!(token_envelope(&json!({"status": 401})), Err("invalid_grant"));
    assert_eq!(token_envelope(&json!({"status": 601})), Err("temporarily_unavailable"));
}

#[test]
fn measures_are_value_times_ten_to_the_unit_at_the_zones_offset() {
    let mut out = normalised();
    let page = ok(
        json!({"updatetime": "1594257300", "timezone": "Europe/Paris", "more": 1, "offset": 50,
        "measuregrps": [
            {"grpid": 12, "attrib": 0, "date": 1594245600, "category": 1, "model": "Body Cardio",
             "measures": [{"value": 65750, "type": 1, "unit": -3}, {"value": 180, "type": 6, "unit": -1},
                          {"value": 5420, "type": 76, "unit": -2}, {"value": 178, "type": 4, "unit": -2}]},
            {"grpid": 13, "attrib": 0, "date": 1594257200, "category": 1,
             "measures": [{"value": 120, "type": 10, "unit": 0}, {"value": 80, "type": 9, "unit": 0},
                          {"value": 61, "type": 11, "unit": 0}]},
            {"grpid": 14, "attrib": 1, "date": 1594257200, "category": 1,
             "measures": [{"value": 99000, "type": 1, "unit": -3}]}]}),
    );
    Withings.map_page(MEASURES, &page, &mut out);
    let (t1, t2) = (at("2020-07-08T22:00:00Z"), at("2020-07-09T01:13:20Z"));
    assert_eq!(
        values(&out, id("weight")),
        [(t1, 65.75, Some(120))],
        "the ambiguous user's is left out"
    );
    assert_eq!(values(&out, id("body_fat_percentage")), [(t1, 18.0, Some(120))]);
    assert_eq!(values(&out, id("height")), [(t1, 178.0, Some(120))]);
    assert_eq!(values(&out, id("blood_pressure_systolic")), [(t2, 120.0, Some(120))]);
    assert_eq!(values(&out, id("blood_pressure_diastolic")), [(t2, 80.0, Some(120))]);
    assert_eq!(values(&out, HR), [(t2, 61.0, Some(120))]);
    assert_eq!(out.samples.len(), 6, "muscle mass (76) is not kept");
    assert_eq!(Withings.next_page(&page, None, crate::normal::any_window()).as_deref(), Some("50"));
    assert_eq!(
        Withings.next_page(
            &ok(json!({"more": false, "offset": 0})),
            None,
            crate::normal::any_window()
        ),
        None
    );
}

#[test]
fn days_workouts_sleep_and_intraday() {
    let mut out = normalised();
    let days = ok(json!({"more": false, "offset": 0, "activities": [{"date": "2020-06-24",
        "timezone": "Europe/Paris", "deviceid": "8923", "brand": 1, "is_tracker": true, "steps": 6200,
        "distance": 3000, "elevation": 100, "soft": 800, "calories": 1200, "totalcalories": 3500}]}));
    Withings.map_page(ACTIVITY, &days, &mut out);
    let noon = at("2020-06-24T10:00:00Z");
    assert_eq!(values(&out, STEPS), [(noon, 6200.0, Some(120))]);
    assert_eq!(values(&out, WALKED), [(noon, 3000.0, Some(120))]);
    assert_eq!(values(&out, FLOORS), [(noon, 100.0, Some(120))]);
    assert_eq!(values(&out, ENERGY), [(noon, 1200.0, Some(120))]);
    assert_eq!(values(&out, TOTAL_ENERGY), [(noon, 3500.0, Some(120))]);

    let workouts = ok(json!({"more": false, "offset": 0, "series": [{"id": 12345, "category": 2,
        "timezone": "Europe/Paris", "model": 59, "attrib": 0, "startdate": 1594245600, "enddate": 1594257200,
        "date": "2020-07-09", "data": {"calories": 350, "intensity": 0, "hr_average": 145, "hr_min": 98,
        "hr_max": 172, "pause_duration": 600, "spo2_average": null, "steps": 9800, "distance": 10230, "elevation": 12}}]}));
    Withings.map_page(WORKOUTS, &workouts, &mut out);
    let w = &out.workouts[0].row;
    assert_eq!(
        (w.figures.start_time, w.figures.end_time),
        (at("2020-07-08T22:00:00Z"), at("2020-07-09T01:13:20Z"))
    );
    // 11,600 s between start and end, 600 of them paused.
    assert_eq!(
        (w.figures.duration_seconds, w.figures.zone_offset, w.figures.kind.as_deref()),
        (11_000, Some(120), Some("running"))
    );
    assert_eq!(
        (w.figures.calories_kcal, w.figures.distance_meters, w.figures.steps),
        (Some(350.0), Some(10230.0), Some(9800))
    );
    assert_eq!(
        (w.figures.avg_heart_rate_bpm, w.figures.min_heart_rate_bpm, w.figures.max_heart_rate_bpm),
        (Some(145.0), Some(98.0), Some(172.0))
    );

    // Sleep stages carry no zone: read at the latest offset seen (Paris, +02:00).
    let night = ok(json!({"model": 32, "series": [
        {"startdate": 1594159200, "enddate": 1594160100, "state": 1, "model": "Aura Sensor V2",
         "hr": {"1594159200": 54, "1594159260": 53}, "rr": {"1594159200": 14}, "rmssd": {"1594159200": 41}},
        {"startdate": 1594160100, "enddate": 1594161000, "state": 2},
        {"startdate": 1594161000, "enddate": 1594161900, "state": 15}]}));
    Withings.map_page(SLEEP, &night, &mut out);
    let s = &out.sleep[0];
    let spans: Vec<_> = s.intervals.iter().map(|i| (i.stage, i.start, i.end)).collect();
    assert_eq!(
        spans,
        [
            (Stage::Light, at("2020-07-07T22:00:00Z"), at("2020-07-07T22:15:00Z")),
            (Stage::Deep, at("2020-07-07T22:15:00Z"), at("2020-07-07T22:30:00Z")),
        ],
        "out of bed (15) is no sleep"
    );
    assert_eq!(s.zone_offset, Some(120));
    let hr = values(&out, HR);
    assert_eq!(
        hr,
        [
            (at("2020-07-07T22:00:00Z"), 54.0, Some(120)),
            (at("2020-07-07T22:01:00Z"), 53.0, Some(120))
        ]
    );
    assert_eq!(values(&out, BREATHING), [(at("2020-07-07T22:00:00Z"), 14.0, Some(120))]);
    assert_eq!(values(&out, HRV_RMSSD), [(at("2020-07-07T22:00:00Z"), 41.0, Some(120))]);

    let intraday = ok(json!({"series": {
        "1594245600": {"deviceid": "8923", "model": "ScanWatch", "heart_rate": 62, "steps": 0, "duration": 60},
        "1594245660": {"deviceid": "8923", "model": "ScanWatch", "heart_rate": 65, "spo2_auto": 97, "rmssd": 38}}}));
    Withings.map_page(INTRADAY, &intraday, &mut out);
    assert_eq!(values(&out, HR).len(), 4);
    assert_eq!(values(&out, OXYGEN), [(at("2020-07-08T22:01:00Z"), 97.0, Some(120))]);
    assert_eq!(out.report.dropped_count(), 0);
}

#[test]
fn errors_inside_pages_notifications_and_signatures() {
    assert_eq!(Withings.page_error(&ok(json!({}))), None);
    assert_eq!(
        Withings.page_error(&json!({"status": 601, "error": "Too many request"})),
        Some(PageError::RateLimited(60))
    );
    assert_eq!(Withings.page_error(&json!({"status": 401})), Some(PageError::TokenRefused));
    assert!(matches!(Withings.page_error(&json!({"status": 522})), Some(PageError::Failed(_))));

    let form = b"userid=12345&appli=1&startdate=1530576000&enddate=1530698753";
    let ends = Endpoints::default();
    assert!(Withings.webhook_verified(&ends, &|_| None, form));
    assert!(!Withings.webhook_verified(&ends, &|_| None, b"{\"userid\":1}"));
    let notice = Withings.webhook_body(form).unwrap_or_default();
    assert_eq!(
        Withings.webhook_notices(&notice),
        [Notice::Pull("12345".into(), (at("2018-07-02T23:00:00Z"), at("2018-07-04T11:05:53Z")))]
    );
    let unlink = Withings.webhook_body(b"userid=12345&appli=46&action=unlink").unwrap_or_default();
    assert_eq!(Withings.webhook_notices(&unlink), [Notice::Deregistered("12345".into())]);
    let bed = Withings.webhook_body(b"userid=12345&appli=50&date=1530576000").unwrap_or_default();
    assert!(Withings.webhook_notices(&bed).is_empty());
    assert_eq!(Withings.webhook_challenge(&ends, &|_| None), Handshake::Status(200));
    // hex(HMAC-SHA256("secret", "getnonce,app,1594245600")).
    assert_eq!(
        sign("secret", &["getnonce", "app", "1594245600"]),
        "20d9ba3bea5960207782a956a99e8e549d1cb84feecef5a2c32d8d03e110900c"
    );
}

/// Records read as leniently as `.get` read them: numbers as numeric strings, a field of another
/// type as none (never the record lost); a record that does not read is dropped alone; an
/// unknown collection adds nothing but the zone its page names.
#[test]
fn records_read_leniently_one_by_one() {
    let mut out = normalised();
    let page = ok(json!({"timezone": "Europe/Paris", "measuregrps": [
        {"attrib": "1", "date": "1594245600", "measures": [{"value": 65750, "type": 1, "unit": -3},
            {"value": 65.75, "type": 1, "unit": 0}, {"value": "180", "type": 6, "unit": -1}, "junk"]},
        {"date": 1594245600, "measures": {}}, {"date": true, "measures": []}]}));
    Withings.map_page(MEASURES, &page, &mut out);
    assert_eq!(values(&out, id("weight")), [(at("2020-07-08T22:00:00Z"), 65.75, Some(120))]);
    assert_eq!(out.samples.len(), 1, "a value or a type that is no whole number is none");
    assert_eq!(out.report.dropped_count(), 2, "measures not a list, a date not a number");

    let mut out = normalised();
    let workouts = ok(json!({"series": [{"id": "w-1", "category": "2", "timezone": 5,
        "startdate": "1594245600", "enddate": 1594257200, "data": [{"calories": 350}]},
        {"id": null, "startdate": 1594245600, "enddate": 1594257200, "data": {"calories": "350", "steps": "x"}}]}));
    Withings.map_page(WORKOUTS, &workouts, &mut out);
    let (w, v) = (&out.workouts[0].row, &out.workouts[1].row);
    assert_eq!(
        (w.external_id.as_deref(), w.figures.kind.as_deref()),
        (Some("w-1"), Some("generic"))
    );
    assert_eq!((w.figures.zone_offset, w.figures.calories_kcal), (None, None));
    assert_eq!((v.external_id.as_deref(), v.figures.calories_kcal), (Some("null"), Some(350.0)));
    assert_eq!(v.figures.steps, None);

    let mut out = normalised();
    let sleep = ok(json!({"series": [
        {"startdate": "1594159200", "enddate": 1594160100, "state": 1, "hr": {"1594159200": "54", "x": 50, "1594159260": null},
         "rr": [14], "rmssd": "41"}, {"startdate": 1594160100, "enddate": 1594161000, "state": 2.0}, 7]}));
    Withings.map_page(SLEEP, &sleep, &mut out);
    assert_eq!(out.sleep.len(), 1);
    assert_eq!(out.sleep[0].intervals.len(), 1, "a state that is no whole number is no stage");
    assert_eq!(values(&out, HR), [(at("2020-07-07T22:00:00Z"), 54.0, Some(0))]);
    assert!(values(&out, BREATHING).is_empty() && values(&out, HRV_RMSSD).is_empty());

    let mut out = normalised();
    let intraday = ok(json!({"series": {"1594245600": {"heart_rate": "62"}, "1594245660": 5,
        "1594245720": {"heart_rate": [1], "spo2_auto": 97}}}));
    Withings.map_page(INTRADAY, &intraday, &mut out);
    assert_eq!(values(&out, HR).len(), 1);
    assert_eq!(values(&out, OXYGEN).len(), 1);
    assert_eq!(out.report.dropped_count(), 0);

    let mut out = normalised();
    Withings.map_page("getother", &page, &mut out);
    assert!(out.samples.is_empty() && out.report.dropped_count() == 0);
    assert_eq!(out.zone.as_deref(), Some("Europe/Paris"));
    let window = crate::normal::any_window();
    let url = Withings.page_url(INFO.api_url, "getother", window, None).map(|u| u.to_string());
    assert_eq!(
        url.as_deref(),
        Ok(
            "https://wbsapi.withings.net/v2/measure?action=getother&data_fields=heart_rate%2Cspo2_auto&startdate=1773014400&enddate=1773100800"
        )
    );
    assert_eq!(Withings.window_step("getother"), None);
    assert_eq!(Withings.window_step(SLEEP), Some(Duration::days(1)));
}
