// Uploads an Apple Health export straight to object storage: the multipart flow, parts in
// parallel, a failed part tried again, the progress shown; then the import's run is followed.
// A file under the multipart minimum (5 MiB) goes through the API's direct upload instead.
import { html } from "htm/preact";
import { useState } from "preact/hooks";

import { api } from "../api.js";
import { Failure } from "../ui.js";

const PARALLEL = 3;
const TRIES = 3;
const MIN_SIZE = 5 * 1024 * 1024;

async function putPart(url, blob, onProgress) {
  for (let attempt = 1; ; attempt++) {
    try {
      const etag = await new Promise((resolve, reject) => {
        const xhr = new XMLHttpRequest();
        xhr.open("PUT", url);
        xhr.upload.onprogress = (e) => onProgress(e.loaded);
        xhr.onload = () =>
          xhr.status >= 200 && xhr.status < 300
            ? resolve(xhr.getResponseHeader("ETag"))
            : reject(new Error(`the store answered ${xhr.status}`));
        xhr.onerror = () => reject(new Error("the store could not be reached"));
        xhr.send(blob);
      });
      if (!etag) throw new Error("the store gave no ETag (its CORS must expose it)");
      return etag;
    } catch (e) {
      onProgress(0);
      if (attempt >= TRIES) throw new Error(`A part failed ${TRIES} times: ${e.message}`);
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}

export function Upload({ userId, onQueued }) {
  const [file, setFile] = useState(null);
  const [progress, setProgress] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  // A new key empties the file box once a file is sent.
  const [box, setBox] = useState(0);
  const base = `/users/${userId}/import/phonehealth/xml/storage/multipart`;
  const queued = (taskId) => {
    onQueued(taskId);
    setFile(null);
    setBox((b) => b + 1);
  };
  const start = async (e) => {
    e.preventDefault();
    if (!file) return;
    setError(null);
    setBusy(true);
    if (file.size < MIN_SIZE) {
      const form = new FormData();
      form.append("file", file, file.name);
      setProgress(0);
      try {
        const done = await api(`/users/${userId}/import/phonehealth/xml/direct`, { method: "POST", multipart: form });
        setProgress(1);
        queued(done.task_id);
      } catch (err) {
        setError(err);
      } finally {
        setBusy(false);
      }
      return;
    }
    let upload;
    try {
      upload = await api(`${base}/create`, {
        method: "POST",
        json: { file_size: file.size, filename: file.name, content_type: file.type || "application/octet-stream" },
      });
      const count = Math.ceil(file.size / upload.part_size);
      const numbers = Array.from({ length: count }, (_, i) => i + 1);
      const { urls } = await api(`${base}/sign`, {
        method: "POST",
        json: { key: upload.key, upload_id: upload.upload_id, part_numbers: numbers },
      });
      const sent = new Array(count).fill(0);
      const parts = [];
      let next = 0;
      const worker = async () => {
        while (next < urls.length) {
          const { part_number, url } = urls[next++];
          const from = (part_number - 1) * upload.part_size;
          const blob = file.slice(from, Math.min(file.size, from + upload.part_size));
          const etag = await putPart(url, blob, (n) => {
            sent[part_number - 1] = n;
            setProgress(sent.reduce((a, b) => a + b, 0) / file.size);
          });
          sent[part_number - 1] = blob.size;
          parts.push({ part_number, etag });
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, count) }, worker));
      parts.sort((a, b) => a.part_number - b.part_number);
      setProgress(1);
      const done = await api(`${base}/complete`, {
        method: "POST",
        json: { key: upload.key, upload_id: upload.upload_id, parts },
      });
      queued(done.task_id);
    } catch (err) {
      setError(err);
      if (upload) {
        api(`${base}/abort`, { method: "POST", json: { key: upload.key, upload_id: upload.upload_id } }).catch(() => {});
      }
    } finally {
      setBusy(false);
    }
  };
  return html`<section aria-labelledby="import">
    <h2 id="import">Import an Apple Health export</h2>
    <form onSubmit=${start} aria-label="Import an export">
      <label>export.zip or export.xml
        <input key=${box} type="file" accept=".zip,.xml" onChange=${(e) => { setFile(e.target.files[0] || null); setProgress(null); }} />
      </label>
      <button type="submit" disabled=${!file || busy}>${busy ? "Uploading…" : "Upload and import"}</button>
    </form>
    ${progress !== null && html`<label class="progress">Upload
      <progress max="1" value=${progress} aria-valuetext=${`${Math.round(progress * 100)} %`}></progress>
      <span>${Math.round(progress * 100)} %</span></label>`}
    <${Failure} error=${error} />
  </section>`;
}
