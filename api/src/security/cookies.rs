//! The cookies this service sets: under `PUBLIC_URL`'s own path (a proxy may serve the service
//! below a prefix), never readable by scripts (`HttpOnly`), and `Secure` when `PUBLIC_URL` is
//! https.

use axum::http::HeaderValue;

/// A cookie to set.
pub(crate) struct Cookie<'a> {
    pub name: &'a str,
    /// Empty, with `max_age` 0, to clear it.
    pub value: &'a str,
    /// Below `PUBLIC_URL`'s path, e.g. `/api/v1/connect/`.
    pub path: &'a str,
    pub max_age: u64,
    /// `Lax` (sent on a top-level navigation from elsewhere, as a vendor's redirect back) or
    /// `Strict` (sent only on this site's own requests).
    pub same_site: &'static str,
}

/// The `Set-Cookie` value; `None` when `PUBLIC_URL` is not a URL.
pub(crate) fn set_cookie(public_url: &str, c: &Cookie<'_>) -> Option<HeaderValue> {
    let public = url::Url::parse(public_url).ok()?;
    let secure = if public.scheme() == "https" { "; Secure" } else { "" };
    let path = format!("{}{}", public.path().trim_end_matches('/'), c.path);
    HeaderValue::from_str(&format!(
        "{}={}; Path={path}; Max-Age={}; HttpOnly; SameSite={}{secure}",
        c.name, c.value, c.max_age, c.same_site
    ))
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_lives_under_the_public_path_and_is_secure_over_https() {
        let c = Cookie { name: "n", value: "v", path: "/api/v1/x/", max_age: 60, same_site: "Lax" };
        let plain = set_cookie("http://127.0.0.1:8000", &c).expect("header");
        assert_eq!(plain, "n=v; Path=/api/v1/x/; Max-Age=60; HttpOnly; SameSite=Lax");
        let behind = set_cookie("https://example.com/health/", &c).expect("header");
        assert_eq!(
            behind,
            "n=v; Path=/health/api/v1/x/; Max-Age=60; HttpOnly; SameSite=Lax; Secure"
        );
        assert!(set_cookie("not a url", &c).is_none());
    }
}
