//! Object storage (any S3-compatible server): presigned POST forms and part URLs for clients,
//! multipart bookkeeping, and streaming reads of uploaded exports.
//!
//! Presigned URLs are signed for `public_endpoint` (what browsers and phones reach), requests
//! of the service itself go to `endpoint` (what the server reaches); they differ in container
//! deployments. aws-sdk-s3 does every call and presigned URL except the POST form, whose policy
//! it cannot sign: that is AWS Signature V4 for POST, done here.

use std::time::Duration;

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

#[derive(Debug, Clone)]
pub struct StorageConfig {
    /// The S3 API the service calls; `None`: AWS.
    pub endpoint: Option<String>,
    /// The endpoint in presigned URLs; defaults to `endpoint`.
    pub public_endpoint: Option<String>,
    pub region: String,
    pub bucket: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    /// `https://host/bucket/key` rather than `https://bucket.host/key` (Garage, MinIO).
    pub force_path_style: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("the multipart upload does not exist")]
    NoSuchUpload,
    #[error("the object does not exist")]
    NoSuchKey,
    #[error("object storage: {0}")]
    Service(String),
}

fn service<E: std::fmt::Display>(e: E) -> StorageError {
    StorageError::Service(e.to_string())
}

fn classify<E, R>(e: aws_sdk_s3::error::SdkError<E, R>) -> StorageError
where
    E: aws_sdk_s3::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    match e.as_service_error().and_then(|s| s.code()) {
        Some("NoSuchUpload") => StorageError::NoSuchUpload,
        Some("NoSuchKey") | Some("NotFound") => StorageError::NoSuchKey,
        _ => StorageError::Service(format!("{}", aws_sdk_s3::error::DisplayErrorContext(&e))),
    }
}

/// A presigned POST form: send `fields` first, then the file as the field `file`.
#[derive(Debug, Clone)]
pub struct PresignedPost {
    pub url: String,
    pub fields: Vec<(String, String)>,
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage")
            .field("bucket", &self.config.bucket)
            .field("endpoint", &self.config.endpoint)
            .finish()
    }
}

#[derive(Clone)]
pub struct Storage {
    client: aws_sdk_s3::Client,
    presigner: aws_sdk_s3::Client,
    config: StorageConfig,
}

fn client(config: &StorageConfig, endpoint: Option<&str>) -> aws_sdk_s3::Client {
    let creds =
        Credentials::new(&config.access_key_id, &config.secret_access_key, None, None, "wearhouse");
    let mut b = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(config.region.clone()))
        .credentials_provider(creds)
        .force_path_style(config.force_path_style);
    if let Some(e) = endpoint {
        b = b.endpoint_url(e);
    }
    aws_sdk_s3::Client::from_conf(b.build())
}

impl Storage {
    pub fn new(config: StorageConfig) -> Storage {
        let public = config.public_endpoint.as_deref().or(config.endpoint.as_deref());
        Storage {
            client: client(&config, config.endpoint.as_deref()),
            presigner: client(&config, public),
            config,
        }
    }

    pub fn bucket(&self) -> &str {
        &self.config.bucket
    }

    /// A POST form that uploads one object at `key`, of at most `max_size` bytes, until
    /// `expires_in` from now (AWS Signature V4 for browser-based POST).
    pub fn presigned_post(&self, key: &str, max_size: u64, expires_in: Duration) -> PresignedPost {
        self.presigned_post_at(key, max_size, expires_in, Utc::now())
    }

    fn presigned_post_at(
        &self,
        key: &str,
        max_size: u64,
        expires_in: Duration,
        now: DateTime<Utc>,
    ) -> PresignedPost {
        let c = &self.config;
        let day = now.format("%Y%m%d").to_string();
        let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
        let credential = format!("{}/{day}/{}/s3/aws4_request", c.access_key_id, c.region);
        let expiration = (now + chrono::Duration::from_std(expires_in).unwrap_or_default())
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let policy = serde_json::json!({
            "expiration": expiration,
            "conditions": [
                {"bucket": c.bucket},
                ["eq", "$key", key],
                ["content-length-range", 1, max_size],
                {"x-amz-algorithm": "AWS4-HMAC-SHA256"},
                {"x-amz-credential": credential},
                {"x-amz-date": amz_date},
            ]
        });
        let policy = STANDARD.encode(policy.to_string());
        let mut k = hmac_sha256(format!("AWS4{}", c.secret_access_key).as_bytes(), day.as_bytes());
        for part in [c.region.as_bytes(), b"s3", b"aws4_request"] {
            k = hmac_sha256(&k, part);
        }
        let signature = hex::encode(hmac_sha256(&k, policy.as_bytes()));
        PresignedPost {
            url: self.bucket_url(),
            fields: vec![
                ("key".into(), key.into()),
                ("x-amz-algorithm".into(), "AWS4-HMAC-SHA256".into()),
                ("x-amz-credential".into(), credential),
                ("x-amz-date".into(), amz_date),
                ("policy".into(), policy),
                ("x-amz-signature".into(), signature),
            ],
        }
    }

    /// The origin (scheme, host, port) browsers upload to: what a page's content security
    /// policy must let it reach.
    pub fn public_origin(&self) -> Option<String> {
        let url = url::Url::parse(&self.bucket_url()).ok()?;
        Some(url.origin().ascii_serialization())
    }

    /// Where POST forms go: the bucket's URL at the public endpoint.
    fn bucket_url(&self) -> String {
        let c = &self.config;
        let endpoint = c.public_endpoint.as_deref().or(c.endpoint.as_deref());
        match endpoint {
            Some(e) if c.force_path_style => format!("{}/{}", e.trim_end_matches('/'), c.bucket),
            Some(e) => {
                let (scheme, host) = e.split_once("://").unwrap_or(("https", e));
                format!("{scheme}://{}.{}", c.bucket, host.trim_end_matches('/'))
            }
            None => format!("https://{}.s3.{}.amazonaws.com", c.bucket, c.region),
        }
    }

    pub async fn create_multipart(
        &self,
        key: &str,
        content_type: Option<&str>,
    ) -> Result<String, StorageError> {
        let out = self
            .client
            .create_multipart_upload()
            .bucket(&self.config.bucket)
            .key(key)
            .set_content_type(content_type.map(str::to_string))
            .send()
            .await
            .map_err(classify)?;
        out.upload_id.ok_or_else(|| StorageError::Service("no upload id in the answer".into()))
    }

    /// A presigned PUT URL for one part.
    pub async fn presign_part(
        &self,
        key: &str,
        upload_id: &str,
        part_number: i32,
        length: i64,
        expires_in: Duration,
    ) -> Result<String, StorageError> {
        let config = PresigningConfig::expires_in(expires_in).map_err(service)?;
        // The length is signed: the store refuses a part of any other size, so no client can
        // put more in the bucket than the upload announced.
        let req = self
            .presigner
            .upload_part()
            .bucket(&self.config.bucket)
            .key(key)
            .upload_id(upload_id)
            .part_number(part_number)
            .content_length(length)
            .presigned(config)
            .await
            .map_err(classify)?;
        Ok(req.uri().to_string())
    }

    /// The parts stored so far: `(part number, ETag)`, in order.
    pub async fn list_parts(
        &self,
        key: &str,
        upload_id: &str,
    ) -> Result<Vec<(i32, String)>, StorageError> {
        let mut parts = Vec::new();
        let mut marker: Option<String> = None;
        loop {
            let out = self
                .client
                .list_parts()
                .bucket(&self.config.bucket)
                .key(key)
                .upload_id(upload_id)
                .set_part_number_marker(marker.clone())
                .send()
                .await
                .map_err(classify)?;
            for p in out.parts() {
                if let (Some(n), Some(e)) = (p.part_number(), p.e_tag()) {
                    parts.push((n, e.to_string()));
                }
            }
            match (out.is_truncated(), out.next_part_number_marker()) {
                (Some(true), Some(m)) => marker = Some(m.to_string()),
                _ => break,
            }
        }
        parts.sort_by_key(|p| p.0);
        Ok(parts)
    }

    /// Completes an upload; returns the object's ETag.
    pub async fn complete(
        &self,
        key: &str,
        upload_id: &str,
        parts: &[(i32, String)],
    ) -> Result<String, StorageError> {
        let completed = CompletedMultipartUpload::builder()
            .set_parts(Some(
                parts
                    .iter()
                    .map(|(n, e)| CompletedPart::builder().part_number(*n).e_tag(e).build())
                    .collect(),
            ))
            .build();
        let out = self
            .client
            .complete_multipart_upload()
            .bucket(&self.config.bucket)
            .key(key)
            .upload_id(upload_id)
            .multipart_upload(completed)
            .send()
            .await
            .map_err(classify)?;
        Ok(out.e_tag.unwrap_or_default())
    }

    /// Stores one part of an upload this service writes itself (an export's archive); returns
    /// its ETag.
    pub async fn upload_part(
        &self,
        key: &str,
        upload_id: &str,
        part_number: i32,
        body: Vec<u8>,
    ) -> Result<String, StorageError> {
        let out = self
            .client
            .upload_part()
            .bucket(&self.config.bucket)
            .key(key)
            .upload_id(upload_id)
            .part_number(part_number)
            .body(ByteStream::from(body))
            .send()
            .await
            .map_err(classify)?;
        out.e_tag.ok_or_else(|| StorageError::Service("no ETag for a part".into()))
    }

    /// A presigned GET URL for an object, valid `expires_in`, that saves it as `filename`.
    pub async fn presigned_get(
        &self,
        key: &str,
        filename: &str,
        expires_in: Duration,
    ) -> Result<String, StorageError> {
        let config = PresigningConfig::expires_in(expires_in).map_err(service)?;
        let req = self
            .presigner
            .get_object()
            .bucket(&self.config.bucket)
            .key(key)
            .response_content_disposition(format!("attachment; filename=\"{filename}\""))
            .presigned(config)
            .await
            .map_err(classify)?;
        Ok(req.uri().to_string())
    }

    /// Aborts an upload; an upload already gone is no error.
    pub async fn abort(&self, key: &str, upload_id: &str) -> Result<(), StorageError> {
        match self
            .client
            .abort_multipart_upload()
            .bucket(&self.config.bucket)
            .key(key)
            .upload_id(upload_id)
            .send()
            .await
            .map_err(classify)
        {
            Ok(_) | Err(StorageError::NoSuchUpload) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Stores a small object whole; returns its ETag.
    pub async fn put(&self, key: &str, body: Vec<u8>) -> Result<String, StorageError> {
        let out = self
            .client
            .put_object()
            .bucket(&self.config.bucket)
            .key(key)
            .body(ByteStream::from(body))
            .send()
            .await
            .map_err(classify)?;
        Ok(out.e_tag.unwrap_or_default())
    }

    /// Streams an object: `(body, size)`.
    pub async fn get(&self, key: &str) -> Result<(ByteStream, Option<i64>), StorageError> {
        let out = self
            .client
            .get_object()
            .bucket(&self.config.bucket)
            .key(key)
            .send()
            .await
            .map_err(classify)?;
        Ok((out.body, out.content_length))
    }

    /// An object's ETag and size; `None` when there is no such object.
    pub async fn head(&self, key: &str) -> Result<Option<(String, i64)>, StorageError> {
        match self.client.head_object().bucket(&self.config.bucket).key(key).send().await {
            Ok(out) => Ok(Some((out.e_tag.unwrap_or_default(), out.content_length.unwrap_or(0)))),
            Err(e) => match classify(e) {
                StorageError::NoSuchKey => Ok(None),
                e => Err(e),
            },
        }
    }

    /// Deletes an object; one already gone is no error.
    pub async fn delete(&self, key: &str) -> Result<(), StorageError> {
        self.client
            .delete_object()
            .bucket(&self.config.bucket)
            .key(key)
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// The keys of the objects under `prefix`.
    pub async fn keys(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        let mut keys = Vec::new();
        let mut token = None;
        loop {
            let page = self
                .client
                .list_objects_v2()
                .bucket(&self.config.bucket)
                .prefix(prefix)
                .set_continuation_token(token)
                .send()
                .await
                .map_err(classify)?;
            keys.extend(page.contents().iter().filter_map(|o| o.key().map(str::to_string)));
            token = page.next_continuation_token().map(str::to_string);
            if token.is_none() {
                return Ok(keys);
            }
        }
    }

    /// The multipart uploads in progress under `prefix`: `(key, upload id)`.
    pub async fn uploads(&self, prefix: &str) -> Result<Vec<(String, String)>, StorageError> {
        let out = self
            .client
            .list_multipart_uploads()
            .bucket(&self.config.bucket)
            .prefix(prefix)
            .send()
            .await
            .map_err(classify)?;
        Ok(out
            .uploads()
            .iter()
            .filter_map(|u| Some((u.key()?.to_string(), u.upload_id()?.to_string())))
            .collect())
    }

    /// Deletes every object under `prefix` and aborts every multipart upload under it;
    /// returns how many objects were deleted.
    pub(crate) async fn delete_prefix(&self, prefix: &str) -> Result<usize, StorageError> {
        let keys = self.keys(prefix).await?;
        for key in &keys {
            self.delete(key).await?;
        }
        for (key, upload_id) in self.uploads(prefix).await? {
            self.abort(&key, &upload_id).await?;
        }
        Ok(keys.len())
    }

    /// Empties the prefixes waiting in `object_deletions` (up to `limit` of them); a prefix
    /// that fails stays for the next call.
    pub async fn empty_deleted(&self, db: &schema::Db, limit: i64) -> Result<u64, schema::Error> {
        let mut emptied = 0;
        for prefix in schema::object_deletions::take(db, limit).await? {
            match self.delete_prefix(&prefix).await {
                Ok(n) => {
                    tracing::info!(%prefix, objects = n, "emptied a deleted user's objects");
                    schema::object_deletions::done(db, &prefix).await?;
                    emptied += 1;
                }
                Err(e) => {
                    tracing::warn!(%prefix, error = %e, "emptying a prefix failed; retried later");
                    schema::object_deletions::failed(db, &prefix, &e.to_string()).await?;
                }
            }
        }
        Ok(emptied)
    }

    /// Whether the storage answers.
    pub async fn ping(&self) -> Result<(), StorageError> {
        self.client.head_bucket().bucket(&self.config.bucket).send().await.map_err(classify)?;
        Ok(())
    }
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// An ETag without its quotes, for comparing what clients and servers send.
pub(crate) fn bare_etag(etag: &str) -> &str {
    etag.trim().trim_matches('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(path_style: bool, endpoint: Option<&str>) -> Storage {
        Storage::new(StorageConfig {
            endpoint: endpoint.map(str::to_string),
            public_endpoint: None,
            region: "us-east-1".into(),
            bucket: "sigv4examplebucket".into(),
            access_key_id: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            force_path_style: path_style,
        })
    }

    #[test]
    fn post_forms_carry_a_signed_policy() {
        let now = DateTime::parse_from_rfc3339("2015-12-29T00:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default();
        let post = storage(false, None).presigned_post_at(
            "user/raw/x.xml",
            1024,
            Duration::from_secs(300),
            now,
        );
        assert_eq!(post.url, "https://sigv4examplebucket.s3.us-east-1.amazonaws.com");
        let field = |k: &str| {
            post.fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default()
        };
        assert_eq!(
            field("x-amz-credential"),
            "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request"
        );
        assert_eq!(field("x-amz-date"), "20151229T000000Z");
        let policy: serde_json::Value =
            serde_json::from_slice(&STANDARD.decode(field("policy")).unwrap_or_default())
                .unwrap_or_default();
        assert_eq!(policy["expiration"], "2015-12-29T00:05:00.000Z");
        assert_eq!(policy["conditions"][2], serde_json::json!(["content-length-range", 1, 1024]));
        // The signature is HMAC-SHA256 of the base64 policy under the day's signing key.
        let mut k = hmac_sha256(b"AWS4wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", b"20151229");
        for p in [&b"us-east-1"[..], b"s3", b"aws4_request"] {
            k = hmac_sha256(&k, p);
        }
        assert_eq!(
            field("x-amz-signature"),
            hex::encode(hmac_sha256(&k, field("policy").as_bytes()))
        );
        assert_eq!(field("x-amz-signature").len(), 64);

        let local = storage(true, Some("http://127.0.0.1:3900/"));
        assert_eq!(local.bucket_url(), "http://127.0.0.1:3900/sigv4examplebucket");
        assert_eq!(bare_etag("\"abc\""), "abc");
    }
}
