//! Where the portal's built assets are (`portal/dist`, made by `scripts/portal.sh`), for
//! `rust-embed` to put in the binary. Without them (a `cargo build` before the portal was
//! built) a page that says how to build it is embedded instead, so the API builds either way.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dist = manifest.join("../portal/dist");
    let folder = if dist.join("index.html").is_file() {
        println!("cargo:rerun-if-changed={}", dist.display());
        dist
    } else {
        // A missing path would make cargo run this script, and build the API and the binary
        // again, on every build: the portal's folder is watched instead, which `dist` appears
        // in once built.
        println!("cargo:rerun-if-changed={}", manifest.join("../portal").display());
        let out =
            PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("portal-missing");
        let page = "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>wearhouse</title>\
            <body><h1>wearhouse</h1><p>The portal was not built into this binary: run \
            <code>scripts/portal.sh</code> (or <code>scripts/run.sh</code>, which does), then build again. \
            The API is at <a href=\"/docs\">/docs</a>.</p></body></html>";
        if std::fs::create_dir_all(&out).is_err()
            || std::fs::write(out.join("index.html"), page).is_err()
        {
            println!("cargo:warning=could not write the portal's placeholder page");
        }
        out
    };
    println!("cargo:rustc-env=PORTAL_DIST={}", folder.display());
}
