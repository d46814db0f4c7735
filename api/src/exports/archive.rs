//! A zip written as a stream into a multipart upload: entries are compressed as they come (on
//! the blocking pool), the compressed bytes fill a part, and each full part is uploaded before
//! more is read. Memory stays at a part and a chunk whatever the archive's size; entries are
//! zip64 so that none has a size limit.

use std::io::Write;
use std::sync::{Arc, Mutex};

use ingest::object_store::Storage;
use zip_stream::write::{SimpleFileOptions, StreamWriter};
use zip_stream::{CompressionMethod, ZipWriter};

use super::ExportError;

/// Bytes of a part (S3 takes parts of 5 MiB and more, but the last).
const PART: usize = 8 << 20;

/// What the zip writer writes into: bytes waiting to be uploaded as a part.
#[derive(Clone, Default)]
struct Pending(Arc<Mutex<Vec<u8>>>);

impl Pending {
    fn len(&self) -> usize {
        self.0.lock().map_or(0, |b| b.len())
    }

    fn take(&self) -> Vec<u8> {
        self.0.lock().map(|mut b| std::mem::take(&mut *b)).unwrap_or_default()
    }
}

impl Write for Pending {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let mut b = self.0.lock().map_err(|_| std::io::Error::other("a poisoned buffer"))?;
        b.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

type Zip = ZipWriter<StreamWriter<Pending>>;

/// An archive being written to `key`.
pub(crate) struct Archive {
    storage: Storage,
    key: String,
    upload_id: String,
    /// Taken while a chunk is compressed on the blocking pool.
    zip: Option<Zip>,
    pending: Pending,
    parts: Vec<(i32, String)>,
    bytes: u64,
}

fn zip_error(e: impl std::fmt::Display) -> ExportError {
    ExportError::Archive(e.to_string())
}

impl Archive {
    pub(crate) async fn create(storage: &Storage, key: &str) -> Result<Archive, ExportError> {
        let upload_id = storage.create_multipart(key, Some("application/zip")).await?;
        let pending = Pending::default();
        Ok(Archive {
            storage: storage.clone(),
            key: key.to_owned(),
            upload_id,
            zip: Some(ZipWriter::new_stream(pending.clone())),
            pending,
            parts: Vec::new(),
            bytes: 0,
        })
    }

    /// Runs `f` on the zip writer on the blocking pool.
    async fn with_zip<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut Zip) -> zip_stream::result::ZipResult<T> + Send + 'static,
    ) -> Result<T, ExportError> {
        let mut zip = self.zip.take().ok_or_else(|| zip_error("the archive was left broken"))?;
        let (zip, out) = tokio::task::spawn_blocking(move || {
            let out = f(&mut zip);
            (zip, out)
        })
        .await
        .map_err(zip_error)?;
        self.zip = Some(zip);
        let out = out.map_err(zip_error)?;
        self.upload_full_parts().await?;
        Ok(out)
    }

    /// Starts the next entry.
    pub(crate) async fn start_file(&mut self, name: &'static str) -> Result<(), ExportError> {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .large_file(true);
        self.with_zip(move |zip| zip.start_file(name, options)).await
    }

    /// Appends to the current entry.
    pub(crate) async fn write(&mut self, chunk: Vec<u8>) -> Result<(), ExportError> {
        self.with_zip(move |zip| zip.write_all(&chunk).map_err(Into::into)).await
    }

    async fn upload_full_parts(&mut self) -> Result<(), ExportError> {
        if self.pending.len() >= PART {
            let part = self.pending.take();
            self.upload(part).await?;
        }
        Ok(())
    }

    async fn upload(&mut self, part: Vec<u8>) -> Result<(), ExportError> {
        let n = self.parts.len() as i32 + 1;
        self.bytes += part.len() as u64;
        let etag = self.storage.upload_part(&self.key, &self.upload_id, n, part).await?;
        self.parts.push((n, etag));
        Ok(())
    }

    /// Writes the zip's directory, uploads the rest and completes the upload: the archive's
    /// size.
    pub(crate) async fn finish(mut self) -> Result<u64, ExportError> {
        let zip = self.zip.take().ok_or_else(|| zip_error("the archive was left broken"))?;
        tokio::task::spawn_blocking(move || zip.finish().map(drop))
            .await
            .map_err(zip_error)?
            .map_err(zip_error)?;
        let last = self.pending.take();
        if !last.is_empty() || self.parts.is_empty() {
            self.upload(last).await?;
        }
        self.storage.complete(&self.key, &self.upload_id, &self.parts).await?;
        Ok(self.bytes)
    }

    /// Gives the upload up (what was uploaded of it is deleted).
    pub(crate) async fn abort(self) {
        if let Err(e) = self.storage.abort(&self.key, &self.upload_id).await {
            tracing::warn!(error = %e, key = %self.key, "aborting an export's upload failed");
        }
    }
}
