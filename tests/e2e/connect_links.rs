//! Connect links (issue 32), their rules in `schema::connect_links`: a link is live until it
//! expires or is revoked, bound to the first browser that opens it (another browser finds it
//! used), listed newest first without its token, gone with its user, and purged once expired.

use chrono::Duration;
use serde_json::json;
use uuid::Uuid;

use schema::connect_links::{self, NewLink, Opened};

use crate::sealing::db;
use crate::util::{Mode, TestApp};

fn link<'a>(token: &'a str, user_id: schema::ids::UserId, minutes: i64) -> NewLink<'a> {
    NewLink {
        token,
        user_id,
        providers: Some(vec!["oura".into(), "whoop".into()]),
        redirect_uri: Some("https://app.example.com/done".into()),
        created_by: "api_key:test",
        lifetime: Duration::minutes(minutes),
    }
}

#[tokio::test]
async fn a_link_is_bound_to_the_first_browser_until_it_expires_or_is_revoked() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let user: schema::ids::UserId = app.user(&key, json!({})).await.parse().expect("user id");
    let db = db(&app).await;

    let made = connect_links::create(&db, &link("tok-1", user, 30)).await.expect("create");
    assert_eq!(made.user_id, user);
    assert_eq!(made.providers.as_deref(), Some(&["oura".to_string(), "whoop".to_string()][..]));
    assert!(made.opened_at.is_none());
    let minutes = (made.expires_at - made.created_at).num_minutes();
    assert_eq!(minutes, 30);
    // The token is stored hashed.
    let clear = app.count("select count(*) from connect_links where token_hash = 'tok-1'::bytea");
    assert_eq!(clear.await, 0);

    // The first browser binds it; it may come back; a second browser finds it used.
    let first = connect_links::open(&db, "tok-1", "browser-a").await.expect("open");
    assert!(matches!(first, Opened::Live(ref l) if l.id == made.id && l.opened_at.is_some()));
    let again = connect_links::open(&db, "tok-1", "browser-a").await.expect("again");
    assert!(matches!(again, Opened::Live(_)), "{again:?}");
    let other = connect_links::open(&db, "tok-1", "browser-b").await.expect("other");
    assert!(matches!(other, Opened::Used), "{other:?}");
    let unknown = connect_links::open(&db, "tok-nope", "browser-a").await.expect("unknown");
    assert!(matches!(unknown, Opened::Unknown), "{unknown:?}");

    // Revoked: even its own browser is told so; revoking twice is nothing.
    assert!(connect_links::revoke(&db, user, made.id).await.expect("revoke"));
    assert!(!connect_links::revoke(&db, user, made.id).await.expect("revoke again"));
    assert!(
        !connect_links::revoke(&db, schema::ids::UserId(Uuid::new_v4()), made.id)
            .await
            .expect("not theirs")
    );
    let revoked = connect_links::open(&db, "tok-1", "browser-a").await.expect("revoked");
    assert!(matches!(revoked, Opened::Revoked), "{revoked:?}");

    // Expired: told so, bound or not.
    let late = connect_links::create(&db, &link("tok-2", user, 30)).await.expect("create");
    let client = app.db().await;
    client
        .execute(
            "update connect_links set expires_at = now() - interval '1 second' where id = $1",
            &[&late.id],
        )
        .await
        .expect("expire");
    let expired = connect_links::open(&db, "tok-2", "browser-a").await.expect("expired");
    assert!(matches!(expired, Opened::Expired), "{expired:?}");

    // Listed newest first, then purged once expired past the retention, then gone with the user.
    let listed = connect_links::list(&db, user, 10).await.expect("list");
    assert_eq!(listed.iter().map(|l| l.id).collect::<Vec<_>>(), vec![late.id, made.id]);
    client
        .execute(
            "update connect_links set expires_at = now() - interval '8 days' where id = $1",
            &[&late.id],
        )
        .await
        .expect("age");
    let purged =
        schema::retention::delete_expired(&db, schema::retention::Expiring::ConnectLinks, 7, 100)
            .await
            .expect("purge");
    assert_eq!(purged, 1);
    let _third = connect_links::create(&db, &link("tok-3", user, 30)).await.expect("create");
    let admin = app.admin().await;
    let path = format!("/api/v1/users/{user}");
    let gone = app.call(reqwest::Method::DELETE, &path, &admin, None).await;
    assert!(gone.status < 300, "{}", gone.body);
    assert_eq!(app.count("select count(*) from connect_links").await, 0);
}
