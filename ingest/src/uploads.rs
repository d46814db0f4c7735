//! Uploaded exports, from the bucket to a queued import: the workflows behind the upload routes
//! (`api::routes::xml_import`) and the bucket's notifications (`api::routes::bucket_events`).
//! Processing is dispatched by the configured [`CompletionMode`] only, so a file is never
//! processed twice, and an object is queued as one import however often it is reported.

use schema::ids::ImportId;
use serde_json::Value;

use crate::jobs::JobQueue;
use crate::object_store::{Storage, StorageError, bare_etag};
use schema::Db;
use schema::ids::UserId;
use schema::imports::{ImportOrigin, NewImport};
use schema::uploads::{Upload, UploadStatus};

/// Which event dispatches the processing of an uploaded export. Only the configured one does,
/// so a file is never processed twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionMode {
    /// `multipart/complete` queues the import.
    Client,
    /// The bucket's object-created notification queues it.
    BucketEvent,
}

/// Why an upload could not be completed or queued. The messages are the API's.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("Completed parts do not match the parts stored for this multipart upload")]
    PartsMismatch,
    #[error("Unable to queue upload processing; the multipart upload remains incomplete")]
    QueueUnavailable,
    #[error(
        "The uploaded file is {size} bytes, not the {announced} announced when the upload was \
         created; it was discarded"
    )]
    SizeMismatch { size: i64, announced: i64 },
    #[error("Multipart upload not found")]
    NotFound,
    #[error("The uploaded object no longer exists")]
    ObjectGone,
    #[error("an import vanished while being queued")]
    Vanished,
    #[error("object storage: {0}")]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Db(#[from] schema::Error),
}

/// A part as the client says it stored it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Part {
    pub number: i32,
    pub etag: String,
}

/// How a completed multipart upload goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completed {
    /// Mode `client`: its import is queued (or was, by an earlier call).
    Queued(ImportId),
    /// Mode `bucket_event`: the bucket's notification queues it. `repeated`: an earlier call
    /// completed it.
    AwaitingEvent { repeated: bool },
}

/// An object the bucket reports created under a user's `raw/` prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CreatedObject {
    pub key: String,
    pub etag: String,
    pub size: Option<i64>,
    pub user: UserId,
}

/// What the upload workflows reach.
#[derive(Clone, Copy)]
pub struct Uploads<'a> {
    pub db: &'a Db,
    pub queue: &'a JobQueue,
    pub storage: &'a Storage,
    pub mode: CompletionMode,
}

impl Uploads<'_> {
    /// Queues an import of a stored object and announces it; the id of the import (an object
    /// already queued keeps its first import).
    pub async fn queue_import(
        &self,
        user: UserId,
        key: &str,
        etag: &str,
        size: Option<i64>,
        origin: ImportOrigin,
    ) -> Result<ImportId, UploadError> {
        let bucket = self.storage.bucket();
        let new = NewImport { user_id: user, bucket, key, etag: bare_etag(etag), size, origin };
        let id = match schema::imports::queue(self.db, &new).await? {
            Some(id) => id,
            None => schema::imports::find(self.db, bucket, key, bare_etag(etag))
                .await?
                .ok_or(UploadError::Vanished)?,
        };
        // The import is durable: if Redis fails here, the workers' sweeper announces it.
        if let Err(e) = self.queue.announce(&[id]).await {
            tracing::warn!(error = %e, import_id = %id, "could not announce an import; the sweeper will");
        }
        Ok(id)
    }

    /// Completes a multipart upload from the parts the client names, which must be the parts
    /// stored. In mode `client` the import is queued, and the upload completed only if it can
    /// be; a repeated call (the client did not see the first answer) answers the same again.
    pub async fn complete(
        &self,
        upload: &Upload,
        parts: &[Part],
    ) -> Result<Completed, UploadError> {
        let client_mode = self.mode == CompletionMode::Client;
        if upload.status == UploadStatus::Completed {
            return Ok(match client_mode {
                // With the import, queued now if a failure left it out.
                true => Completed::Queued(self.import_of_completed(upload).await?),
                false => Completed::AwaitingEvent { repeated: true },
            });
        }
        let key = &upload.object_key;
        match self.storage.list_parts(key, &upload.upload_id).await {
            Ok(stored) => {
                let mut given: Vec<(i32, &str)> =
                    parts.iter().map(|p| (p.number, bare_etag(&p.etag))).collect();
                given.sort();
                let matches = given.len() == stored.len()
                    && given.iter().zip(&stored).all(|(g, s)| g.0 == s.0 && g.1 == bare_etag(&s.1));
                if !matches {
                    return Err(UploadError::PartsMismatch);
                }
                if client_mode && !self.queue.ping().await {
                    return Err(UploadError::QueueUnavailable);
                }
                self.storage.complete(key, &upload.upload_id, &stored).await?;
            }
            // Completed in storage by an earlier call that stopped before recording it: go on
            // from the object (below), so the retry ends in the one import.
            Err(StorageError::NoSuchUpload) => {}
            Err(e) => return Err(e.into()),
        }
        let Some((etag, size)) = self.storage.head(key).await? else {
            return Err(UploadError::NotFound);
        };
        if size != upload.file_size {
            // Parts of other sizes than announced: the file is not the one `create` was told of.
            self.storage.delete(key).await?;
            schema::uploads::abort(self.db, upload.id).await?;
            return Err(UploadError::SizeMismatch { size, announced: upload.file_size });
        }
        if !client_mode {
            schema::uploads::complete(self.db, upload.id).await?;
            return Ok(Completed::AwaitingEvent { repeated: false });
        }
        // The import first, then the upload's state: a failure between leaves the upload open,
        // and the retry finds the import queued (one object, one import).
        let origin = ImportOrigin::Multipart;
        let id = self.queue_import(upload.user_id, key, &etag, Some(size), origin).await?;
        schema::uploads::complete(self.db, upload.id).await?;
        Ok(Completed::Queued(id))
    }

    /// The import of a completed upload's object, queued now if it is missing.
    async fn import_of_completed(&self, upload: &Upload) -> Result<ImportId, UploadError> {
        let bucket = self.storage.bucket();
        if let Some(id) = schema::imports::find_by_key(self.db, bucket, &upload.object_key).await? {
            return Ok(id);
        }
        let Some((etag, size)) = self.storage.head(&upload.object_key).await? else {
            return Err(UploadError::ObjectGone);
        };
        let (user, key) = (upload.user_id, &upload.object_key);
        self.queue_import(user, key, &etag, Some(size), ImportOrigin::Multipart).await
    }

    /// Queues an import of every object a bucket notification reports created for a user who
    /// exists, and announces them; the imports queued now (an object reported again keeps its
    /// first).
    pub async fn queue_reported(&self, event: &Value) -> Result<Vec<ImportId>, UploadError> {
        let mut queued = Vec::new();
        for object in created_objects(event, self.storage.bucket()) {
            if !schema::users::exists(self.db, object.user).await? {
                continue;
            }
            let new = NewImport {
                user_id: object.user,
                bucket: self.storage.bucket(),
                key: &object.key,
                etag: bare_etag(&object.etag),
                size: object.size,
                origin: ImportOrigin::BucketEvent,
            };
            if let Some(id) = schema::imports::queue(self.db, &new).await? {
                queued.push(id);
            }
        }
        if let Err(e) = self.queue.announce(&queued).await {
            tracing::warn!(error = %e, "could not announce imports; the sweeper will");
        }
        Ok(queued)
    }
}

/// Reads the S3 event notification records this service cares about: objects created in its
/// bucket under a user's `raw/` prefix.
pub(crate) fn created_objects(event: &Value, bucket: &str) -> Vec<CreatedObject> {
    let records = event.get("Records").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    records
        .iter()
        .filter(|r| {
            r.get("eventName").and_then(Value::as_str).is_some_and(|n| n.contains("ObjectCreated"))
        })
        .filter(|r| r.pointer("/s3/bucket/name").and_then(Value::as_str) == Some(bucket))
        .filter_map(|r| {
            let raw = r.pointer("/s3/object/key")?.as_str()?;
            // Keys in notifications are URL-encoded, with `+` for spaces.
            let key =
                url::form_urlencoded::parse(format!("k={raw}").as_bytes()).next()?.1.into_owned();
            let etag = r
                .pointer("/s3/object/eTag")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let size = r.pointer("/s3/object/size").and_then(Value::as_i64);
            let (user, rest) = key.split_once('/')?;
            let user = user.parse::<UserId>().ok().filter(|_| rest.starts_with("raw/"))?;
            Some(CreatedObject { key, etag, size, user })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_s3_notifications() {
        let user = uuid::Uuid::now_v7();
        let event = json!({"Records": [
            {"eventName": "s3:ObjectCreated:CompleteMultipartUpload", "s3": {"bucket": {"name": "b"},
             "object": {"key": format!("{user}/raw/abc-my+export.zip"), "size": 10, "eTag": "e1"}}},
            {"eventName": "s3:ObjectRemoved:Delete", "s3": {"bucket": {"name": "b"}, "object": {"key": format!("{user}/raw/x")}}},
            {"eventName": "ObjectCreated:Put", "s3": {"bucket": {"name": "other"}, "object": {"key": format!("{user}/raw/y")}}},
            {"eventName": "ObjectCreated:Put", "s3": {"bucket": {"name": "b"}, "object": {"key": "not-a-user/raw/z"}}},
        ]});
        let found = created_objects(&event, "b");
        let expected = CreatedObject {
            key: format!("{user}/raw/abc-my export.zip"),
            etag: "e1".into(),
            size: Some(10),
            user: UserId(user),
        };
        assert_eq!(found, vec![expected]);
    }
}
